"""Benchmark: `rewardlab score-data` on 100,000 math items, local worker pool versus Ray Data on
this machine, same run, same items.

    python bench/batch_scoring.py                 # 100,000 items, reward verifier:math
    python bench/batch_scoring.py --items 20000 --out bench/results/batch_scoring.jsonl

The items are bench/verifiers.py's RL-scoring mix (simple answers, LaTeX, a few hard or garbage
ones; lone surrogates, which Parquet cannot store, become "?"). Local engine: this process plus a
verifier pool of `--cpus` workers. Ray engine: a local Ray instance with `--cpus` CPUs; `map_batches`
tasks of one CPU, each Ray worker process with its own one-worker verifier pool. Reported: items/s of both, end to end (Ray's start and the actors' start included) and
Ray without `ray.init`; the ratio (target >= 0.8x); whether the verdicts are the same (items that
hit the 5 s timeout under load may differ: they are counted). Not a test; not run in CI.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.records import append_record  # noqa: E402

TARGET = 0.8


def make_table(n: int, seed: int):
    import pyarrow as pa

    spec = importlib.util.spec_from_file_location("bench_verifier_items", ROOT / "bench" / "verifiers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    items = module.make_batch(n, seed=seed)
    clean = lambda text: text.encode("utf-8", "replace").decode("utf-8")  # noqa: E731
    return pa.table({"prompt": [f"Problem {i // 8}" for i in range(n)], "completion": [clean(p) for p, _, _, _ in items],
                     "answer": [clean(g) for _, g, _, _ in items], "category": [c for _, _, _, c in items]})


def main(argv: list[str] | None = None) -> int:
    import pyarrow.parquet as pq

    from rewards.batch import score_dataset

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--reward", default="verifier:math")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="append a JSONL record here")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "items.parquet"
        pq.write_table(make_table(args.items, args.seed), data)
        start = time.perf_counter()
        local = score_dataset(str(data), args.reward, Path(tmp) / "local.parquet", workers=args.cpus, progress_bar=False)
        t_local = time.perf_counter() - start

        import ray

        start = time.perf_counter()
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])  # Ray's workers inherit it
        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        t_init = time.perf_counter() - start
        try:
            start = time.perf_counter()
            remote = score_dataset(str(data), args.reward, Path(tmp) / "ray.parquet", engine="ray", actors=args.cpus,
                                   cpus_per_worker=1, progress_bar=False)
            t_ray = time.perf_counter() - start
        finally:
            ray.shutdown()
        a = pq.read_table(Path(tmp) / "local.parquet").to_pylist()
        b = pq.read_table(Path(tmp) / "ray.parquet").to_pylist()
    load_after = os.getloadavg()
    differ = Counter((x["category"], x["verdict"], y["verdict"]) for x, y in zip(a, b) if x["verdict"] != y["verdict"])
    rate_local, rate_ray, rate_ray_all = args.items / t_local, args.items / t_ray, args.items / (t_ray + t_init)
    record = {"items": args.items, "reward": args.reward, "cpus": args.cpus, "local_items_per_s": round(rate_local, 1),
              "ray_items_per_s": round(rate_ray, 1), "ray_items_per_s_with_init": round(rate_ray_all, 1), "ray_init_s": round(t_init, 1),
              "ratio": round(rate_ray / rate_local, 3), "ratio_with_init": round(rate_ray_all / rate_local, 3),
              "verdicts_local": local["verdict"], "verdicts_ray": remote["verdict"], "differing": sum(differ.values()),
              "load_before": load_before, "load_after": load_after}
    print(f"\nscore-data --reward {args.reward}: {args.items} items (bench/verifiers.py mix), {args.cpus} CPUs; "
          f"load before {load_before}, after {load_after}")
    print(f"local pool ({args.cpus} workers)          : {rate_local:8.1f} items/s ({t_local:.1f} s)")
    print(f"Ray Data ({args.cpus} x 1-CPU tasks)       : {rate_ray:8.1f} items/s ({t_ray:.1f} s; ray.init {t_init:.1f} s more: "
          f"{rate_ray_all:.1f} items/s with it)")
    print(f"ratio Ray / local: {rate_ray / rate_local:.2f}x ({'meets' if rate_ray / rate_local >= TARGET else 'BELOW'} the {TARGET}x target; "
          f"{rate_ray_all / rate_local:.2f}x counting ray.init)")
    print(f"verdicts local {local['verdict']}\nverdicts Ray   {remote['verdict']}\ndiffering items: {sum(differ.values())} {dict(differ)}")
    append_record(args.out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
