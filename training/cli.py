"""`rewardlab rl`: RL (GRPO / PPO family) with the reward you choose.

With no --model / --data it runs the embedded default fully offline: a tiny character-level
Llama warm-started by SFT on 3-digit addition (cached), then GRPO with the chosen reward, printing
held-out greedy accuracy before and after and writing a report. Multi-GPU / multi-node:
`accelerate launch -m training.cli --model ... --data ...` (same options).
"""

from __future__ import annotations

import argparse
import sys
import time

from rewardlab.config import add_config_args, config_from_args
from training.config import RLConfig


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, RLConfig)


def run(args: argparse.Namespace) -> int:
    from training.reward_calls import RewardError
    from training.guards import TrainingStopped
    from training.run_state import prepare_run
    from training.trainer import train

    start = time.time()
    try:
        config = config_from_args(RLConfig, args)
        prepared = prepare_run(config)  # reward, data and columns are checked before any model loads
    except ValueError as err:
        print(f"rewardlab rl: {err}", file=sys.stderr)
        return 2
    try:
        summary = train(config, prepared)
    except (RewardError, TrainingStopped) as err:
        print(f"rewardlab rl: stopped: {err}", file=sys.stderr)
        return 1
    except ValueError as err:  # e.g. a model that cannot be loaded
        print(f"rewardlab rl: {err}", file=sys.stderr)
        return 2
    before, after = summary.get("accuracy_before"), summary.get("accuracy_after")
    print(f"rl: done in {time.time() - start:.0f} s ({summary['steps']} steps); outputs in {config.output_dir}")
    if summary.get("badly_wrong_before") is not None and summary.get("badly_wrong_after") is not None:
        print(f"rl: badly wrong answers (off by more than 10%, or none) {summary['badly_wrong_before']:.1%} -> {summary['badly_wrong_after']:.1%}")
    for term, share in (summary.get("rm_prompt_overlap") or {}).items():
        if isinstance(share, dict):
            print(f"rl: {term} was trained on {share['train_prompts']:.1%} of RL's training prompts and {share['heldout_prompts']:.1%} of its held-out prompts"
                  + ("" if share.get("canonical_heldout_prompts") is None else
                     f" ({share['canonical_train_prompts']:.1%} and {share['canonical_heldout_prompts']:.1%} counting reordered twins)"))
        else:
            print(f"rl: {term}: overlap with RL's prompts {share}")
    if summary.get("stopped_by_alarm"):
        print(f"rl: stopped at step {summary['stopped_by_alarm']['step']} by the hack alarm: {summary['stopped_by_alarm']['reason']}")
    if before is not None and after is not None:
        from training.heldout import heldout_kind

        print(f"rl: held-out greedy accuracy ({heldout_kind(config)}) {before:.1%} -> {after:.1%} ({100 * (after - before):+.1f} points)")
    if summary.get("tool_use_before") is not None and summary.get("tool_use_after") is not None:
        print(f"rl: held-out answers with a tool call {summary['tool_use_before']:.1%} -> {summary['tool_use_after']:.1%}")
    if summary.get("first_turn_accuracy_before") is not None and summary.get("first_turn_accuracy_after") is not None:
        print(f"rl: held-out right at the first turn {summary['first_turn_accuracy_before']:.1%} -> "
              f"{summary['first_turn_accuracy_after']:.1%} (the rest of the accuracy took more turns)")
    if config.report:
        print(f"rl: report: {config.output_dir}/report.md (+ report.html, PNG plots)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rl", description=__doc__.splitlines()[0])
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
