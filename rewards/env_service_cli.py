"""`rewardlab serve-env --env SPEC`: serve an environment over HTTP in NeMo Gym's resource-server
shape (`rewards/env_service.py`: /seed_session, /step, the tools, /verify).

    rewardlab serve-env --env calculator --port 8002 --token T
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

from rewardlab.config import add_config_args, check_fields, config_from_args, opt
from rewardlab.service import ServiceConfig


@dataclass(frozen=True)
class ServeEnvConfig(ServiceConfig):
    """serve-env: the service settings (`ServiceConfig`) and the environment's own."""

    env: str = opt("", "environment spec, e.g. calculator or calculator:cost=0.05, or module:attribute (required)")
    port: int = opt(8002, "TCP port")
    max_body_kb: int = opt(1024, "largest request body in KiB (413 past it)", ge=1)
    max_sessions: int = opt(1024, "episodes open at once; a new one past it gets 503 + Retry-After", ge=1)
    session_ttl: float = opt(600.0, "seconds an idle session stays open")

    def __post_init__(self) -> None:
        self.check_service()
        check_fields(self, ServeEnvConfig)
        if not self.env.strip():
            raise ValueError("--env is required, e.g. --env calculator (see docs/rewards.md, Environments)")
        if not (math.isfinite(self.session_ttl) and self.session_ttl > 0):
            raise ValueError(f"--session-ttl must be a positive number of seconds, got {self.session_ttl}")


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, ServeEnvConfig)


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(ServeEnvConfig, args)
        from rewards.environments import build_env

        factory = build_env(config.env)
    except ValueError as exc:
        print(f"rewardlab serve-env: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from rewards.env_service import create_env_app
    limits = config.service_limits("serve-env")
    token = limits.token
    app = create_env_app(factory, spec=config.env, limits=limits, max_sessions=config.max_sessions, session_ttl=config.session_ttl)
    tools = [r.path for r in app.routes if getattr(r, "name", "").startswith("tool_")]
    print(f"serving environment {config.env!r} on http://{config.host}:{config.port} (POST /seed_session, /step, "
          f"{', '.join(tools) + ', ' if tools else ''}/verify; GET /health; token {'required' if token else 'off'})", flush=True)
    uvicorn.run(app, host=config.host, port=config.port, log_level=config.log_level)
    return 0

