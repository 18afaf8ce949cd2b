"""Run an untrusted Python program with limits: `run_python(source, stdin, limits, tests=None)`.

The program runs in a separate process tree started through `verifiers/sandbox_boot.py`:
CPU-time, address-space, process-count, file-size and open-file limits (setrlimit); a fresh
working directory; an allow-listed environment; a wall-clock limit enforced from here (SIGKILL);
and on Linux: new pid / mount / network / IPC / UTS namespaces, a private /proc, the host's
filesystem read-only, private size-capped /tmp, /var/tmp and /dev/shm, and uid/gid 65534
(`nobody`) -- as root directly, as an ordinary user inside an unprivileged user namespace of its
own (the caller's uid is 65534 there, no capability is left). Only where the kernel refuses those
does it degrade to rlimits, a new session and a wall-clock kill of the session (logged once per
process; documented in docs/verifiers.md); the protections actually applied are returned in
`SandboxRun.protections`.

With `tests` (Python test code, e.g. asserts), the program is loaded by a host process and the
tests run in a separate driver process against it (`verifiers/sandbox_harness.py`);
`SandboxRun.tests_passed` is True only when the driver reported, with this run's nonce, that the
whole test code ran without an exception: how the program exits proves nothing.

>>> run = run_python("print(int(input()) * 2)", stdin="21\\n")
>>> run.ok, run.stdout
(True, '42\\n')
"""

from __future__ import annotations

import base64
import dataclasses
import errno
import functools
import hmac
import json
import logging
import math
import os
import secrets
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

