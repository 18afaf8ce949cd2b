"""`rewardlab eval-policy`: sample n completions per prompt; report pass@k, maj@k, mean reward,
response length and (with a proxy and a gold reward) the proxy-vs-gold gap.

    rewardlab eval-policy --n 8 --k 1 4 8                                  # default tiny policy, arithmetic test split
    rewardlab eval-policy --model runs/rl/final --data prompts.jsonl --reward "verifier:math"
    rewardlab eval-policy --proxy-reward rm:runs/bt/final --gold-reward verifier:math

Writes report.json/.md/.html, passk.png and samples.jsonl (prompt, response, answer, verdict,
rewards; usable as `eval-rm --mode check --samples`) into --out.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from rewardlab.config import add_config_args, check_fields, config_from_args, opt, save_config, with_defaults
from rewardlab.runtime import EvalRuntimeConfig
from training.rollout import DecodingConfig

from eval.policy_eval import PolicyRewardsConfig

PolicyDecodingConfig = with_defaults(DecodingConfig, max_new_tokens=16)  # eval-policy's own length limit


# the pieces, listed last to first: a dataclass puts the fields of its last base first (--help's order)
@dataclass(frozen=True)
class EvalPolicyConfig(EvalRuntimeConfig, PolicyRewardsConfig, PolicyDecodingConfig):
    """eval-policy: sampling (`DecodingConfig`), the rewards reported (`PolicyRewardsConfig`), seed,
    threads and precision (`RuntimeConfig`: fp32 by default, the documented pass@k), and the prompts."""

    model: str | None = opt(None, "policy: local folder or hub name of a causal LM; default: the project's tiny arithmetic policy")
    data: str | None = opt(None, "prompts file (JSONL/Parquet/CSV) with prompt and answer columns; default: ArithmeticTask test split")
    digits: int = opt(3, "default task: operand digits")
    n_terms: int = opt(2, "default task: number of operands")
    ops: str = opt("+", "default task: operators to draw from")
    n_prompts: int = opt(64, "number of prompts to evaluate", ge=1)
    n: int = opt(8, "samples per prompt", ge=1)
    k: tuple[int, ...] = opt((1, 4, 8), "k values for pass@k and maj@k (each <= --n)", ge=1)
    kind: str = opt("math", "verifier kind for correctness and answer equivalence")
    prompt_column: str = opt("prompt", "prompt column of --data (default `prompt`, else a GSM8K `question` or MATH `problem` column)")
    answer_column: str = opt("answer", "gold answer column of --data")
    batch_size: int = opt(256, "generation batch size (sequences)", ge=1)
    out: str = opt("outputs/eval-policy", "output directory")

    def __post_init__(self) -> None:
        for check in (self.check_decoding, self.check_rewards, self.check_runtime):
            check()
        check_fields(self, EvalPolicyConfig)
        if not self.k or any(k > self.n for k in self.k):
            raise ValueError(f"--k values must be in [1, --n={self.n}], got {list(self.k)}")


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, EvalPolicyConfig)


def load_prompts(cfg: EvalPolicyConfig) -> list[dict]:
    if cfg.data is None:
        from verifiers.tasks import ArithmeticTask

        return ArithmeticTask(digits=cfg.digits, n_terms=cfg.n_terms, ops=cfg.ops).sample(cfg.n_prompts, seed=cfg.seed, split="test")
    from rewardlab.tables import PROMPT_FALLBACKS, use_columns

    from rewardlab.tables import read_table

    rows = read_table(str(cfg.data), "train", flag="--data")[: cfg.n_prompts or None]
    use_columns(rows, {"prompt": (cfg.prompt_column, PROMPT_FALLBACKS, "--prompt-column"),
                       "answer": (cfg.answer_column, (), "--answer-column")}, f"--data {cfg.data!r}")
    return rows


def sample_completions(cfg: EvalPolicyConfig, prompts: list) -> tuple[list[list[str]], object]:
    import torch
    from rewardlab.progress import progress_bar
    from rewardlab.runtime import autocast

    from training.policy import load_policy
    from training.rollout import generate

    model, tokenizer = load_policy(cfg.model)
    model.eval()
    torch.manual_seed(cfg.seed)
    chunk = max(1, cfg.batch_size // cfg.n)
    device = next(model.parameters()).device.type
    completions: list[list[str]] = []
    with torch.no_grad(), autocast(cfg.precision(device), device):  # the sampling softmax runs in fp32 (training/rollout.py)
        for start in progress_bar(range(0, len(prompts), chunk), desc="sampling", unit="batches"):
            completions += generate(model, tokenizer, prompts[start : start + chunk], num_samples=cfg.n,
                                    max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p,
                                    top_k=cfg.top_k, stop=list(cfg.stop) or None, batch_size=cfg.batch_size,
                                    chat_template=cfg.chat_template)
    return completions, tokenizer


def run(args: argparse.Namespace) -> int:
    """Run the command; bad input is reported as one line on stderr with exit code 2."""
    try:
        return _run(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"rewardlab eval-policy: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    cfg = config_from_args(EvalPolicyConfig, args)
    from rewardlab.runtime import setup_cpu_threads

    setup_cpu_threads(cfg.cpu_threads, "eval-policy")
    import numpy as np

    from eval import plots
    from eval.policy_eval import correctness, passk_majk, proxy_gold_gap, reward_stats, score_groups
    from eval.report import Report, Table

    rewards_built = {}
    if cfg.reward or cfg.proxy_reward:  # build rewards first: a bad spec fails before sampling
        from rewards import build_reward

        for name in ("reward", "proxy_reward", "gold_reward"):
            if getattr(cfg, name):
                rewards_built[name] = build_reward(getattr(cfg, name))
    cfg = replace(cfg, mixed_precision=cfg.precision())  # config.json: what auto chose on this machine's device
    out = Path(cfg.out)
    save_config(cfg, out)
    rows = load_prompts(cfg)
    prompts = [r["prompt"] for r in rows]
    golds = [str(r["answer"]) for r in rows]
    completions, tokenizer = sample_completions(cfg, prompts)
    verdicts = correctness(completions, golds, kind=cfg.kind)
    table = passk_majk(completions, golds, verdicts, cfg.k, kind=cfg.kind)
    lengths = [len(tokenizer(c, add_special_tokens=False)["input_ids"]) for g in completions for c in g]
    flat_verdicts = [v for g in verdicts for v in g]
    summary = {"prompts": len(prompts), "samples_per_prompt": cfg.n,
               "accuracy": flat_verdicts.count("correct") / len(flat_verdicts),
               "mean_tokens": float(np.mean(lengths)), "mean_chars": float(np.mean([len(c) for g in completions for c in g])),
               "no_answer": flat_verdicts.count("no_answer") / len(flat_verdicts)}
    columns = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    scored = {name: score_groups(fn, prompts, completions, columns) for name, fn in rewards_built.items()}
    rep = Report(title=f"Policy evaluation: {cfg.model or 'default tiny policy'} on {cfg.data or 'ArithmeticTask test split'}")
    rep.tables.append(Table("Summary", [summary]))
    rep.tables.append(Table("pass@k and maj@k", table))
    results = {"summary": summary, "passk": table}
    if "reward" in scored:
        stats = reward_stats([v for g in scored["reward"] for v in g])
        results["reward"] = {"spec": cfg.reward, **stats}
        rep.tables.append(Table(f"Reward {cfg.reward}", [stats]))
    if "proxy_reward" in scored:
        gap = proxy_gold_gap(scored["proxy_reward"], scored["gold_reward"])
        results["proxy_gold"] = {"proxy": cfg.proxy_reward, "gold": cfg.gold_reward, **gap}
        rep.tables.append(Table(f"Proxy ({cfg.proxy_reward}) vs gold ({cfg.gold_reward})", [gap]))
    rep.results = results
    rep.plots.append(plots.passk_plot(cfg.k, {"pass@k": [r["pass@k"] for r in table], "maj@k": [r["maj@k"] for r in table]},
                                      out / "passk.png", title=f"pass@k / maj@k ({len(prompts)} prompts, n={cfg.n})"))
    with (out / "samples.jsonl").open("w") as f:
        for i, group in enumerate(completions):
            for j, c in enumerate(group):
                line = {"prompt": prompts[i], "response": c, "answer": golds[i], "verdict": verdicts[i][j]}
                line.update({name: vals[i][j] for name, vals in scored.items()})
                f.write(json.dumps(line) + "\n")
    paths = rep.write(out)
    print(rep.terminal_summary())
    print(f"\nreport: {paths['md']}  samples: {out / 'samples.jsonl'}")
    return 0
