"""`rewardlab serve-verifier`: the verifiers over HTTP (FastAPI + uvicorn).

    rewardlab serve-verifier --port 8000 --token "$(openssl rand -hex 16)"
    curl -s localhost:8000/verify -H "Authorization: Bearer $TOKEN" -H "content-type: application/json" \\
         -d '{"items": [{"prediction": "\\\\boxed{2}", "gold": "2"}]}'
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from typing import Any

from rewardlab.config import add_config_args, config_from_args, opt


@dataclass(frozen=True)
class ServeVerifierConfig:
    host: str = opt("127.0.0.1", "interface to listen on (0.0.0.0 exposes it to the network: use --token)")
    port: int = opt(8000, "TCP port")
    token: str | None = opt(None, "bearer token clients must send (default: $REWARDLAB_SERVICE_TOKEN, else a random one "
                                  "printed at start: loopback is reachable by every local user and, through the browser, by web pages)")
    no_token: bool = opt(False, "serve without a token: every local user (and web page) that can reach the port may call it")
    allowed_hosts: list[str] = opt([], "names clients may use in the Host header besides loopback names, IP addresses and "
                                       "--host (repeatable; a DNS-rebinding web page sends its own name)")
    max_body_kb: int = opt(16 * 1024, "largest request body in KiB (413 past it)")
    max_items: int = opt(4096, "most items per request (413 past it)")
    max_concurrent: int = opt(1024, "requests in flight at once, queued or being scored (429 + Retry-After past it)")
    batch_items: int = opt(256, "most items scored in one micro-batch: concurrent requests are gathered into batches")
    batch_wait: float = opt(0.005, "seconds the first waiting request waits for others to join its batch")
    max_queue: int = opt(16384, "items waiting to be scored; a request that finds the queue full gets 503 + Retry-After")
    request_timeout: float = opt(120.0, "deadline of one request in seconds, time in the queue included (504 past it)")
    max_timeout: float | None = opt(None, "largest per-item timeout a request may ask for, seconds (default: the service's "
                                          "own timeout for the item's kind: clients may shorten it, not extend it)")
    timeout: float | None = opt(None, "per-item timeout in seconds (default: the kind's, 5 s / 30 s for code)")
    body_timeout: float = opt(10.0, "seconds a client has to send its request body (408 past it); slots are for work")
    max_header_kb: int = opt(32, "largest total size of a request's headers in KiB (431 past it)")
    max_headers: int = opt(100, "most headers in one request (431 past it)")
    sandbox: list[str] = opt([], "sandbox policy for kind=code as key=value (cpu_seconds, wall_seconds, memory_mb, "
                                 "max_processes, file_size_mb, open_files, tmpfs_mb, max_output_kb, network, "
                                 "drop_privileges), repeatable; clients cannot change it")
    workers: int | None = opt(None, "verifier worker processes (default: min(cpu count, 4))")
    log_level: str = opt("info", "uvicorn log level", choices=["critical", "error", "warning", "info", "debug"])

    def __post_init__(self) -> None:
        if not (math.isfinite(self.batch_wait) and self.batch_wait >= 0):
            raise ValueError(f"--batch-wait must be a number of seconds >= 0, got {self.batch_wait}")
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be in 1..65535, got {self.port}")
        for name in ("max_body_kb", "max_items", "max_concurrent", "batch_items", "max_queue", "max_header_kb", "max_headers"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        for name in ("timeout", "max_timeout", "body_timeout", "request_timeout"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"--{name.replace('_', '-')} must be a positive number of seconds, got {value}")
        self.sandbox_policy()  # validated at parse time
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"--workers must be >= 1, got {self.workers}")
        if self.token is not None and not self.token.strip():
            raise ValueError("--token must not be empty")
        if self.token is not None and self.no_token:
            raise ValueError("--token and --no-token contradict each other: give one")


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
    from rewardlab.service import ServiceLimits, service_access
    from verifiers.service import create_app

    access = service_access(config, "serve-verifier")
    token = access["token"]
    limits = ServiceLimits(max_body_bytes=config.max_body_kb * 1024, max_items=config.max_items,
                           max_header_bytes=config.max_header_kb * 1024, max_headers=config.max_headers,
                           max_concurrent=config.max_concurrent, **access, max_timeout=config.max_timeout,
                           body_timeout=config.body_timeout, batch_items=config.batch_items, batch_wait=config.batch_wait,
                           max_queue=config.max_queue, request_timeout=config.request_timeout)
    if config.workers:
        get_pool().grow(config.workers)
    get_pool().warm()
    app = create_app(limits, workers=config.workers, default_timeout=config.timeout, sandbox=config.sandbox_policy())
    print(f"serving verifiers on http://{config.host}:{config.port} (POST /verify, GET /health; "
          f"token {'required' if token else 'off'})", flush=True)
    uvicorn.run(app, host=config.host, port=config.port, log_level=config.log_level)
    return 0