BOOT = Path(__file__).with_name("sandbox_boot.py")
HARNESS = Path(__file__).with_name("sandbox_harness.py")
# boot imported as a module: its bytecode comes from __pycache__ (compiling the script's source was ~14 ms of each
# boot's start-up); its folder last on sys.path (verifiers/types.py is no `types`), -I: nothing of the caller's
BOOT_MAIN = "import sys; sys.path.append({folder!r}); import {module}; {module}.{call}()"
NOBODY = 65534
# Without root: isolate in an unprivileged user namespace (where the kernel allows them), else fall back.
USER_NAMESPACES = True
BOOT_SERVER = True  # fork each run's boot process from a boot server (one per process) instead of a new interpreter
_log = logging.getLogger(__name__)
_warned: set[str] = set()  # each sandbox warning is logged once per process
_userns_refused: str | None = None  # why user namespaces, though created, could not be set up here (then: fallback)


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one sandboxed run (defaults suit short competitive-programming style tests)."""

    cpu_seconds: float = field(default=2.0, metadata={"help": "CPU time (RLIMIT_CPU, rounded up to whole seconds)"})
    wall_seconds: float = field(default=5.0, metadata={"help": "wall-clock limit; the process tree is killed past it"})
    memory_mb: int = field(default=512, metadata={"help": "address space (RLIMIT_AS) in MiB"})
    max_processes: int = field(default=32, metadata={"help": "processes of the sandbox user (RLIMIT_NPROC)"})
    file_size_mb: int = field(default=16, metadata={"help": "largest file the program may write (RLIMIT_FSIZE)"})
    open_files: int = field(default=64, metadata={"help": "open file descriptors (RLIMIT_NOFILE)"})
    tmpfs_mb: int = field(default=64, metadata={"help": "size of the private /tmp (when namespaces are available)"})
    max_output_kb: int = field(default=1024, metadata={"help": "stdout+stderr kept; more output kills the run"})
    network: bool = field(default=False, metadata={"help": "allow network (default: a new, empty network namespace)"})
    drop_privileges: bool = field(default=True, metadata={"help": "run as uid/gid 65534 when started as root"})

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "wall_seconds", "memory_mb", "max_processes", "file_size_mb", "open_files",
                     "tmpfs_mb", "max_output_kb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a positive number, got {value!r}")
        for name in ("network", "drop_privileges"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"SandboxLimits.{name} must be true or false, got {getattr(self, name)!r}")


@dataclass
class SandboxRun:
    """What happened: exit status, output, and which protections were in force."""

    returncode: int | None  # exit code, or None when killed by a signal / never started
    signal: str | None  # e.g. "SIGKILL", "SIGXCPU", "SIGSEGV"
    stdout: str
    stderr: str
    timed_out: bool  # wall-clock limit or CPU limit hit
    output_limited: bool  # killed for writing more than max_output_kb
    wall: float
    protections: list[str] = dataclasses.field(default_factory=list)
    setup_error: str | None = None  # the sandbox itself failed (not the program)
    cpu: float | None = None  # CPU seconds the program used
    tests: dict | None = None  # the test driver's report (runs with `tests`): passed, or verdict + detail
    tests_passed: bool = False  # the driver reported a pass carrying this run's nonce
    userns_refused: str | None = None  # a user namespace was made but could not be set up (the run is retried without)
    collected: dict[str, bytes] | None = None  # files a build left in its folder (`run_program(collect=...)`)
    cases: list[dict] = dataclasses.field(default_factory=list)  # raw per-case status events (`run_cases`)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.output_limited and not self.setup_error


# Syscalls the program and the test driver may not make (EPERM), by what they would give: new namespaces
# (a user namespace brings mount and network namespaces, tmpfs mounts), mounts, tracing and reading other
# processes, the kernel keyring, eBPF, perf events, userfaultfd (a tool for kernel exploits), io_uring (its
# operations bypass this filter), modules, kexec, handles to host files, and host-wide settings.
DENIED_SYSCALLS = (
    "unshare", "setns",
    "mount", "umount2", "pivot_root", "chroot", "mount_setattr", "open_tree", "move_mount", "fsopen", "fsconfig",
    "fsmount", "fspick",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "open_by_handle_at", "name_to_handle_at",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "syslog", "settimeofday", "clock_settime", "adjtimex",
    "iopl", "ioperm", "lookup_dcookie",
    "memfd_create", "memfd_secret",  # anonymous files: memory outside RLIMIT_AS and outside the item's tmpfs
)
AF_UNIX, SOCK_DGRAM, SOCK_TYPE_MASK = 1, 2, 0xF
# socket(AF_UNIX, ...) is refused too: a path-bound (or, without a network namespace, abstract) Unix socket of
# the host -- a docker or D-Bus socket -- is never reached from the sandbox, whatever its owner and mode.
# socketpair(AF_UNIX) stays (asyncio and multiprocessing.Pipe use it) except for datagrams, whose sendto(2) and
# connect(2) may name any socket path.
# clone(2) with any of these flags (new namespaces) is refused too; clone3 passes its flags in memory, which a
# filter cannot read, so it answers ENOSYS and the C library falls back to clone.
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080)


@functools.lru_cache(maxsize=1)
def seccomp_filter() -> tuple[str | None, str | None]:
    """(the deny-list filter as classic BPF, hex; None) or (None, why there is none). Built once per process
    with libseccomp (`pyseccomp`), which resolves the names and checks the architecture; boot loads it."""
    if not sys.platform.startswith("linux"):
        return None, "no seccomp outside Linux"
    try:
        import pyseccomp as seccomp
    except Exception as exc:  # noqa: BLE001 - not installed, or libseccomp missing: the sandbox runs without a filter
        return None, f"no syscall filter: pyseccomp with libseccomp is not available ({type(exc).__name__}: {exc})"
    try:
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        for name in DENIED_SYSCALLS:
            try:
                rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
            except (ValueError, OSError):
                pass  # not a syscall of this architecture (e.g. iopl on arm64)
        for flag in CLONE_NAMESPACE_FLAGS:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "socket", seccomp.Arg(0, seccomp.EQ, AF_UNIX))
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "socketpair", seccomp.Arg(0, seccomp.EQ, AF_UNIX),
                       seccomp.Arg(1, seccomp.MASKED_EQ, SOCK_TYPE_MASK, SOCK_DGRAM))
        return _bpf_hex(rules), None
    except Exception as exc:  # noqa: BLE001 - same: reported as a missing protection
        return None, f"no syscall filter: libseccomp failed ({type(exc).__name__}: {exc})"


@functools.lru_cache(maxsize=1)
def own_limits_filter() -> str | None:
    """A second filter (classic BPF, hex) for the program and the test driver: prlimit on any process but the
    caller's own refused (EPERM). A process of the sandbox's uid could otherwise lower the limits of an init of
    the same ids (a user namespace of an ordinary caller maps one id only), which fails the next test case as
    the sandbox's error; setrlimit/getrlimit (pid 0) are untouched. Not loaded by an init that starts the cases
    itself: it sets each case's CPU limit. None where `seccomp_filter` has none."""
    if seccomp_filter()[0] is None:
        return None
    import pyseccomp as seccomp

    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.add_rule(seccomp.ERRNO(errno.EPERM), "prlimit64", seccomp.Arg(0, seccomp.NE, 0))
    return _bpf_hex(rules)


