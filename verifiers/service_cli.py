"""`rewardlab serve-verifier`: the verifiers over HTTP (FastAPI + uvicorn).

    rewardlab serve-verifier --port 8000 --token "$(openssl rand -hex 16)"
    curl -s localhost:8000/verify -H "Authorization: Bearer $TOKEN" -H "content-type: application/json" \\
         -d '{"items": [{"prediction": "\\\\boxed{2}", "gold": "2"}]}'
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

from rewardlab.config import add_config_args, check_fields, config_from_args, opt
from rewardlab.service import BatchingConfig, ServiceConfig


@dataclass(frozen=True)
class ServeVerifierConfig(BatchingConfig, ServiceConfig):
    """serve-verifier: the service settings (`ServiceConfig`, `BatchingConfig`) and the verifiers' own."""

    max_timeout: float | None = opt(None, "largest per-item timeout a request may ask for, seconds (default: the kind's own)", seconds=True)
    timeout: float | None = opt(None, "per-item timeout in seconds (default: the kind's, 5 s / 30 s for code)", seconds=True)
    sandbox: list[str] = opt([], "sandbox policy for kind=code as key=value (SandboxLimits fields), repeatable; clients cannot change it")
    workers: int | None = opt(None, "verifier worker processes (default: min(cpu count, 4))", ge=1)

    def __post_init__(self) -> None:
        self.check_service()
        self.check_batching()
        check_fields(self, ServeVerifierConfig)
        self.sandbox_policy()  # validated at parse time

    def sandbox_policy(self) -> dict[str, Any]:
        """--sandbox key=value pairs as SandboxLimits settings (values read as JSON when they parse)."""
        from verifiers.code_kind import SANDBOX_OPTIONS, check_code_options

        policy: dict[str, Any] = {}
        for item in self.sandbox:
            key, sep, value = item.partition("=")
            if not sep or key not in SANDBOX_OPTIONS:
                raise ValueError(f"--sandbox must be key=value with key one of {', '.join(sorted(SANDBOX_OPTIONS))}; got {item!r}")
            try:
                policy[key] = json.loads(value)
            except json.JSONDecodeError:
                policy[key] = value
        try:
            check_code_options(policy)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"--sandbox: {exc}") from None
        return policy


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, ServeVerifierConfig)


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(ServeVerifierConfig, args)
    except ValueError as exc:
        print(f"rewardlab serve-verifier: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from verifiers.pool import get_pool
    from verifiers.service import create_app

    limits = config.service_limits("serve-verifier", max_timeout=config.max_timeout, **config.batching_limits())
    token = limits.token
    if config.workers:
        get_pool().grow(config.workers)
    get_pool().warm()
    app = create_app(limits, workers=config.workers, default_timeout=config.timeout, sandbox=config.sandbox_policy())
    print(f"serving verifiers on http://{config.host}:{config.port} (POST /verify, GET /health; "
          f"token {'required' if token else 'off'})", flush=True)
    uvicorn.run(app, host=config.host, port=config.port, log_level=config.log_level)
    return 0
