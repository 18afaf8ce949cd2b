"""Bootstrap of the code sandbox: run as `python -I -S sandbox_boot.py STATUS_FD CALLER_PID` by
`verifiers.sandbox.run_python`, which writes the configuration (JSON: limits, files, test code,
nonce) to its stdin, so none of it shows in a command line. Standard library only; it is the only
code that runs with the caller's privileges before the untrusted program starts.

Process tree (as root; as an ordinary user the same, in a user namespace created by the same
unshare, in which the caller's uid and gid are 65534 and no process keeps a capability):

    boot (this file)  --unshare(pid, mount, net, ipc, uts)-->  fork
      └─ init (pid 1 of a new pid namespace, parent-death signal SIGKILL)
           mounts, in its own mount namespace: every host mount read-only and nosuid; a fresh
           /proc for the new pid namespace (hidepid=2: each uid sees only its own processes);
           size-capped private tmpfs on /tmp, /var/tmp, /dev/shm; directories on the way to the
           interpreter that `nobody` cannot enter are re-exposed read-only with the same paths
           ├─ program (pid 2): new session, rlimits (CPU, address space, processes, file size,
           │  open files, no core), no new privileges, uid/gid 65534, cwd = a fresh tmpfs
           │  directory, scrubbed env, fd 0 = the test input, then exec of the interpreter on
           │  solution.py -- or, with assert-style tests, on harness.py (the solution host)
           └─ driver (assert-style tests only): uid/gid 65533, not dumpable, same limits; runs
              the test code against the host over two pipes (`sandbox_harness.drive`) and hands
              its report to init on a third pipe that the program never holds

When init exits (program, or driver, done) the kernel kills everything left in the pid namespace
(fork bombs, daemons). When the caller kills boot, init gets SIGKILL (parent-death signal), so
does the rest. A status line (JSON) per event goes to the status fd: protections applied, the
program's exit status and CPU time, the driver's report. Boot, init and the driver are not
dumpable: a process of the same uid cannot read their memory or open their file descriptors.
Where the kernel refuses namespaces, it degrades to: rlimits + new session; see docs/verifiers.md.
"""

import _socket  # the boot server's socket (its C half: `socket` imports enum)
import _json  # json's C half: `import json` (and re with it) was ~4.5 of the ~27 ms this process takes to start
import binascii  # base64 in C: `import base64` brings re and struct, ~4.5 ms on an item's path
import ctypes
import fcntl  # (imported on an item's path it was ~1.3 ms of a served boot's start)
import os
import resource
import select
import _signal as signal  # the C half: `signal` itself imports enum, ~5 ms of this process's start-up
import site  # imported here, before any mount: the driver's own modules never come from the sandbox's view
import stat
import sys
import time

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER = 0x04000000, 0x08000000, 0x10000000
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 4096, 8192, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 4, 38, 22, 2
SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE = 442, -100, 0x8000  # mount_setattr(2), Linux >= 5.12
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = 0x1, 0x2
NOBODY = 65534
DRIVER_UID = 65533  # the test driver's identity: not the program's, so the program cannot signal or trace it
LIBC = ctypes.CDLL(None, use_errno=True)


class _JsonContext:
    """What `_json.make_scanner` reads from a `json.JSONDecoder`: the same C scanner json.loads uses."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int

    @staticmethod
    def parse_constant(name):
        return float(name.replace("Infinity", "inf"))


_SCAN = _json.make_scanner(_JsonContext())


def _not_json(value):
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODE = _json.make_encoder(None, _not_json, _json.encode_basestring_ascii, None, ": ", ", ", False, False, True)


def _json_loads(data):
    """json.loads for what boot reads (its configuration, the driver's report); ValueError when it is not one
    JSON value with only white space around it."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data  # UnicodeDecodeError is a ValueError
    start = len(text) - len(text.lstrip(" \t\n\r"))
    try:
        value, end = _SCAN(text, start)
    except StopIteration:
        raise ValueError("not JSON") from None
    if text[end:].strip(" \t\n\r"):
        raise ValueError("extra data after the JSON value")
    return value


def _json_dumps(value):
    return "".join(_ENCODE(value, 0))


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source, target, fstype, flags, data=None):
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(LIBC.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def _status(fd, **event):
    os.write(fd, (_json_dumps(event) + "\n").encode())


def _blocked_dirs(path):
    """Ancestors of `path` that other users cannot enter (mode without o+x)."""
    out, current = [], "/"
    for part in path.strip("/").split("/")[:-1]:
        current = os.path.join(current, part)
        if not os.stat(current).st_mode & stat.S_IXOTH:
            out.append(current)
    return out


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _read_only_everywhere():
    """Every mount of this (private) namespace read-only and nosuid: one recursive mount_setattr
    where the kernel has it, else a remount of each mount point listed in /proc/self/mountinfo."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, 0, 0)
    rc = LIBC.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), b"/", ctypes.c_uint(AT_RECURSIVE),
                      ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))
    if rc == 0:
        return
    with open("/proc/self/mountinfo") as fh:
        points = [line.split()[4] for line in fh]
    for point in points:
        path = point.encode().decode("unicode_escape")  # mountinfo writes spaces etc. as \040
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID
        with open("/proc/self/mountinfo") as fh:
            options = next((line.split()[5] for line in fh if line.split()[4] == point), "")
        flags |= (MS_NODEV if "nodev" in options.split(",") else 0) | (MS_NOEXEC if "noexec" in options.split(",") else 0)
        _mount(None, path, None, flags)


def _private_tmpfs(size_mb):
    """One size-capped tmpfs for /tmp, /var/tmp and /dev/shm together (one budget, not three): a
    directory of it bound on each, then its own root covered by the /tmp one."""
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode=0755")
    for name, path in (("var_tmp", "/var/tmp"), ("shm", "/dev/shm"), ("tmp", "/tmp")):
        if os.path.isdir(path):
            os.mkdir(f"/tmp/{name}")
            os.chmod(f"/tmp/{name}", 0o1777)
            _mount(f"/tmp/{name}", path, None, MS_BIND)


def _ipc_limits(size_mb):
    """SysV shared memory of this item's IPC namespace capped at its tmpfs size (the kernel's
    default is unlimited): a segment is memory outside every process's address space."""
    pages = (size_mb << 20) // os.sysconf("SC_PAGE_SIZE")
    for name, value in (("shmmax", size_mb << 20), ("shmall", pages), ("shmmni", 64)):
        with open(f"/proc/sys/kernel/{name}", "w") as fh:
            fh.write(str(value))


SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # the C library, the loader, tools
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "passwd", "group", "nsswitch.conf", "hosts",
             "mime.types", "ssl", "ca-certificates", "alternatives")  # alternatives: /usr/bin/java -> /etc/alternatives/...
DEV_NODES = ("null", "zero", "full", "random", "urandom")
HIDDEN = ("/etc/ssl/private",)  # group-readable keys (ssl-cert) under a directory the program is given
MNT_DETACH = 2


def _bind(source, root):
    """`source` (a host path) at the same path under `root`: a symlink copied, a directory or a
    file bind-mounted (recursively, flags kept: read-only and nosuid by now)."""
    target = root + source
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    if os.path.islink(source):
        os.symlink(os.readlink(source), target)
        return
    if os.path.isdir(source):
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        open(target, "w").close()
    _mount(source, target, None, MS_BIND | MS_REC)


def _new_root(cfg):
    """A fresh root holding only what a program needs, every piece at its host path: the system
    directories, a few files of /etc, the interpreter's prefix (and the driver's), five device
    nodes. Nothing else of the host -- homes, the caller's own files, /run and its sockets, /sys,
    other users' data -- exists in the sandbox, whatever groups the process keeps."""
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    root = "/tmp/root"
    os.mkdir(root, 0o755)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    etc = [n for n in ETC_FILES if os.path.lexists(f"/etc/{n}")] + sorted(n for n in os.listdir("/etc") if n.startswith("java"))
    wanted = [p for p in SYSTEM_PATHS if os.path.lexists(p)] + [f"/etc/{n}" for n in etc]
    wanted += [f"/dev/{n}" for n in DEV_NODES if os.path.exists(f"/dev/{n}")]
    for path in [*cfg["paths"], *cfg.get("expose", ())]:  # the interpreter's prefixes and a toolchain's folders;
        # a path inside one bound already is covered
        if os.path.exists(path) and not any(path == w or path.startswith(w.rstrip("/") + "/") for w in wanted):
            wanted.append(path)
    folders = [w.rstrip("/") + "/" for w in wanted if not os.path.islink(w)]  # (one lstat each: ~600 were 2-4 ms)
    for path in sorted(wanted, key=len):
        if not any(path.startswith(f) for f in folders):  # (a path inside a bound folder is covered)
            _bind(path, root)
    for path in HIDDEN:
        if os.path.isdir(root + path):
            _mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k,mode=0755")
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    for path in ("/proc", "/tmp", "/var/tmp", "/dev/shm"):
        os.makedirs(root + path, mode=0o755, exist_ok=True)
    # the pid namespace's own /proc (hidepid=2: each uid sees only its own processes), mounted while the host's
    # /proc is still in view: a user namespace may mount proc only where one is fully visible
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    os.chdir(root)
    _check(LIBC.syscall(ctypes.c_long(155 if os.uname().machine == "x86_64" else 41), b".", b"."), "pivot_root")
    _check(LIBC.umount2(b".", MNT_DETACH), "umount of the host's root")
    os.chdir("/")


