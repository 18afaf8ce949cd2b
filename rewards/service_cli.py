"""`rewardlab serve-reward --reward SPEC`: serve a reward over HTTP (OpenRLHF remote-RM compatible).

    rewardlab serve-reward --reward "verifier:math*1.0+format*0.1" --port 8001
    # OpenRLHF: --remote_rm_url http://127.0.0.1:8001/get_reward
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from rewardlab.config import add_config_args, config_from_args, opt


@dataclass(frozen=True)
class ServeRewardConfig:
    reward: str = opt("", "reward spec, e.g. verifier:math, ttrl, rm:PATH, verifier:math*1.0+format*0.1 (required)")
    host: str = opt("127.0.0.1", "interface to listen on (0.0.0.0 for all)")
    port: int = opt(8001, "TCP port")
    max_items: int = opt(4096, "most completions accepted in one request")
    none_score: float = opt(0.0, "score sent to OpenRLHF where the reward is None (not applicable); counted in extra_logs")
    label_column: str = opt("answer", "column that OpenRLHF's `labels` fill")
    log_level: str = opt("info", "uvicorn log level", choices=["critical", "error", "warning", "info", "debug"])

    def __post_init__(self) -> None:
        if not self.reward.strip():
            raise ValueError("--reward is required, e.g. --reward verifier:math (see docs/rewards.md for the specs)")
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be in 1..65535, got {self.port}")
        if self.max_items < 1:
            raise ValueError(f"--max-items must be >= 1, got {self.max_items}")


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

    app = create_app(reward, spec=config.reward, max_items=config.max_items, none_score=config.none_score,
                     label_column=config.label_column)
    print(f"serving reward {config.reward!r} on http://{config.host}:{config.port} "
          f"(POST /get_reward for OpenRLHF, POST /reward for batches, GET /health)", flush=True)
    uvicorn.run(app, host=config.host, port=config.port, log_level=config.log_level)
    return 0
