"""The `code` kind and its sandbox: right verdicts, and hostile programs stay contained."""

from __future__ import annotations

import json
import os
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


def test_fork_bomb_leaves_no_process_behind():
    code = "import os, time\nfor _ in range(20):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\nprint('parent done')"
    run = run_python(code, limits=SandboxLimits(wall_seconds=3))
    assert "parent done" in run.stdout
    if os.geteuid() == 0:  # the pid namespace dies with its init
        time.sleep(0.2)
        leftovers = [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == 65534]
        assert leftovers == []


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
    # as a non-root caller: no namespaces, no uid change; rlimits, session and wall-clock kill remain
    import verifiers.sandbox as sandbox

    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    run = sandbox.run_python("print(input()[::-1])", "abc")
    assert run.ok and run.stdout == "cba\n"
    assert run.protections == ["rlimits", "new-session"]  # recorded, so callers can see what was in force
    slow = sandbox.run_python("import time\ntime.sleep(30)", limits=SandboxLimits(wall_seconds=1))
    assert slow.timed_out and slow.wall < 3
