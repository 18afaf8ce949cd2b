"""Benchmark: `serve-reward` under 64 concurrent single-item clients versus one client sending the
same items in batches of 64, same server, same run.

    python bench/reward_server.py                 # 4,096 realistic math items, reward verifier:math
    python bench/reward_server.py --items 2048 --reward "verifier:math*1.0+format:integer*0.1"
    python bench/reward_server.py --mix arithmetic-latex  # 3-digit sums answered in LaTeX forms

The server is a real `rewardlab serve-reward` subprocess on a loopback port (micro-batching on, its
defaults). The items are bench/verifiers.py's RL-scoring mix (simple answers, LaTeX, a few hard or
garbage ones; `--mix verifiers`) or the default task's sums answered in LaTeX forms, right and wrong
(`--mix arithmetic-latex`: `$\\boxed{1823}$`, `\\(1{,}823\\)`, `\\frac{3646}{2}`, ...), sent in
OpenRLHF's remote-RM format. Phase 1: one client, batches of 64, one after
another. Phase 2: 64 clients at once (asyncio), one query per request, with OpenRLHF's retry policy
(5 tries one second apart, then the reward is left empty). Reported: items/s of both and the ratio
(target >= 0.8x), lost rewards (target 0), requests that were retried, latency p50/p99 of the
single-item requests, the server's mean batch size, whether both phases gave the same rewards, and
the CPU time per item of the server (its process and verifier workers) and of the clients in each
phase: what limits the single-item phase. The clients run on the same machine as the server and
take CPU from it. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.records import append_record  # noqa: E402

TARGET = 0.8
CLIENTS = 64
TOKEN = secrets.token_urlsafe(16)  # the server's token: every request sends it, as a real client must


def start_server(reward: str, port: int) -> subprocess.Popen:
    import httpx

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "REWARDLAB_SERVICE_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, "-m", "rewardlab", "serve-reward", "--reward", reward, "--port", str(port),
                             "--log-level", "warning"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not start")


class Connection:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams. httpx's async client spends ~7 ms of
    CPU per request on this machine (measured), which on 2 shared cores would measure the client,
    not the server; real RL clients run on other machines."""

    def __init__(self, port: int) -> None:
        self.port, self.reader, self.writer = port, None, None

    async def post(self, path: str, body: dict) -> tuple[int, dict]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        data = json.dumps(body).encode()
        self.writer.write(b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer %s\r\ncontent-type: application/json\r\n"
                          b"content-length: %d\r\n\r\n" % (path.encode(), TOKEN.encode(), len(data)) + data)
        await self.writer.drain()
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        length = next(int(line.split(":", 1)[1]) for line in head if line.lower().startswith("content-length"))
        payload = json.loads(await self.reader.readexactly(length))
        if any(line.lower().startswith("connection: close") for line in head):
            self.close()
        return status, payload

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def post(conn: Connection, body: dict, stats: dict) -> list | None:
    """OpenRLHF's client: 5 tries one second apart, then None (the reward is left empty)."""
    for _ in range(5):
        try:
            status, payload = await conn.post("/get_reward", body)
            if status == 200:
                return payload["rewards"]
        except (OSError, asyncio.IncompleteReadError, ValueError):
            conn.close()
        stats["retries"] += 1
        await asyncio.sleep(1.0)
    return None


async def batched_client(port: int, items: list) -> tuple[list, float]:
    stats = {"retries": 0}
    out: list = []
    conn = Connection(port)
    start = time.perf_counter()
    for at in range(0, len(items), 64):
        chunk = items[at : at + 64]
        body = {"query": [p + c for p, c, _ in chunk], "prompts": [p for p, _, _ in chunk], "labels": [g for _, _, g in chunk]}
        got = await post(conn, body, stats)
        out.extend(got if got is not None else [None] * len(chunk))
    conn.close()
    return out, time.perf_counter() - start


async def streaming_clients(port: int, items: list) -> tuple[list, float, list[float], int]:
    stats = {"retries": 0}
    out: list = [None] * len(items)
    latencies: list[float] = []

    async def one_client(k: int) -> None:
        conn = Connection(port)
        for i in range(k, len(items), CLIENTS):
            p, c, g = items[i]
            t = time.perf_counter()
            got = await post(conn, {"query": [p + c], "prompts": [p], "labels": [g]}, stats)
            latencies.append(time.perf_counter() - t)
            out[i] = got[0] if got is not None else None
        conn.close()

    start = time.perf_counter()
    await asyncio.gather(*(one_client(k) for k in range(CLIENTS)))
    return out, time.perf_counter() - start, latencies, stats["retries"]


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1]


