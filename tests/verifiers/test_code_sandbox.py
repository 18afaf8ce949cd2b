"""The `code` kind and its sandbox: right verdicts, and hostile programs stay contained."""

from __future__ import annotations

import glob
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import pytest

from verifiers import Verdict, verify, verify_batch
from verifiers.code_kind import extract_code, parse_tests
from verifiers.sandbox import SandboxLimits, run_python

ADD_TESTS = json.dumps([{"input": "1 2\n", "output": "3\n"}, {"input": "10 -4\n", "output": "6"}])
LIMITS = {"cpu_seconds": 1, "wall_seconds": 2}  # per test run


def fenced(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```\nDone."


# (case, prediction, gold, expected verdict, text in detail)
CASES = [
    # a right stdin/stdout solution
    ("passes", fenced("a, b = map(int, input().split())\nprint(a + b)"), ADD_TESTS, Verdict.CORRECT, "all 2 tests"),
    # wrong on the second test only (10 - 4 = 6, it prints 14)
    ("wrong output", fenced("a, b = map(int, input().split())\nprint(abs(a) + abs(b))"), ADD_TESTS, Verdict.INCORRECT, "test 2/2"),
    # crashes: a runtime error is a wrong solution, with the exception in the detail
    ("crash", fenced("raise ValueError('nope')"), ADD_TESTS, Verdict.INCORRECT, "ValueError: nope"),
    # syntax error inside a fenced block
    ("syntax", fenced("def f(:\n  pass"), ADD_TESTS, Verdict.INCORRECT, "does not compile"),
    # prose without code
    ("no code", "I could not solve it.", ADD_TESTS, Verdict.NO_ANSWER, "not Python"),
    ("empty", "", ADD_TESTS, Verdict.NO_ANSWER, "no code"),
    # assert-style tests: a function checked by asserts appended to the solution
    ("asserts pass", fenced("def add(a, b):\n    return a + b"), "assert add(1, 2) == 3\nassert add(-1, 1) == 0", Verdict.CORRECT, "all 1"),
    ("asserts fail", fenced("def add(a, b):\n    return a - b"), "assert add(1, 2) == 3", Verdict.INCORRECT, "AssertionError"),
    # APPS/TACO-style gold
    ("inputs/outputs", fenced("print(input()[::-1])"), json.dumps({"inputs": ["abc\n"], "outputs": ["cba\n"]}), Verdict.CORRECT, ""),
    # unreadable golds
    ("bad json gold", fenced("print(1)"), '[{"input": "1", "output": ', Verdict.BAD_GOLD, "does not parse"),
    ("empty test list", fenced("print(1)"), "[]", Verdict.BAD_GOLD, "non-empty list"),
    ("gold not code", fenced("print(1)"), "this is not python (", Verdict.BAD_GOLD, "does not compile"),
    # hostile programs
    ("infinite loop", fenced("while True:\n    pass"), ADD_TESTS, Verdict.TIMEOUT, "time limit"),
    ("sleeps forever", fenced("import time\ntime.sleep(100)"), ADD_TESTS, Verdict.TIMEOUT, "wall clock"),
    ("memory bomb", fenced("x = [0] * (10**10)"), ADD_TESTS, Verdict.INCORRECT, "MemoryError"),
    ("fork bomb", fenced("import os\nwhile True:\n    os.fork()"), ADD_TESTS, Verdict.INCORRECT, ""),
    ("output flood", fenced("while True:\n    print('y' * 10000)"), ADD_TESTS, Verdict.INCORRECT, "output limit"),
]


def test_a_loop_that_ignores_sigxcpu_is_a_timeout():
    # killed by SIGKILL at the hard CPU limit (1 s after SIGXCPU): still the time limit, not a crash;
    # the wall limit is far enough away that only the CPU limit can stop it
    code = fenced("import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass")
    result = verify(code, ADD_TESTS, kind="code", timeout=20, cpu_seconds=1, wall_seconds=10)
    assert result.verdict is Verdict.TIMEOUT, result
    assert "CPU" in result.detail and result.elapsed < 6

# Assert-style tests: wrong solutions that try to pass without passing. None may get CORRECT; each is
# (case, solution, test code, text in the detail).
ADD_ASSERTS = "assert add(1, 2) == 3\nassert add(-1, 1) == 0"
FORGERIES = [
    ("sys.exit(0) before the tests", "def add(a, b):\n    return a - b\nimport sys\nsys.exit(0)", ADD_ASSERTS, "SystemExit"),
    ("os._exit(0) before the tests", "def add(a, b):\n    return a - b\nimport os\nos._exit(0)", ADD_ASSERTS, "ended"),
    ("os._exit(0) inside the call", "import os\ndef add(a, b):\n    os._exit(0)", ADD_ASSERTS, "ended"),
    ("atexit hook that exits 0", "import atexit, os\natexit.register(os._exit, 0)\ndef add(a, b):\n    return 0", ADD_ASSERTS,
     "AssertionError at test line 1: assert add(1, 2) == 3"),
    ("excepthook that exits 0", "import os, sys\nsys.excepthook = lambda *a: os._exit(0)\ndef add(a, b):\n    return 0", ADD_ASSERTS,
     "AssertionError"),
    ("always-true __eq__", "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
     "def add(a, b):\n    return Yes()", ADD_ASSERTS, "compared or tested the truth of a Yes object"),
    ("always-true __eq__, exception swallowed by the test",
     "class Yes:\n    def __eq__(self, other):\n        return True\ndef add(a, b):\n    return Yes()",
     "try:\n    assert add(1, 2) == 3\nexcept BaseException:\n    pass", "Yes object"),
    ("a home-made abs decides the check", "def abs(x):\n    return 0\ndef root2():\n    return 1.0",
     "assert abs(root2() - 1.41421356) < 1e-6", "AssertionError"),
    # a value the host would send by name (module + qualified name), which the driver used to resolve to its own
    # object: here `unittest.mock.ANY`, equal to everything
    ("a by-name reference to mock.ANY", "from unittest import mock\nmock.ANY.__qualname__ = 'ANY'\ndef add(a, b):\n    return mock.ANY",
     ADD_ASSERTS, "compared or tested the truth of a _ANY object"),
    ("the host's encoder replaced to send references",
     "import sys\nmain = sys.modules['__main__']\nreal = main.encode\ndef fake(value, to_handle=None, depth=0):\n"
     "    if type(value) is int:\n        return {'$': 'ref', 'module': 'unittest.mock', 'name': 'ANY'}\n"
     "    return real(value, to_handle, depth)\nmain.encode = fake\ndef add(a, b):\n    return 0", ADD_ASSERTS, "cannot be read"),
    # StopIteration raised by the candidate ends `map(...)` early: all() of nothing, a loop that never runs
    ("StopIteration inside all(map(...))", "def add(a, b):\n    raise StopIteration",
     "cases = [((1, 2), 3), ((-1, 1), 0)]\nassert all(map(lambda c: add(*c[0]) == c[1], cases))", "RuntimeError"),
    ("StopIteration inside a zip(map(...)) loop", "def add(a, b):\n    raise StopIteration",
     "cases = [((1, 2), 3)]\nfor (args, want), got in zip(cases, map(lambda c: add(*c[0]), cases)):\n    assert got == want",
     "RuntimeError"),
    ("a fake pass written to every fd", "import os\nfor fd in range(3, 300):\n    try:\n        os.write(fd, b'{\"passed\": true}\\n')\n"
     "    except OSError:\n        pass\ndef add(a, b):\n    return 0", ADD_ASSERTS, "test 1/1"),
]


@pytest.mark.parametrize("solution,asserts,text", [c[1:] for c in FORGERIES], ids=[c[0] for c in FORGERIES])
def test_assert_tests_cannot_be_passed_without_passing(solution, asserts, text):
    result = verify(fenced(solution), asserts, kind="code", timeout=10, **LIMITS)
    assert result.verdict is Verdict.INCORRECT, result
    assert text in result.detail, result.detail


# Right solutions in the shapes test code takes (HumanEval, MBPP, classes, in-place changes, exceptions):
# the isolated driver must still pass them. (case, solution, test code)
HONEST = [
    ("HumanEval check(candidate)", "def total(xs):\n    return sum(xs)",
     "def check(candidate):\n    assert candidate([1, 2, 3]) == 6\n    assert candidate([]) == 0\ncheck(total)"),
    ("sorts a list in place", "def sort_in_place(a):\n    a.sort()", "xs = [3, 1, 2]\nsort_in_place(xs)\nassert xs == [1, 2, 3]"),
    ("a class", "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)\n"
     "    def pop(self):\n        return self.items.pop()\n    def __len__(self):\n        return len(self.items)",
     "s = Stack()\ns.push(1)\ns.push(2)\nassert s.pop() == 2\nassert len(s) == 1\nassert s.items == [1]"),
    ("raises the expected error", "def parse(s):\n    return int(s)",
     "try:\n    parse('x')\n    raise AssertionError('no error')\nexcept ValueError:\n    pass\nassert parse('7') == 7"),
    ("generators, tuples, floats, big ints", "import math\nfrom collections import namedtuple\nP = namedtuple('P', 'x y')\n"
     "def squares(n):\n    yield from (i * i for i in range(n))\ndef pair():\n    return P(1, 'a')\n"
     "def half(x):\n    return x / 2\ndef fact(n):\n    return math.factorial(n)",
     "import math\nassert list(squares(3)) == [0, 1, 4]\nassert pair() == (1, 'a')\nassert math.isclose(half(1), 0.5)\n"
     "assert fact(3000) == math.factorial(3000)\nassert {k: v for k, v in [(1, {2})]} == {1: {2}}"),
    ("uses a module the solution imported", "import math\ndef hyp(a, b):\n    return math.hypot(a, b)",
     "assert math.isclose(hyp(3, 4), 5.0)"),
]


# Names the tests assume but do not bind: a module they only read attributes of (`math.isclose` with no
# `import math`, as MBPP rows have), a constant, a helper the prompt defines (HumanEval/38). A wrong solution
# that defines that name must not decide the check with it. (case, solution, test code)
ASSUMED_NAMES = [
    ("its own math with an isclose that says True",
     "class math:\n    @staticmethod\n    def isclose(*a, **k):\n        return True\ndef area(r):\n    return 0.0",
     "assert math.isclose(area(1), 3.141592653589793)"),
    ("its own math module object, patched",
     "import math, types\nmath = types.ModuleType('math')\nmath.isclose = lambda *a, **k: True\ndef area(r):\n    return 0.0",
     "assert math.isclose(area(1), 3.141592653589793, rel_tol=1e-9)"),
    ("a module it patched in place", "import math\nmath.isclose = lambda *a, **k: True\ndef area(r):\n    return 0.0",
     "assert math.isclose(area(1), 3.141592653589793)"),
    ("a constant the tests compare with", "EXPECTED = 0\ndef count(xs):\n    return 0", "assert count([1, 2]) == EXPECTED"),
]


@pytest.mark.parametrize("solution,asserts", [c[1:] for c in ASSUMED_NAMES], ids=[c[0] for c in ASSUMED_NAMES])
def test_names_the_tests_assume_are_never_the_solutions(solution, asserts):
    result = verify(fenced(solution), asserts, kind="code", timeout=10, **LIMITS)
    assert result.verdict is Verdict.INCORRECT, result
    # and the right solution passes the same tests, whether or not it imported the module itself
    for right in ("import math\ndef area(r):\n    return math.pi * r * r", "def area(r):\n    return 3.141592653589793 * r * r"):
        if "area" in asserts:
            assert verify(fenced(right), asserts, kind="code", timeout=10, **LIMITS).verdict is Verdict.CORRECT


HUMANEVAL_38 = {  # the shape of HumanEval/38: the tests call a helper that the prompt defines
    "prompt": 'def encode_cyclic(s: str):\n    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]\n'
              '    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]\n    return "".join(groups)\n\n\n'
              'def decode_cyclic(s: str):\n    """Decodes a string encoded with encode_cyclic."""\n',
    "test": "def check(candidate):\n    for s in ['abcdefg', 'hello world', 'xy']:\n        assert candidate(encode_cyclic(s)) == s\n",
    "entry_point": "decode_cyclic",
}


def test_a_helper_of_the_prompt_redefined_by_the_solution_does_not_decide_the_check():
    from verifiers.code_kind import code_gold

    row = HUMANEVAL_38
    gold = code_gold(row["test"], entry_point=row["entry_point"], prompt=row["prompt"])
    forged = "def encode_cyclic(s):\n    return s\ndef decode_cyclic(s):\n    return s"  # identity twice
    assert verify(fenced(forged), gold, kind="code", timeout=10, **LIMITS).verdict is Verdict.INCORRECT
    right = row["prompt"] + "    return encode_cyclic(encode_cyclic(s))\n"
    assert verify(right, gold, kind="code", timeout=10, **LIMITS).verdict is Verdict.CORRECT


@pytest.mark.parametrize("solution,asserts", [c[1:] for c in HONEST], ids=[c[0] for c in HONEST])
def test_right_solutions_pass_the_isolated_tests(solution, asserts):
    result = verify(fenced(solution), asserts, kind="code", timeout=10, **LIMITS)
    assert result.verdict is Verdict.CORRECT, result


def test_a_test_handing_its_own_function_to_the_solution_is_an_error_not_a_pass():
    result = verify(fenced("def apply(f, x):\n    return f(x)"), "assert apply(lambda v: v + 1, 1) == 2", kind="code", timeout=10)
    assert result.verdict is Verdict.ERROR and "cannot run isolated" in result.detail


@pytest.mark.parametrize("prediction,gold,verdict,text", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_code_verdicts(prediction, gold, verdict, text):
    start = time.monotonic()
    result = verify(prediction, gold, kind="code", timeout=10, **LIMITS)
    assert result.verdict is verdict, result
    assert text in result.detail
    assert time.monotonic() - start < 8


def test_a_batch_of_code_items_in_parallel():
    good = fenced("a, b = map(int, input().split())\nprint(a + b)")
    results = verify_batch([good, "I give up.", good], [ADD_TESTS, ADD_TESTS, "[]"], kind="code", timeout=10)
    assert [r.verdict for r in results] == [Verdict.CORRECT, Verdict.NO_ANSWER, Verdict.BAD_GOLD]
    assert results[0].extra["passed"] == 2


def test_killing_the_parent_does_not_kill_the_caller():
    # the program tries to kill whatever process started it
    run = run_python("import os\ntry:\n    os.kill(os.getppid(), 9)\nexcept OSError as e:\n    print('refused', e.errno)\nprint('still here')")
    assert "still here" in run.stdout
    assert verify(fenced("import os\nos.kill(os.getppid(), 9)\nprint(3)"), ADD_TESTS, kind="code", timeout=10).verdict in (
        Verdict.INCORRECT, Verdict.ERROR)
    assert verify(fenced("print(sum(map(int, input().split())))"), ADD_TESTS, kind="code", timeout=10).verdict is Verdict.CORRECT


def test_cannot_write_outside_its_directory(tmp_path):
    name = f"rewardlab-escape-{uuid.uuid4().hex}"
    targets = [str(tmp_path / name), f"/tmp/{name}", f"/var/tmp/{name}", f"/dev/shm/{name}"]
    code = "import json\nfor path in json.loads(input()):\n    try:\n        open(path, 'w').write('x')\n        print('wrote', path)\n    except OSError as e:\n        print('denied', path)\nopen('local.txt', 'w').write('ok')\nprint(open('local.txt').read())"
    run = run_python(code, json.dumps(targets))
    assert run.ok, run
    assert run.stdout.strip().endswith("ok")  # its own directory is writable
    for path in targets:
        assert not os.path.exists(path), f"the sandbox wrote {path}"
    if os.geteuid() == 0:  # as root the program runs as `nobody` in a private mount namespace
        assert {"uid-65534", "private-tmp", "no-network", "pid-namespace"} <= set(run.protections)
        assert f"denied {targets[0]}" in run.stdout


def test_environment_is_scrubbed_and_network_is_off(monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    code = "import os, socket\nprint(sorted(os.environ))\ntry:\n    socket.create_connection(('10.255.255.1', 80), timeout=1)\n    print('connected')\nexcept OSError:\n    print('no network')"
    run = run_python(code)
    assert "SECRET_TOKEN" not in run.stdout and "hunter2" not in run.stdout
    if os.geteuid() == 0:
        assert "no network" in run.stdout


def test_test_code_cannot_read_the_callers_environment(monkeypatch):
    # gold test code runs in the driver: a client-sent test that fails with the environment as its message
    # must not carry the operator's secrets into the verdict's detail
    monkeypatch.setenv("HF_TOKEN", "hf-secret-1234")
    monkeypatch.setenv("REWARDLAB_SERVICE_TOKEN", "service-secret-5678")
    run = run_python("def add(a, b):\n    return a + b", tests="import os\nassert False, sorted(os.environ.items())")
    detail = (run.tests or {}).get("detail", "")
    assert "AssertionError" in detail and "PATH" in detail, run
    assert "secret" not in detail and "HF_TOKEN" not in detail and "REWARDLAB_SERVICE_TOKEN" not in detail
    program = run_python("import os\nprint(sorted(os.environ))")
    assert "HF_TOKEN" not in program.stdout and "PATH" in program.stdout


PLANTED = """import json, os, sys
frame = sys._getframe()
while frame is not None and "report_fd" not in frame.f_locals:
    frame = frame.f_back
if frame is not None:  # inside the test driver: write its report, with its nonce, and leave
    os.write(frame.f_locals["report_fd"], json.dumps({"passed": True, "nonce": frame.f_locals["cfg"]["nonce"]}).encode())
    os._exit(0)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the private /tmp needs the mount namespace (root)")
def test_a_module_planted_on_the_drivers_import_path_does_not_run(monkeypatch):
    # the sandbox package installed under /tmp: the program's private /tmp can hold a directory at the same
    # path, and a module planted there must not be what the driver imports when the tests `import colorsys`
    import shutil

    import verifiers.sandbox as sandbox

    home = tempfile.mkdtemp(prefix="rewardlab-pkg-", dir="/tmp")
    try:
        for name in ("sandbox_boot.py", "sandbox_harness.py"):
            shutil.copy(os.path.join(os.path.dirname(sandbox.__file__), name), home)
        monkeypatch.setattr(sandbox, "BOOT", sandbox.Path(home, "sandbox_boot.py"))
        monkeypatch.setattr(sandbox, "HARNESS", sandbox.Path(home, "sandbox_harness.py"))
        solution = (f"import os\nos.makedirs({home!r}, exist_ok=True)\nopen({home!r} + '/colorsys.py', 'w').write({PLANTED!r})\n"
                    "def add(a, b):\n    return 0")
        run = run_python(solution, tests="import colorsys\nassert add(1, 2) == 3", limits=SandboxLimits(**LIMITS))
        assert "private-tmp" in run.protections
        assert not run.tests_passed, run
        assert "AssertionError" in (run.tests or {}).get("detail", ""), run
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_fork_bomb_leaves_no_process_behind():
    code = "import os, time\nfor _ in range(20):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\nprint('parent done')"
    run = run_python(code, limits=SandboxLimits(wall_seconds=3))
    assert "parent done" in run.stdout
    if os.geteuid() == 0:  # the pid namespace dies with its init
        time.sleep(0.2)
        leftovers = [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == 65534]
        assert leftovers == []


def test_private_proc_hides_host_processes_and_other_sandboxes(tmp_path):
    # a host process with a secret in its command line (as `serve-verifier --token ...` has)
    secret = f"token-{uuid.uuid4().hex}"
    host = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", secret])
    # a concurrent sandbox that leaves a marker in its working directory, then waits
    marker = f"marker-{uuid.uuid4().hex}"
    other = threading.Thread(target=run_python, args=(f"open('{marker}', 'w').write('x')\nimport time\ntime.sleep(4)",),
                             kwargs={"limits": SandboxLimits(wall_seconds=6)})
    other.start()
    try:
        time.sleep(1.0)
        code = ("import os\npids = [p for p in os.listdir('/proc') if p.isdigit()]\nprint('pids', len(pids))\n"
                "for p in pids:\n    for what in ('cmdline', 'environ'):\n        try:\n"
                "            print(open(f'/proc/{p}/{what}', 'rb').read().decode(errors='replace'))\n        except OSError:\n"
                "            pass\n    try:\n        print(os.listdir(f'/proc/{p}/cwd'))\n    except OSError:\n        pass")
        run = run_python(code, limits=SandboxLimits(wall_seconds=5))
        assert run.ok, run
        if os.geteuid() == 0:  # a fresh /proc for the sandbox's own pid namespace
            assert "private-proc" in run.protections
            assert secret not in run.stdout and marker not in run.stdout
            assert run.stdout.startswith("pids 1\n")  # only itself: init and the driver run as other uids
        else:  # documented fallback: the host's /proc is visible
            assert "private-proc" not in run.protections
    finally:
        host.kill()
        host.wait()
        other.join()


def test_host_directories_are_read_only_and_nothing_persists_between_items():
    candidates = ["/run/lock", "/var/lock", "/var/crash", "/var/mail", "/run/user", "/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue"]
    world_writable = [d for d in candidates if os.path.isdir(d) and os.stat(d).st_mode & stat.S_IWOTH]
    name = f"rewardlab-persist-{uuid.uuid4().hex}"
    write = ("import json, sys\nfor d in json.loads(input()):\n    try:\n        open(d + '/" + name + "', 'w').write('x')\n"
             "        print('wrote', d)\n    except OSError as e:\n        print('denied', d, e.errno)")
    first = run_python(write, json.dumps(world_writable))
    assert first.ok, first
    second = run_python("import json, os\nprint([d for d in json.loads(input()) if os.path.exists(d + '/" + name + "')])",
                        json.dumps(world_writable))
    for d in world_writable:
        assert not os.path.exists(f"{d}/{name}"), f"the sandbox wrote {d} on the host"
    if os.geteuid() == 0:
        assert "read-only-fs" in first.protections
        assert second.stdout.strip() == "[]"  # nothing one item writes is seen by the next
        for d in world_writable:
            if d not in ("/tmp", "/var/tmp", "/dev/shm"):  # those are private tmpfs: writable, and thrown away
                assert f"denied {d} 30" in first.stdout or f"denied {d} 2" in first.stdout  # EROFS, or not there at all


# (syscall, arguments): each must fail with EPERM inside the sandbox, whatever the kernel would have said
# without the filter (ptrace(PTRACE_TRACEME) and keyctl succeed, unshare(CLONE_NEWUSER) made a user namespace)
SYSCALL_ATTEMPTS = [
    ("unshare", (0x10000000,)),  # CLONE_NEWUSER: then mount and network namespaces, tmpfs mounts
    ("clone", (0x10000000 | 17, 0, 0, 0, 0)),  # CLONE_NEWUSER | SIGCHLD
    ("setns", (0, 0)),
    ("mount", (0, 0, 0, 0, 0)),
    ("ptrace", (0, 0, 0, 0)),  # PTRACE_TRACEME
    ("keyctl", (0, -3, 0)),  # KEYCTL_GET_KEYRING_ID of the session keyring
    ("bpf", (0, 0, 0)),
    ("perf_event_open", (0, 0, -1, -1, 0)),
    ("userfaultfd", (0,)),
    ("io_uring_setup", (1, 0)),
]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="seccomp is Linux's")
def test_dangerous_syscalls_are_refused_by_a_seccomp_filter():
    import pyseccomp

    numbers = {name: pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name) for name, _ in SYSCALL_ATTEMPTS}
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"for name, number, args in {[(n, numbers[n], a) for n, a in SYSCALL_ATTEMPTS]!r}:\n"
            "    ctypes.set_errno(0)\n    rc = libc.syscall(number, *[ctypes.c_long(a) for a in args])\n"
            "    if rc == 0 and name == 'clone':\n        os._exit(0)  # the child of an unrefused clone\n"
            "    print(name, rc, ctypes.get_errno())\n"
            "print('Seccomp', open('/proc/self/status').read().split('Seccomp:')[1].split()[0])")
    run = run_python(code)
    assert run.ok, run
    results = {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines()}
    assert {name: results[name] for name, _ in SYSCALL_ATTEMPTS} == {name: ["-1", "1"] for name, _ in SYSCALL_ATTEMPTS}, run.stdout
    assert results["Seccomp"] == ["2"] and "seccomp" in run.protections  # filter mode
    # the test driver runs under the same filter
    driver = run_python("def add(a, b):\n    return a + b",
                        tests="import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nassert libc.unshare(0x10000000) == -1\n"
                              "assert ctypes.get_errno() == 1\nassert add(1, 2) == 3")
    assert driver.tests_passed, driver


def _host_shm_keys() -> set[int]:
    with open("/proc/sysvipc/shm") as fh:
        return {int(line.split()[0]) for line in list(fh)[1:]}


def test_sysv_shared_memory_is_private_to_the_item():
    # a SysV segment one item creates must not be visible to the next item, nor stay on the host after it
    import ctypes

    key = 0x52000000 + uuid.uuid4().int % 0xFFFFFF
    create = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
              f"shmid = libc.shmget({key}, 1 << 20, 0o1000 | 0o666)\nprint('created' if shmid >= 0 else 'refused', shmid)")
    look = f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint('found' if libc.shmget({key}, 0, 0o666) >= 0 else 'absent')"
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        first = run_python(create)
        assert first.ok and first.stdout.startswith("created"), first
        second = run_python(look)
        if os.geteuid() == 0:
            assert second.stdout.strip() == "absent", second
            assert key not in _host_shm_keys()
            assert {"ipc-namespace", "uts-namespace"} <= set(first.protections)
            assert run_python("import socket\nprint(socket.gethostname())").stdout.strip() == "sandbox"
    finally:
        shmid = libc.shmget(key, 0, 0)
        if shmid >= 0:  # left behind by a sandbox without its own IPC namespace
            libc.shmctl(shmid, 0, None)  # IPC_RMID


def _host_unix_socket(directory: str) -> tuple[str, "socket.socket"]:
    """A listening Unix socket of the host, mode 0777 in a world-readable directory (as D-Bus's is)."""
    import socket

    path = os.path.join(directory, "host.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    os.chmod(path, 0o777)
    return path, server


UNIX_PROBE = """import json, socket, sys
path = json.loads(input())
for family, kind in ((socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_UNIX, socket.SOCK_DGRAM)):
    try:
        s = socket.socket(family, kind)
        s.connect(path) if kind == socket.SOCK_STREAM else s.sendto(b"x", path)
        print("reached", kind)
    except OSError as e:
        print("refused", kind, e.errno)
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"x", path)
    print("reached by a datagram pair")
except OSError as e:
    print("refused pair", e.errno)
a, b = socket.socketpair()  # a connected pair, as asyncio and multiprocessing.Pipe use: still there
a.send(b"ok")
print(b.recv(2).decode())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="seccomp is Linux's")
def test_host_unix_sockets_are_not_reachable():
    # a world-connectable socket of the host, outside the private /tmp: socket(AF_UNIX) is refused in the sandbox
    directory = tempfile.mkdtemp(prefix="rewardlab-sock-", dir="/run" if os.path.isdir("/run") else None)
    os.chmod(directory, 0o755)
    path, server = _host_unix_socket(directory)
    try:
        run = run_python(UNIX_PROBE, json.dumps(path))
        assert run.ok, run
        assert "reached" not in run.stdout, run.stdout
        assert run.stdout.count("refused") == 3 and run.stdout.endswith("ok\n"), run.stdout
    finally:
        server.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_an_item_that_parks_processes_leaves_anothers_process_budget_whole():
    # item A holds 30 of its 32 processes; item B, at the same time, starts 16 threads (each one counts)
    park = ("import os, time\nfor _ in range(30):\n    if os.fork() == 0:\n        time.sleep(6)\n        os._exit(0)\n"
            "print('parked')\ntime.sleep(6)")
    threads = ("import threading, time\ntime.sleep(1.5)\nts = [threading.Thread(target=time.sleep, args=(0.5,)) for _ in range(16)]\n"
               "for t in ts:\n    t.start()\nfor t in ts:\n    t.join()\nprint('threads ran')")
    limits = SandboxLimits(max_processes=32, wall_seconds=8, cpu_seconds=4, memory_mb=4096)  # threads reserve address space
    parked = threading.Thread(target=run_python, args=(park,), kwargs={"limits": limits})
    parked.start()
    try:
        run = run_python(threads, limits=limits)
    finally:
        parked.join()
    assert run.ok and run.stdout == "threads ran\n", run
    if os.geteuid() == 0:
        assert "user-namespace" in run.protections


def test_shared_memory_counts_against_the_item():
    # memory outside the address space: anonymous files, SysV segments, POSIX shared memory and /tmp all come
    # out of one budget per item (tmpfs_mb), never out of the host's
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "try:\n    os.memfd_create('x')\n    print('memfd made')\nexcept OSError as e:\n    print('memfd refused', e.errno)\n"
            "shmid = libc.shmget(0, 64 << 20, 0o1000 | 0o600)\nprint('big segment', 'made' if shmid >= 0 else 'refused')\n"
            "written = 0\nfor path in ('/tmp/a', '/dev/shm/b', '/var/tmp/c'):\n    try:\n        with open(path, 'wb') as fh:\n"
            "            for _ in range(12):\n                fh.write(b'x' * (1 << 20))\n                written += 1\n"
            "    except OSError:\n        pass\nprint('written', written)")
    run = run_python(code, limits=SandboxLimits(tmpfs_mb=16, file_size_mb=64))
    assert run.ok, run
    lines = run.stdout.splitlines()
    assert lines[0] == "memfd refused 1", run.stdout
    if os.geteuid() == 0:
        assert lines[1] == "big segment refused" and "ipc-limits" in run.protections, run
        assert int(lines[2].split()[1]) <= 16, run.stdout  # one 16 MiB tmpfs for /tmp, /dev/shm and /var/tmp together


FAKE_REPORT = """import json, os, sys
frame = sys._getframe()
while "report_fd" not in frame.f_locals:
    frame = frame.f_back
os.write(frame.f_locals["report_fd"], json.dumps({REPORT}).encode())
os._exit(0)
"""


@pytest.mark.parametrize("report", [{"passed": True}, {"passed": True, "nonce": "0" * 32}], ids=["no nonce", "wrong nonce"])
def test_a_pass_without_this_runs_nonce_is_not_a_pass(report):
    # a report written on the driver's own pipe (by code running in the driver) without the nonce of this run
    run = run_python("def add(a, b):\n    return 0", tests=FAKE_REPORT.replace("{REPORT}", repr(report)))
    assert run.tests is not None and run.tests.get("passed") is True, run  # the report did arrive
    assert not run.tests_passed


def test_the_lines_comparator_keeps_line_breaks():
    # generated outputs: `lines` ignores trailing spaces and final blank lines, never where the lines break
    import random

    from verifiers.code_kind import COMPARATORS

    rng = random.Random(0)
    for _ in range(200):
        words = [str(rng.randint(0, 99)) for _ in range(rng.randint(3, 6))]
        lines = [" ".join(words[:2]), " ".join(words[2:])]
        want = "\n".join(lines) + "\n"
        padded = "\n".join(line + " " * rng.randint(0, 2) for line in lines) + "\n" * rng.randint(0, 3)
        assert COMPARATORS["lines"](padded, want), (padded, want)
        one_line = " ".join(words) + "\n"  # the same tokens on one line
        assert COMPARATORS["tokens"](one_line, want) and not COMPARATORS["lines"](one_line, want), (one_line, want)
        assert not COMPARATORS["lines"](want.replace(" ", "  ", 1), want)  # spaces inside a line count


def test_a_killed_item_leaves_no_temporary_directory():
    root = tempfile.gettempdir()

    def sandbox_dirs() -> set[str]:
        return set(glob.glob(f"{root}/rewardlab-sandbox-*") + glob.glob(f"{root}/rewardlab-worker-*/rewardlab-sandbox-*"))

    before = sandbox_dirs()
    # the pool's 1 s limit kills the worker while the program sleeps (its own wall limit is 20 s)
    result = verify(fenced("import time\ntime.sleep(30)"), ADD_TESTS, kind="code", timeout=1, wall_seconds=20)
    assert result.verdict is Verdict.TIMEOUT and "worker killed" in result.detail
    assert sandbox_dirs() - before == set()


def _uid_of(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("Uid:"))
    except (OSError, StopIteration):
        return None


# (text, expected code) for the fence extraction
FENCES = [
    ("```python\nprint(1)\n```", "print(1)\n"),  # a python block
    ("```py\nA\n```\ntext\n```python\nB\n```", "B\n"),  # the last python block wins
    ("```\nC\n```", "C\n"),  # an unlabelled block when there is no python one
    ("print(2)", "print(2)"),  # no fence: the whole text
]


@pytest.mark.parametrize("text,code", FENCES)
def test_extract_code(text, code):
    assert extract_code(text)[0] == code


# (options, exception, text): bad options raise in the caller, before anything runs
BAD_OPTIONS = [
    ({"cpu_secs": 1}, TypeError, "unknown option(s) 'cpu_secs'; valid options: compare, cpu_seconds"),  # typo
    ({"cpu_seconds": 0}, ValueError, "SandboxLimits.cpu_seconds must be a positive number"),  # bad value
    ({"compare": "fuzzy"}, ValueError, "unknown compare mode 'fuzzy'"),
]


@pytest.mark.parametrize("options,exc,text", BAD_OPTIONS)
def test_bad_options_raise_in_the_caller(options, exc, text):
    with pytest.raises(exc) as info:
        verify(fenced("print(1)"), ADD_TESTS, kind="code", timeout=10, **options)
    assert text in str(info.value)


def test_parse_tests_formats():
    assert parse_tests('{"tests": [{"input": "x", "output": "y"}]}').cases == [("x", "y")]
    assert parse_tests('[{"output": "y"}]').cases == [("", "y")]  # input defaults to empty stdin
    with pytest.raises(ValueError, match="test 0"):
        parse_tests('[{"input": 1, "output": "y"}]')


def test_fallback_without_root_still_enforces_limits(monkeypatch):
    # as a non-root caller where the kernel refuses user namespaces: no namespaces, no uid change; rlimits,
    # session and wall-clock kill remain
    import verifiers.sandbox as sandbox

    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(sandbox, "USER_NAMESPACES", False)
    run = sandbox.run_python("print(input()[::-1])", "abc")
    assert run.ok and run.stdout == "cba\n"
    assert run.protections == ["rlimits", "new-session", "no-new-privileges", "seccomp"]  # recorded, so callers can see what was in force
    slow = sandbox.run_python("import time\ntime.sleep(30)", limits=SandboxLimits(wall_seconds=1))
    assert slow.timed_out and slow.wall < 3
    # the isolated test driver works without namespaces too (same uid, but not dumpable)
    assert sandbox.run_python("def add(a, b):\n    return a + b", tests=ADD_ASSERTS).tests_passed
    for _, solution, asserts, _ in FORGERIES:
        run = sandbox.run_python(solution, tests=asserts, limits=SandboxLimits(**LIMITS))
        assert not run.tests_passed, (solution, run)


UNPRIVILEGED_UID = 54321  # no such user on the test machines


def _expose_to_others(paths: list[str], stage: str) -> None:
    """In this (private) mount namespace, each of `paths` reachable by any uid, and nothing else of the
    directories on their way that other users cannot enter (e.g. /root, mode 0700, for a pyenv Python, or a
    private folder holding the virtual environment or the checkout): each path is bound aside, the outermost
    such directories covered by an empty tmpfs (mode 0755), and each path moved back to its place."""
    from verifiers import sandbox_boot as boot

    paths = [p for p in dict.fromkeys(paths) if not any(p.startswith(q.rstrip("/") + "/") for q in paths if q != p)]
    held, blocked = [], set()
    for number, path in enumerate(paths):
        on_the_way = boot._blocked_dirs(path + "/x" if os.path.isdir(path) else path)
        if on_the_way:
            aside = os.path.join(stage, str(number))
            os.mkdir(aside) if os.path.isdir(path) else open(aside, "w").close()
            boot._mount(path, aside, None, boot.MS_BIND | boot.MS_REC)
            held.append((path, aside))
            blocked.update(on_the_way)
    for directory in sorted(blocked, key=len):
        if not any(directory.startswith(b + "/") for b in blocked if b != directory):
            boot._mount("tmpfs", directory, "tmpfs", boot.MS_NOSUID | boot.MS_NODEV, "size=1m,mode=0755")
    for path, aside in held:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        os.mkdir(path) if os.path.isdir(aside) else open(path, "w").close()
        boot._mount(aside, path, None, boot.MS_MOVE)


def _as_unprivileged_user(fn, groups=()):
    """fn() run in a child process as uid/gid 54321 (tests run as root in CI), with the supplementary
    `groups`; returns what it returns (JSON).
    The child gets a mount namespace of its own in which the interpreter (and a virtual environment's), and
    the sandbox's own files, are reachable by that uid even under a private folder (a pyenv Python under
    /root, mode 0700), as a deployment under an ordinary account would have them. Where that uid still
    cannot run them, the test is skipped and says why."""
    import verifiers.sandbox as sandbox
    from verifiers import sandbox_boot as boot

    needed = [sys.executable, os.path.realpath(sys.executable), os.path.realpath(sys.prefix),
              os.path.realpath(sys.base_prefix), str(sandbox.BOOT.parent)]
    read, write = os.pipe()
    stage = tempfile.mkdtemp(prefix="rewardlab-stage-", dir="/tmp")
    child = os.fork()
    if child == 0:
        code = 1
        try:
            os.close(read)
            boot._check(boot.LIBC.unshare(boot.CLONE_NEWNS), "unshare")
            boot._mount(None, "/", None, boot.MS_REC | boot.MS_PRIVATE)  # nothing below reaches the host's mounts
            _expose_to_others([os.path.abspath(p) for p in needed], stage)
            os.setgroups(list(groups))
            os.setgid(UNPRIVILEGED_UID)
            os.setuid(UNPRIVILEGED_UID)
            tempfile.tempdir = "/tmp"
            unreachable = [(p, oct(os.stat(p).st_mode & 0o777) if os.path.exists(p) else "not there")
                           for p in (sys.executable, str(sandbox.BOOT), str(sandbox.HARNESS))
                           if not os.access(p, os.X_OK if p == sys.executable else os.R_OK)]
            if unreachable:
                out = json.dumps({"skip": f"uid {UNPRIVILEGED_UID} cannot run the sandbox here: {unreachable} "
                                          f"(give other users read access to the interpreter and the checkout)"}).encode()
            else:
                out = json.dumps(fn()).encode()
            code = 0
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            out = json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode()
        with os.fdopen(write, "wb") as fh:
            fh.write(out)
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    os.waitpid(child, 0)
    shutil.rmtree(stage, ignore_errors=True)
    out = json.loads(data)
    if isinstance(out, dict) and "skip" in out:
        pytest.skip(out["skip"])
    return out


@pytest.mark.skipif(os.geteuid() != 0 or not sys.platform.startswith("linux"), reason="needs root to become another uid")
def test_without_root_the_sandbox_isolates_through_a_user_namespace():
    secret = f"token-{uuid.uuid4().hex}"
    host = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", secret])

    # a directory the calling uid may write, outside the /tmp, /var/tmp and /dev/shm the sandbox replaces
    own = tempfile.mkdtemp(prefix="rewardlab-own-", dir="/run" if os.path.isdir("/run") else "/var/lib")
    os.chown(own, UNPRIVILEGED_UID, UNPRIVILEGED_UID)

    def scenario():
        probe = ("import os, socket\nprint(os.getuid(), os.getgid())\n"
                 "print(sorted(name for _, name in socket.if_nameindex()))\n"
                 "pids = [p for p in os.listdir('/proc') if p.isdigit()]\nprint(len(pids))\n"
                 "for p in pids:\n    try:\n        print(open(f'/proc/{p}/cmdline', 'rb').read().decode(errors='replace'))\n"
                 "    except OSError:\n        pass\n"
                 f"try:\n    open({own!r} + '/x', 'w').write('x')\n    print('wrote')\nexcept OSError as e:\n    print('denied', e.errno)")
        run = run_python(probe)
        wrote = os.path.exists(own + "/x")
        passed = run_python("def add(a, b):\n    return a + b", tests=ADD_ASSERTS).tests_passed
        forged = [case for case, solution, asserts, _ in FORGERIES
                  if run_python(solution, tests=asserts, limits=SandboxLimits(**LIMITS)).tests_passed]
        # no capability of the user namespace is left to the driver (it never calls execve) nor to the program
        no_caps = ("status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
                   "assert int(status['CapEff'], 16) == int(status['CapPrm'], 16) == 0, status['CapEff']")
        caps = run_python("def add(a, b):\n    return a + b", tests=no_caps)
        program_caps = run_python(no_caps)
        # the program shares init's uid here: a signal to init (pid 1) must not end the sandbox
        signalled = run_python("import os, signal\nfor sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):\n"
                               "    os.kill(1, sig)\nimport time\ntime.sleep(0.2)\nprint('still here')")
        return {"signalled": [signalled.stdout, signalled.setup_error],"uid": os.getuid(), "protections": run.protections, "stdout": run.stdout, "wrote": wrote,
                "passed": passed, "forged": forged, "driver_caps": caps.tests, "program_caps": program_caps.ok}

    try:
        out = _as_unprivileged_user(scenario)
    finally:
        host.kill()
        host.wait()
        shutil.rmtree(own, ignore_errors=True)
    assert "error" not in out, out
    assert out["uid"] == UNPRIVILEGED_UID  # the caller really was an ordinary user
    assert {"user-namespace", "pid-namespace", "mount", "ipc-namespace", "no-network", "read-only-fs", "private-proc",
            "private-tmp", "uid-65534"} <= set(out["protections"]), out
    lines = out["stdout"].splitlines()
    assert lines[0] == "65534 65534" and lines[1] == "['lo']", out  # mapped to nobody; only a loopback
    assert secret not in out["stdout"] and int(lines[2]) <= 3, out  # its own processes only
    assert lines[-1] == "denied 2" and not out["wrote"], out  # ENOENT: the caller's own directory is not even there
    assert out["passed"] and out["forged"] == []  # every forgery fails here too
    assert out["driver_caps"] == {"passed": True, "requests": 0} and out["program_caps"], out
    assert out["signalled"] == ["still here\n", None], out


@pytest.mark.skipif(os.geteuid() != 0 or not sys.platform.startswith("linux"), reason="needs root to become another uid")
def test_without_root_the_callers_files_and_groups_give_nothing_away():
    # an ordinary user in a supplementary group (as `docker` would be) with a hub token of its own (0600) in its
    # home: the program reads neither, and the verdict's detail never carries them
    group, secret = 54322, f"hf_{uuid.uuid4().hex}"
    base = tempfile.mkdtemp(prefix="rewardlab-user-", dir="/run" if os.path.isdir("/run") else "/var/lib")
    os.chmod(base, 0o755)
    home, shared = os.path.join(base, "home"), os.path.join(base, "group-only")
    os.makedirs(os.path.join(home, ".cache", "huggingface"))
    os.mkdir(shared)
    token, group_file = os.path.join(home, ".cache", "huggingface", "token"), os.path.join(shared, "secret")
    for path, mode in ((token, 0o600), (group_file, 0o640)):
        with open(path, "w") as fh:
            fh.write(secret)
        os.chmod(path, mode)
    for path in (home, os.path.dirname(token), os.path.dirname(os.path.dirname(token)), token):
        os.chown(path, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
    os.chmod(home, 0o700)
    os.chown(group_file, 0, group)
    os.chmod(shared, 0o750)
    os.chown(shared, 0, group)
    probe = (f"import os\nfor path in ({token!r}, {group_file!r}):\n    try:\n        print(open(path).read())\n"
             "    except OSError as e:\n        print('denied', e.errno)")

    def scenario():
        from verifiers.code_kind import verify_code

        mine = open(token).read() == secret and open(group_file).read() == secret  # the caller itself can read both
        run = run_python(probe)
        leak = fenced(f"raise SystemExit(open({token!r}).read())")
        stdio = verify_code(leak, ADD_TESTS, **LIMITS)
        asserts = verify_code(fenced(f"X = open({group_file!r}).read()\ndef add(a, b):\n    return a + b"), ADD_ASSERTS, **LIMITS)
        printed = verify_code(fenced(f"print(open({token!r}).read())"), ADD_TESTS, **LIMITS)
        return {"mine": mine, "stdout": run.stdout, "protections": run.protections,
                "details": [stdio.detail, asserts.detail, printed.detail]}

    try:
        out = _as_unprivileged_user(scenario, groups=[group])
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert "error" not in out and out["mine"], out
    assert "user-namespace" in out["protections"] and "minimal-root" in out["protections"], out
    assert out["stdout"] == "denied 2\ndenied 2\n", out  # neither path exists in the sandbox
    assert all(secret not in detail for detail in out["details"]), out
    assert all(len(detail) <= 2200 for detail in out["details"]), out


@pytest.mark.skipif(os.geteuid() != 0 or not sys.platform.startswith("linux"), reason="needs root to become another uid")
@pytest.mark.parametrize("refused,why", [
    ("unshare", "refused a user namespace"),  # as `kernel.unprivileged_userns_clone=0` would
    ("mount", "mounts in it were refused"),  # made, but no right in it (as Ubuntu's AppArmor restriction)
])
def test_without_root_a_refused_user_namespace_falls_back_and_says_so_once(refused, why):
    # the kernel's refusal is played by a seccomp filter on the caller
    def scenario():
        import errno
        import logging

        import pyseccomp

        records: list[logging.LogRecord] = []
        handler = logging.Handler()
        handler.emit = records.append  # type: ignore[method-assign]
        logging.getLogger("verifiers.sandbox").addHandler(handler)
        refuse = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        refuse.add_rule(pyseccomp.ERRNO(errno.EPERM), refused)
        refuse.load()
        runs = [run_python("print(input()[::-1])", "abc") for _ in range(2)]
        return {"protections": runs[0].protections, "stdout": [r.stdout for r in runs],
                "warnings": [r.getMessage() for r in records]}

    out = _as_unprivileged_user(scenario)
    assert "error" not in out, out
    assert out["stdout"] == ["cba\n", "cba\n"]
    assert "user-namespace" not in out["protections"] and "rlimits" in out["protections"], out
    assert len(out["warnings"]) == 1 and why in out["warnings"][0], out  # loudly, once


def _fds_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="boots are served where pidfds exist (Linux >= 5.3)")
def test_the_boot_server_forks_every_run_holds_nothing_and_never_dies_with_a_thread():
    # one boot server per process forks each run's boot: it keeps no descriptor of any run (a later boot
    # would inherit it), its parent-death signal fires when the *thread* that started it ends (so only the
    # main thread starts it; another thread uses it or, before it exists, starts a boot of its own), and a
    # server that died is replaced
    from verifiers import sandbox

    assert run_python("print(1)").stdout == "1\n"
    server = sandbox._server[str(os.getpid())]
    assert server.alive()
    held = _fds_of(server.proc.pid)
    for n in range(4):
        if n % 2:
            assert run_python(f"def f():\n    return {n}", tests=f"assert f() == {n}").tests_passed
        else:
            assert run_python(f"print({n})").stdout == f"{n}\n"
    assert _fds_of(server.proc.pid) == held  # every request's pipes were closed once its boot was forked
    out: list = []
    worker = threading.Thread(target=lambda: out.append(run_python("print(2)")))
    worker.start()
    worker.join()
    assert out[0].ok and out[0].stdout == "2\n", out[0]
    assert server.alive() and sandbox._server[str(os.getpid())] is server  # served, not replaced, not dead
    server.proc.kill()
    server.proc.wait()
    assert run_python("print(3)").stdout == "3\n"  # a new server
    assert sandbox._server[str(os.getpid())] is not server
    sandbox._server.clear()
    out.clear()
    worker = threading.Thread(target=lambda: out.append(run_python("print(4)")))
    worker.start()
    worker.join()
    assert out[0].stdout == "4\n" and not sandbox._server  # no server started by a thread that ends
    assert run_python("print(5)").stdout == "5\n" and sandbox._server


def test_where_no_boot_server_can_run_each_run_starts_its_own_boot(monkeypatch, tmp_path, caplog):
    # a server that ends before serving (here: its entry point exits at once) is not started again; runs go on,
    # each with a boot of its own interpreter, and the fallback is logged once
    import shutil

    from verifiers import sandbox

    for name in ("sandbox_boot.py", "sandbox_harness.py"):
        shutil.copy(os.path.join(os.path.dirname(sandbox.__file__), name), tmp_path)
    with open(tmp_path / "sandbox_boot.py", "a") as fh:
        fh.write("\n\ndef serve_boots():\n    os._exit(3)\n")
    monkeypatch.setattr(sandbox, "BOOT", sandbox.Path(tmp_path, "sandbox_boot.py"))
    monkeypatch.setattr(sandbox, "_server", {})
    monkeypatch.setattr(sandbox, "_server_refused", None)
    with caplog.at_level("WARNING", logger="verifiers.sandbox"):
        for n in range(3):
            assert run_python(f"print({n})").stdout == f"{n}\n"
    assert sandbox._server_refused is not None and not sandbox._server
    assert sum("boot server ended before serving" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="boots are served where pidfds exist (Linux >= 5.3)")
def test_a_forked_process_never_uses_its_parents_boot_server():
    from verifiers import sandbox

    assert run_python("print(1)").stdout == "1\n"
    parent_server = sandbox._server[str(os.getpid())]
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        code = 1
        try:
            run = run_python("print(7)")
            mine = sandbox._server.get(str(os.getpid()))
            os.write(write, json.dumps({"stdout": run.stdout, "own": mine is not None and mine is not parent_server}).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(child, 0)
    got = json.loads(os.read(read, 65536))
    os.close(read)
    assert status == 0 and got == {"stdout": "7\n", "own": True}
    assert parent_server.alive() and run_python("print(8)").stdout == "8\n"


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="boots are served where pidfds exist (Linux >= 5.3)")
def test_a_served_boot_past_its_limit_is_killed_with_everything_it_started():
    # a served boot is not the caller's child: it is killed through its pidfd, and its init and program die
    # with it (parent-death signal, pid namespace)
    marker = f"{uuid.uuid4().hex[:8]}"
    code = f"import os, time\nif os.fork() == 0:\n    os.execv('/bin/sleep', ['/bin/sleep', '31.{marker}'])\ntime.sleep(60)"
    start = time.monotonic()
    run = run_python(code, limits=SandboxLimits(wall_seconds=1.5))
    assert run.timed_out and time.monotonic() - start < 10
    time.sleep(0.3)
    left = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline_has(p, f"31.{marker}")]
    assert left == []


def _cmdline_has(pid: str, text: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return text.encode() in fh.read()
    except OSError:
        return False


def test_boots_json_reads_and_writes_as_the_json_module_does():
    """The sandbox's boot process reads its configuration and the driver's report with json's C scanner
    (importing `json` itself, and re with it, was ~4.5 of its ~27 ms start-up): generated values round-trip exactly as
    json.dumps / json.loads do, and what json.loads rejects is a ValueError here too."""
    import importlib.util
    import random

    spec = importlib.util.spec_from_file_location("boot_under_test", os.path.join(os.path.dirname(__file__), "..", "..",
                                                                                 "verifiers", "sandbox_boot.py"))
    boot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(boot)
    rng = random.Random(5)

    def value(depth: int = 0):
        kind = rng.randrange(8 if depth < 4 else 5)
        if kind == 0:
            return rng.choice([None, True, False])
        if kind == 1:
            return rng.randint(-10**20, 10**20)
        if kind == 2:
            return rng.choice([rng.uniform(-1e6, 1e6), 1e300, -0.0, 5e-324])
        if kind in (3, 4):
            return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 32), rng.randrange(0x80, 0x3000),
                                           0x1F600, ord('"'), ord("\\")])) for _ in range(rng.randrange(12)))
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {str(value(depth + 1)): value(depth + 1) for _ in range(rng.randrange(4))}

    for _ in range(500):
        v = value()
        assert boot._json_dumps(v) == json.dumps(v)
        assert boot._json_loads(json.dumps(v).encode()) == json.loads(json.dumps(v))
    for bad in [b"", b"{", b"{} x", b"\xff", b"nul", b"[1,]", b'{"a" 1}', b"'a'", b"[1] [2]"]:
        with pytest.raises(ValueError):
            json.loads(bad)
        with pytest.raises(ValueError):
            boot._json_loads(bad)
    assert boot._json_loads(b' \n{"a": NaN, "b": -Infinity}\t') == {"a": pytest.approx(float("nan"), nan_ok=True), "b": float("-inf")}
    with pytest.raises(TypeError):
        boot._json_dumps({"a": object()})
