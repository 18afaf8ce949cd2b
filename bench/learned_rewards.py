"""Benchmark: the learned-reward recipes over seeds, with mean and spread.

    python bench/learned_rewards.py --recipe bt                          # Bradley-Terry RM alone, report seeds 3,4,5
    python bench/learned_rewards.py --recipe prm --seeds 0,1,2 --parallel 2   # the dev seeds the recipe was tuned on
    python bench/learned_rewards.py --recipe qrm --bt-from runs/bench-learned-bt  # reuses bt's RM data

Each seed runs `examples/learned_reward_rl.sh RECIPE` with `SEED=s` (RM data, RM and RL seeded by
it; the warm start is the same for every seed) into OUT-DIR/seed-s, logging to OUT-DIR/seed-s.log;
every seed runs from scratch: a seed folder that exists is an error, unless `--reuse` says to read
the RL summaries a finished one holds (a reused seed is marked in the output).
Then, per RL arm (bt: rm; qrm: mean, cvar; prm: raw, clip, delta, clip-delta with --rollback-on-alarm,
clip-delta without it and stopped by a gold-free alarm, and the verifier's outcome reward as the
oracle), it prints the arm's gold budget (gold-labelled prompts its decisions read), held-out greedy
accuracy before and after, the gain and the badly-wrong rate as mean +- standard deviation with the
worst and best seed, the gain of every seed, the RM's prompt overlap with RL's prompts (which the task's disjoint pools keep at 0), and the machine's load. `--parallel 2` runs two seeds
at once; every RM trains on one torch thread whatever `--parallel` is, because the thread count
changes the RM's bits (and so every number after it). Not a test; not run in CI: about 10 minutes
per seed for bt, about 12 for qrm, 20 for prm (its four RL runs 2-3 min each), on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV_SEEDS = (0, 1, 2)  # the seeds the recipes were tuned on
ARMS = {"bt": ["rl"], "qrm": ["rl-mean", "rl-cvar"],
        "prm": ["rl-raw", "rl-clip", "rl-delta", "rl-clip-delta", "rl-clip-delta-no-rollback", "rl-clip-delta-gold-free",
                "rl-verifier"]}
# gold labels a run's decisions read (the policy it keeps): --rollback-on-alarm keeps the policy of the best gold
# probe (256 prompts with gold answers, apart from the 500 evaluated); the others read none (a probe they log is
# only measured). The RMs' training labels come from the verifier (bt, qrm) or a step check (prm) on RM prompts.
GOLD_BUDGET = {"rl-raw": 256, "rl-clip": 256, "rl-delta": 256, "rl-clip-delta": 256,
               "rl-verifier": "all"}  # the oracle: every training prompt's gold answer is in its reward


def run_seed(recipe: str, seed: int, out_dir: Path, threads: int, bt_from: Path | None = None, reuse: bool = False) -> dict:
    folder = out_dir / f"seed-{seed}"
    summaries = [folder / arm / "summary.json" for arm in ARMS[recipe]]
    finished = all(p.exists() for p in summaries)
    if folder.exists() and not (reuse and finished):
        raise SystemExit(f"{folder} exists ({'a finished run' if finished else 'an unfinished run'}): the bench runs every seed "
                         f"from scratch; remove it, pick another --out-dir{', or pass --reuse to read its results' if finished else ''}")
    if not finished:
        env = {**os.environ, "OUT": str(folder), "SEED": str(seed), "THREADS": str(threads)}
        if bt_from is not None:  # qrm: the RM data of the bt bench's run of this seed
            env["BT_FROM"] = str(bt_from / f"seed-{seed}")
        start = time.time()
        with open(out_dir / f"seed-{seed}.log", "w") as log:
            done = subprocess.run(["bash", str(ROOT / "examples" / "learned_reward_rl.sh"), recipe], env=env, stdout=log,
                                  stderr=subprocess.STDOUT, cwd=ROOT)
        if done.returncode:
            raise SystemExit(f"seed {seed} failed (exit {done.returncode}); see {out_dir / f'seed-{seed}.log'}")
        (folder / "bench_seconds.txt").write_text(f"{time.time() - start:.0f}\n")
    out = {arm: json.loads(p.read_text()) for arm, p in zip(ARMS[recipe], summaries)}
    out["rm_eval"] = last_eval(folder / "rm" / "metrics.jsonl")
    out["reused"] = folder.exists() and finished
    return out


def last_eval(metrics: Path) -> dict[str, float]:
    """The reward model's last held-out evaluation (train-rm's metrics.jsonl), on the RM's own
    validation prompts (the task's rm_eval pool)."""
    events = [json.loads(x) for x in metrics.read_text().splitlines() if x.strip()] if metrics.exists() else []
    evals = [e for e in events if e.get("event") == "eval"]
    keep = ("pairwise_accuracy", "best_of_n", "random_pick", "correlation", "step_auroc", "step")
    return {k: v for k, v in evals[-1].items() if k in keep} if evals else {}


def spread(values: list[float], scale: float = 100.0) -> str:
    values = [scale * v for v in values]
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):5.1f} +- {sd:4.1f} [{min(values):5.1f}, {max(values):5.1f}]"


