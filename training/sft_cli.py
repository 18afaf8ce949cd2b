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

from rewardlab.config import add_config_args, config_from_args, config_to_dict, save_config
from rewardlab.runs import write_text_atomically
from training.sft import SFTConfig


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="starting model (folder or hub name); default: a fresh tiny character-level Llama")
    parser.add_argument("--data", default="arithmetic:digits=3,n_terms=2,ops=+", help="task spec or JSONL/Parquet/CSV file with prompt and answer columns")
    parser.add_argument("--prompt-column", default="prompt", help="column holding the prompt (default: `prompt`, else a GSM8K `question` or MATH `problem` column)")
    parser.add_argument("--answer-column", default="answer", help="column holding the answer trained on [default: answer]")
    parser.add_argument("--eval-data", default=None, help="held-out file (default: the task's test split, or the last 10%% of --data)")
    parser.add_argument("--output-dir", type=Path, default=Path("runs/sft"), help="where the trained model, config and log go")
    parser.add_argument("--cpu-threads", type=int, default=1, help="torch CPU threads on CPU (0: 1 on a machine with <= 2 cores, else half of them) [default: 1: the same weights on any machine]")
    parser.add_argument("--add-chars", default=None,
                        help="widen a character-level policy's vocabulary before training: `tools` (what tool calls and results "
                             "need: <calc>734+289</calc>, <result>1023</result>, error messages) or the characters themselves; "
                             "every old token keeps its id")
    add_config_args(parser, SFTConfig)
    for old in REMOVED:  # named in a clear error, not argparse's "unrecognized arguments"
        parser.add_argument(old, dest="removed_" + old.strip("-").replace("-", "_"), default=None, help=argparse.SUPPRESS)


REMOVED = {
    "--target-accuracy": "sft no longer stops on a held-out target (the evaluation at which it is first crossed "
                         "differs between machines); train a fixed --steps N, and add --min-accuracy X to fail "
                         "when the result is below X",
    "--max-steps": "use --steps N: sft always runs exactly N steps",
}


def run(args: argparse.Namespace) -> int:
    from training.data import load_prompt_rows, parse_task
    from training.policy import build_environment, load_policy, save_policy_atomically, tiny_policy
    from training.sft import train_sft

    for old, why in REMOVED.items():
        if getattr(args, "removed_" + old.strip("-").replace("-", "_")) is not None:
            print(f"rewardlab sft: {old} was removed: {why}", file=sys.stderr)
            return 2
    from rewardlab.runtime import setup_cpu_threads

    setup_cpu_threads(args.cpu_threads, "sft")
    try:
        config = config_from_args(SFTConfig, args)
        columns = {"prompt_column": args.prompt_column, "answer_column": args.answer_column}
        rows = load_prompt_rows(args.data, split="train", seed=config.seed, **columns)
        missing = {"prompt", "answer"} - set(rows[0])
        if missing:
            raise ValueError(f"--data {args.data!r}: missing column(s) {sorted(missing)}; rows have {sorted(rows[0])}")
        if args.eval_data:
            eval_rows = load_prompt_rows(args.eval_data, split="test", limit=config.eval_size, flag="--eval-data", **columns)
        elif parse_task(args.data) is not None:
            eval_rows = load_prompt_rows(args.data, split="test", limit=config.eval_size, seed=config.seed)
        else:
            cut = max(1, len(rows) // 10)
            rows, eval_rows = rows[:-cut], rows[-cut:]
        model, tokenizer = load_policy(args.model) if args.model else tiny_policy(seed=config.seed)
        if args.add_chars:
            import torch

            from training.policy import widen_vocabulary
            from training.tokenizer import TOOL_CHARS

            torch.manual_seed(config.seed)  # the new embedding rows are drawn at random
            model, tokenizer = widen_vocabulary(model, tokenizer, TOOL_CHARS if args.add_chars == "tools" else args.add_chars)
    except ValueError as err:
        print(f"rewardlab sft: {err}", file=sys.stderr)
        return 2
    out = Path(args.output_dir)
    save_config(config, out, "sft_config.json")
    result = train_sft(model, tokenizer, config, rows=rows, eval_rows=eval_rows, log_path=out / "sft_log.jsonl")
    built = {"sft": {k: v for k, v in result.items() if k != "history"}, "data": args.data, "model": args.model,
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
