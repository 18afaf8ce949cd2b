"""`rewardlab serve-reward --reward SPEC`: serve a reward over HTTP (OpenRLHF remote-RM compatible).

    rewardlab serve-reward --reward "verifier:math*1.0+format*0.1" --port 8001
    # OpenRLHF: --remote_rm_url http://127.0.0.1:8001/get_reward
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

from rewardlab.config import add_config_args, config_from_args, opt


@dataclass(frozen=True)
class ServeRewardConfig:
    reward: str = opt("", "reward spec, e.g. verifier:math, ttrl, rm:PATH, verifier:math*1.0+format*0.1 (required)")
    host: str = opt("127.0.0.1", "interface to listen on (0.0.0.0 for all)")
    port: int = opt(8001, "TCP port")
    token: str | None = opt(None, "bearer token clients must send (default: $REWARDLAB_SERVICE_TOKEN, else a random one "
                                  "printed at start: loopback is reachable by every local user and, through the browser, by web pages)")
    no_token: bool = opt(False, "serve without a token: every local user (and web page) that can reach the port may call it")
    allowed_hosts: list[str] = opt([], "names clients may use in the Host header besides loopback names, IP addresses and "
                                       "--host (repeatable; a DNS-rebinding web page sends its own name)")
    max_body_kb: int = opt(16 * 1024, "largest request body in KiB (413 past it)")
    max_items: int = opt(4096, "most completions per request (413 past it)")
    max_concurrent: int = opt(1024, "requests in flight at once, queued or being scored (429 + Retry-After past it)")
    batch_items: int = opt(256, "most items scored in one micro-batch: concurrent requests are gathered into batches")
    batch_wait: float = opt(0.005, "seconds the first waiting request waits for others to join its batch")
    max_queue: int = opt(16384, "items waiting to be scored; a request that finds the queue full gets 503 + Retry-After")
    request_timeout: float = opt(120.0, "deadline of one request in seconds, time in the queue included (504 past it)")
    body_timeout: float = opt(10.0, "seconds a client has to send its request body (408 past it); slots are for work")
    max_header_kb: int = opt(32, "largest total size of a request's headers in KiB (431 past it)")
    max_headers: int = opt(100, "most headers in one request (431 past it)")
    none_score: float = opt(0.0, "score sent to OpenRLHF where the reward is None (not applicable); counted in extra_logs")
    label_column: str = opt("answer", "column that OpenRLHF's `labels` fill")
    log_level: str = opt("info", "uvicorn log level", choices=["critical", "error", "warning", "info", "debug"])

    def __post_init__(self) -> None:
        if not (math.isfinite(self.batch_wait) and self.batch_wait >= 0):
            raise ValueError(f"--batch-wait must be a number of seconds >= 0, got {self.batch_wait}")
        if not self.reward.strip():
            raise ValueError("--reward is required, e.g. --reward verifier:math (see docs/rewards.md for the specs)")
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be in 1..65535, got {self.port}")
        for name in ("max_body_kb", "max_items", "max_concurrent", "batch_items", "max_queue", "max_header_kb", "max_headers"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if self.token is not None and not self.token.strip():
            raise ValueError("--token must not be empty")
        if self.token is not None and self.no_token:
            raise ValueError("--token and --no-token contradict each other: give one")
        for name in ("body_timeout", "request_timeout"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"--{name.replace('_', '-')} must be a positive number of seconds, got {value}")


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
    from rewardlab.service import ServiceLimits, service_access

    access = service_access(config, "serve-reward")
    token = access["token"]
    limits = ServiceLimits(max_body_bytes=config.max_body_kb * 1024, max_items=config.max_items,
                           max_header_bytes=config.max_header_kb * 1024, max_headers=config.max_headers,
                           max_concurrent=config.max_concurrent, **access, body_timeout=config.body_timeout,
                           batch_items=config.batch_items, batch_wait=config.batch_wait, max_queue=config.max_queue,
                           request_timeout=config.request_timeout)
    app = create_app(reward, spec=config.reward, limits=limits, none_score=config.none_score, label_column=config.label_column)
    print(f"serving reward {config.reward!r} on http://{config.host}:{config.port} (POST /get_reward for OpenRLHF, "
          f"POST /reward for batches, GET /health; token {'required' if token else 'off'})", flush=True)
    uvicorn.run(app, host=config.host, port=config.port, log_level=config.log_level)
    return 0