def _bpf_hex(rules) -> str:
    with tempfile.TemporaryFile() as fh:  # libseccomp writes to a file descriptor
        rules.export_bpf(fh)
        fh.seek(0)
        return fh.read().hex()


def _env() -> dict[str, str]:
    """The whole environment of the sandbox (boot, driver and program): an allow-list, nothing of the caller's."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp/sandbox",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_python(source: str, stdin: str = "", limits: SandboxLimits | None = None, tests: str | None = None) -> SandboxRun:
    """Run `source` as a Python program reading `stdin`, or, with `tests`, run the test code
    against it in a separate process; see the module docstring."""
    global _userns_refused
    run = _run_once(source, stdin, limits or SandboxLimits(), tests)
    if run.userns_refused:  # a user namespace without the rights to set itself up: fall back for good, once
        _userns_refused = run.userns_refused
        _log.warning("code sandbox: %s; running with fewer protections from now on (see 'Fallback' in "
                     "docs/verifiers.md)", run.userns_refused)
        run = _run_once(source, stdin, limits or SandboxLimits(), tests)
    return run


def run_program(argv: list[str], files: dict[str, str], stdin: str = "", limits: SandboxLimits | None = None,
                **program: object) -> SandboxRun:
    """Run `argv` (a compiler, a compiled program, another interpreter) instead of Python, with the same
    isolation and limits as `run_python`. `files`: text files of its folder; `program` may add
    `binary_files` (name -> bytes), `exec_files` (names made executable), `collect` (names or "*.ext" of
    files read back after it ended, into `SandboxRun.collected`), `env` (added to the allow-listed
    environment), `expose` (toolchain folders to make reachable for uid 65534)."""
    global _userns_refused
    spec = {"argv": list(argv), "files": files, **program}
    run = _run_once("", stdin, limits or SandboxLimits(), None, spec)
    if run.userns_refused:
        _userns_refused = run.userns_refused
        run = _run_once("", stdin, limits or SandboxLimits(), None, spec)
    return run


def run_cases(argv: list[str], stdins: list[str], limits: SandboxLimits | None = None, **program: object) -> list[SandboxRun]:
    """`run_program` once per stdin, the runs in one sandbox (one setup for all the cases): each case a fresh
    process with `limits` (CPU and wall per case), everything it left killed before the next. Stops after the
    first case that does not exit 0: the list may be shorter than `stdins`. Without a pid namespace (the only
    way to kill what a case left behind) it runs one sandbox per case."""
    limits = limits or SandboxLimits()
    files = {f"case-{i}.txt": text for i, text in enumerate(stdins)}
    spec = {"argv": list(argv), "files": {**program.pop("files", {}), **files}, **program,  # type: ignore[dict-item]
            "cases": list(files), "case_wall_seconds": limits.wall_seconds, "case_output_bytes": limits.max_output_kb * 1024}
    whole = dataclasses.replace(limits, wall_seconds=limits.wall_seconds * len(stdins) + 2)
    run = _run_once("", "", whole, None, spec)
    if run.setup_error or not run.cases:
        if run.setup_error and not run.userns_refused and "cases_refused" not in run.setup_error:
            return [run]
        return _cases_one_by_one(argv, stdins, limits, spec)
    runs = [_case_run(event, run, limits) for event in run.cases]
    if len(runs) < len(stdins) and (not runs or runs[-1].ok):  # the sandbox ended (or was killed) before a case ended
        run.setup_error = run.setup_error or (None if run.timed_out or run.output_limited else
                                              f"the sandbox ended before test case {len(runs) + 1}")
        runs.append(run)
    return runs


def _cases_one_by_one(argv: list[str], stdins: list[str], limits: SandboxLimits, spec: dict) -> list[SandboxRun]:
    keep = {k: v for k, v in spec.items() if k not in ("argv", "files", "cases", "case_wall_seconds", "case_output_bytes")}
    files = {k: v for k, v in spec["files"].items() if not k.startswith("case-")}
    runs = []
    for stdin in stdins:
        runs.append(run_program(argv, files, stdin, limits, **keep))
        if not runs[-1].ok:
            break
    return runs


def _case_run(event: dict, whole: SandboxRun, limits: SandboxLimits) -> SandboxRun:
    cap = limits.max_output_kb * 1024
    out, err = bytes.fromhex(str(event.get("stdout", ""))), bytes.fromhex(str(event.get("stderr", "")))
    limited = len(out) + len(err) > cap or event.get("signal") == signal.SIGXFSZ
    run = SandboxRun(returncode=event.get("exit") if isinstance(event.get("exit"), int) else None,
                     signal=_signal_name(event["signal"]) if isinstance(event.get("signal"), int) else None,
                     stdout=out[:cap].decode("utf-8", errors="replace"), stderr=err[:cap].decode("utf-8", errors="replace"),
                     timed_out=bool(event.get("timed_out")), output_limited=limited, wall=float(event.get("wall") or 0),
                     protections=whole.protections, cpu=event.get("cpu"))
    run.timed_out |= _over_cpu(event, max(1, math.ceil(limits.cpu_seconds)))
    return run


def _run_once(source: str, stdin: str, limits: SandboxLimits, tests: str | None, program: dict | None = None) -> SandboxRun:
    root = os.geteuid() == 0
    workdir = tempfile.mkdtemp(prefix="rewardlab-sandbox-")
    proc, status_r, status_w = _take_boot()
    nonce = secrets.token_hex(16)
    try:
        files = {"solution.py": source, "input.txt": stdin}
        if tests is not None:
            files["harness.py"] = HARNESS.read_text(encoding="utf-8")
        if program is not None:  # run_program: its own files and command
            files = {**program["files"], "input.txt": stdin}
        cfg = {
            "workdir": workdir,
            "files": files,
            "tests": tests,
            "nonce": nonce,
            "namespaces": root and sys.platform.startswith("linux"),
            "userns": not root and USER_NAMESPACES and not _userns_refused and sys.platform.startswith("linux"),
            "network": limits.network,
            "uid": NOBODY if root and limits.drop_privileges else None,
            "executable": os.path.realpath(sys.executable),
            "paths": sorted({os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, os.path.dirname(sys.executable),
                                                              os.path.dirname(os.path.realpath(sys.executable)))}),
            "cpu_seconds": limits.cpu_seconds,
            "memory_mb": limits.memory_mb,
            "max_processes": limits.max_processes,
            "file_size_mb": limits.file_size_mb,
            "open_files": limits.open_files,
            "tmpfs_mb": limits.tmpfs_mb,
            "env": _env(),
            "seccomp": seccomp_filter()[0],
            "seccomp_own_limits": own_limits_filter(),
        }
        if program is not None:
            cfg.update(argv=program["argv"], env={**_env(), **program.get("env", {})},
                       binary_files={k: base64.b64encode(v).decode() for k, v in program.get("binary_files", {}).items()},
                       exec_files=list(program.get("exec_files", ())), collect=list(program.get("collect", ())),
                       expose=[os.path.realpath(p) for p in program.get("expose", ())])
            for key in ("cases", "case_wall_seconds", "case_output_bytes"):
                if key in program:
                    cfg[key] = program[key]
        if cfg["seccomp"] is None and seccomp_filter()[1] not in _warned:
            _warned.add(seccomp_filter()[1])
            _log.warning("code sandbox: %s; the program may call unshare, mount, ptrace, keyctl, bpf, perf_event_open, "
                         "userfaultfd, ... (install it with scripts/install.sh)", seccomp_filter()[1])
        start = time.monotonic()
        os.close(status_w)  # boot holds its own copy
        status_w = -1
        try:  # the configuration goes through a pipe: it never shows in a command line
            proc.stdin.write(json.dumps(cfg).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass  # boot died at once: _collect reports it
        run = _collect(proc, status_r, limits, start)
        if run.tests is not None:
            given = run.tests.pop("nonce", None)
            run.tests_passed = run.tests.get("passed") is True and isinstance(given, str) and hmac.compare_digest(given, nonce)
        return run
    finally:
        if status_w >= 0:
            os.close(status_w)
        os.close(status_r)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if isinstance(proc, _ServedBoot):
            proc.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _start_boot() -> tuple[subprocess.Popen, int, int]:
    """A boot process of its own interpreter, waiting for its configuration on stdin (where no boot server
    can serve: another thread than the main one before the server was started, no pidfd on this system)."""
    status_r, status_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _boot_command("main"), str(status_w), str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(status_w,),
        start_new_session=True,
        env=_env(),  # never the caller's: the driver runs (client-sent) test code in boot's environment
    )
    return proc, status_r, status_w


def _boot_command(call: str) -> str:
    return BOOT_MAIN.format(folder=str(BOOT.parent), module=BOOT.stem, call=call)


class _ServedBoot:
    """A boot process forked by the boot server, with what `_run_once` uses of a `subprocess.Popen`. Not our
    child: it is waited for and killed through its pidfd (no pid is ever signalled after it could be reused);
    its exit status is the server's, which lets the kernel reap it."""

    def __init__(self, pid: int, pidfd: int, stdin: int, stdout: int, stderr: int) -> None:
        self.pid, self.pidfd, self.returncode = pid, pidfd, None
        self.stdin, self.stdout, self.stderr = os.fdopen(stdin, "wb"), os.fdopen(stdout, "rb"), os.fdopen(stderr, "rb")

    def poll(self) -> str | None:
        if self.returncode is None and select.select([self.pidfd], [], [], 0)[0]:
            self.returncode = "unknown (a boot of the boot server)"
        return self.returncode

    def wait(self) -> str:
        select.select([self.pidfd], [], [])
        return self.poll()

    def kill(self) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        for pipe in (self.stdin, self.stdout, self.stderr):
            pipe.close()
        os.close(self.pidfd)


