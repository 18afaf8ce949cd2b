"""A pool of verifier worker processes with a hard wall-clock limit per item.

Why processes, and why this shape (see docs/verifiers.md):
- sympy / math-verify can hang in C code or blow the stack; user code can do anything. Only a
  separate process that we can SIGKILL gives a hard limit, so no `signal.alarm` anywhere.
- Workers are started with `subprocess.Popen([sys.executable, "-c", ...])`: fork+exec in C, safe
  when the caller has threads (torch, tokenizers) and allowed inside daemonic processes
  (a `ProcessPoolExecutor` or `multiprocessing` worker), where `multiprocessing` may not have children.
- The caller's own thread drives its batch with `selectors` (no background threads in the caller),
  so it works the same from the main thread, any other thread, or `asyncio.to_thread`.
- Workers talk over their stdin/stdout pipes with length-prefixed pickles; the worker moves
  the real fd 0/1 aside so a kind that prints or reads stdin cannot corrupt the protocol.
- Each item's clock starts when it reaches a *ready* worker (after the worker imported sympy /
  math-verify once); results stream back one by one, so a chunk of items amortises IPC while every
  item still has its own deadline. On timeout the worker is killed (SIGKILL), the item is TIMEOUT,
  the rest of its chunk is re-queued, and a fresh worker takes the dead one's place.
- A worker that dies (segfault, OOM kill, `os._exit`) turns its current item into ERROR.
- Each worker caps its own address space with RLIMIT_AS (`memory_mb`).
- Each worker gets its own temporary directory (TMPDIR), removed when the worker is killed or
  exits, so a kind killed mid-item (e.g. the code sandbox's work dir) leaves nothing behind;
  directories of pools whose process died without cleaning up are removed by the next pool.

>>> pool = VerifierPool(PoolConfig(workers=1, preload=()))
>>> [r.verdict.value for r in pool.run([Task("verifiers.pool:_echo_kind", "a", "a", {}, 5.0, "echo")])]
['correct']
>>> pool.shutdown()
"""

from __future__ import annotations

import atexit
import collections
import dataclasses
import errno
import os
import pickle
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from verifiers.types import Verdict, VerifyResult

_HEADER = struct.Struct("!Q")  # 8-byte big-endian frame length


def default_workers() -> int:
    """min(cpu count, 4), or REWARDLAB_VERIFY_WORKERS when set."""
    env = os.environ.get("REWARDLAB_VERIFY_WORKERS")
    if env:
        return max(1, int(env))
    return max(1, min(os.cpu_count() or 1, 4))


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


@dataclass(frozen=True)
class PoolConfig:
    """Settings of the verifier worker pool (env overrides in brackets)."""

    workers: int = dataclasses.field(
        default_factory=default_workers,
        metadata={"help": "worker processes (default min(cpu count, 4)) [REWARDLAB_VERIFY_WORKERS]"},
    )
    memory_mb: int = dataclasses.field(
        default_factory=lambda: _env_int("REWARDLAB_VERIFY_MEMORY_MB", 4096),
        metadata={"help": "address-space cap per worker (RLIMIT_AS) in MiB; 0 = none [REWARDLAB_VERIFY_MEMORY_MB]"},
    )
    preload: tuple[str, ...] = dataclasses.field(
        default=("sympy", "math_verify", "verifiers.math_kind", "verifiers.simple_kinds"),
        metadata={"help": "modules each worker imports once before it takes work (missing ones are skipped)"},
    )
    chunk_size: int = dataclasses.field(
        default=0, metadata={"help": "items sent to a worker at once; 0 = automatic (n / (4 * workers), 1..32)"}
    )
    start_timeout: float = dataclasses.field(
        default=120.0, metadata={"help": "seconds a new worker may take to import its modules"}
    )

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"PoolConfig.workers must be >= 1, got {self.workers}")
        if self.memory_mb < 0:
            raise ValueError(f"PoolConfig.memory_mb must be >= 0 (0 = no cap), got {self.memory_mb}")
        if self.chunk_size < 0:
            raise ValueError(f"PoolConfig.chunk_size must be >= 0 (0 = automatic), got {self.chunk_size}")


@dataclass(frozen=True)
class Task:
    """One item for a worker: the kind as "module:function", its inputs, and its wall-clock limit."""

    spec: str
    prediction: str
    gold: str
    options: dict[str, Any]
    timeout: float
    kind: str


