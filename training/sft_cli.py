"""`rewardlab sft`: supervised fine-tuning on prompt/answer data, loss on answer tokens only
(on the worked `solution` instead when the rows have one, e.g. `--data arithmetic:...,worked=1`).

Without --model it starts from a fresh tiny character-level Llama; without --data it trains on
3-digit addition. Training always runs exactly --steps optimizer steps with deterministic kernels,
so the same data, seed and --cpu-threads give the same weights; the weights' sha256 is printed and
saved, so two machines can compare. --min-accuracy checks the result after the last step (exit 1
below it); it never stops training early.

The default policy of `rewardlab rl` (shipped with the project, `training/default_policy/`) is
rebuilt by the command in its `rewardlab.json` ("rebuild"), e.g.
`rewardlab sft --data arithmetic:digits=3,n_terms=2,ops=+ --lr 0.001 --batch-size 128 --steps 1570
--seed 0 --cpu-threads 1 --output-dir runs/default-policy`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dataclasses import dataclass, replace

from rewardlab.config import add_config_args, check_fields, config_from_args, config_to_dict, opt, save_config
from rewardlab.runs import write_text_atomically
from training.data import DataConfig
from training.sft import SFTConfig


# the pieces, listed last to first: a dataclass puts the fields of its last base first (--help's order)
@dataclass(frozen=True)
class SFTRunConfig(SFTConfig, DataConfig):
    """sft: rows (`DataConfig`), optimisation, seed, threads and precision (`SFTConfig` over
    `RuntimeConfig`), and where the model comes from and goes. Saved as `sft_config.json`."""

    model: str | None = opt(None, "starting model (folder or hub name); default: a fresh tiny character-level Llama")
    output_dir: Path = opt(Path("runs/sft"), "where the trained model, config and log go")
    add_chars: str | None = opt(None, "widen a character-level policy's vocabulary first: `tools` (tool-call characters) or the characters; docs/training.md")

    def check_run(self) -> None:
        check_fields(self, SFTRunConfig)

    def __post_init__(self) -> None:
        for check in (self.check_data, self.check_runtime, self.check_sft, self.check_run):
            check()


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, SFTRunConfig)
    for old in REMOVED:  # named in a clear error, not argparse's "unrecognized arguments"
        parser.add_argument(old, dest="removed_" + old.strip("-").replace("-", "_"), default=None, help=argparse.SUPPRESS)


REMOVED = {
    "--target-accuracy": "sft no longer stops on a held-out target (the evaluation at which it is first crossed "
                         "differs between machines); train a fixed --steps N, and add --min-accuracy X to fail "
                         "when the result is below X",
    "--max-steps": "use --steps N: sft always runs exactly N steps",
}


def _rows(config: SFTRunConfig) -> tuple[list[dict], list[dict]]:
    """The training rows and the held-out ones (--eval-data, the task's test split, or the last 10%)."""
    from training.data import load_prompt_rows, parse_task

    columns = {"prompt_column": config.prompt_column, "answer_column": config.answer_column}
    rows = load_prompt_rows(config.data, split="train", seed=config.seed, **columns)
    missing = {"prompt", "answer"} - set(rows[0])
    if missing:
        raise ValueError(f"--data {config.data!r}: missing column(s) {sorted(missing)}; rows have {sorted(rows[0])}")
    if config.eval_data:
        return rows, load_prompt_rows(config.eval_data, split="test", limit=config.eval_size, flag="--eval-data", **columns)
    if parse_task(config.data) is not None:
        return rows, load_prompt_rows(config.data, split="test", limit=config.eval_size, seed=config.seed)
    cut = max(1, len(rows) // 10)
    return rows[:-cut], rows[-cut:]


def run(args: argparse.Namespace) -> int:
    from training.policy import build_environment, load_policy, save_policy_atomically, tiny_policy
    from training.sft import train_sft

    for old, why in REMOVED.items():
        if getattr(args, "removed_" + old.strip("-").replace("-", "_")) is not None:
            print(f"rewardlab sft: {old} was removed: {why}", file=sys.stderr)
            return 2
    from rewardlab.runtime import setup_cpu_threads

    try:
        config = config_from_args(SFTRunConfig, args)
        setup_cpu_threads(config.cpu_threads, "sft")
        rows, eval_rows = _rows(config)
        model, tokenizer = load_policy(config.model) if config.model else tiny_policy(seed=config.seed)
        if config.add_chars:
            import torch

            from training.policy import widen_vocabulary
            from training.tokenizer import TOOL_CHARS

            torch.manual_seed(config.seed)  # the new embedding rows are drawn at random
            model, tokenizer = widen_vocabulary(model, tokenizer, TOOL_CHARS if config.add_chars == "tools" else config.add_chars)
    except ValueError as err:
        print(f"rewardlab sft: {err}", file=sys.stderr)
        return 2
    config = replace(config, mixed_precision=config.precision(next(model.parameters()).device.type))  # what auto chose
    out = Path(config.output_dir)
    save_config(config, out, "sft_config.json")
    result = train_sft(model, tokenizer, config, rows=rows, eval_rows=eval_rows, log_path=out / "sft_log.jsonl")
    built = {"sft": {k: v for k, v in result.items() if k != "history"}, "data": config.data, "model": config.model,
             "config": config_to_dict(config), "built_with": build_environment()}
    save_policy_atomically(model, tokenizer, out / "model", extra=built)
    write_text_atomically(out / "sft_result.json", json.dumps(result, indent=2) + "\n")
    print(f"sft: {result['steps']} steps in {result['seconds']:.0f} s, held-out accuracy {result['accuracy']:.1%} "
          f"({result['eval_size']} prompts; single turn, greedy, no tools or environment: `rl --env` measures whole "
          f"episodes); model in {out / 'model'}")
    print(f"sft: weights sha256 {result['weights_sha256']}")
    if result["accuracy"] < config.min_accuracy:
        print(f"rewardlab sft: held-out accuracy {result['accuracy']:.1%} is below --min-accuracy "
              f"{config.min_accuracy:.1%} after {result['steps']} steps; the model is saved, but train longer "
              "(--steps) or with another --lr before building on it", file=sys.stderr)
        return 1
    return 0
