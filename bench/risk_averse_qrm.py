"""Benchmark: the quantile RM's risk claim where raters disagree - mean vs CVaR utility over seeds.

    python bench/risk_averse_qrm.py --seeds 0,1,2                  # about 12 minutes per seed on 2 cores
    python bench/risk_averse_qrm.py --seeds 0,1,2 --parallel 2 --out-dir runs/bench-risk
    python bench/risk_averse_qrm.py --init-from-bt runs/bench-learned-bt --rank-coef 0 --rm-steps 500 --rm-lr 5e-4 \
        --data-from runs/bench-risk --out-dir runs/bench-risk-bt    # QRM from a BT RM that reads correctness
    python bench/risk_averse_qrm.py --data-from runs/bench-risk-bt --qrm-from runs/bench-risk-bt --beside raters:correct \
        --out-dir runs/bench-risk-beside                              # those QRMs beside a rule check of the number
    python bench/risk_averse_qrm.py --data-from runs/bench-risk --init-from-bt runs/bench-learned-bt --rank-coef 0 \
        --rm-steps 1500 --rm-lr 5e-4 --beside raters:correct --parallel 2 --out-dir runs/bench-risk-beside-1500
                                           # QRMs trained 3x longer, beside the check: the claim holds on every seed

The task is the default 3-digit sums, rated by `rewards.raters.RaterPanel`: five simulated raters
who agree on bare answers and disagree on answers followed by a check (`1823 (966+857)`), which
four rate above a bare answer and the fifth at the floor. Per seed (RM data, RM and RL seeded):

  1. (once, seed-independent) warm start: `rewardlab sft` from the project's default policy on a
     mix of bare answers and answers with a check (3 in 4 bare), so it writes both kinds;
  2. `rewardlab rm-data` samples its answers on the task's reward-model prompt pool (disjoint from
     RL's prompts and held-out set), and each sample gets one row per rater (`rewards.raters.rater_rows`);
  3. `rewardlab train-rm --kind qrm` on the policy's backbone: quantile regression on the ratings,
     so its quantiles are the panel's rating distribution, with the default ranking term between
     responses of one prompt (rows of one response with different ratings have equal scores, so
     ranking them moves nothing; without the term the RM reached pairwise 0.68 in 800 steps and RL
     against it lost accuracy);
  4. `rewardlab rl` with the QRM alone, utility `mean` and utility `cvar=0.2` (the mean of the
     lowest fifth of the rating distribution: the strict rater's share), 200 steps each;
  5. greedy answers of the warm start and of both policies on RL's 500 held-out prompts, rated by
     the panel: the extremely negative share (any rater at the floor), gold accuracy (the stated
     number right), the mean rating and the share of answers with a check.

Prints mean +- standard deviation [worst, best] over seeds, and whether the target holds (the CVaR
policy's extremely negative share at most half the mean policy's, gold accuracy within 3 points).
Not a test; not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
UTILITIES = {"mean": "mean", "cvar": "cvar=0.2"}
MAX_NEW_TOKENS = 16  # `1823 (966+857)` and EOS


def sh(cmd: list[str], log: Path) -> None:
    with open(log, "a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"failed (exit {done.returncode}): {' '.join(cmd)}; see {log}")


def warm_start(out: Path, steps: int) -> Path:
    """SFT from the default policy on bare answers and answers with a check (1 in 4)."""
    from training.policy import default_policy_path
    from verifiers.tasks import ArithmeticTask

    policy = out / "warm" / "model"
    if policy.exists():
        return policy
    (out / "warm").mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    rows = ArithmeticTask().sample(20000, seed=0, split="train")
    mix = out / "warm" / "mix.jsonl"
    mix.write_text("".join(json.dumps({"prompt": r["prompt"], "answer": r["answer"],
                                       "completion": r["answer"] + (f" ({r['expression']})" if rng.random() < 0.25 else "")}) + "\n"
                           for r in rows))
    sh(["rewardlab", "sft", "--model", str(default_policy_path()), "--data", str(mix), "--answer-column", "completion",
        "--steps", str(steps), "--lr", "1e-3", "--max-new-tokens", str(MAX_NEW_TOKENS), "--seed", "0",
        "--output-dir", str(out / "warm")], out / "warm.log")
    return policy


def rate_policy(policy: Path, n: int = 500) -> dict[str, float]:
    """Greedy answers on RL's held-out prompts, rated by the panel."""
    import torch

    from rewards.raters import RaterPanel
    from training.data import load_prompt_rows
    from training.policy import load_policy
    from training.rollout import generate

    torch.set_num_threads(1)
    rows = load_prompt_rows("arithmetic", split="test", limit=n, seed=0)
    model, tok = load_policy(str(policy))
    outs = [o[0] for o in generate(model, tok, [r["prompt"] for r in rows], max_new_tokens=MAX_NEW_TOKENS, temperature=0)]
    panel = RaterPanel()
    ratings = [panel.ratings(r["prompt"], o, r["answer"]) for r, o in zip(rows, outs)]
    return {"floor_share": sum(min(x) <= 0 for x in ratings) / n,
            "gold_accuracy": sum(panel.stat(x, "correct", o, r["answer"]) for x, o, r in zip(ratings, outs, rows)) / n,
            "mean_rating": sum(sum(x) / len(x) for x in ratings) / n,
            "check_share": sum("(" in o for o in outs) / n,
            "samples": [f"{r['prompt']}{o}" for r, o in zip(rows[:6], outs[:6])]}