def _echo_kind(prediction: str, gold: str, **options: Any) -> VerifyResult:
    """A trivial kind for the doctest above: exact string equality."""
    verdict = Verdict.CORRECT if prediction == gold else Verdict.INCORRECT
    return VerifyResult(verdict, extracted=prediction, gold_parsed=gold, kind="echo")


# --------------------------------------------------------------------------------------------
# framing


def _frame(obj: Any) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _split_frames(buffer: bytearray) -> list[Any]:
    """Pop every complete frame from the front of `buffer`."""
    out = []
    while len(buffer) >= _HEADER.size:
        (size,) = _HEADER.unpack_from(buffer)
        if len(buffer) < _HEADER.size + size:
            break
        out.append(pickle.loads(bytes(buffer[_HEADER.size : _HEADER.size + size])))
        del buffer[: _HEADER.size + size]
    return out


# --------------------------------------------------------------------------------------------
# the worker side (runs in the child process)

_WORKER_BOOT = "from verifiers.pool import worker_main; worker_main()"


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        part = os.read(fd, n - got)
        if not part:
            return None
        chunks.append(part)
        got += len(part)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _resolve(spec: str, cache: dict[str, Any]) -> Any:
    fn = cache.get(spec)
    if fn is None:
        import importlib

        module_name, _, attr = spec.partition(":")
        fn = getattr(importlib.import_module(module_name), attr)
        cache[spec] = fn
    return fn


def _run_one(fn: Any, task: Task) -> tuple[dict[str, Any], bool]:
    """Run one kind call; returns (result as dict, whether the worker should restart)."""
    start = time.perf_counter()
    restart = False
    try:
        result = fn(task.prediction, task.gold, **task.options)
        if not isinstance(result, VerifyResult):
            raise TypeError(f"kind {task.spec} returned {type(result).__name__}, expected VerifyResult")
    except MemoryError:
        result, restart = VerifyResult(Verdict.ERROR, detail=f"out of memory (worker cap reached) in {task.spec}"), True
    except RecursionError as exc:
        result, restart = VerifyResult(Verdict.ERROR, detail=f"RecursionError: {exc}"), True
    except BaseException as exc:  # noqa: BLE001 - reported as ERROR with the message, never hidden
        result = VerifyResult(Verdict.ERROR, detail=f"{type(exc).__name__}: {exc}"[:2000])
    elapsed = time.perf_counter() - start
    changes: dict[str, Any] = {}
    if not result.kind:
        changes["kind"] = task.kind
    if not result.elapsed:
        changes["elapsed"] = elapsed
    if changes:
        result = dataclasses.replace(result, **changes)
    return result.to_dict(), restart


def _remove_own_tmpdir() -> None:
    """A worker whose parent is gone (or done with it) removes its own TMPDIR: nobody else may."""
    own = tempfile.gettempdir()
    if os.path.basename(own).startswith(_TMP_PREFIX):
        shutil.rmtree(own, ignore_errors=True)