class _BootServer:
    """The boot server of this process (`sandbox_boot.serve_boots`): each run's boot is a fork of a process whose
    start-up is done, ~2.5 ms of CPU where a new interpreter took ~25 (on 2 cores it competed with the runs).
    It holds nothing of any item (see `serve_boots`). Started by the main thread only: its parent-death signal fires
    when the thread that started it ends."""

    def __init__(self) -> None:
        import socket

        self.owner, self.served = os.getpid(), 0
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(30)
        self.lock = threading.Lock()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _boot_command("serve_boots"), str(theirs.fileno()), str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), start_new_session=True, env=_env())
        finally:
            theirs.close()

    def boot(self) -> tuple[_ServedBoot, int, int] | None:
        """A new boot process with its pipes, or None when the server is gone."""
        import socket

        ends = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, status
        theirs = [ends[0][0], ends[1][1], ends[2][1], ends[3][1]]
        try:
            with self.lock:
                socket.send_fds(self.sock, [b"boot"], theirs)
                message, fds, _, _ = socket.recv_fds(self.sock, 16, 1)
        except OSError:  # the server ended (or did not answer in 30 s)
            message, fds = b"", []
        for fd in theirs[:3]:
            os.close(fd)
        if len(message) != 4 or len(fds) != 1:
            for fd in (*fds, ends[0][1], ends[1][0], ends[2][0], ends[3][0], ends[3][1]):
                os.close(fd)
            self.stop()
            return None
        boot = _ServedBoot(int.from_bytes(message, sys.byteorder), fds[0], ends[0][1], ends[1][0], ends[2][0])
        return boot, ends[3][0], ends[3][1]

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.proc.poll() is None

    def stop(self) -> None:
        self.sock.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


