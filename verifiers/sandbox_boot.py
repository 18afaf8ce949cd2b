"""Bootstrap of the code sandbox: run as `python -I -S sandbox_boot.py CONFIG_JSON` by
`verifiers.sandbox.run_python`. Standard library only; it is the only code that runs with the
caller's privileges before the untrusted program starts.

Process tree (when the OS allows namespaces, i.e. we are root):

    boot (this file)  --unshare(pid, mount, net)-->  fork
      └─ init (pid 1 of a new pid namespace, parent-death signal SIGKILL)
           private /tmp, /var/tmp, /dev/shm (size-capped tmpfs); directories on the way to the
           interpreter that `nobody` cannot enter are re-exposed read-only with the same paths
           └─ program (pid 2): new session, rlimits (CPU, address space, processes, file size,
              open files, no core), uid/gid 65534, cwd = a fresh tmpfs directory, scrubbed env,
              fd 0 = the test input, then exec of the interpreter on solution.py

When init exits (program done) the kernel kills everything left in the pid namespace (fork bombs,
daemons). When the caller kills boot, init gets SIGKILL (parent-death signal), so does the rest.
A status line (JSON) per event goes to the status fd: protections applied, then the exit status.
Without namespaces (not root), it degrades to: rlimits + new session; see docs/verifiers.md.
"""

import ctypes
import json
import os
import resource
import signal
import stat
import sys

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 2, 4, 4096, 8192, 16384, 1 << 18
PR_SET_PDEATHSIG = 1
LIBC = ctypes.CDLL(None, use_errno=True)


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source, target, fstype, flags, data=None):
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(LIBC.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def _status(fd, **event):
    os.write(fd, (json.dumps(event) + "\n").encode())


def _blocked_dirs(path):
    """Ancestors of `path` that other users cannot enter (mode without o+x)."""
    out, current = [], "/"
    for part in path.strip("/").split("/")[:-1]:
        current = os.path.join(current, part)
        if not os.stat(current).st_mode & stat.S_IXOTH:
            out.append(current)
    return out


def _expose(blocked, path, stage):
    """Make `path` reachable through `blocked` (a 0700 directory) without opening the rest of
    it: move the child on the way into `stage`, cover `blocked` with an empty tmpfs, move back."""
    child = path[len(blocked) :].strip("/").split("/")[0]
    source = os.path.join(blocked, child)
    held = os.path.join(stage, str(len(os.listdir(stage))))
    os.mkdir(held)
    _mount(source, held, None, MS_BIND | MS_REC)
    _mount("tmpfs", blocked, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    target = os.path.join(blocked, child)
    if os.path.isdir(held):
        os.mkdir(target)
    else:
        open(target, "w").close()
    _mount(held, target, None, MS_MOVE)


def _private_mounts(cfg, files):
    """Private /tmp (holding the sandbox dir) plus /var/tmp and /dev/shm, all size-capped."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    size = f"size={cfg['tmpfs_mb']}m,mode=1777"
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, size)
    for extra in ("/var/tmp", "/dev/shm"):
        if os.path.isdir(extra):
            _mount("tmpfs", extra, "tmpfs", MS_NOSUID | MS_NODEV, size)
    stage = "/tmp/.stage"
    os.mkdir(stage, 0o700)
    if cfg["uid"] is not None:
        for path in (cfg["executable"], cfg["prefix"]):
            for blocked in _blocked_dirs(path + "/x" if os.path.isdir(path) else path):
                _expose(blocked, path, stage)
    workdir = "/tmp/sandbox"
    os.mkdir(workdir, 0o700)
    for name, data in files.items():
        with open(os.path.join(workdir, name), "wb") as fh:
            fh.write(data)
    return workdir


def _limit(name, soft, hard=None):
    resource.setrlimit(getattr(resource, name), (soft, soft if hard is None else hard))


def _program(cfg, workdir, status_fd):
    """The untrusted program's process: limits, identity, then exec. Never returns."""
    try:
        os.setsid()
        cpu = max(1, int(-(-cfg["cpu_seconds"] // 1)))
        _limit("RLIMIT_CPU", cpu, cpu + 1)  # SIGXCPU at soft, SIGKILL at hard
        if cfg["memory_mb"]:
            _limit("RLIMIT_AS", cfg["memory_mb"] << 20)
        _limit("RLIMIT_FSIZE", cfg["file_size_mb"] << 20)
        _limit("RLIMIT_NOFILE", cfg["open_files"])
        _limit("RLIMIT_CORE", 0)
        uid = cfg["uid"]
        if uid is not None:
            os.chown(workdir, uid, uid)
            for name in os.listdir(workdir):
                os.chown(os.path.join(workdir, name), uid, uid)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        _limit("RLIMIT_NPROC", cfg["max_processes"])  # counted per uid: effective once we are `nobody`
        os.chdir(workdir)
        stdin = os.open(os.path.join(workdir, "input.txt"), os.O_RDONLY)
        os.dup2(stdin, 0)
        os.close(stdin)
        os.close(status_fd)
        argv = [cfg["executable"], "-I", "solution.py"]
        os.execve(cfg["executable"], argv, cfg["env"])
    except BaseException as exc:  # noqa: BLE001 - reported to the parent through the status fd
        try:
            _status(status_fd, setup_error=f"{type(exc).__name__}: {exc}")
        finally:
            os._exit(125)


def _init(cfg, files, protections, status_fd):
    """pid 1 of the sandbox (or a plain child without namespaces). Never returns."""
    try:
        LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        workdir = cfg["workdir"]
        if "mount" in protections:
            workdir = _private_mounts(cfg, files)
            protections.append("private-tmp")
        elif cfg["uid"] is not None:
            os.chmod(workdir, 0o700)
        if cfg["uid"] is not None:
            protections.append(f"uid-{cfg['uid']}")
        program = os.fork()
        if program == 0:
            _program(cfg, workdir, status_fd)
        _status(status_fd, protections=protections, pid=program)
        while True:  # as pid 1 we also reap orphans until the program itself is done
            pid, status = os.wait()
            if pid == program:
                break
        if os.WIFSIGNALED(status):
            _status(status_fd, signal=os.WTERMSIG(status))
        else:
            _status(status_fd, exit=os.WEXITSTATUS(status))
    except BaseException as exc:  # noqa: BLE001
        _status(status_fd, setup_error=f"{type(exc).__name__}: {exc}")
    os._exit(0)


def main():
    cfg = json.loads(sys.argv[1])
    status_fd = cfg["status_fd"]
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    files = {}
    for name in ("solution.py", "input.txt"):
        with open(os.path.join(cfg["workdir"], name), "rb") as fh:
            files[name] = fh.read()
    protections = ["rlimits", "new-session"]
    if cfg["namespaces"]:
        flags = CLONE_NEWPID | CLONE_NEWNS | (0 if cfg["network"] else CLONE_NEWNET)
        if LIBC.unshare(flags) == 0:
            protections += ["pid-namespace", "mount"] + ([] if cfg["network"] else ["no-network"])
        else:
            _status(status_fd, warning=f"unshare failed: {os.strerror(ctypes.get_errno())}")
    if cfg["uid"] is not None and "mount" not in protections and _blocked_dirs(cfg["executable"]):
        cfg["uid"] = None  # `nobody` could not even start the interpreter
        _status(status_fd, warning="interpreter not reachable by an unprivileged uid: not dropping privileges")
    child = os.fork()
    if child == 0:
        _init(cfg, files, protections, status_fd)
    os.waitpid(child, 0)
    os._exit(0)


if __name__ == "__main__":
    main()
