"""The worker pool: hard timeouts, crashes, memory cap, ordering, reuse and replacement."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import pytest

from verifiers import Verdict, verify, verify_batch
from verifiers.pool import PoolConfig, Task, VerifierPool

TIMEOUT = 0.5

# (fake kind, expected verdict, a word the detail must contain)
MISBEHAVIOUR = [
    ("sleep", Verdict.TIMEOUT, "killed"),  # hangs in Python
    ("spin_in_c", Verdict.TIMEOUT, "killed"),  # hangs in C (regex backtracking): no signal could stop it
    ("allocate", Verdict.ERROR, "memory"),  # 64 GiB request past the worker's RLIMIT_AS
    ("hard_exit", Verdict.ERROR, "code 7"),  # os._exit(7)
    ("segfault", Verdict.ERROR, "SIGSEGV"),  # NULL dereference through ctypes
    ("raises", Verdict.ERROR, "ValueError"),  # an exception is reported, not scored 0
    ("exits", Verdict.ERROR, "SystemExit"),  # sys.exit inside a kind
    ("wrong_type", Verdict.ERROR, "expected VerifyResult"),  # a kind returning a bool
    ("chatty", Verdict.CORRECT, ""),  # prints and reads stdin: the protocol is unaffected
]


@pytest.mark.parametrize("kind,verdict,word", MISBEHAVIOUR, ids=[m[0] for m in MISBEHAVIOUR])
def test_misbehaving_kind_gets_a_verdict_and_the_pool_stays_healthy(light_pool, kind, verdict, word):
    start = time.monotonic()
    result = verify("a", "a", kind=kind, timeout=TIMEOUT)
    assert time.monotonic() - start < TIMEOUT + 1.0
    assert result.verdict is verdict, result
    assert word in result.detail
    assert result.kind == kind
    assert verify("a", "a", kind="exact", timeout=TIMEOUT).verdict is Verdict.CORRECT


def test_timeout_kills_only_its_item_and_the_batch_continues(light_pool):
    # one worker, chunks of 4: the sleeper sits in the middle of a chunk
    kinds = ["exact", "exact", "sleep", "exact", "exact", "exact"]
    preds = ["a", "b", "a", "a", "c", "a"]
    results = verify_batch(preds, ["a"] * 6, kind=kinds, timeout=TIMEOUT, workers=1)
    assert [r.verdict for r in results] == [
        Verdict.CORRECT, Verdict.INCORRECT, Verdict.TIMEOUT, Verdict.CORRECT, Verdict.INCORRECT, Verdict.CORRECT,
    ]
    assert TIMEOUT <= results[2].elapsed < TIMEOUT + 0.5


def test_fraction_of_a_second_timeout_is_honoured(light_pool):
    start = time.monotonic()
    result = verify("a", "a", kind="sleep", timeout=0.2)
    assert result.verdict is Verdict.TIMEOUT
    assert time.monotonic() - start < 1.2


def test_workers_are_reused_and_replaced_after_a_kill(light_pool):
    first = verify("a", "a", kind="pid").extracted
    assert verify("a", "a", kind="pid").extracted == first  # same warm worker
    assert verify("a", "a", kind="sleep", timeout=0.3).verdict is Verdict.TIMEOUT
    pids = {r.extracted for r in verify_batch(["a"] * 8, ["a"] * 8, kind="pid", workers=2)}
    assert first not in pids  # the killed worker is gone, fresh ones took over


def test_order_is_preserved_across_chunks_and_workers(light_pool):
    # every 5th item raises; the rest are exact matches or mismatches by index parity
    n = 101
    kinds = ["raises" if i % 5 == 0 else "exact" for i in range(n)]
    preds = [str(i) if i % 2 else "x" for i in range(n)]
    golds = [str(i) for i in range(n)]
    results = verify_batch(preds, golds, kind=kinds, workers=2)
    expected = [
        Verdict.ERROR if i % 5 == 0 else Verdict.CORRECT if i % 2 else Verdict.INCORRECT for i in range(n)
    ]
    assert [r.verdict for r in results] == expected
    assert [r.extracted for r in results if r.verdict is Verdict.CORRECT] == [str(i) for i in range(n) if i % 2 and i % 5]


def test_a_batch_runs_each_distinct_item_once_in_order(light_pool):
    # an item repeated in the batch (an RL group repeats completions) is verified once, its copies share the verdict
    n = 3 * 512 + 7
    preds = [str(i % 700) if i % 3 else "x" for i in range(n)]  # repeats: i and i + 2100 are the same item
    golds = [str(i % 700) for i in range(n)]
    kinds = ["raises" if i % 700 % 11 == 0 else "stamp" for i in range(n)]
    results = verify_batch(preds, golds, kind=kinds, workers=2)
    expected = [Verdict.ERROR if i % 700 % 11 == 0 else Verdict.CORRECT if i % 3 else Verdict.INCORRECT for i in range(n)]
    assert [r.verdict for r in results] == expected
    stamps = {}
    for i, r in enumerate(results):
        if kinds[i] == "stamp":
            stamps.setdefault((preds[i], golds[i]), set()).add(r.extracted)
    assert all(len(s) == 1 for s in stamps.values())  # each distinct item ran once
    assert len(set().union(*stamps.values())) == len(stamps)  # and distinct items ran apart


def test_a_private_pool_with_its_own_memory_cap():
    # 256 MiB cap: a 1 GiB bytearray fails inside the worker -> ERROR, worker restarted
    pool = VerifierPool(PoolConfig(workers=1, memory_mb=256, preload=()))
    try:
        tasks = [
            Task("verifier_fake_kinds:allocate", "a", "a", {"gib": 1}, 5.0, "allocate"),
            Task("verifier_fake_kinds:exact", "a", "a", {}, 5.0, "exact"),
        ]
        first, second = pool.run(tasks)
        assert first.verdict is Verdict.ERROR and "memory" in first.detail
        assert second.verdict is Verdict.CORRECT
    finally:
        pool.shutdown()


@pytest.mark.parametrize(
    "field,value",
    [("workers", 0), ("memory_mb", -1), ("chunk_size", -2)],  # each names the field in its error
)
def test_pool_config_rejects_bad_values(field, value):
    with pytest.raises(ValueError, match=field):
        PoolConfig(**{field: value})


def test_worker_directories_go_with_their_pool(tmp_path):
    # each worker has its own TMPDIR; a pool process killed with SIGKILL (or stopped by a signal, as
    # uvicorn does) never runs its cleanup: the workers remove their own, and a new pool sweeps the rest
    script = ("import os, signal\nfrom verifiers.pool import PoolConfig, VerifierPool\n"
              "pool = VerifierPool(PoolConfig(workers=2, preload=()))\npool.warm()\n"
              "print(' '.join(w.tmpdir for w in pool._idle), flush=True)\nos.kill(os.getpid(), signal.SIGKILL)")
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": os.getcwd()}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    dirs = proc.stdout.split()
    assert len(dirs) == 2 and all(d.startswith(str(tmp_path)) for d in dirs), proc
    deadline = time.monotonic() + 5
    while any(os.path.exists(d) for d in dirs) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(os.path.exists(d) for d in dirs)
    # a directory whose pool and workers all died at once is removed by the next pool
    orphan = tmp_path / "rewardlab-worker-999999999-x"
    orphan.mkdir()
    old = tempfile.tempdir
    tempfile.tempdir = str(tmp_path)
    try:
        VerifierPool(PoolConfig(workers=1, preload=())).shutdown()
    finally:
        tempfile.tempdir = old
    assert not orphan.exists()
