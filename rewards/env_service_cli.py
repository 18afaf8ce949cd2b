"""`rewardlab serve-env --env SPEC`: serve an environment over HTTP in NeMo Gym's resource-server
shape (`rewards/env_service.py`: /seed_session, /step, the tools, /verify).

    rewardlab serve-env --env calculator --port 8002 --token T
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

from rewardlab.config import add_config_args, config_from_args, opt


@dataclass(frozen=True)
class ServeEnvConfig:
    env: str = opt("", "environment spec, e.g. calculator or calculator:cost=0.05, or module:attribute (required)")
    host: str = opt("127.0.0.1", "interface to listen on (0.0.0.0 for all)")
    port: int = opt(8002, "TCP port")
    token: str | None = opt(None, "bearer token clients must send (default: $REWARDLAB_SERVICE_TOKEN, else a random one "
                                  "printed at start: loopback is reachable by every local user and, through the browser, by web pages)")
    no_token: bool = opt(False, "serve without a token: every local user (and web page) that can reach the port may call it")
    allowed_hosts: list[str] = opt([], "names clients may use in the Host header besides loopback names, IP addresses and "
                                       "--host (repeatable; a DNS-rebinding web page sends its own name)")
    max_sessions: int = opt(1024, "episodes open at once; a new one past it gets 503 + Retry-After")
    session_ttl: float = opt(600.0, "seconds an idle session stays open")
    max_body_kb: int = opt(1024, "largest request body in KiB (413 past it)")
    max_concurrent: int = opt(1024, "requests in flight at once (429 + Retry-After past it)")
    body_timeout: float = opt(10.0, "seconds a client has to send its request body (408 past it)")
    max_header_kb: int = opt(32, "largest total size of a request's headers in KiB (431 past it)")
    max_headers: int = opt(100, "most headers in one request (431 past it)")
    log_level: str = opt("info", "uvicorn log level", choices=["critical", "error", "warning", "info", "debug"])

    def __post_init__(self) -> None:
        if not self.env.strip():
            raise ValueError("--env is required, e.g. --env calculator (see docs/rewards.md, Environments)")
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be in 1..65535, got {self.port}")
        for name in ("max_sessions", "max_body_kb", "max_concurrent", "max_header_kb", "max_headers"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        for name in ("session_ttl", "body_timeout"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise ValueError(f"--{name.replace('_', '-')} must be a positive number of seconds, got {getattr(self, name)}")
        if self.token is not None and not self.token.strip():
            raise ValueError("--token must not be empty")
        if self.token is not None and self.no_token:
            raise ValueError("--token and --no-token contradict each other: give one")


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
    from rewardlab.service import ServiceLimits, service_access

    access = service_access(config, "serve-env")
    token = access["token"]
    limits = ServiceLimits(max_body_bytes=config.max_body_kb * 1024, max_concurrent=config.max_concurrent, **access,
                           body_timeout=config.body_timeout, max_header_bytes=config.max_header_kb * 1024,
                           max_headers=config.max_headers)
    app = create_env_app(factory, spec=config.env, limits=limits, max_sessions=config.max_sessions, session_ttl=config.session_ttl)
    tools = [r.path for r in app.routes if getattr(r, "name", "").startswith("tool_")]
    print(f"serving environment {config.env!r} on http://{config.host}:{config.port} (POST /seed_session, /step, "
          f"{', '.join(tools) + ', ' if tools else ''}/verify; GET /health; token {'required' if token else 'off'})", flush=True)
    uvicorn.run(app, host=config.host, port=config.port, log_level=config.log_level)
    return 0

