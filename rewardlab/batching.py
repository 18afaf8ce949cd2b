"""Micro-batching for the HTTP services: the items of concurrent requests scored as one batch.

Streaming RL clients (OpenRLHF's remote reward client, verl's reward loop) send one item per
request, many at once. Scoring each alone wastes the verifier pool and the RM's batching; turning
them away loses rewards (OpenRLHF retries 5 times, one second apart, then leaves the reward empty).
So the services queue requests and a single consumer gathers them:

- a request's items join the queue as one job; the consumer waits at most `max_wait` seconds after
  the oldest job arrived (or until `max_batch_items` are queued), then takes jobs of the same key,
  oldest first, up to `max_batch_items`, and runs them as one call of `run_batch` on a worker thread
  (at most `concurrency` batches at a time; while they run, new requests queue up, so batches grow
  with the load);
- jobs with different keys (e.g. different columns, or a reward that must see each request alone)
  never share a batch;
- backpressure only when the queue is full: a job that would take the queue past
  `max_queue_items` waiting items is refused with `QueueFull` (the services answer 503 with a
  `Retry-After` from the measured throughput); a queue with room never refuses;
- every job has a deadline: one not answered by then raises `DeadlineExceeded` (504); if it is
  still queued it is dropped, so its items cost nothing;
- when a batch fails (e.g. one request's bad column), each of its jobs is run again alone, so the
  error reaches only the request that caused it.

>>> import asyncio
>>> batcher = MicroBatcher(lambda key, payloads: [[x * 2 for x in p] for p in payloads], max_wait=0.01)
>>> async def three_clients():
...     return await asyncio.gather(*(batcher.submit("k", [i], 1, timeout=5) for i in range(3)))
>>> asyncio.run(three_clients()), batcher.stats()["batches"]
([[0], [2], [4]], 1)
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence


class QueueFull(Exception):
    """The queue has no room for the request; retry after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DeadlineExceeded(Exception):
    """The request was not answered within its deadline."""


@dataclass(eq=False)
class _Job:
    key: Hashable
    payload: Any
    n: int
    future: asyncio.Future
    arrived: float
    queued: bool = True


@dataclass
class _Stats:
    batches: int = 0
    items: int = 0
    requests: int = 0
    largest_batch: int = 0
    refused: int = 0
    expired: int = 0
    busy_seconds: float = 0.0
    rate: float = 0.0  # items per second of batch time (exponential average)
    recent: collections.deque = field(default_factory=lambda: collections.deque(maxlen=64))


