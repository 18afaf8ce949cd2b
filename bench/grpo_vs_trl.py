"""GRPO speed and learning: this project's trainer vs TRL's GRPOTrainer, same run, same machine.

Same tiny policy (the default warm start, or --model), same prompts (3-digit addition train
split), same group size, lengths, learning rate, steps and reward (`verifier:math`). TRL's CPU-
hostile defaults are overridden for a fair comparison: the same precision (--precision fp32 or bf16
autocast; each also runs at its own default, ours fp32 and TRL bf16), gradient checkpointing off,
learning rate set, a constant schedule, its batch size counted in completions (prompts x G), the
clip range equal (0.2 / 0.2), no KL, token-mean loss ("dapo") on both sides.

Each trainer runs in its own subprocess so peak memory (max RSS) is measured separately.

    python bench/grpo_vs_trl.py --steps 40            # prints s/step, tokens/s, peak MB, ratios, curves (fp32)
    python bench/grpo_vs_trl.py --steps 40 --precision bf16
    python bench/grpo_vs_trl.py --steps 40 --parallel # both at once, one core each (a shared machine)

A step's time includes everything the trainer does in it; for this project's trainer that is the
step itself plus its monitors (the gold probe every 10 steps, samples), `time/step + time/monitors`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, help="policy folder (default: the cached default warm start)")
    p.add_argument("--data", default="arithmetic:digits=3,n_terms=2,ops=+")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--prompts", type=int, default=64, help="prompts per step")
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=6)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-size", type=int, default=300)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads for both trainers")


def held_out_accuracy(model_dir: str, args) -> float:
    from rewards import build_reward
    from training.data import load_prompt_rows
    from training.policy import load_policy
    from training.rollout import generate

    model, tok = load_policy(model_dir)
    rows = load_prompt_rows(args.data, split="test", limit=args.eval_size)
    outs = generate(model, tok, [r["prompt"] for r in rows], max_new_tokens=args.max_new_tokens, temperature=0)
    fn = build_reward("verifier:math")
    scores = fn([r["prompt"] for r in rows], [o[0] for o in outs], answer=[r["answer"] for r in rows])
    return sum(s == 1.0 for s in scores) / len(rows)


def run_ours(args, out: Path) -> dict:
    from training.config import RLConfig
    from training.trainer import train

    config = RLConfig(model=args.model, data=args.data, reward="verifier:math", steps=args.steps,
                      prompts_per_step=args.prompts, group_size=args.group_size, max_new_tokens=args.max_new_tokens,
                      lr=args.lr, clip_low=0.2, clip_high=0.2, estimator="grpo", loss_agg="token_mean",
                      eval_every=0, eval_size=10, checkpoint_every=0, report=False, seed=args.seed, output_dir=out,
                      cpu_threads=args.threads, mixed_precision={"fp32": "no", "bf16": "bf16"}[args.as_precision])
    t0 = time.time()
    train(config)
    wall = time.time() - t0
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    step_times = [r["time/step"] + r.get("time/monitors", 0.0) for r in rows]  # monitors (gold probe every 10 steps) count
    tokens = sum(r["tokens_per_s"] * r["time/step"] for r in rows)
    return {"name": "rewardlab", "wall_s": wall, "s_per_step": sum(step_times) / len(step_times),
            "tokens_per_s": tokens / sum(step_times), "rewards": [r["reward/mean"] for r in rows],
            "model_dir": str(out / "policy")}


def run_trl(args, out: Path) -> dict:
    import datasets
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from rewards import build_reward
    from training.data import load_prompt_rows
    from training.policy import load_policy, save_policy_atomically

    model, tok = load_policy(args.model)
    rows = load_prompt_rows(args.data, split="train", seed=args.seed)
    ds = datasets.Dataset.from_list([{"prompt": r["prompt"], "answer": r["answer"]} for r in rows])
    completions = args.prompts * args.group_size
    cfg = GRPOConfig(
        output_dir=str(out), max_steps=args.steps, learning_rate=args.lr, lr_scheduler_type="constant",
        per_device_train_batch_size=completions, num_generations=args.group_size,
        max_completion_length=args.max_new_tokens, temperature=1.0, top_k=0, top_p=1.0,
        beta=0.0, epsilon=0.2, epsilon_high=0.2, loss_type="dapo", num_iterations=1,
        bf16=args.as_precision == "bf16", gradient_checkpointing=False, use_cpu=True, logging_steps=1, save_strategy="no",
        report_to="none", seed=args.seed, disable_dropout=True,
    )
    step_times: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            self.t = time.time()

        def on_step_end(self, *a, **k):
            step_times.append(time.time() - self.t)

    trainer = GRPOTrainer(model=model, reward_funcs=[build_reward("verifier:math")], args=cfg, train_dataset=ds,
                          processing_class=tok, callbacks=[Timer()])
    t0 = time.time()
    trainer.train()
    wall = time.time() - t0
    logs = [h for h in trainer.state.log_history if "reward" in h]
    lengths = [h.get("completions/mean_length", 0.0) for h in logs]
    tokens = sum(lengths) * completions
    save_policy_atomically(trainer.model, tok, out / "policy")
    return {"name": "trl", "wall_s": wall, "s_per_step": sum(step_times) / len(step_times),
            "tokens_per_s": tokens / sum(step_times), "rewards": [h["reward"] for h in logs],
            "model_dir": str(out / "policy")}


def child(args) -> None:
    import torch

    torch.set_num_threads(args.threads)  # the same on both sides (the trainer's --cpu-threads default is 1)
    out = Path(args.out)
    tag = f"{args.only}-{args.as_precision}"
    result = (run_ours if args.only == "rewardlab" else run_trl)(args, out / tag)
    result.update(name=args.only, precision=args.as_precision)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["accuracy_after"] = held_out_accuracy(result["model_dir"], args)
    (out / f"{tag}.json").write_text(json.dumps(result))


DEFAULTS = {"rewardlab": "fp32", "trl": "bf16"}  # rl --mixed-precision no (pinned); GRPOConfig bf16=True


def plan(precision: str) -> list[tuple[str, str]]:
    """(trainer, precision) runs: both at --precision, then each at its own default, no repeats.

    >>> plan("fp32"), plan("bf16")
    ([('rewardlab', 'fp32'), ('trl', 'fp32'), ('trl', 'bf16')], [('rewardlab', 'bf16'), ('trl', 'bf16'), ('rewardlab', 'fp32')])
    """
    return list(dict.fromkeys([("rewardlab", precision), ("trl", precision), *DEFAULTS.items()]))


def run_all(base: list[str], pairs: list[tuple[str, str]], parallel: bool, out: Path) -> dict[tuple[str, str], dict]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    procs = {}
    for name, prec in pairs:  # all at once with --parallel: drift in the machine's speed hits each alike
        print(f"bench: running {name} in {prec} ({'at once' if parallel else 'alone'})...", flush=True)
        procs[(name, prec)] = subprocess.Popen(base + ["--only", name, "--as-precision", prec], env=env, cwd=ROOT,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not parallel:
            procs[(name, prec)].wait()
    for (name, prec), proc in procs.items():
        _, err = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"bench: {name} ({prec}) failed (exit {proc.returncode}):\n{err[-3000:]}")
    return {key: json.loads((out / f"{key[0]}-{key[1]}.json").read_text()) for key in pairs}


def report(results: dict, args, start_acc: float, loads: tuple[float, float]) -> None:
    print(f"\nCPU, {os.cpu_count()} cores, load average before {loads[0]:.2f}, after {loads[1]:.2f}; "
          f"{'all at once, one core each' if args.parallel else 'one after the other'}")
    print(f"held-out greedy accuracy at the start: {start_acc:.1%}")
    print(f"{'':12}{'precision':>10}{'s/step':>10}{'tokens/s':>12}{'peak MB':>10}{'reward first5':>15}{'reward last5':>14}{'acc after':>11}")
    for (name, prec), r in results.items():
        k = min(5, len(r["rewards"]))
        first, last = sum(r["rewards"][:k]) / k, sum(r["rewards"][-k:]) / k
        mark = "  (its default)" if DEFAULTS[name] == prec else ""
        print(f"{name:12}{prec:>10}{r['s_per_step']:>10.3f}{r['tokens_per_s']:>12.0f}{r['peak_rss_mb']:>10.0f}{first:>15.3f}{last:>14.3f}{r['accuracy_after']:>11.1%}{mark}")
    ours, trl = results[("rewardlab", args.precision)], results[("trl", args.precision)]
    print(f"\n{args.precision}, speed ratio (TRL s/step / rewardlab s/step): {trl['s_per_step'] / ours['s_per_step']:.2f}x (target >= 2.5)")
    print(f"tokens/s ratio: {ours['tokens_per_s'] / trl['tokens_per_s']:.2f}x; peak memory ratio (TRL / rewardlab): {trl['peak_rss_mb'] / ours['peak_rss_mb']:.2f}x")
    a, b = results[("rewardlab", DEFAULTS["rewardlab"])], results[("trl", DEFAULTS["trl"])]
    print(f"each at its default (rewardlab {DEFAULTS['rewardlab']}, TRL {DEFAULTS['trl']}): {b['s_per_step'] / a['s_per_step']:.2f}x")
    print("reward curves (mean reward per step):")
    for (name, prec), r in results.items():
        print(f"  {name + ' ' + prec:15} " + " ".join(f"{x:.2f}" for x in r["rewards"]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common_args(p)
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="both trainers at this precision (bf16: autocast over fp32 weights); each also runs at its own default")
    p.add_argument("--parallel", action="store_true", help="run the trainers at once (one CPU thread each) so that all see the "
                   "same machine: on a shared machine whose speed drifts, the ratio of sequential runs moved 1.56x-2.00x")
    p.add_argument("--only", choices=("rewardlab", "trl"), help=argparse.SUPPRESS)
    p.add_argument("--as-precision", choices=("fp32", "bf16"), default="fp32", help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.only:
        return child(args)
    from training.policy import default_policy_path

    args.model = args.model or str(default_policy_path())  # build the warm start once, outside the timings
    out = Path(args.out or tempfile.mkdtemp(prefix="grpo-vs-trl-"))
    start_acc = held_out_accuracy(args.model, args)
    base = [sys.executable, __file__, "--model", args.model, "--data", args.data, "--steps", str(args.steps),
            "--prompts", str(args.prompts), "--group-size", str(args.group_size), "--max-new-tokens",
            str(args.max_new_tokens), "--lr", str(args.lr), "--seed", str(args.seed), "--eval-size", str(args.eval_size), "--threads", str(args.threads),
            "--out", str(out)]
    load_before = os.getloadavg()[0]
    results = run_all(base, plan(args.precision), args.parallel, out)
    report(results, args, start_acc, (load_before, os.getloadavg()[0]))
    (out / "summary.json").write_text(json.dumps({"start_accuracy": start_acc, "runs": list(results.values())}, indent=1))
    print(f"bench: results in {out}/summary.json")


if __name__ == "__main__":
    main()