_server: dict[str, _BootServer] = {}  # this process's boot server (one inherited through fork is not ours)
_server_lock = threading.Lock()
_server_refused: str | None = None  # why this system cannot run one (a server that served nothing): none is tried again


def _take_boot() -> tuple:
    """A boot process waiting for its configuration: forked by this process's boot server (started on first
    use by the main thread), else started as its own interpreter."""
    global _server_refused
    if BOOT_SERVER and hasattr(os, "pidfd_open") and _server_refused is None:
        with _server_lock:
            server = _server.pop(str(os.getpid()), None)
            for other in _server.values():  # a server inherited from a parent process (fork) is not ours to use
                other.sock.close()
            _server.clear()
            if server is not None and not server.alive():
                server.stop()
                server = None
            if server is None and threading.current_thread() is threading.main_thread():
                server = _BootServer()
            if server is not None:
                _server[str(os.getpid())] = server
        boot = server.boot() if server is not None else None
        if boot is not None:
            server.served += 1
            return boot
        if server is not None and server.served == 0:
            with _server_lock:
                _server.pop(str(os.getpid()), None)
            _server_refused = f"boot server exit code {server.proc.returncode}"
            _log.warning("code sandbox: the boot server ended before serving a run (%s); each run starts its own "
                         "boot process from now on", _server_refused)
        elif server is not None:
            _log.warning("code sandbox: the boot server ended after %d runs (exit code %s); this run starts its own "
                         "boot process, the next one a new server", server.served, server.proc.returncode)
    return _start_boot()