def load_items(n: int, seed: int) -> list[tuple[str, str, str]]:
    """(prompt, completion, gold) from bench/verifiers.py's RL-scoring mix."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_verifier_items", ROOT / "bench" / "verifiers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    items = module.make_batch(n, seed=seed)
    # a lone surrogate (one of the garbage answers) cannot be sent as UTF-8 JSON: it becomes "?"
    return [(f"Problem {i // 8}: ", pred.encode("utf-8", "replace").decode("utf-8"), gold) for i, (pred, gold, _, _) in enumerate(items)]


LATEX_FORMS = (  # (template, right?) for an answer n
    (lambda n: f"The answer is $\\boxed{{{n}}}$.", True),
    (lambda n: f"So the sum is \\({n:,}\\).".replace(",", "{,}"), True),
    (lambda n: f"$${n}$$", True),
    (lambda n: f"We get \\boxed{{\\frac{{{2 * n}}}{{2}}}}", True),
    (lambda n: f"\\[ {n}.0 \\]", True),
    (lambda n: f"The answer is $\\boxed{{{n + 10}}}$.", False),
    (lambda n: f"\\({n - 1}\\)", False),
    (lambda n: f"$\\boxed{{{n}}}$ or maybe $\\boxed{{{n + 1}}}$", False),
)


def arithmetic_latex_items(n: int, seed: int) -> list[tuple[str, str, str]]:
    """(prompt, completion, gold): the default task's RL prompts, 8 completions each in LaTeX forms."""
    import random

    from verifiers.tasks import ArithmeticTask

    rng = random.Random(seed)
    rows = ArithmeticTask().sample((n + 7) // 8, seed=seed, split="rl")
    items = [(r["prompt"], rng.choice(LATEX_FORMS)[0](int(r["answer"])), r["answer"]) for r in rows for _ in range(8)]
    return items[:n]


MIXES = {"verifiers": load_items, "arithmetic-latex": arithmetic_latex_items}


def cpu_seconds(proc: subprocess.Popen) -> tuple[float, float]:
    """(server CPU seconds: the process and its children, i.e. the verifier workers; this process's)."""
    import psutil

    server = psutil.Process(proc.pid)
    total = 0.0
    for p in [server, *server.children(recursive=True)]:
        try:
            total += sum(p.cpu_times()[:2])
        except psutil.NoSuchProcess:  # a worker replaced meanwhile: its time is lost, and the bench says so
            print(f"bench: a server process ({p.pid}) exited while its CPU time was read; the CPU figures are low", file=sys.stderr)
    return total, time.process_time()


def main(argv: list[str] | None = None) -> int:
    import httpx

    from tests.serving import free_port

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4096)
    parser.add_argument("--reward", default="verifier:math")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mix", choices=sorted(MIXES), default="verifiers", help="the items (see the module docstring)")
    parser.add_argument("--out", type=Path, default=None, help="append a JSONL record here")
    args = parser.parse_args(argv)
    items = MIXES[args.mix](args.items, args.seed)
    port = free_port()
    load_before = os.getloadavg()
    proc = start_server(args.reward, port)
    try:
        asyncio.run(batched_client(port, items[:256]))  # warm-up: worker pool and imports
        cpu0 = cpu_seconds(proc)
        batched, t_batched = asyncio.run(batched_client(port, items))
        cpu1 = cpu_seconds(proc)
        before = httpx.get(f"http://127.0.0.1:{port}/stats", headers={"Authorization": f"Bearer {TOKEN}"}).json()["batching"]
        cpu2 = cpu_seconds(proc)
        streamed, t_streamed, latencies, retries = asyncio.run(streaming_clients(port, items))
        cpu3 = cpu_seconds(proc)
        after = httpx.get(f"http://127.0.0.1:{port}/stats", headers={"Authorization": f"Bearer {TOKEN}"}).json()["batching"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    load_after = os.getloadavg()
    lost = sum(v is None for v in streamed)
    batches = after["batches"] - before["batches"]
    mean_batch = (after["items"] - before["items"]) / max(batches, 1)
    rate_b, rate_s = len(items) / t_batched, len(items) / t_streamed
    ratio = rate_s / rate_b
    per_item = lambda a, b, k: 1e3 * (b[k] - a[k]) / len(items)  # noqa: E731  CPU ms per item
    cpu = {"batched_server_ms": per_item(cpu0, cpu1, 0), "batched_client_ms": per_item(cpu0, cpu1, 1),
           "streamed_server_ms": per_item(cpu2, cpu3, 0), "streamed_client_ms": per_item(cpu2, cpu3, 1)}
    record = {"items": len(items), "mix": args.mix, "reward": args.reward, **{k: round(v, 3) for k, v in cpu.items()}, "batched_items_per_s": round(rate_b, 1),
              "streamed_items_per_s": round(rate_s, 1), "ratio": round(ratio, 3), "lost": lost, "retried_requests": retries,
              "p50_ms": round(1000 * pct(latencies, 50), 1), "p99_ms": round(1000 * pct(latencies, 99), 1),
              "server_mean_batch": round(mean_batch, 1), "same_rewards": streamed == batched,
              "load_before": load_before, "load_after": load_after}
    print(f"\nserve-reward --reward {args.reward}: {len(items)} items ({args.mix} mix), {os.cpu_count()} cores, "
          f"load before {load_before}, after {load_after}")
    print(f"one client, batches of 64     : {rate_b:8.1f} items/s")
    print(f"{CLIENTS} clients, one item each   : {rate_s:8.1f} items/s   ratio {ratio:.2f}x "
          f"({'meets' if ratio >= TARGET else 'BELOW'} the {TARGET}x target)")
    print(f"lost rewards {lost}, retried requests {retries}, latency p50 {record['p50_ms']} ms, p99 {record['p99_ms']} ms, "
          f"server's mean batch {mean_batch:.1f} items; same rewards as the batched client: {streamed == batched}")
    print(f"CPU per item (ms): batched - server {cpu['batched_server_ms']:.2f}, client {cpu['batched_client_ms']:.2f}; "
          f"single-item - server {cpu['streamed_server_ms']:.2f}, client {cpu['streamed_client_ms']:.2f} "
          f"({os.cpu_count()} cores: {1e3 * os.cpu_count() / rate_s:.2f} core-ms per item were available)")
    append_record(args.out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
