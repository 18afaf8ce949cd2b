"""`rewardlab serve-reward --reward SPEC`: serve a reward over HTTP (OpenRLHF remote-RM compatible).

    rewardlab serve-reward --reward "verifier:math*1.0+format*0.1" --port 8001
    # OpenRLHF: --remote_rm_url http://127.0.0.1:8001/get_reward
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from rewardlab.config import add_config_args, config_from_args, opt
from rewardlab.service import BatchingConfig, ServiceConfig


@dataclass(frozen=True)
class ServeRewardConfig(BatchingConfig, ServiceConfig):
    """serve-reward: the service settings (`ServiceConfig`, `BatchingConfig`) and the reward's own."""

    reward: str = opt("", "reward spec, e.g. verifier:math, ttrl, rm:PATH, verifier:math*1.0+format*0.1 (required)")
    port: int = opt(8001, "TCP port")
    none_score: float = opt(0.0, "score sent to OpenRLHF where the reward is None (not applicable); counted in extra_logs")
    label_column: str = opt("answer", "column that OpenRLHF's `labels` fill")

    def __post_init__(self) -> None:
        self.check_service()
        self.check_batching()
        if not self.reward.strip():
            raise ValueError("--reward is required, e.g. --reward verifier:math (see docs/rewards.md for the specs)")


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, ServeRewardConfig)


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(ServeRewardConfig, args)
        from rewards.spec import build_reward

        reward = build_reward(config.reward)
    except ValueError as exc:
        print(f"rewardlab serve-reward: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from rewards.service import create_app

    limits = config.service_limits("serve-reward", **config.batching_limits())
    token = limits.token
    app = create_app(reward, spec=config.reward, limits=limits, none_score=config.none_score, label_column=config.label_column)
    print(f"serving reward {config.reward!r} on http://{config.host}:{config.port} (POST /get_reward for OpenRLHF, "
          f"POST /reward for batches, GET /health; token {'required' if token else 'off'})", flush=True)
    uvicorn.run(app, host=config.host, port=config.port, log_level=config.log_level)
    return 0
