"""Benchmark: `rl` step time with a slow reward, with and without `--overlap`, same run, same seed.

    python bench/overlap.py                      # 40 steps each, 64 prompts x 8, default policy and task
    python bench/overlap.py --steps 20 --out bench/results/overlap.jsonl

The reward is `bench.slow_rewards:remote_verifier` (the math verifier behind a 20 ms/item remote
service, 16 items in flight: ~0.64 s per 512-item batch). Reported: mean step time (steps 2..N)
of both runs and the ratio (target >= 1.4x), the mean time per step spent generating / scoring /
waiting for scores / training, and the learning curves side by side (rollout accuracy per
window of steps, held-out greedy accuracy before and after): overlap is one step off-policy, so
they should agree within noise. Not a test; not run in CI. Timings on a shared machine move with
its load (printed); the ratio is what matters.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing; also makes `bench.slow_rewards` importable
from bench.records import append_record  # noqa: E402

TARGET = 1.4


def run(steps: int, overlap: bool, out: Path, seed: int) -> list[dict]:
    from training.config import RLConfig
    from training.trainer import train

    config = RLConfig(reward="bench.slow_rewards:remote_verifier", steps=steps, overlap=overlap, output_dir=out, seed=seed,
                      eval_every=0, checkpoint_every=0, report=False, probe_size=0, eval_size=500)
    summary = train(config)
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    rows[0]["summary"] = summary
    return rows


def window_means(rows: list[dict], key: str, width: int) -> list[float]:
    return [round(statistics.mean(r[key] for r in rows[i : i + width]), 3) for i in range(0, len(rows), width)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--window", type=int, default=10, help="steps per point of the learning curves")
    parser.add_argument("--out", type=Path, default=None, help="append a JSONL record here")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    load_before = os.getloadavg()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, overlap in (("plain", False), ("overlap", True)):
            start = time.time()
            rows = run(args.steps, overlap, Path(tmp) / name, args.seed)
            results[name] = {"rows": rows, "wall": time.time() - start}
    load_after = os.getloadavg()
    record = {"steps": args.steps, "load_before": load_before, "load_after": load_after}
    print(f"\nrl, 64 prompts x 8, reward bench.slow_rewards:remote_verifier (20 ms/item, 16 in flight), {args.steps} steps each")
    print(f"machine load (1/5/15 min): before {load_before}, after {load_after}; {os.cpu_count()} cores\n")
    print(f"{'':14}{'step s':>8}{'generate':>10}{'score':>8}{'wait':>8}{'overlap':>9}{'train':>8}   rollout accuracy per {args.window} steps; held-out before -> after")
    for name, res in results.items():
        later = res["rows"][1:]
        mean = {k: statistics.mean(r[f"time/{k}"] for r in later) for k in ("step", "generate", "score", "score_wait", "overlap", "train")}
        summary = res["rows"][0]["summary"]
        curve = window_means(res["rows"], "accuracy", args.window)
        record[name] = {**{f"time_{k}": round(v, 4) for k, v in mean.items()}, "accuracy_curve": curve,
                        "heldout_before": summary["accuracy_before"], "heldout_after": summary["accuracy_after"], "wall_s": round(res["wall"], 1)}
        print(f"{name:14}{mean['step']:8.3f}{mean['generate']:10.3f}{mean['score']:8.3f}{mean['score_wait']:8.3f}{mean['overlap']:9.3f}"
              f"{mean['train']:8.3f}   {curve}; {summary['accuracy_before']:.1%} -> {summary['accuracy_after']:.1%}")
    ratio = record["plain"]["time_step"] / record["overlap"]["time_step"]
    record["ratio"] = round(ratio, 3)
    print(f"\nstep time ratio plain / overlap: {ratio:.2f}x ({'meets' if ratio >= TARGET else 'BELOW'} the {TARGET}x target)")
    append_record(args.out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