class MicroBatcher:
    """See the module docstring. `run_batch(key, payloads) -> results` is called on a worker thread
    with the payloads of the jobs of one batch and returns one result per payload (an exception
    instance as a result fails only that job)."""

    def __init__(self, run_batch: Callable[[Hashable, list[Any]], Sequence[Any]], max_batch_items: int = 256,
                 max_wait: float = 0.005, max_queue_items: int = 16384, concurrency: int = 1, name: str = "batcher") -> None:
        if max_batch_items < 1 or max_queue_items < 1 or concurrency < 1 or not (math.isfinite(max_wait) and max_wait >= 0):
            raise ValueError("MicroBatcher: max_batch_items, max_queue_items and concurrency must be >= 1, max_wait >= 0")
        self.run_batch, self.name = run_batch, name
        self.max_batch_items, self.max_wait, self.max_queue_items, self.concurrency = max_batch_items, max_wait, max_queue_items, concurrency
        self._queue: collections.deque[_Job] = collections.deque()
        self._queued_items = 0
        self._stats = _Stats()
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"rewardlab-{name}")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._consumer: asyncio.Task | None = None
        self._lock = threading.Lock()  # only for stats read from other threads

    # ---- the request side
    async def submit(self, key: Hashable, payload: Any, n_items: int, timeout: float) -> Any:
        """The result for `payload` (`n_items` items), once its batch has run; raises `QueueFull`
        when the queue has no room, `DeadlineExceeded` after `timeout` seconds."""
        self._start()
        if self._queued_items and self._queued_items + n_items > self.max_queue_items:
            self._stats.refused += 1
            raise QueueFull(f"the queue is full ({self._queued_items} items waiting, limit {self.max_queue_items}); "
                            f"retry after the Retry-After delay", self.retry_after())
        loop = asyncio.get_running_loop()
        job = _Job(key, payload, n_items, loop.create_future(), loop.time())
        self._queue.append(job)
        self._queued_items += n_items
        self._wake.set()
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), timeout)
        except asyncio.TimeoutError:
            self._stats.expired += 1
            raise DeadlineExceeded(f"not answered within the request deadline of {timeout:g} s "
                                   f"({self._queued_items} items waiting); retry or raise the deadline") from None
        finally:
            self._forget(job)  # expired, cancelled (client gone) or done: a queued job is dropped unscored

    def retry_after(self) -> int:
        """Seconds until the queue has likely drained (from the measured throughput), 1..60."""
        rate = self._stats.rate
        if rate <= 0:
            return 1
        return int(min(60, max(1, math.ceil(self._queued_items / rate))))

    def stats(self) -> dict[str, float]:
        s = self._stats
        return {"batches": s.batches, "items": s.items, "requests": s.requests, "largest_batch": s.largest_batch,
                "mean_batch": s.items / s.batches if s.batches else 0.0, "queued_items": self._queued_items,
                "refused": s.refused, "expired": s.expired, "items_per_s": round(s.rate, 1)}

    def _forget(self, job: _Job) -> None:
        if job.queued:
            job.queued = False
            self._queued_items -= job.n
            try:
                self._queue.remove(job)
            except ValueError:
                pass
        if not job.future.done():
            job.future.cancel()

    # ---- the consumer side
    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._consumer is not None and not self._consumer.done():
            return
        self._loop = loop
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(self.concurrency)
        self._consumer = loop.create_task(self._consume(), name=f"rewardlab-{self.name}")

    async def _consume(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while not self._queue:
                self._wake.clear()
                await self._wake.wait()
            # a small wait budget lets concurrent requests arrive; a full batch goes at once
            wait = self._queue[0].arrived + self.max_wait - loop.time()
            while wait > 0 and self._queued_items < self.max_batch_items:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), wait)
                except asyncio.TimeoutError:
                    break
                if not self._queue:
                    break
                wait = self._queue[0].arrived + self.max_wait - loop.time()
            await self._slots.acquire()  # while every slot is busy, the queue keeps growing
            jobs = self._take()
            if not jobs:
                self._slots.release()
                continue
            loop.create_task(self._run(jobs))

    def _take(self) -> list[_Job]:
        """The oldest job and the next ones with its key, up to `max_batch_items` items."""
        if not self._queue:
            return []
        key, taken, size = self._queue[0].key, [], 0
        for job in list(self._queue):
            if job.key != key or job.future.done():
                continue
            if taken and size + job.n > self.max_batch_items:
                break
            taken.append(job)
            size += job.n
        for job in taken:
            self._queue.remove(job)
            job.queued = False
            self._queued_items -= job.n
        return taken

    async def _run(self, jobs: list[_Job]) -> None:
        loop = asyncio.get_running_loop()
        start = time.perf_counter()
        try:
            results = await loop.run_in_executor(self._executor, self._call, jobs[0].key, [j.payload for j in jobs])
        except BaseException as exc:  # noqa: BLE001 - handed to every waiting request
            results = [exc] * len(jobs)
        finally:
            self._slots.release()
        seconds = time.perf_counter() - start
        n = sum(j.n for j in jobs)
        s = self._stats
        s.batches, s.items, s.requests = s.batches + 1, s.items + n, s.requests + len(jobs)
        s.largest_batch, s.busy_seconds = max(s.largest_batch, n), s.busy_seconds + seconds
        s.rate = n / max(seconds, 1e-6) if s.rate == 0 else 0.8 * s.rate + 0.2 * n / max(seconds, 1e-6)
        for job, result in zip(jobs, results):
            if job.future.done():
                continue  # its deadline passed while the batch ran: the answer is dropped
            if isinstance(result, BaseException):
                job.future.set_exception(result)
            else:
                job.future.set_result(result)

    def _call(self, key: Hashable, payloads: list[Any]) -> list[Any]:
        """`run_batch` on the whole batch; when it fails, each payload alone (so only the request at
        fault gets the error)."""
        try:
            results = list(self.run_batch(key, payloads))
        except Exception as exc:  # noqa: BLE001 - attributed below, never hidden
            if len(payloads) == 1:
                return [exc]
            return [self._one(key, p) for p in payloads]
        if len(results) != len(payloads):
            raise RuntimeError(f"{self.name}: run_batch returned {len(results)} results for {len(payloads)} requests")
        return results

    def _one(self, key: Hashable, payload: Any) -> Any:
        try:
            return list(self.run_batch(key, [payload]))[0]
        except Exception as exc:  # noqa: BLE001 - this request's own error, set on its future by the caller
            return exc

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
