"""The verifier HTTP service (its protections and micro-batching queue are `rewardlab.service`'s).

    POST /verify  {"items": [{"prediction", "gold", "kind"?, "options"?}, ...], "timeout"?: seconds}
               -> {"results": [{"verdict", "score", "extracted", "gold_parsed", "detail", "elapsed", "kind", "extra"}],
                   "counts": {"correct": n, ...}, "elapsed": seconds}
    GET  /health -> {"status": "ok", "kinds": [...], "workers": n}

`add_protections(app, ServiceLimits(...))` (`rewardlab.service`, shared with `serve-reward`) puts one ASGI middleware in front of the app:
request headers' count and size (431, on every path), bearer token (401), request body size (413), a deadline for receiving the body (408; the body is
read before the request takes one of the concurrency slots, which are for work), requests in
flight (429 with `Retry-After` past `max_concurrent`); `/health` stays open.

Micro-batching (`rewardlab.batching`): the items of concurrent requests are verified as one batch
by the worker pool (`batch_items`, `batch_wait`), so one-item-per-request clients keep the pool
busy. A request waits in the queue rather than being turned away: 503 with `Retry-After` only when
`max_queue` items are already waiting, and 504 when it is not answered within `request_timeout`. Request models cap their item lists at `max_items`
(`items_field`), so an oversized batch is a 413 before any item is validated; validation errors
are a compact 422 naming each field, never echoing the input (NaN or a million items included).
The reward service (`rewards/service.py`) uses the same pieces.

Policy is the operator's: the sandbox settings of kind `code` (`SandboxLimits`) are fixed when the
service starts (`serve-verifier --sandbox key=value`); a client that sends one gets a 422. A
client may shorten the per-item timeout, not extend it past the service's own (`max_timeout`,
default: the timeout the service uses for that kind).

>>> app = create_app(ServiceLimits(max_items=10))
>>> sorted(r.path for r in app.routes if r.path in ("/verify", "/health"))
['/health', '/verify']
"""

# no `from __future__ import annotations`: FastAPI reads the request models from real annotations

import time
from collections import Counter
from typing import Any, Optional

from rewardlab.service import ServiceLimits, add_protections, batched, check_items, items_field, make_batcher


def _clean(value: Any) -> Any:
    """JSON-safe copy: lone surrogates (from hostile inputs) become "?" instead of a 500."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8") if not value.isascii() else value
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _check_request(items: list, timeout: Optional[float], operator_only: dict[str, set], timeout_cap: Any) -> None:
    """A 422 naming the item for an unknown kind, options that are not plain data or that belong to
    the operator's sandbox policy, and a timeout past the service's own for a kind."""
    from fastapi import HTTPException

    from verifiers._common import check_plain_options
    from verifiers.registry import KINDS, kind_names

    for i, item in enumerate(items):
        if item.kind not in KINDS:
            raise HTTPException(422, f"items[{i}].kind: unknown kind {item.kind!r}; valid kinds: {', '.join(kind_names())}")
        try:  # bounded in size and depth here, before the item joins a batch with other requests' items
            check_plain_options(item.kind, item.options)
        except TypeError as exc:
            raise HTTPException(422, f"items[{i}].options: {exc}") from None
        policy = sorted(set(item.options) & operator_only.get(item.kind, set()))
        if policy:
            raise HTTPException(422, f"items[{i}].options: {', '.join(map(repr, policy))} belong to the service's sandbox "
                                     f"policy, set by its operator (serve-verifier --sandbox key=value), not by clients")
    if timeout is not None:
        for kind in sorted({item.kind for item in items}):
            if timeout > timeout_cap(kind):
                raise HTTPException(422, f"timeout: {timeout:g} s is over this service's limit of {timeout_cap(kind):g} s "
                                         f"for kind {kind!r} (a client may shorten the timeout, not extend it)")


def create_app(limits: Optional[ServiceLimits] = None, workers: Optional[int] = None, default_timeout: Optional[float] = None,
               sandbox: Optional[dict[str, Any]] = None) -> Any:
    """The verifier service app (see the module docstring). `sandbox`: the operator's settings
    for kind `code` (`SandboxLimits` fields), applied to every code item; clients cannot set them."""
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, Field

    from verifiers.api import default_timeout as kind_timeout
    from verifiers.api import verify_items
    from verifiers.code_kind import SANDBOX_OPTIONS, check_code_options
    from verifiers.pool import get_pool
    from verifiers.registry import kind_names

    sandbox = dict(sandbox or {})
    if set(sandbox) - SANDBOX_OPTIONS:
        raise ValueError(f"sandbox policy: unknown setting(s) {sorted(set(sandbox) - SANDBOX_OPTIONS)}; valid: {sorted(SANDBOX_OPTIONS)}")
    check_code_options(sandbox)
    operator_only = {"code": SANDBOX_OPTIONS}  # kind -> options only the operator sets

    app = FastAPI(title="rewardlab verifier service", version="1")
    protections = add_protections(app, limits)

    class Item(BaseModel):
        prediction: str = Field(..., description="the model's output")
        gold: str = Field(..., description="the reference answer (or tests, for kind=code)")
        kind: str = Field("math", description="verifier kind: " + ", ".join(kind_names()))
        options: dict[str, Any] = Field(default_factory=dict, description="options for the kind (not the code sandbox's)")

    class VerifyRequest(BaseModel):
        items: list[Item] = items_field(app, "the items to verify, results come back in this order")
        timeout: Optional[float] = Field(None, gt=0, allow_inf_nan=False,
                                         description="hard limit per item in seconds; may shorten the service's, not extend it")

    def timeout_cap(kind: str) -> float:
        return protections.max_timeout or default_timeout or kind_timeout(kind)

    def run_batch(key: Any, payloads: list) -> list:
        """One pool call for the items of several requests (each keeps its own timeout)."""
        items = [item for its, _ in payloads for item in its]
        limits_per_item = [timeout for its, timeout in payloads for _ in its]
        results = verify_items(items, workers=workers, timeouts=limits_per_item)
        out, at = [], 0
        for its, _ in payloads:
            out.append(results[at : at + len(its)])
            at += len(its)
        return out

    # two batches at a time: one is being sent to / read from the workers while the other runs
    batcher = make_batcher(protections, run_batch, concurrency=2, name="verifier-batcher")
    app.state.batcher = batcher

    @app.get("/health")  # async: answered on the event loop, never queued behind work in the thread pool
    async def health() -> dict[str, Any]:
        return {"status": "ok", "kinds": kind_names(), "workers": get_pool().capacity, "batching": batcher.stats()}

    @app.post("/verify")
    async def verify(request: VerifyRequest) -> dict[str, Any]:
        check_items(app, len(request.items))
        _check_request(request.items, request.timeout, operator_only, timeout_cap)
        items = [(it.prediction, it.gold, it.kind, {**it.options, **sandbox} if it.kind == "code" else it.options)
                 for it in request.items]
        start = time.perf_counter()
        try:
            results = await batched(batcher, protections, None, (items, request.timeout or default_timeout), len(items))
        except (TypeError, ValueError) as exc:  # e.g. an unknown option: the message names it
            raise HTTPException(422, f"options: {exc}") from None
        rows = [_clean(r.to_dict()) for r in results]
        return JSONResponse({"results": rows, "counts": dict(Counter(r["verdict"] for r in rows)),
                             "elapsed": time.perf_counter() - start})

    return app
