"""Benchmark: the quantile RM's risk claim where raters disagree - mean vs CVaR utility over seeds.

    python bench/risk_averse_qrm.py --seeds 0 --rl-steps 100        # one dev seed, small
    python bench/risk_averse_qrm.py --seeds 3,4,5 --parallel 2 --out-dir runs/bench-risk   # the report seeds

The task is the default 3-digit sums, rated by `rewards.raters.RaterPanel`: five simulated raters
who floor wrong answers in different ways and disagree on the unchecked remark `1823 (checked)`
(docs/reward_models.md, "A rater panel with a real disagreement"). Per seed (RM data, RM and RL
seeded):

  1. (once, seed-independent) warm start: `rewardlab sft` from the project's default policy on a
     mix of bare answers and answers with the remark (3 in 4 bare), so it writes both kinds;
  2. `rewardlab rm-data` samples its answers on the task's reward-model prompt pool (disjoint from
     RL's prompts and held-out set); every sample, and its twin with the remark added or taken
     away, gets one row per rater from the panel's training draw (`rewards.raters.rater_rows`);
  3. `rewardlab train-rm --kind qrm` on the policy's backbone: quantile regression on the ratings
     plus the ranking term between responses of one prompt by their mean rating (soft labels);
  4. `rewardlab rl` per arm (`ARMS`): the rule check of the stated number alone, the QRM's mean,
     its CVaR at two levels, the QRM's mean and CVaR beside the rule check, and the oracle (the
     panel's own lowest rating of the training draw: the true CVaR at 1/5), 200 steps each;
  5. greedy answers of the warm start and of every policy on RL's 500 held-out prompts, rated by
     the panel's *evaluation* draw (another draw of the noise and of the re-checks than training's):
     the extremely negative share (any rater at the floor) and each rater's, gold accuracy by the
     verifier (`verifier:math`, never a term of a reward), the mean rating and the remark share.

Prints mean +- standard deviation [worst, best] over seeds and whether the target holds (CVaR's
extremely negative share at most half the mean's and the rule check's, gold within 2 points of the
best baseline). Not a test; not run in CI.
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
# arm -> reward ({qrm}: the seed's QRM); the oracle reads the panel's training draw itself
ARMS = {"rule": "raters:correct", "mean": "qrm:{qrm}:mean", "cvar": "qrm:{qrm}:cvar=0.2", "cvar-0.4": "qrm:{qrm}:cvar=0.4",
        "mean+rule": "qrm:{qrm}:mean+raters:correct", "cvar+rule": "qrm:{qrm}:cvar=0.2+raters:correct", "oracle": "raters:min"}
from rewards.raters import REMARK  # noqa: E402

MAX_NEW_TOKENS = 16  # `1823 (checked)` and EOS


def sh(cmd: list[str], log: Path) -> None:
    with open(log, "a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"failed (exit {done.returncode}): {' '.join(cmd)}; see {log}")


def warm_start(out: Path, steps: int) -> Path:
    """SFT from the default policy on bare answers and answers with the remark (1 in 4)."""
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
                                       "completion": r["answer"] + (f" {REMARK}" if rng.random() < 0.25 else "")}) + "\n"
                           for r in rows))
    sh(["rewardlab", "sft", "--model", str(default_policy_path()), "--data", str(mix), "--answer-column", "completion",
        "--steps", str(steps), "--lr", "1e-3", "--max-new-tokens", str(MAX_NEW_TOKENS), "--seed", "0",
        "--output-dir", str(out / "warm")], out / "warm.log")
    return policy


def rate_policy(policy: Path, n: int = 500) -> dict[str, float]:
    """Greedy answers on RL's held-out prompts, rated by the panel's evaluation draw; gold by the verifier."""
    import torch

    from rewards import build_reward
    from rewards.raters import EVAL_DRAW, ROLES, RaterPanel
    from training.data import load_prompt_rows
    from training.policy import load_policy
    from training.rollout import generate

    torch.set_num_threads(1)
    rows = load_prompt_rows("arithmetic", split="test", limit=n, seed=0)
    model, tok = load_policy(str(policy))
    outs = [o[0] for o in generate(model, tok, [r["prompt"] for r in rows], max_new_tokens=MAX_NEW_TOKENS, temperature=0)]
    panel = RaterPanel(draw=EVAL_DRAW)
    ratings = [panel.ratings(r["prompt"], o, r["answer"]) for r, o in zip(rows, outs)]
    gold = build_reward("verifier:math")([r["prompt"] for r in rows], outs, answer=[r["answer"] for r in rows])
    return {"floor_share": sum(min(x) <= 0 for x in ratings) / n,
            **{f"floor_rater_{k}": sum(x[k - 1] <= 0 for x in ratings) / n for k in range(1, len(ROLES) + 1)},
            "gold_accuracy": sum(g >= 1.0 for g in gold) / n,
            "mean_rating": sum(sum(x) / len(x) for x in ratings) / n,
            "remark_share": sum(REMARK in o for o in outs) / n,
            "samples": [f"{r['prompt']}{o}" for r, o in zip(rows[:6], outs[:6])]}


def qrm_report(qrm: Path, ratings: Path, attribute: str | None = None) -> dict:
    """The QRM on held-out ratings (the panel's evaluation draw): the calibration of its quantiles
    (per level, the share of held-out ratings below the predicted quantile of their response),
    pairwise accuracy of its mean between responses of one prompt ordered by their mean rating, and
    between right and wrong answers (the stated number checked against the gold). `attribute`:
    calibrate that attribute's quantiles (a QRM with several score columns) instead of the mix."""
    import numpy as np

    from reward_models import load_reward_model
    from reward_models.evaluation import scored_pairs
    from reward_models.metrics import quantile_calibration

    rows = [json.loads(x) for x in ratings.read_text().splitlines() if x.strip()]
    rm = load_reward_model(str(qrm), device="cpu")
    firsts: dict[tuple[str, str], int] = {}
    for i, r in enumerate(rows):
        firsts.setdefault((r["prompt"], r["response"]), i)
    keys = list(firsts)
    scores = dict(zip(keys, rm.score([k[0] for k in keys], [k[1] for k in keys], batch_size=256)))
    q = np.array([scores[(r["prompt"], r["response"])].attribute_quantiles[attribute] if attribute
                  else scores[(r["prompt"], r["response"])].quantiles for r in rows])
    taus = np.array(scores[keys[0]].taus)
    calibration = quantile_calibration(taus, q, np.array([r["rating"] for r in rows]), tie=0.01)  # 1% of the scale
    mean_of = {k: s.mean for k, s in scores.items()}
    pairs = scored_pairs(rows, "rating")
    by_rating = sum(mean_of[(rows[a]["prompt"], rows[a]["response"])] > mean_of[(rows[b]["prompt"], rows[b]["response"])]
                    for a, b in pairs) / max(len(pairs), 1)
    right = {k: k[1].split(" ")[0] == str(sum(int(t) for t in k[0].rstrip("=").split("+"))) for k in keys}  # a+b=: the gold
    rw = [(a, b) for a in keys for b in keys if a[0] == b[0] and right[a] and not right[b]]
    return {"calibration": calibration, "pairwise_by_mean_rating": round(by_rating, 4), "n_pairs": len(pairs),
            "pairwise_right_over_wrong": round(sum(mean_of[a] > mean_of[b] for a, b in rw) / max(len(rw), 1), 4),
            "n_responses": len(keys)}


def run_seed(seed: int, warm: Path, out: Path, threads: int, rm_steps: int, rl_steps: int, rm_lr: float = 2e-3,
             rank_coef: float = 1.0, init_from: Path | None = None, data_from: Path | None = None,
             qrm_from: Path | None = None) -> dict:
    from rewards.raters import EVAL_DRAW, TRAIN_DRAW, RaterPanel, rater_rows

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
            panel = RaterPanel(draw=TRAIN_DRAW if split == "train" else EVAL_DRAW)  # held-out ratings: the evaluation draw
            rows = rater_rows(records, panel, remark_twins=True)
            (folder / f"ratings-{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
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
    for name, template in ARMS.items():
        reward = template.format(qrm=qrm)
        sh(["rewardlab", "rl", "--model", str(warm), "--reward", reward,
            "--accuracy-reward", "verifier:math", "--max-new-tokens", str(MAX_NEW_TOKENS), "--steps", str(rl_steps),
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
    parser.add_argument("--out-dir", type=Path, default=ROOT / "runs" / "bench-risk")
    args = parser.parse_args(argv)
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
                                                    args.init_from_bt, args.data_from, args.qrm_from), seeds))
    print(f"risk-averse QRM, raters who disagree; seeds {seeds}; {time.time() - start:.0f} s; load before "
          f"{load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}")
    keys = ("floor_share", "gold_accuracy", "mean_rating", "remark_share") + tuple(f"floor_rater_{k}" for k in range(1, 6))
    print(f"{'policy':<10}" + "".join(f"{k + ' %':>36}" for k in keys))
    print(f"{'warm start':<10}" + "".join(f"{100 * before[k]:>36.1f}" for k in keys))
    for name in ARMS:
        print(f"{'RL ' + name:<10}" + "".join(f"{spread([r[name][k] for r in results]):>36}" for k in keys))
    avg = {name: {k: statistics.mean(r[name][k] for r in results) for k in ("floor_share", "gold_accuracy")} for name in ARMS}
    best_gold = max(avg[name]["gold_accuracy"] for name in ("rule", "mean", "mean+rule"))
    for name, mean_arm in (("cvar", "mean"), ("cvar+rule", "mean+rule")):  # each CVaR arm against the mean arm of its kind
        floor, gold = avg[name]["floor_share"], avg[name]["gold_accuracy"]
        checks = {f"< warm start's {100 * before['floor_share']:.1f}%": floor < before["floor_share"],
                  f"<= half of {mean_arm}'s {100 * avg[mean_arm]['floor_share']:.1f}%": floor <= avg[mean_arm]["floor_share"] / 2,
                  f"<= half of the rule check's {100 * avg['rule']['floor_share']:.1f}%": floor <= avg["rule"]["floor_share"] / 2}
        gold_met = gold >= best_gold - 0.02
        print(f"target ({name}): extremely negative {100 * floor:.1f}%, needs "
              + ", ".join(f"{text} ({'yes' if ok else 'no'})" for text, ok in checks.items())
              + f"; gold {100 * gold:.1f}%, needs >= the best baseline's {100 * best_gold:.1f}% - 2 ({'yes' if gold_met else 'no'}): "
              + ("met" if all(checks.values()) and gold_met else "NOT met"))
    for r in results:
        print(f"seed {r['seed']}: " + "  ".join(f"{name} {r[name]['samples'][:2]}" for name in ARMS))
    (out / "results.json").write_text(json.dumps({"warm_start": before, "seeds": results}, indent=2) + "\n")
    print(f"results: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