def stop_note(summary: dict) -> str:
    """` (alarm 80, back to 50)` for a run the hack alarm stopped, else ``."""
    stopped = summary.get("stopped_by_alarm")
    if not stopped:
        return ""
    back = stopped.get("rolled_back_to")
    kept = back.get("step") if isinstance(back, dict) else back
    return f" (alarm {stopped.get('step')}" + (f", back to {kept})" if kept is not None else ")")


def table(recipe: str, results: dict[int, dict]) -> tuple[str, dict]:
    lines = [f"{'arm':<26} {'gold':>4} {'before %':>8}  {'after % (mean +- sd [min, max])':>34}  {'gain, points':>30}  "
             f"{'badly wrong % before -> after':>30}  gains by seed (stopped at step / kept step)"]
    record = {}
    for arm in ARMS[recipe]:
        runs = [results[s][arm] for s in sorted(results)]
        before = [r["accuracy_before"] for r in runs]
        after = [r["accuracy_after"] for r in runs]
        gains = [a - b for a, b in zip(after, before)]
        bad_before = [r["badly_wrong_before"] for r in runs]
        bad_after = [r["badly_wrong_after"] for r in runs]
        stops = [stop_note(r) for r in runs]
        lines.append(f"{arm:<26} {GOLD_BUDGET.get(arm, 0):>4} {100 * statistics.mean(before):8.1f}  {spread(after):>34}  "
                     f"{spread(gains):>30}  {100 * statistics.mean(bad_before):8.1f} -> {spread(bad_after):>18}  "
                     + " ".join(f"{100 * g:+.1f}{stop}" for g, stop in zip(gains, stops)))
        record[arm] = {"seeds": sorted(results), "before": before, "after": after, "gain": gains,
                       "badly_wrong_before": bad_before, "badly_wrong_after": bad_after,
                       "rm_prompt_overlap": [r.get("rm_prompt_overlap") for r in runs],
                       "gold_budget": GOLD_BUDGET.get(arm, 0), "stopped": [r.get("stopped_by_alarm") for r in runs]}
    return "\n".join(lines), record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", choices=sorted(ARMS), default="bt")
    parser.add_argument("--seeds", default="3,4,5", help="comma-separated seeds: 0-2 tuned the recipes (dev), 3-5 report")
    parser.add_argument("--reuse", action="store_true", help="read the results of seeds already finished in --out-dir instead of refusing")
    parser.add_argument("--parallel", type=int, default=1, help="seeds run at once (each RM on one torch thread, whatever --parallel)")
    parser.add_argument("--out-dir", type=Path, default=None, help="default: runs/bench-learned-RECIPE")
    parser.add_argument("--bt-from", type=Path, default=None,
                        help="qrm: the --out-dir of a finished bt bench over the same seeds, whose RM data it reuses")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    out_dir = (args.out_dir or ROOT / "runs" / f"bench-learned-{args.recipe}").resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    threads = 1  # the documented numbers' thread count: another one gives other RMs (floats summed in another order)
    load_before, start = os.getloadavg(), time.time()
    with ThreadPoolExecutor(max_workers=max(args.parallel, 1)) as pool:
        bt_from = args.bt_from.resolve() if args.bt_from and args.recipe == "qrm" else None
        results = dict(zip(seeds, pool.map(lambda s: run_seed(args.recipe, s, out_dir, threads, bt_from, args.reuse), seeds)))
    text, record = table(args.recipe, results)
    dev = [s for s in seeds if s in DEV_SEEDS]
    if dev:
        print(f"note: seeds {dev} were used to tune the recipes (dev seeds); report numbers on seeds never looked at (3, 4, 5, ...)")
    reused = [s for s in seeds if results[s].get("reused")]
    if reused:
        print(f"note: seeds {reused} were read from an earlier run (--reuse), not run again")
    print(f"learned rewards, recipe {args.recipe}, seeds {seeds} ({len(seeds)} runs; {time.time() - start:.0f} s; "
          f"load before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs)")
    print(text)
    for seed in sorted(results):
        print(f"seed {seed}: reward model on its validation prompts: "
              + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in results[seed]["rm_eval"].items()))
    overlaps = {json.dumps(o, sort_keys=True) for arm in record.values() for o in arm["rm_prompt_overlap"]}
    print("RM prompt overlap with RL (train / held-out), every run:", "; ".join(sorted(overlaps)))
    rm_evals = {seed: results[seed]["rm_eval"] for seed in sorted(results)}
    (out_dir / "results.json").write_text(json.dumps({"recipe": args.recipe, "arms": record, "rm_eval": rm_evals}, indent=2) + "\n")
    print(f"results: {out_dir / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