def _collect(proc: subprocess.Popen, status_r: int, limits: SandboxLimits, start: float) -> SandboxRun:
    """Read output and status events until the program ends or a limit is hit."""
    cap = limits.max_output_kb * 1024
    out = {"stdout": bytearray(), "stderr": bytearray(), "status": bytearray()}
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "stdout")
    selector.register(proc.stderr, selectors.EVENT_READ, "stderr")
    selector.register(status_r, selectors.EVENT_READ, "status")
    deadline = start + limits.wall_seconds
    timed_out = output_limited = False
    while selector.get_map():
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        for key, _ in selector.select(timeout=left):
            data = os.read(key.fd, 65536)
            if not data:
                selector.unregister(key.fileobj)
                continue
            out[key.data] += data
        if len(out["stdout"]) + len(out["stderr"]) > cap:
            output_limited = True
            break
    selector.close()
    events = [json.loads(line) for line in out["status"].decode(errors="replace").splitlines() if line.strip()]
    if timed_out or output_limited:
        _kill_tree(proc, events)
    proc.wait()
    # drain status written just before a kill (it is in the pipe already)
    os.set_blocking(status_r, False)
    try:
        tail = os.read(status_r, 65536)
        events += [json.loads(line) for line in tail.decode(errors="replace").splitlines() if line.strip()]
    except BlockingIOError:
        pass
    run = SandboxRun(
        returncode=None,
        signal=None,
        stdout=out["stdout"][:cap].decode("utf-8", errors="replace"),
        stderr=out["stderr"][:cap].decode("utf-8", errors="replace"),
        timed_out=timed_out,
        output_limited=output_limited,
        wall=time.monotonic() - start,
    )
    cpu_limit = max(1, math.ceil(limits.cpu_seconds))  # as set by the boot (whole seconds)
    for event in events:
        if "case" in event:  # one test case of `run_cases`: read there
            run.cases.append(event)
            continue
        if "protections" in event:
            run.protections = event["protections"]
        if "exit" in event:
            run.returncode = event["exit"]
        if "signal" in event:
            run.signal = _signal_name(event["signal"])
        if "exit" in event or "signal" in event:
            run.cpu = event.get("cpu")
            run.timed_out |= _over_cpu(event, cpu_limit)
        if "driver" in event:
            # no report: the driver was killed or crashed, which only the program (or a limit) can cause
            run.tests = event.get("report") or {"passed": False, "verdict": "incorrect", "detail": _driver_end(event["driver"])}
            run.timed_out |= _over_cpu(event["driver"], cpu_limit)
        if "setup_error" in event:
            run.setup_error = event["setup_error"]
        if isinstance(event.get("collected"), dict):
            run.collected = {str(k): base64.b64decode(v) for k, v in event["collected"].items() if isinstance(v, str)}
        if isinstance(event.get("cases_refused"), str):
            run.setup_error = f"cases_refused: {event['cases_refused']}"
        if isinstance(event.get("userns_refused"), str):
            run.setup_error = run.userns_refused = event["userns_refused"]
        if isinstance(event.get("warning"), str) and event["warning"] not in _warned:
            _warned.add(event["warning"])  # loudly, once: the runs that follow have fewer protections too
            _log.warning("code sandbox: %s; running with fewer protections (see 'Fallback' in docs/verifiers.md)",
                         event["warning"])
    if run.returncode is None and run.signal is None and not (timed_out or output_limited) and not run.setup_error:
        run.setup_error = f"sandbox ended without a status (boot exit code {proc.returncode})"
    return run


def _over_cpu(ended: dict, cpu_limit: int) -> bool:
    """Did a process end on the CPU-time limit? SIGXCPU, or killed (SIGKILL at the hard limit,
    for a program that ignores SIGXCPU) after using the whole limit."""
    if ended.get("signal") == signal.SIGXCPU:
        return True
    return ended.get("signal") == signal.SIGKILL and (ended.get("cpu") or 0) >= cpu_limit and not ended.get("after_tests")


def _driver_end(ended: dict) -> str:
    how = f"killed by {_signal_name(ended['signal'])}" if "signal" in ended else f"exit code {ended.get('exit')}"
    return f"the test driver ended without a report ({how})"


def _kill_tree(proc: subprocess.Popen, events: list[dict]) -> None:
    """SIGKILL the boot process (init follows by parent-death signal, the pid namespace with it);
    without a pid namespace also kill the program's session."""
    if "pid-namespace" not in next((e["protections"] for e in events if "protections" in e), []):
        for event in events:
            for key in ("pid", "driver_pid"):
                if isinstance(event.get(key), int) and event[key] > 1:
                    try:
                        os.killpg(event[key], signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
    if isinstance(proc, _ServedBoot):  # killed through its pidfd; init and its namespace follow (parent-death signal)
        proc.kill()
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
