"""Benchmark: a remote judge's throughput under its limits, against a local OpenAI-compatible server
(the tests' scripted judge, tests/openai_server.py) that takes `--delay` seconds per request, as a
model server does.

    python bench/remote_judge.py --items 256 --delay 0.05

Prints items/s for several concurrency limits, with a rate limit, with 10% of the requests
answered 429 (retried), and with the cache warm; and checks every answer came back.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

from openai_server import judge_server  # noqa: E402

from reward_models.remote import Limits, RemoteJudge  # noqa: E402


def run(n: int, delay: float, label: str, server_opts: dict, **limits) -> dict:
    questions = [f"{i}+{i}=" for i in range(n)]
    solutions = [str(2 * i) for i in range(n)]
    with judge_server(delay=delay, **server_opts) as srv:
        judge = RemoteJudge(srv.url, limits=Limits(**{"backoff": 0.05, **limits}))
        start = time.perf_counter()
        out = judge.p_yes(questions, solutions)
        seconds = time.perf_counter() - start
        warm = None
        if limits.get("cache", 1):
            start = time.perf_counter()
            judge.p_yes(questions, solutions)
            warm = n / (time.perf_counter() - start)
        return {"setting": label, "items_per_s": n / seconds, "seconds": seconds, "answered": sum(x is not None for x in out),
                "requests": judge.stats.requests, "retries": judge.stats.retries, "max_in_flight": srv.control.max_in_flight,
                "cached_items_per_s": warm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=256)
    parser.add_argument("--delay", type=float, default=0.05, help="server seconds per request")
    args = parser.parse_args()
    n, d = args.items, args.delay
    rows = [
        run(n, d, "concurrency 1", {}, concurrency=1, cache=0),
        run(n, d, "concurrency 8", {}, concurrency=8, cache=0),
        run(n, d, "concurrency 32", {}, concurrency=32, cache=0),
        run(n, d, "concurrency 32, rate 100/s", {}, concurrency=32, rate=100.0, cache=0),
        run(n, d, "concurrency 32, first 10% answered 429", {"fail_first": n // 10}, concurrency=32, cache=0),
        run(n, d, "concurrency 32, cache", {}, concurrency=32),
    ]
    print(f"{n} P(yes) judgments, server {d * 1000:.0f} ms per request")
    print(f"{'setting':<42} {'items/s':>8} {'answered':>9} {'requests':>9} {'retries':>8} {'in flight':>9} {'cached/s':>9}")
    for r in rows:
        cached = f"{r['cached_items_per_s']:.0f}" if r["cached_items_per_s"] else "-"
        print(f"{r['setting']:<42} {r['items_per_s']:>8.1f} {r['answered']:>9} {r['requests']:>9} {r['retries']:>8} "
              f"{r['max_in_flight']:>9} {cached:>9}")


if __name__ == "__main__":
    main()
