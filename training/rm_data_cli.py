"""`rewardlab rm-data`: sample a policy, label with a gold reward, write reward-model data
(see `training.rm_data`)."""

from __future__ import annotations

import argparse
import sys

from rewardlab.config import add_config_args, config_from_args


def configure(parser: argparse.ArgumentParser) -> None:
    from training.rm_data import RMDataConfig

    parser.epilog = ("example: rewardlab rm-data --n-prompts 20000 --output-dir runs/rm-data && "
                     "rewardlab train-rm --kind bt --backbone ~/.cache/rewardlab/policy-... --data runs/rm-data/train/preference.jsonl "
                     "--eval-data runs/rm-data/test/samples.jsonl")
    add_config_args(parser, RMDataConfig)


def _table(summary: dict) -> str:
    splits = [s for s in ("train", "test") if s in summary]
    keys = [k for k in summary[splits[0]]]
    width = max(len(k) for k in keys)
    lines = [f"  {'':<{width}}  " + "  ".join(f"{s:>10}" for s in splits)]
    for k in keys:
        cells = []
        for s in splits:
            v = summary[s].get(k, "")
            cells.append(f"{v:>10.3f}" if isinstance(v, float) else f"{v!s:>10}")
        lines.append(f"  {k:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from reward_models.loading import DataError
    from training.rm_data import RMDataConfig, collect

    try:
        cfg = config_from_args(RMDataConfig, args)
        summary = collect(cfg)
    except (ValueError, FileExistsError, DataError) as err:
        print(f"rewardlab rm-data: error: {err}", file=sys.stderr)
        return 2
    steps = f"; steps split on {summary['step_separator']!r}" if "steps" in summary["train"] else ""
    print(f"rm-data: {summary['seconds']:.0f} s; files in {cfg.output_dir}/train and {cfg.output_dir}/test{steps}")
    print(_table(summary))
    return 0
