"""Micro-batching (rewardlab.batching): concurrent requests scored as one batch, backpressure only
when the queue is full, per-request deadlines, errors reaching only the request at fault."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from rewardlab.batching import DeadlineExceeded, MicroBatcher, QueueFull


class Recorder:
    """run_batch that doubles numbers, sleeps `delay` per batch and records every batch it ran."""

    def __init__(self, delay: float = 0.05):
        self.delay, self.batches, self.lock = delay, [], threading.Lock()

    def __call__(self, key, payloads):
        with self.lock:
            self.batches.append((key, [list(p) for p in payloads]))
        time.sleep(self.delay)
        for p in payloads:
            if "bad" in p:
                raise ValueError(f"bad item in {p}")
        return [[x * 2 for x in p] for p in payloads]


def run(coro):
    return asyncio.run(coro)


def test_concurrent_requests_share_batches_and_get_their_own_results():
    rec = Recorder()
    batcher = MicroBatcher(rec, max_batch_items=64, max_wait=0.01)

    async def clients():
        return await asyncio.gather(*(batcher.submit("k", [i], 1, timeout=10) for i in range(100)))

    assert run(clients()) == [[2 * i] for i in range(100)]
    sizes = [sum(len(p) for p in payloads) for _, payloads in rec.batches]
    assert sum(sizes) == 100 and max(sizes) <= 64 and len(rec.batches) <= 4  # 100 requests in 2-4 calls, not 100
    assert batcher.stats()["requests"] == 100 and batcher.stats()["largest_batch"] == max(sizes)


def test_batches_grow_while_a_batch_runs():
    rec = Recorder(delay=0.2)
    batcher = MicroBatcher(rec, max_batch_items=256, max_wait=0.0)

    async def trickle():
        first = asyncio.ensure_future(batcher.submit("k", [0], 1, timeout=10))
        await asyncio.sleep(0.05)  # the first batch (one item) is running now
        rest = [batcher.submit("k", [i], 1, timeout=10) for i in range(1, 30)]
        return [await first, *await asyncio.gather(*rest)]

    assert run(trickle()) == [[2 * i] for i in range(30)]
    assert [sum(len(p) for p in b[1]) for b in rec.batches] == [1, 29]  # the 29 that queued meanwhile go together


def test_different_keys_never_share_a_batch():
    rec = Recorder()
    batcher = MicroBatcher(rec, max_wait=0.02)

    async def clients():
        return await asyncio.gather(*(batcher.submit(i % 2, [i], 1, timeout=10) for i in range(10)))

    assert run(clients()) == [[2 * i] for i in range(10)]
    for key, payloads in rec.batches:
        assert all(p[0] % 2 == key for p in payloads)


def test_a_bad_request_fails_alone():
    rec = Recorder(delay=0.0)
    batcher = MicroBatcher(rec, max_wait=0.02)

    async def clients():
        return await asyncio.gather(batcher.submit("k", [1], 1, 10), batcher.submit("k", ["bad"], 1, 10),
                                    batcher.submit("k", [3], 1, 10), return_exceptions=True)

    good1, bad, good3 = run(clients())
    assert good1 == [2] and good3 == [6]
    assert isinstance(bad, ValueError) and "bad item" in str(bad)


def test_queue_full_is_refused_with_retry_after_and_room_is_never_refused():
    rec = Recorder(delay=0.3)
    batcher = MicroBatcher(rec, max_batch_items=4, max_wait=0.0, max_queue_items=8)

    async def flood(n):
        first = asyncio.ensure_future(batcher.submit("k", [0], 1, timeout=10))
        await asyncio.sleep(0.05)  # a batch is running: the rest wait in the queue
        rest = await asyncio.gather(*(batcher.submit("k", [i], 1, timeout=10) for i in range(1, n)), return_exceptions=True)
        return [await first, *rest]

    within = run(flood(9))  # 8 waiting: exactly the queue's room
    assert all(isinstance(r, list) for r in within), within
    batcher = MicroBatcher(rec, max_batch_items=4, max_wait=0.0, max_queue_items=8)
    over = run(flood(12))  # 11 would wait: 3 refused
    refused = [r for r in over if isinstance(r, QueueFull)]
    assert len(refused) == 3 and all(r.retry_after >= 1 for r in refused)
    assert batcher.stats()["refused"] == 3


def test_deadline_drops_a_queued_request_unscored():
    rec = Recorder(delay=0.5)
    batcher = MicroBatcher(rec, max_batch_items=1, max_wait=0.0)

    async def clients():
        first = asyncio.ensure_future(batcher.submit("k", [1], 1, timeout=10))
        await asyncio.sleep(0.05)
        start = time.perf_counter()
        with pytest.raises(DeadlineExceeded, match="request deadline of 0.2 s"):
            await batcher.submit("k", [2], 1, timeout=0.2)  # waits behind the first: expires in the queue
        waited = time.perf_counter() - start
        return await first, waited

    result, waited = run(clients())
    assert result == [2] and 0.15 < waited < 0.45
    time.sleep(0.6)
    assert all(payloads != [[2]] for _, payloads in rec.batches)  # the expired request was never scored
    assert batcher.stats()["expired"] == 1
