"""`rewardlab train-rm`: see `reward_models.train` (options come from `TrainRMConfig`)."""

from __future__ import annotations

import argparse
import sys

from rewardlab.config import add_config_args, config_from_args


def configure(parser: argparse.ArgumentParser) -> None:
    from reward_models.train import TrainRMConfig

    parser.epilog = (
        "examples: rewardlab train-rm --kind bt | rewardlab train-rm --kind prm --data steps.jsonl "
        "--backbone Qwen/Qwen2.5-0.5B --output runs/prm | accelerate launch -m rewardlab train-rm --kind quantile"
    )
    add_config_args(parser, TrainRMConfig)


def _summary(cfg, result: dict) -> str:
    lines = [f"train-rm {cfg.kind}: {result['n_train']} train / {result['n_eval']} held-out rows ({result['format']}), "
             f"{result.get('steps', cfg.steps)} steps in {result['seconds']:.0f}s", f"  saved: {result['final']}"]
    width = max((len(k) for k in result["eval"]), default=0)
    for key, value in result["eval"].items():
        lines.append(f"  {key:<{width}}  {value:.4f}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from reward_models.loading import DataError
    from reward_models.train import TrainRMConfig, train

    try:
        cfg = config_from_args(TrainRMConfig, args)
        result = train(cfg)
    except (DataError, ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"rewardlab train-rm: error: {exc}", file=sys.stderr)
        return 2
    print(_summary(cfg, result))
    return 0