def run_seed(seed: int, warm: Path, out: Path, threads: int, rm_steps: int, rl_steps: int, rm_lr: float = 2e-3,
             rank_coef: float = 1.0, init_from: Path | None = None, data_from: Path | None = None,
             qrm_from: Path | None = None, beside: str | None = None) -> dict:
    from rewards.raters import rater_rows

    folder = out / f"seed-{seed}"
    done = folder / "result.json"
    if done.exists():
        return json.loads(done.read_text())
    if folder.exists():
        raise SystemExit(f"{folder} holds an unfinished run; remove it to run seed {seed} again")
    folder.mkdir(parents=True)
    log = folder / "log.txt"
    start = time.time()
    if data_from is not None:  # the ratings of an earlier run of this bench (same warm start, same seed)
        for split in ("train", "test"):
            (folder / f"ratings-{split}.jsonl").write_text((data_from / f"seed-{seed}" / f"ratings-{split}.jsonl").read_text())
    else:
        sh(["rewardlab", "rm-data", "--model", str(warm), "--max-new-tokens", str(MAX_NEW_TOKENS), "--near-misses", "0",
            "--gold", "raters:mean", "--n-prompts", "4000", "--eval-prompts", "300", "--seed", str(seed),
            "--output-dir", str(folder / "data")], log)
        for split in ("train", "test"):
            records = [json.loads(x) for x in (folder / "data" / split / "samples.jsonl").read_text().splitlines() if x.strip()]
            (folder / f"ratings-{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rater_rows(records)))
    qrm = folder / "rm" / "final"
    if qrm_from is not None:  # an earlier run's QRM of this seed, trained on the same ratings
        qrm = (qrm_from / f"seed-{seed}" / "rm" / "final").resolve()
        if not qrm.exists():
            raise SystemExit(f"--qrm-from: no QRM at {qrm}; give the --out-dir of a finished run of this bench")
    start_from = ["--init-from", str(init_from / f"seed-{seed}" / "rm" / "final")] if init_from else ["--backbone", str(warm)]
    if qrm_from is None:
        sh(["rewardlab", "train-rm", "--kind", "qrm", *start_from, "--data", str(folder / "ratings-train.jsonl"),
        "--eval-data", str(folder / "ratings-test.jsonl"), "--score-columns", "rating", "--rank-coef", str(rank_coef),
        "--steps", str(rm_steps), "--batch-size", "256", "--lr", str(rm_lr), "--warmup-steps", "100", "--eval-every", str(rm_steps),
            "--save-every", str(rm_steps), "--cpu-threads", str(threads), "--seed", str(seed), "--output", str(folder / "rm")], log)
    result: dict = {"seed": seed}
    for name, utility in UTILITIES.items():
        reward = f"qrm:{qrm}:{utility}" + (f"+{beside}" if beside else "")
        sh(["rewardlab", "rl", "--model", str(warm), "--reward", reward,
            "--accuracy-reward", "raters:correct", "--max-new-tokens", str(MAX_NEW_TOKENS), "--steps", str(rl_steps),
            "--seed", str(seed), "--output-dir", str(folder / f"rl-{name}")], log)
        result[name] = rate_policy(folder / f"rl-{name}" / "policy")
    result["seconds"] = round(time.time() - start)
    done.write_text(json.dumps(result, indent=2) + "\n")
    return result


def spread(values: list[float]) -> str:
    values = [100 * v for v in values]
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):5.1f} +- {sd:4.1f} [{min(values):5.1f}, {max(values):5.1f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--parallel", type=int, default=1, help="seeds run at once (each QRM on one torch thread, whatever --parallel)")
    parser.add_argument("--warm-steps", type=int, default=300)
    parser.add_argument("--rm-steps", type=int, default=1500)
    parser.add_argument("--rl-steps", type=int, default=200)
    parser.add_argument("--rm-lr", type=float, default=2e-3)
    parser.add_argument("--rank-coef", type=float, default=1.0, help="train-rm's ranking term between responses of one prompt (0: off)")
    parser.add_argument("--init-from-bt", type=Path, default=None,
                        help="start each seed's QRM from the BT RM of bench/learned_rewards.py --recipe bt's run (DIR/seed-S/rm/final), "
                             "trained on the correctness of the default policy's answers, instead of from the warm start")
    parser.add_argument("--data-from", type=Path, default=None,
                        help="reuse the warm start and the ratings of an earlier run of this bench (its --out-dir)")
    parser.add_argument("--qrm-from", type=Path, default=None,
                        help="reuse the QRMs of an earlier run of this bench (its --out-dir; with --data-from the same run) instead of training them")
    parser.add_argument("--beside", default=None, metavar="REWARD",
                        help="a reward term added to the QRM's utility in RL, e.g. 'raters:correct' (a rule check of the stated number): "
                             "correctness from a verifier, the raters' taste from the QRM")
    parser.add_argument("--cvar", type=float, default=0.2, help="the risk-averse utility's alpha: the mean of the lowest ALPHA of the ratings")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "runs" / "bench-risk")
    args = parser.parse_args(argv)
    if not 0 < args.cvar < 1:
        parser.error(f"--cvar is a share in (0, 1), got {args.cvar}")
    UTILITIES["cvar"] = f"cvar={args.cvar}"
    if args.qrm_from is not None and args.data_from is None:
        parser.error("--qrm-from needs --data-from (the QRMs' ratings and warm start); usually the same folder")
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    out = args.out_dir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    load_before, start = os.getloadavg(), time.time()
    if args.data_from is not None and not (out / "warm").exists():
        import shutil

        shutil.copytree(args.data_from.resolve() / "warm", out / "warm")  # the same bits as that run's warm start
    warm = warm_start(out, args.warm_steps)
    before = rate_policy(warm)
    threads = 1  # the thread count changes the QRM's bits (floats summed in another order): one, always
    with ThreadPoolExecutor(max_workers=max(args.parallel, 1)) as pool:
        results = list(pool.map(lambda s: run_seed(s, warm, out, threads, args.rm_steps, args.rl_steps, args.rm_lr, args.rank_coef,
                                                    args.init_from_bt, args.data_from, args.qrm_from, args.beside), seeds))
    print(f"risk-averse QRM, raters who disagree; seeds {seeds}; {time.time() - start:.0f} s; load before "
          f"{load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}")
    keys = ("floor_share", "gold_accuracy", "mean_rating", "check_share")
    print(f"{'policy':<10}" + "".join(f"{k + ' %':>36}" for k in keys))
    print(f"{'warm start':<10}" + "".join(f"{100 * before[k]:>36.1f}" for k in keys))
    for name in UTILITIES:
        print(f"{'RL ' + name:<10}" + "".join(f"{spread([r[name][k] for r in results]):>36}" for k in keys))
    mean_floor = statistics.mean(r["mean"]["floor_share"] for r in results)
    cvar_floor = statistics.mean(r["cvar"]["floor_share"] for r in results)
    gap = 100 * (statistics.mean(r["cvar"]["gold_accuracy"] for r in results) - statistics.mean(r["mean"]["gold_accuracy"] for r in results))
    print(f"target: CVaR's extremely negative share {100 * cvar_floor:.1f}% <= half of the mean's {100 * mean_floor:.1f}%: "
          f"{'met' if cvar_floor <= mean_floor / 2 else 'NOT met'}; gold accuracy CVaR - mean {gap:+.1f} points "
          f"({'within 3 points or better' if gap >= -3 else 'NOT within 3 points'})")
    for r in results:
        print(f"seed {r['seed']}: mean {r['mean']['samples'][:3]}  cvar {r['cvar']['samples'][:3]}")
    (out / "results.json").write_text(json.dumps({"warm_start": before, "seeds": results}, indent=2) + "\n")
    print(f"results: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