def _private_mounts(cfg, files, protections):
    """The program's view of the filesystem (see the module docstring); returns its work dir."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _read_only_everywhere()
    _new_root(cfg)
    try:
        _ipc_limits(cfg["tmpfs_mb"])
        protections.append("ipc-limits")
    except OSError:
        pass  # an IPC namespace whose limits this kernel keeps read-only: reported by its absence
    _read_only_everywhere()
    _private_tmpfs(cfg["tmpfs_mb"])
    workdir = "/tmp/sandbox"
    os.mkdir(workdir, 0o700)
    for name, data in files.items():
        with open(os.path.join(workdir, name), "wb") as fh:
            fh.write(data)
    return workdir


def _high(fd):
    """`fd` moved to a number >= 100 (close-on-exec), out of the way of the fixed numbers 0-4."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)
    os.close(fd)
    return moved


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities():
    """No capability left (effective, permitted, inheritable). In a user namespace the sandbox's
    processes hold every capability *of that namespace* (they created it): the driver, which never
    calls execve, would otherwise keep the right to remount the read-only host mounts writable."""
    data = (_CapData * 2)()
    _check(LIBC.capset(ctypes.byref(_CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)), data), "capset")


def _unshare_as_root(flags, helper):
    """As root: unshare(flags) with a new user namespace of the item, in which the ids the sandbox
    uses (0 for init, 65533 for the driver, 65534 for the program) are the host's same ids. Counted
    per user namespace (Linux >= 5.14), RLIMIT_NPROC is then the item's own: one item that parks
    processes leaves another's budget whole. Maps of other ids than one's own need CAP_SETUID in
    the parent namespace, so a child left behind in the host's namespace writes them. setgroups
    stays allowed: the program and the driver drop every group. Returns unshare's result."""
    rc = LIBC.unshare(flags | CLONE_NEWUSER)
    err = ctypes.get_errno()
    status = _release_map_helper(helper, rc == 0)
    if rc == 0 and status != 0:
        raise OSError("the uid/gid maps of the item's user namespace were refused")
    ctypes.set_errno(err)
    return rc


def _map_helper(drop=()):
    """The child that writes the maps for `_unshare_as_root` once told to: forked while boot waits for its
    configuration (a fork of this process was ~2.5 ms of an item's path on a 2-core VM), ended unused when
    the item needs none; it closes the descriptors `drop`. Returns (pid, the descriptor that tells it)."""
    go_r, go_w = os.pipe()
    helper = os.fork()
    if helper == 0:
        code = 1
        try:
            for fd in (go_w, *drop):
                os.close(fd)
            if os.read(go_r, 1) == b"1":  # b"" when boot ended: nothing to do
                for name in ("uid_map", "gid_map"):
                    with open(f"/proc/{os.getppid()}/{name}", "w") as fh:
                        fh.write(f"0 0 1\n{DRIVER_UID} {DRIVER_UID} 2\n")
                code = 0
        finally:
            os._exit(code)
    os.close(go_r)
    return helper, go_w


def _release_map_helper(helper, write_maps):
    """Tell the helper to write the maps (or to end without) and wait for it; its exit status."""
    pid, go_w = helper
    os.write(go_w, b"1" if write_maps else b"0")
    os.close(go_w)
    return os.waitpid(pid, 0)[1]