def _watch_parent(parent: int) -> None:
    """Exit when the parent process is gone, even if the main thread is stuck in C code."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            _remove_own_tmpdir()
            os._exit(3)


def worker_main() -> None:
    """Entry point of a worker process (started by `VerifierPool`)."""
    # Keep the protocol pipes on private fds; fd 0/1 become /dev/null and stderr.
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the parent, which kills us
    hello = _read_exact(proto_in, _HEADER.size)
    if hello is None:
        return
    settings = pickle.loads(_read_exact(proto_in, _HEADER.unpack(hello)[0]) or b"")
    for path in reversed(settings["sys_path"]):
        if path not in sys.path:
            sys.path.insert(0, path)
    threading.Thread(target=_watch_parent, args=(settings["parent"],), daemon=True).start()
    if settings["memory_mb"]:
        import resource

        cap = settings["memory_mb"] * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    preloaded = []
    for name in settings["preload"]:
        try:
            __import__(name)
            preloaded.append(name)
        except Exception:  # noqa: BLE001 - not hidden: a kind whose import fails gives ERROR "cannot load kind ..." per item
            pass
    _write_all(proto_out, _frame(("ready", os.getpid(), preloaded)))
    cache: dict[str, Any] = {}
    while True:
        header = _read_exact(proto_in, _HEADER.size)
        if header is None:  # the parent closed the pipe, or died (e.g. a server stopped by a signal)
            _remove_own_tmpdir()
            return
        message = pickle.loads(_read_exact(proto_in, _HEADER.unpack(header)[0]) or b"")
        for i, task in enumerate(message):
            try:
                fn = _resolve(task.spec, cache)
            except Exception as exc:  # noqa: BLE001
                payload, restart = VerifyResult(Verdict.ERROR, detail=f"cannot load kind {task.spec}: {exc}").to_dict(), False
            else:
                payload, restart = _run_one(fn, task)
            try:
                frame = _frame(("result", i, payload, restart))
            except Exception:  # noqa: BLE001 - e.g. an unpicklable `extra`
                payload["extra"] = {"note": "extra dropped: not picklable"}
                frame = _frame(("result", i, payload, restart))
            _write_all(proto_out, frame)
            if restart:
                os._exit(0)  # the parent sees EOF and starts a clean worker for the rest


# --------------------------------------------------------------------------------------------
# the parent side

_TMP_PREFIX = "rewardlab-worker-"


def _remove_orphaned_tmpdirs() -> None:
    """Remove the worker directories of pools whose process is gone (killed with SIGKILL, say)."""
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if not name.startswith(_TMP_PREFIX):
            continue
        try:
            owner = int(name[len(_TMP_PREFIX):].split("-", 1)[0])
            os.kill(owner, 0)
        except ValueError:
            continue
        except ProcessLookupError:
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        except PermissionError:
            pass  # alive, someone else's


class _Worker:
    """One worker process as the parent sees it."""

    def __init__(self, config: PoolConfig) -> None:
        env = dict(os.environ)
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        # the worker's own TMPDIR, removed with the worker (0711: a sandbox's unprivileged uid may pass through)
        self.tmpdir = tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{os.getpid()}-")
        os.chmod(self.tmpdir, 0o711)
        env["TMPDIR"] = self.tmpdir
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _WORKER_BOOT],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                close_fds=True,
                start_new_session=True,  # a Ctrl-C in the terminal reaches only the parent
            )
        except BaseException:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            raise
        self.born = time.monotonic()
        self.ready = False
        self.buffer = bytearray()
        self.chunk: collections.deque[int] = collections.deque()  # global indices still running
        self.item_start = 0.0
        os.set_blocking(self.proc.stdout.fileno(), False)
        settings = {
            "sys_path": list(sys.path),
            "parent": os.getpid(),
            "memory_mb": config.memory_mb,
            "preload": list(config.preload),
        }
        self.send(settings)

    @property
    def fd(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, obj: Any) -> None:
        _write_all(self.proc.stdin.fileno(), _frame(obj))

    def read(self) -> tuple[list[Any], bool]:
        """(complete messages, eof)."""
        eof = False
        while True:
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                eof = True
                break
            if not data:
                eof = True
                break
            self.buffer += data
        return _split_frames(self.buffer), eof

    def poll_ready(self) -> None:
        """Note a "ready" message of an idle worker without blocking."""
        if not self.ready:
            messages, _ = self.read()
            self.ready = any(m[0] == "ready" for m in messages)

    def kill(self) -> None:
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass
        self.close()

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.tmpdir, ignore_errors=True)  # e.g. the work dir of a sandbox killed mid-item

    def death_reason(self) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return "worker stopped answering"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = " (likely the out-of-memory killer)" if -code == signal.SIGKILL else ""
            return f"worker died from {name}{hint}"
        return f"worker exited with code {code}"


class VerifierPool:
    """Worker processes shared by every caller of this process; see the module docstring."""

    def __init__(self, config: PoolConfig | None = None) -> None:
        _remove_orphaned_tmpdirs()
        self.config = config or PoolConfig()
        self.capacity = self.config.workers
        self._lock = threading.Condition()
        self._idle: list[_Worker] = []
        self._alive = 0
        self._closed = False
        self._pid = os.getpid()

    # ---- worker bookkeeping (thread-safe) ----
    def _acquire(self, block: bool) -> _Worker | None:
        with self._lock:
            while True:
                if self._closed:
                    raise RuntimeError("the verifier pool is shut down")
                for waiting in self._idle:
                    waiting.poll_ready()
                for dead in [w for w in self._idle if w.proc.poll() is not None]:
                    self._idle.remove(dead)  # died while idle: forget it, nobody's item was lost
                    self._alive -= 1
                    dead.close()
                if self._idle:
                    ready = [w for w in self._idle if w.ready]
                    worker = ready[-1] if ready else min(self._idle, key=lambda w: w.born)  # last used: warmest
                    self._idle.remove(worker)
                    return worker
                if self._alive < self.capacity:
                    self._alive += 1
                    break
                if not block:
                    return None
                self._lock.wait(timeout=1.0)
        try:
            worker = _Worker(self.config)
        except BaseException:
            with self._lock:
                self._alive -= 1
                self._lock.notify_all()
            raise
        self._fill()
        return worker

    def _fill(self) -> None:
        """Start idle workers up to capacity, so they import their modules while others work
        (after a kill, the next item finds a warm worker instead of waiting for a fresh one)."""
        while True:
            with self._lock:
                if self._closed or self._alive >= self.capacity:
                    return
                self._alive += 1
            try:
                worker = _Worker(self.config)
            except BaseException:
                with self._lock:
                    self._alive -= 1
                raise
            with self._lock:
                self._idle.append(worker)
                self._lock.notify_all()

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            if self._closed or worker.proc.poll() is not None:
                self._alive -= 1
                worker.kill()
            else:
                self._idle.append(worker)
            self._lock.notify_all()

    def _discard(self, worker: _Worker) -> None:
        """Kill `worker` and start its replacement right away."""
        worker.kill()
        with self._lock:
            self._alive -= 1
            self._lock.notify_all()
        self._fill()

    def grow(self, workers: int) -> None:
        """Allow at least `workers` processes (a batch asking for more workers grows the pool)."""
        with self._lock:
            self.capacity = max(self.capacity, workers)

    def warm(self) -> None:
        """Start every worker now and wait until each has imported its modules, so that the
        first batch does not wait (e.g. before timing something)."""
        workers = [self._acquire(block=True) for _ in range(self.capacity)]
        try:
            for worker in workers:
                deadline = worker.born + self.config.start_timeout
                with selectors.DefaultSelector() as selector:
                    selector.register(worker.fd, selectors.EVENT_READ)
                    while not worker.ready and worker.proc.poll() is None and time.monotonic() < deadline:
                        selector.select(timeout=0.5)
                        worker.poll_ready()
        finally:
            for worker in workers:
                self._release(worker)

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._alive -= len(idle)
            self._lock.notify_all()
        if os.getpid() != self._pid:
            return  # inherited through fork: the workers belong to the parent
        for worker in idle:
            worker.kill()

    # ---- running a batch (in the caller's thread) ----
    def _hand_out(self, tasks: list[Task], pending: collections.deque, held: list[_Worker], selector: Any) -> None:
        """Give the next chunk to every ready idle worker; release those left with nothing to do."""
        now = time.monotonic()
        for worker in held:
            if worker.ready and not worker.chunk and pending:
                indices = pending.popleft()
                worker.chunk.extend(indices)
                worker.item_start = now
                try:
                    worker.send([tasks[i] for i in indices])
                except OSError:
                    pass  # it died: the read in `run` sees EOF
        for worker in [w for w in held if w.ready and not w.chunk and not pending]:
            selector.unregister(worker.fd)  # nothing left for it: let other callers use it
            held.remove(worker)
            self._release(worker)

    def run(self, tasks: list[Task], workers: int | None = None) -> list[VerifyResult]:
        """Results for `tasks`, in order. Each task gets a hard wall-clock limit of `task.timeout`."""
        if not tasks:
            return []
        limit = max(1, workers or self.capacity)
        self.grow(limit)
        n = len(tasks)
        chunk = self.config.chunk_size or max(1, min(32, n // (4 * limit)))
        pending = collections.deque(list(range(i, min(i + chunk, n))) for i in range(0, n, chunk))
        results: list[VerifyResult | None] = [None] * n
        held: list[_Worker] = []
        selector = selectors.DefaultSelector()
        start_failures = 0
        remaining = n

        def settle(index: int, result: VerifyResult) -> None:
            nonlocal remaining
            results[index] = result
            remaining -= 1

        def hire(block: bool) -> bool:
            worker = self._acquire(block)
            if worker is None:
                return False
            held.append(worker)
            selector.register(worker.fd, selectors.EVENT_READ, worker)
            return True

        def fire(worker: _Worker, why: str, verdict: Verdict) -> None:
            """Drop `worker`: its current item gets `verdict`, the rest of its chunk is re-queued."""
            nonlocal start_failures
            selector.unregister(worker.fd)
            held.remove(worker)
            if worker.chunk:
                current = worker.chunk.popleft()
                elapsed = time.monotonic() - worker.item_start
                settle(current, VerifyResult(verdict, detail=why, elapsed=elapsed, kind=tasks[current].kind))
                if worker.chunk:
                    pending.appendleft(list(worker.chunk))
            elif not worker.ready:
                start_failures += 1
                if start_failures >= 3:
                    self._discard(worker)
                    raise RuntimeError(f"verifier workers fail to start ({why}); run `{sys.executable} -c "
                                       f"\"{_WORKER_BOOT}\"` to see the error")
            self._discard(worker)

        try:
            while remaining:
                if pending and len(held) < limit:
                    while pending and len(held) < limit and hire(block=not held):
                        pass
                self._hand_out(tasks, pending, held, selector)
                deadlines = [
                    w.item_start + tasks[w.chunk[0]].timeout if w.chunk else w.born + self.config.start_timeout
                    for w in held
                ]
                wait = max(0.0, min(deadlines) - time.monotonic()) if deadlines else 0.05
                for key, _ in selector.select(timeout=min(wait, 1.0)):
                    worker = key.data
                    eof, readied = _take_messages(worker, settle, pending)
                    start_failures = 0 if readied else start_failures
                    if eof:
                        fire(worker, worker.death_reason(), Verdict.ERROR)
                now = time.monotonic()
                for worker in list(held):
                    if worker.chunk and now >= worker.item_start + tasks[worker.chunk[0]].timeout:
                        limit_s = tasks[worker.chunk[0]].timeout
                        fire(worker, f"no verdict within {limit_s:g}s: worker killed and replaced", Verdict.TIMEOUT)
                    elif not worker.ready and now >= worker.born + self.config.start_timeout:
                        fire(worker, f"worker not ready after {self.config.start_timeout:g}s", Verdict.ERROR)
        finally:
            selector.close()
            for worker in held:
                if worker.chunk:
                    self._discard(worker)  # interrupted mid-item (e.g. Ctrl-C): its state is unknown
                else:
                    self._release(worker)
        return results  # type: ignore[return-value]


def _take_messages(worker: _Worker, settle: Callable[[int, VerifyResult], None], pending: collections.deque) -> tuple[bool, bool]:
    """Handle what `worker` wrote: (whether it is gone - EOF, or it exits to start clean, its other
    items handed back to `pending` -, whether it said it is ready)."""
    messages, eof = worker.read()
    readied = False
    for message in messages:
        if message[0] == "ready":
            worker.ready = readied = True
        elif message[0] == "result":
            index = worker.chunk.popleft()
            settle(index, VerifyResult.from_dict(message[2]))
            worker.item_start = time.monotonic()
            if message[3]:  # it exits to start clean: hand its other items on
                if worker.chunk:
                    pending.appendleft(list(worker.chunk))
                    worker.chunk.clear()
                eof = True
    return eof, readied


# --------------------------------------------------------------------------------------------
# the shared pool of this process

_POOL: VerifierPool | None = None
_POOL_LOCK = threading.Lock()


def get_pool() -> VerifierPool:
    """The process-wide pool, created on first use and shut down at exit."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._closed or _POOL._pid != os.getpid():
            _POOL = VerifierPool()
        return _POOL


def configure_pool(config: PoolConfig) -> VerifierPool:
    """Replace the shared pool with one built from `config` (the old one is shut down)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.shutdown()
        _POOL = VerifierPool(config)
        return _POOL


def shutdown_pool() -> None:
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.shutdown()
        _POOL = None


def _forget_after_fork() -> None:
    # A forked child (e.g. a ProcessPoolExecutor worker) must not touch the parent's workers.
    global _POOL, _POOL_LOCK
    _POOL_LOCK = threading.Lock()
    _POOL = None


atexit.register(shutdown_pool)
os.register_at_fork(after_in_child=_forget_after_fork)
