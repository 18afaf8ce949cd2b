"""The verifier HTTP service, and the request protections every rewardlab service shares.

    POST /verify  {"items": [{"prediction", "gold", "kind"?, "options"?}, ...], "timeout"?: seconds}
               -> {"results": [{"verdict", "score", "extracted", "gold_parsed", "detail", "elapsed", "kind", "extra"}],
                   "counts": {"correct": n, ...}, "elapsed": seconds}
    GET  /health -> {"status": "ok", "kinds": [...], "workers": n}

`add_protections(app, ServiceLimits(...))` puts one ASGI middleware in front of any app:
bearer token (401), request body size (413), concurrent requests (429); `/health` stays open.
Endpoints check their own item counts with `check_items` (413). Validation errors are FastAPI's
422 with the field's location. The reward service (`rewards/service.py`) uses the same pieces.

>>> app = create_app(ServiceLimits(max_items=10))
>>> sorted(r.path for r in app.routes if r.path in ("/verify", "/health"))
['/health', '/verify']
"""

# no `from __future__ import annotations`: FastAPI reads the request models from real annotations

import dataclasses
import hmac
import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

TOKEN_ENV = "REWARDLAB_SERVICE_TOKEN"


@dataclass(frozen=True)
class ServiceLimits:
    """Protections of a rewardlab HTTP service."""

    max_body_bytes: int = field(default=16 << 20, metadata={"help": "largest request body (413 past it)"})
    max_items: int = field(default=4096, metadata={"help": "most items in one request (413 past it)"})
    max_concurrent: int = field(default=8, metadata={"help": "requests handled at once (429 past it)"})
    token: Optional[str] = field(
        default=None, metadata={"help": f"bearer token required on every path but the open ones (None: ${TOKEN_ENV} if set)"}
    )
    open_paths: tuple = field(default=("/health",), metadata={"help": "paths served without a token or limits"})
    max_timeout: float = field(default=120.0, metadata={"help": "largest per-item timeout a client may ask for"})

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_items", "max_concurrent", "max_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"ServiceLimits.{name} must be positive, got {getattr(self, name)!r}")
        if self.token is not None and not self.token.strip():
            raise ValueError("ServiceLimits.token must not be empty (use None for no token)")


async def _reply(send: Any, status: int, detail: str, headers: tuple = ()) -> None:
    body = json.dumps({"detail": detail}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class ProtectionMiddleware:
    """Pure ASGI middleware: token, body size and concurrency checks, before the app sees anything."""

    def __init__(self, app: Any, limits: ServiceLimits, token: Optional[str]) -> None:
        self.app, self.limits, self.token = app, limits, token
        self.in_flight = 0  # one event loop: no lock needed

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] in self.limits.open_paths:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.token is not None:
            given = headers.get("authorization", "")
            if not (given.startswith("Bearer ") and hmac.compare_digest(given[7:].encode(), self.token.encode())):
                await _reply(send, 401, "missing or wrong bearer token: send 'Authorization: Bearer <token>'",
                             ((b"www-authenticate", b"Bearer"),))
                return
        if self.in_flight >= self.limits.max_concurrent:
            await _reply(send, 429, f"too many concurrent requests (limit {self.limits.max_concurrent}); retry shortly",
                         ((b"retry-after", b"1"),))
            return
        self.in_flight += 1
        try:
            limit = self.limits.max_body_bytes
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                await _reply(send, 413, f"request body of {declared} bytes is over the limit of {limit} bytes; split the batch")
                return
            chunks, size = [], 0
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return  # client went away
                chunks.append(message.get("body", b""))
                size += len(chunks[-1])
                if size > limit:
                    await _reply(send, 413, f"request body is over the limit of {limit} bytes; split the batch")
                    return
                if not message.get("more_body", False):
                    break
            body, replayed = b"".join(chunks), False

            async def replay() -> dict:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self.app(scope, replay, send)
        finally:
            self.in_flight -= 1


def add_protections(app: Any, limits: Optional[ServiceLimits] = None, **overrides: Any) -> ServiceLimits:
    """Protect `app` (FastAPI/Starlette) with `limits` (fields may also be given as keywords);
    the token falls back to the environment variable REWARDLAB_SERVICE_TOKEN. The limits are kept
    in `app.state.limits` for `check_items`.

    >>> from fastapi import FastAPI
    >>> add_protections(FastAPI(), max_items=5).max_items
    5
    """
    limits = dataclasses.replace(limits or ServiceLimits(), **overrides)
    token = limits.token if limits.token is not None else (os.environ.get(TOKEN_ENV) or None)
    app.add_middleware(ProtectionMiddleware, limits=limits, token=token)
    app.state.limits = limits
    return limits


def check_items(app: Any, n: int) -> None:
    """413 when a request carries more items than `app.state.limits.max_items`."""
    from fastapi import HTTPException

    limit = app.state.limits.max_items
    if n > limit:
        raise HTTPException(413, f"{n} items in one request; the limit is {limit} (split the batch)")


def _clean(value: Any) -> Any:
    """JSON-safe copy: lone surrogates (from hostile inputs) become "?" instead of a 500."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8") if not value.isascii() else value
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def create_app(limits: Optional[ServiceLimits] = None, workers: Optional[int] = None, default_timeout: Optional[float] = None) -> Any:
    """The verifier service app (see the module docstring)."""
    from fastapi import FastAPI, HTTPException
    from pydantic import BaseModel, Field

    from verifiers.api import verify_items
    from verifiers.pool import get_pool
    from verifiers.registry import KINDS, kind_names

    class Item(BaseModel):
        prediction: str = Field(..., description="the model's output")
        gold: str = Field(..., description="the reference answer (or tests, for kind=code)")
        kind: str = Field("math", description="verifier kind: " + ", ".join(kind_names()))
        options: dict[str, Any] = Field(default_factory=dict, description="options for the kind")

    class VerifyRequest(BaseModel):
        items: list[Item] = Field(..., description="the items to verify, results come back in this order")
        timeout: Optional[float] = Field(None, gt=0, description="hard limit per item in seconds (default: the kind's)")

    app = FastAPI(title="rewardlab verifier service", version="1")
    protections = add_protections(app, limits)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "kinds": kind_names(), "workers": get_pool().capacity}

    @app.post("/verify")
    def verify(request: VerifyRequest) -> dict[str, Any]:
        check_items(app, len(request.items))
        for i, item in enumerate(request.items):
            if item.kind not in KINDS:
                raise HTTPException(422, f"items[{i}].kind: unknown kind {item.kind!r}; valid kinds: {', '.join(kind_names())}")
        timeout = request.timeout or default_timeout
        if timeout is not None and timeout > protections.max_timeout:
            raise HTTPException(422, f"timeout: {timeout} s is over this service's limit of {protections.max_timeout} s")
        start = time.perf_counter()
        try:
            results = verify_items([(it.prediction, it.gold, it.kind, it.options) for it in request.items],
                                   timeout=timeout, workers=workers)
        except (TypeError, ValueError) as exc:  # e.g. an unknown option: the message names it
            raise HTTPException(422, f"options: {exc}") from None
        rows = [_clean(r.to_dict()) for r in results]
        return {"results": rows, "counts": dict(Counter(r["verdict"] for r in rows)),
                "elapsed": time.perf_counter() - start}

    return app