def _map_ids(uid, gid):
    """In a new user namespace: the caller's uid and gid are 65534 inside, the only ids mapped.
    /proc/self/*_map need a dumpable process while they are written."""
    LIBC.prctl(PR_SET_DUMPABLE, 1)
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{NOBODY} {uid} 1"), ("gid_map", f"{NOBODY} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    finally:
        LIBC.prctl(PR_SET_DUMPABLE, 0)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def _load_seccomp(program_hex):
    """Install the syscall filter built by the caller (classic BPF from libseccomp; see
    `verifiers.sandbox.seccomp_filter`) on this process and all it starts. Needs no_new_privs."""
    program = bytes.fromhex(program_hex)
    fprog = _SockFprog(len(program) // 8, program)  # struct sock_filter: 8 bytes per instruction
    _check(LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "prctl(PR_SET_SECCOMP)")


def _limit(name, soft, hard=None, pid=0):
    """Lower a limit of this process (or of `pid`), never above the current hard one: in a user namespace
    nobody may raise it."""
    which = getattr(resource, name)
    ceiling = resource.prlimit(pid, which)[1]
    hard = soft if hard is None else hard
    if ceiling != resource.RLIM_INFINITY:
        soft, hard = min(soft, ceiling), min(hard, ceiling)
    resource.prlimit(pid, which, (soft, hard))


def _cpu_limit(cfg, pid=0):
    cpu = max(1, int(-(-cfg["cpu_seconds"] // 1)))
    _limit("RLIMIT_CPU", cpu, cpu + 1, pid)  # SIGXCPU at soft, SIGKILL at hard


def _confine(cfg, uid, init=False):
    """Limits and identity shared by the program and the driver (in the calling process). `init`: init taking
    the program's limits for its test cases (`_take_program_limits`): all but the CPU time (set on each case)
    and the filter that keeps prlimit to the caller's own process (init sets that CPU time), one more process
    (init counts as one of the uid's), and saved ids 65533 (the driver's) instead of `uid`."""
    os.setsid()
    saved = DRIVER_UID if init else uid
    if not init:
        _cpu_limit(cfg)
    if cfg["memory_mb"]:
        _limit("RLIMIT_AS", cfg["memory_mb"] << 20)
    _limit("RLIMIT_FSIZE", cfg["file_size_mb"] << 20)
    _limit("RLIMIT_NOFILE", cfg["open_files"])
    _limit("RLIMIT_CORE", 0)
    _limit("RLIMIT_MSGQUEUE", cfg["tmpfs_mb"] << 20)  # POSIX message queues: memory outside the address space
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, saved)
        os.setresuid(uid, uid, saved)
    _limit("RLIMIT_NPROC", cfg["max_processes"] + init)  # counted per uid: effective once we are `nobody`
    LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binary gives privileges back
    if cfg.get("in_userns"):
        _drop_capabilities()
    if cfg.get("seccomp"):
        _load_seccomp(cfg["seccomp"])  # last: the deny-list holds for the rest of the process's life
        if not init and cfg.get("seccomp_own_limits"):
            _load_seccomp(cfg["seccomp_own_limits"])


def _program(cfg, workdir, status_fd, keep=(), stdin_name="input.txt", blame=None):
    """The untrusted program's process: limits, identity, then exec. Never returns.
    `keep`: (fd, number) pairs to hand to the program (the harness pipes; a test case's output files).
    `blame`: a failure to start is the program's (a test case after the first, see `_run_cases`): said on
    this descriptor, exit code 127, instead of a sandbox failure."""
    try:
        uid = cfg["uid"]
        if uid is not None and not cfg.get("owned"):  # (test cases: done once by `_run_cases`)
            os.chown(workdir, uid, uid)
            for name in os.listdir(workdir):
                os.chown(os.path.join(workdir, name), uid, uid)
        _confine(cfg, uid)
        os.chdir(workdir)
        stdin = _open_input(stdin_name)
        os.dup2(stdin, 0)
        os.close(stdin)
        os.close(status_fd)
        for fd, number in keep:  # the fds were moved above 100 by init: no clash with 3 and 4
            os.dup2(fd, number)
            os.set_inheritable(number, True)
        for name in cfg.get("exec_files", ()):  # a compiled program handed in (verifiers/code_languages.py)
            os.chmod(os.path.join(workdir, name), 0o755)
        if cfg.get("argv") and cfg["tests"] is None:  # a compiler or a compiled program instead of the interpreter
            os.execve(cfg["argv"][0], cfg["argv"], cfg["env"])
        script = "harness.py" if cfg["tests"] is not None else "solution.py"
        os.execve(cfg["executable"], [cfg["executable"], "-I", script], cfg["env"])
    except BaseException as exc:  # noqa: BLE001 - reported to the parent through the status fd
        try:
            if blame is not None:
                os.write(blame, f"the test case could not start: {type(exc).__name__}: {exc}\n".encode())
                os._exit(127)
            _status(status_fd, setup_error=f"{type(exc).__name__}: {exc}")
        finally:
            os._exit(125)


def _driver(cfg, rfd, wfd, report_fd):
    """The test driver's process (assert-style tests). Never returns."""
    code = 0
    try:
        LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        _confine(cfg, DRIVER_UID if cfg["uid"] is not None else None)
        LIBC.prctl(PR_SET_DUMPABLE, 0)  # after the uid change, which resets it
        os.chdir("/")
        os.environ.clear()  # the test code sees the program's allow-listed environment, never the caller's
        os.environ.update(cfg["env"])
        _driver_imports()
        from sandbox_harness import drive  # imported by boot before the mounts

        report = drive(cfg["tests"], rfd, wfd, cfg["nonce"])
        os.write(report_fd, _json_dumps(report).encode())
    except BaseException as exc:  # noqa: BLE001 - no report: init says how the driver ended
        try:
            os.write(2, f"sandbox test driver: {type(exc).__name__}: {exc}\n".encode())
        except OSError:
            pass
        code = 1
    os._exit(code)


PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")  # the program's writable tmpfs (same paths as the host's)


def _driver_imports():
    """The driver's import path: the installed packages (boot runs with -S), but no directory the
    program can write (its private tmpfs, which may hold a copy of the path to this package or to
    a checkout on sys.path) and no import hooks of site-packages (an editable install's finder
    points into a checkout): a planted `heapq.py` there would run inside the driver."""
    meta_path = list(sys.meta_path)
    site.main()
    sys.meta_path[:] = meta_path
    here = os.path.dirname(os.path.abspath(__file__))
    blocked = (here, *PRIVATE_DIRS)
    sys.path[:] = [p for p in sys.path if p and os.path.isabs(p)
                   and not any(p == b or p.startswith(b.rstrip("/") + "/") for b in blocked)]
    sys.path_importer_cache.clear()


def _ended(status, usage):
    """A status event for a process that ended: exit code or signal, and CPU seconds used."""
    event = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"exit": os.WEXITSTATUS(status)}
    event["cpu"] = round(usage.ru_utime + usage.ru_stime, 3)
    return event


def _read_report(fd):
    """The driver's report from its pipe, checked: a dict of known fields with the right types."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while len(data) < (1 << 20):
            part = os.read(fd, 65536)
            if not part:
                break
            data += part
    except BlockingIOError:
        pass
    try:
        report = _json_loads(data)
    except (ValueError, RecursionError):  # a driver's report nested 100,000 deep is no report
        return None
    if not isinstance(report, dict) or not isinstance(report.get("passed"), bool):
        return None
    clean = {"passed": report["passed"]}
    for key, kind in (("nonce", str), ("verdict", str), ("detail", str), ("requests", int)):
        if isinstance(report.get(key), kind):
            clean[key] = report[key]
    return clean


def _init(cfg, files, protections, status_fd):
    """pid 1 of the sandbox (or a plain child without namespaces). Never returns."""
    try:
        LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        # no handler for SIGINT (Python's raises KeyboardInterrupt): a pid namespace's init gets no signal
        # from inside it without one, and in a user namespace the program shares init's uid
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        workdir = cfg["workdir"]
        if "mount" in protections:
            try:
                workdir = _private_mounts(cfg, files, protections)
            except OSError as exc:
                if not cfg.get("userns"):
                    raise
                # e.g. Ubuntu's AppArmor restriction: the namespace is made, with no capability in it
                _status(status_fd, userns_refused=f"a user namespace was made but mounts in it were refused ({exc})")
                os._exit(0)
            protections += ["read-only-fs", "minimal-root", "private-proc", "private-tmp"]
        elif cfg["uid"] is not None:
            os.chmod(workdir, 0o700)
        if cfg["uid"] is not None:
            protections.append(f"uid-{cfg['uid']}")
        elif "user-namespace" in protections:
            protections.append(f"uid-{NOBODY}")  # the caller's uid, mapped
        if cfg.get("seccomp"):
            protections.append("seccomp")
        # the build folder, held open: the files a compiler wrote are read from it after it ended
        build_dir = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY) if cfg.get("collect") else None
        driver = None
        if cfg.get("cases"):
            _run_cases(cfg, workdir, protections, status_fd)
            os._exit(0)
        if cfg["tests"] is not None:
            from_driver, to_host = (_high(fd) for fd in os.pipe())  # driver -> host requests
            from_host, to_driver = (_high(fd) for fd in os.pipe())  # host -> driver answers
            report_r, report_w = os.pipe()
            program = os.fork()
            if program == 0:  # the host reads requests on fd 3 and answers on fd 4
                for fd in (to_host, from_host, report_r, report_w):
                    os.close(fd)
                _program(cfg, workdir, status_fd, keep=((from_driver, 3), (to_driver, 4)))
            driver = os.fork()
            if driver == 0:
                for fd in (from_driver, to_driver, report_r, status_fd):
                    os.close(fd)
                _driver(cfg, from_host, to_host, report_w)
            for fd in (from_driver, to_host, from_host, to_driver, report_w):
                os.close(fd)
            protections.append("isolated-test-driver")
        else:
            program = os.fork()
            if program == 0:
                _program(cfg, workdir, status_fd)
        _status(status_fd, protections=protections, pid=program, driver_pid=driver)
        ended = {}
        while (driver if driver is not None else program) not in ended:  # as pid 1 we also reap orphans
            pid, status, usage = os.wait4(-1, 0)
            if pid in (program, driver):
                ended[pid] = _ended(status, usage)
        if program not in ended:  # the tests are over: the host has nothing left to do
            try:
                os.killpg(program, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                os.kill(program, signal.SIGKILL)
            _, status, usage = os.wait4(program, 0)
            ended[program] = {**_ended(status, usage), "after_tests": True}
        if driver is not None:
            _status(status_fd, driver=ended[driver], report=_read_report(report_r))
        if build_dir is not None:
            _status(status_fd, collected=_collect_outputs(build_dir, cfg["collect"], cfg.get("collect_mb", 64) << 20))
        _status(status_fd, **ended[program])
    except BaseException as exc:  # noqa: BLE001
        _status(status_fd, setup_error=f"{type(exc).__name__}: {exc}")
    os._exit(0)


def _run_cases(cfg, workdir, protections, status_fd):
    """Several test cases of one compiled program in this sandbox (`run_program(cases=...)`): per case a fresh
    process with the program's rlimits (CPU time counted per case), its own wall limit, stdin from the case's
    file, stdout and stderr into files with no name that only init holds. After each case every process
    left in the pid namespace is killed (kill(-1) from its init reaches no process outside), so nothing of one
    case runs into the next. Stops after the first case that does not exit 0. Needs the pid namespace."""
    if "pid-namespace" not in protections:
        _status(status_fd, cases_refused="no pid namespace")
        return
    _status(status_fd, protections=protections)
    if cfg["uid"] is not None:  # the folder and its files handed to the program's uid once, for every case
        os.chown(workdir, cfg["uid"], cfg["uid"])
        for name in os.listdir(workdir):
            os.chown(os.path.join(workdir, name), cfg["uid"], cfg["uid"])
        cfg["owned"] = True
    for name in cfg.pop("exec_files", ()):  # once, for every case
        os.chmod(os.path.join(workdir, name), 0o755)
    folder = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY)  # the case files, whatever a case renames
    spawn = _take_program_limits(cfg, workdir)
    cap = cfg["case_output_bytes"]
    for number, stdin_name in enumerate(cfg["cases"]):
        # output files with no name: no case can open, link or replace another's (O_EXCL: never linked)
        out, err = (os.open(".", os.O_TMPFILE | os.O_RDWR | os.O_EXCL, 0o600, dir_fd=folder) for _ in range(2))
        start = time.monotonic()
        # a case that cannot start after one ran: what it starts from (its input, the program, the folder) is
        # the program's to change, so that is the program's failure (exit 127), never the sandbox's (an error)
        blame = err if number else None
        if spawn:
            try:
                program = _spawn_case(cfg, folder, stdin_name, out, err)
            except OSError as exc:
                if blame is None:
                    raise
                os.close(out)
                os.close(err)
                _status(status_fd, case=number, wall=0.0, timed_out=False, exit=127, cpu=0.0, stdout="",
                        stderr=f"the test case could not start: {exc}\n".encode().hex())
                break
        else:
            program = os.fork()
            if program == 0:
                _program(cfg, workdir, status_fd, keep=((out, 1), (err, 2)), stdin_name=stdin_name, blame=blame)
        timed_out, deadline = False, start + cfg["case_wall_seconds"]
        ended = _pidfd(program)  # woken when the case ends (no polling interval on the case's path)
        while True:
            pid, status, usage = os.wait4(program, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                timed_out = True
                os.kill(program, signal.SIGKILL)
                _, status, usage = os.wait4(program, 0)
                break
            if ended is not None:
                select.select([ended], [], [], max(0.0, deadline - time.monotonic()))
            else:
                time.sleep(0.002)
        if ended is not None:
            os.close(ended)
        event = {"case": number, "wall": round(time.monotonic() - start, 4), "timed_out": timed_out, **_ended(status, usage)}
        try:
            os.kill(-1, signal.SIGKILL)  # whatever the case left behind (only this pid namespace's processes)
        except ProcessLookupError:
            pass
        while True:
            try:
                os.wait4(-1, 0)
            except ChildProcessError:
                break
        for name, fd in (("stdout", out), ("stderr", err)):
            size = os.fstat(fd).st_size
            event[name] = os.pread(fd, min(size, cap + 1), 0).hex() if size else ""
            os.close(fd)
        _status(status_fd, **event)
        if timed_out or event.get("exit") != 0:
            break
    _status(status_fd, exit=0, cpu=0)


INIT_HEADROOM_MB = 64  # address space init needs beyond what it has mapped, to run the cases under the program's limit


def _take_program_limits(cfg, workdir):
    """Init takes the program's identity and limits (all but its CPU time, set on each case at its start) so
    that a case is started by posix_spawn - a vfork, no copy of init's memory; a fork of this Python process
    was ~2.5 of a case's ~4.5 ms on a 2-core VM. What a program could do to an init of its own uid, and why it
    cannot: signal it (pid 1 of the namespace gets no signal it has no handler for), read or trace it (not
    dumpable; and the next point), lower its limits with prlimit (init's saved set-user-ID and group ID are
    the driver's, 65533: a process's limits, memory and /proc files are another's only when all three ids
    match, and after execve the program's saved ids are its own 65534). Returns False, and the cases are
    forked from a privileged init as before, where this identity cannot be made (no uid to drop to: an
    ordinary caller's user namespace maps one id only) or init could not work under the program's limits (an
    address space under what it maps plus INIT_HEADROOM_MB, fewer than 16 files)."""
    with open("/proc/self/statm") as fh:
        mapped = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    memory = cfg["memory_mb"] << 20 if cfg["memory_mb"] else None
    if cfg["uid"] is None or (memory is not None and memory < mapped + (INIT_HEADROOM_MB << 20)) or cfg["open_files"] < 16:
        return False
    os.chdir(workdir)
    _confine(cfg, cfg["uid"], init=True)
    LIBC.prctl(PR_SET_DUMPABLE, 0)  # (a change of uid resets it)
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a change of uid clears it: armed again, then is boot still there?
    if select.select([cfg["lifeline"]], [], [], 0)[0]:
        os._exit(0)
    return True


def _open_input(name, folder=None):
    """A program's input file, opened without following a link and only if it is a regular file: a test case
    may have replaced the next one's input with a link or a fifo (whose open would wait for a writer)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"the input {name} is not a regular file")
    os.set_blocking(fd, True)
    return fd


def _spawn_case(cfg, folder, stdin_name, out, err):
    """Start one test case from init (which holds the program's limits): stdin the case's file, as long as it
    is still a regular file (a case may have replaced it), stdout and stderr the given files, a new session;
    its CPU limit is set at once (it counts the CPU time used since the start)."""
    stdin = _open_input(stdin_name, folder)
    try:
        pid = os.posix_spawn(cfg["argv"][0], cfg["argv"], cfg["env"], setsid=True, file_actions=[
            (os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, err, 2)])
    finally:
        os.close(stdin)
    # posix_spawn returns once the case is inside execve, before execve gives it the program's saved ids:
    # until then its limits are not init's to change (EPERM), a moment
    deadline = time.monotonic() + 1.0
    while True:
        try:
            _cpu_limit(cfg, pid)
            break
        except ProcessLookupError:
            break  # it has ended already
        except PermissionError:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                raise OSError("the test case's CPU limit could not be set") from None
            os.sched_yield()
    return pid


def _pidfd(pid):
    """A descriptor that becomes readable when `pid` ends (Linux >= 5.3), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _collect_outputs(dir_fd, patterns, cap):
    """The regular files of the build folder whose names match `patterns` (a name, or "*.ext"), base64:
    opened relative to the folder's descriptor without following links, one link each, `cap` bytes in all;
    anything else a build left there (a link to a host file, a fifo, a hard link) is never read."""
    out, total = {}, 0
    for name in sorted(os.listdir(dir_fd)):
        if not any(name == p or (p.startswith("*") and name.endswith(p[1:])) for p in patterns):
            continue
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or total + info.st_size > cap:
                continue
            data = b""
            while len(data) < info.st_size:
                part = os.read(fd, info.st_size - len(data))
                if not part:
                    break
                data += part
            total += len(data)
            out[name] = binascii.b2a_base64(data, newline=False).decode()
        finally:
            os.close(fd)
    return out


def _read_config():
    data = b""
    while True:
        part = os.read(0, 1 << 20)
        if not part:
            break
        data += part
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return _json_loads(data)


def main():
    status_fd = _high(int(sys.argv[1]))
    _bound_to(int(sys.argv[2]))
    _boot(status_fd, _map_helper() if _AS_ROOT else None)


_AS_ROOT = os.geteuid() == 0 and sys.platform.startswith("linux")  # boot makes the item's user namespace as root


def _bound_to(parent):
    """Killed when `parent` (the caller, or the boot server) ends; not dumpable: the config (test code, nonce)
    stays out of reach of same-uid processes."""
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    LIBC.prctl(PR_SET_DUMPABLE, 0)
    if os.getppid() != parent:  # the parent died before the parent-death signal was armed
        os._exit(0)


def _boot(status_fd, helper):
    """One item, from its configuration on stdin to its last status event; `helper`: the uid-map writer
    (`_map_helper`, as root). Never returns."""
    cfg = _read_config()
    here = os.path.dirname(os.path.abspath(__file__))
    if cfg["tests"] is not None:  # imported now, while every path is readable and none is the program's
        sys.path.insert(0, here)
        import sandbox_harness  # noqa: F401
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != here]  # (Python < 3.11: -I keeps the script's dir)
    files = {name: text.encode("utf-8", "surrogatepass") for name, text in cfg.pop("files").items()}
    if cfg.get("binary_files"):  # a compiled program (base64)
        files.update({name: binascii.a2b_base64(data) for name, data in cfg.pop("binary_files").items()})
    protections = ["rlimits", "new-session", "no-new-privileges"]
    if cfg["namespaces"] or cfg.get("userns"):
        # SysV IPC (shmget segments, semaphores, message queues) and the host name get namespaces of their
        # own: a segment one item creates is gone with it, never read by the next item or left on the host.
        # Without root, a user namespace of our own owns the others (the caller's uid is 65534 inside).
        flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | (0 if cfg["network"] else CLONE_NEWNET)
        uid, gid = os.getuid(), os.getgid()
        as_root = not cfg.get("userns")
        if as_root:
            rc, helper = _unshare_as_root(flags, helper), None
        else:
            rc = LIBC.unshare(flags | CLONE_NEWUSER)
        if rc != 0 and as_root:  # user namespaces off: root still isolates, with one process count for all items
            _status(status_fd, warning="the kernel refused a user namespace to root: the process limit is shared "
                                       "by every item running as uid 65534")
            rc = LIBC.unshare(flags)
        elif rc == 0:
            if not as_root:
                try:
                    _map_ids(uid, gid)
                except OSError as exc:  # no way back out of the namespace: the caller retries without one
                    _status(status_fd, userns_refused=f"a user namespace was made but its uid/gid maps were refused ({exc})")
                    os._exit(0)
            cfg["in_userns"] = True
            protections += ["user-namespace"]
        if rc == 0:
            protections += ["pid-namespace", "mount", "ipc-namespace", "uts-namespace"] + ([] if cfg["network"] else ["no-network"])
            LIBC.sethostname(b"sandbox", 7)
        else:
            why = os.strerror(ctypes.get_errno())
            what = "a user namespace (and pid, mount, network, IPC namespaces in it)" if cfg.get("userns") else "namespaces"
            cfg["userns"] = False
            _status(status_fd, warning=f"the kernel refused {what}: {why}")
    if helper is not None:  # no user namespace of root's made for this item
        _release_map_helper(helper, False)
    if cfg["uid"] is not None and "mount" not in protections and _blocked_dirs(cfg["executable"]):
        cfg["uid"] = None  # `nobody` could not even start the interpreter
        _status(status_fd, warning="interpreter not reachable by an unprivileged uid: not dropping privileges")
    if "mount" not in protections:  # the program runs in the caller's work dir: write its files there
        for name, data in files.items():
            with open(os.path.join(cfg["workdir"], name), "wb") as fh:
                fh.write(data)
    lifeline, held = os.pipe()  # boot holds the write end until it ends: init reads EOF once boot is gone
    cfg["lifeline"] = lifeline
    child = os.fork()
    if child == 0:
        os.close(held)
        _init(cfg, files, protections, status_fd)
    os.close(lifeline)
    os.waitpid(child, 0)
    os._exit(0)


def serve_boots():
    """The boot server, `python -I -S -c "...; sandbox_boot.serve_boots()" SOCKET_FD CALLER_PID`: started once by a
    caller (`verifiers.sandbox`), it hands each run a boot process forked ahead from itself instead of the
    caller starting a new interpreter (whose start-up, ~25 ms of CPU, competed with the runs on 2 cores). A
    request is one message on its socket carrying four descriptors: the boot's stdin, stdout, stderr and status
    pipes; they go to the spare boot (`_spare`), the answer is the spare's pid with a pidfd of it, and the next
    spare is forked. The server never reads a configuration or runs anything of an item: it holds the caller's
    identity and its own imports, and closes each request's descriptors once it passed them on. Its boots are
    reaped by the kernel (SIGCHLD ignored here); it ends with its caller (parent-death signal, or the socket
    closed)."""
    sock_fd, caller = int(sys.argv[1]), int(sys.argv[2])
    _bound_to(caller)
    import sandbox_harness  # noqa: F401 - the test driver's (~35 ms to import): once here, from the host's view
    sock = _socket.socket(fileno=sock_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # no zombie: a boot's end is seen through its pidfd
    spare = _spare(sock)
    while True:
        data, fds = _receive(sock, 4)
        if data != b"boot" or len(fds) != 4:
            os._exit(0)  # the caller closed the socket (or sent what no caller sends)
        try:
            _send(spare[2], b"boot", fds)
        except OSError:  # the spare ended: a new one takes this request
            _drop(spare)
            spare = _spare(sock)
            _send(spare[2], b"boot", fds)
        for fd in fds:
            os.close(fd)
        _send(sock, spare[0].to_bytes(4, sys.byteorder), [spare[1]])
        _drop(spare)
        spare = _spare(sock)


def _spare(sock):
    """A boot forked ahead by the server, its uid-map helper forked too, waiting on a socket of its own for a
    request's four descriptors; it holds nothing of any item until then. Returns (pid, pidfd, socket)."""
    server = os.getpid()
    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            sock.close()
            ours.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # boot waits for its own children
            _bound_to(server)
            helper = _map_helper(drop=(theirs.fileno(),)) if _AS_ROOT else None  # (the request is not its)
            data, fds = _receive(theirs, 4)
            if data != b"boot" or len(fds) != 4:
                os._exit(0)
            theirs.close()
            for number, fd in enumerate(fds[:3]):
                os.dup2(fd, number)
            status_fd = _high(os.dup(fds[3]))
            for fd in fds:
                if fd > 2:
                    os.close(fd)
            os.setsid()
            _boot(status_fd, helper)
        finally:
            os._exit(1)
    theirs.close()
    return pid, os.pidfd_open(pid), ours


def _drop(spare):
    os.close(spare[1])
    spare[2].close()


def _receive(sock, count):
    """(message, descriptors) of one message on a Unix socket; (b"", []) at its end."""
    data, ancillary, _, _ = sock.recvmsg(16, _socket.CMSG_SPACE(4 * count))
    fds = [int.from_bytes(blob[i:i + 4], sys.byteorder) for level, kind, blob in ancillary
           if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS for i in range(0, len(blob) - 3, 4)]
    return data, fds


def _send(sock, data, fds):
    sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds))])


if __name__ == "__main__":
    main()
