"""The same batch works from the main thread, other threads, asyncio, and inside other process pools
(forked and spawned, daemonic workers included), with the hard timeout intact in each."""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import threading
import time

from verifiers import Verdict, averify_batch, verify_batch

TIMEOUT = 0.5
PREDS = ["a", "b", "a"]
KINDS = ["exact", "exact", "sleep"]
EXPECTED = ["correct", "incorrect", "timeout"]


def _batch() -> list[str]:
    return [r.verdict.value for r in verify_batch(PREDS, ["a"] * 3, kind=KINDS, timeout=TIMEOUT)]


def _batch_in_child() -> list[str]:
    """Runs in a child process: registers the fake kinds and a light pool there, then verifies."""
    from verifier_fake_kinds import FAKE_KINDS
    from verifiers import pool, registry

    registry.KINDS.update(FAKE_KINDS)
    pool.configure_pool(pool.PoolConfig(workers=2, preload=()))
    return _batch()


def _daemon_target(queue) -> None:
    queue.put(_batch_in_child())


def test_main_thread(light_pool):
    assert _batch() == EXPECTED


def test_three_threads_at_once(light_pool):
    out: dict[int, list[str]] = {}
    threads = [threading.Thread(target=lambda i=i: out.__setitem__(i, _batch())) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert out == {0: EXPECTED, 1: EXPECTED, 2: EXPECTED}


def test_asyncio_does_not_block_the_event_loop(light_pool):
    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        task = asyncio.create_task(ticker())
        results = await averify_batch(PREDS, ["a"] * 3, kind=KINDS, timeout=TIMEOUT)
        task.cancel()
        return [r.verdict.value for r in results], ticks

    verdicts, ticks = asyncio.run(main())
    assert verdicts == EXPECTED
    assert ticks >= 5  # the loop kept ticking through the 0.5 s timeout


def test_inside_a_forked_process_pool_executor(light_pool):
    verify_batch(["a"], ["a"], kind="exact")  # the parent has live workers when it forks
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as executor:
        assert executor.submit(_batch_in_child).result(timeout=60) == EXPECTED
    assert _batch() == EXPECTED  # the parent's pool was not disturbed by the child


def test_inside_a_spawned_process_pool_executor(light_pool):
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as executor:
        assert executor.submit(_batch_in_child).result(timeout=60) == EXPECTED


def test_inside_a_daemonic_multiprocessing_process(light_pool):
    # daemonic processes may not have multiprocessing children; our workers are plain subprocesses
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_daemon_target, args=(queue,), daemon=True)
    start = time.monotonic()
    proc.start()
    assert queue.get(timeout=60) == EXPECTED
    proc.join(timeout=10)
    assert time.monotonic() - start < 30
