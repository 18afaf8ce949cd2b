"""HTTP reward service: one reward spec behind two request shapes.

- OpenRLHF remote RM (`POST /get_reward`, also `POST /`):
  `{"query": [...], "prompts": [...], "labels": [...]}` -> `{"rewards": [...], "scores": [...], "extra_logs": {...}}`
  (`prompts` and `labels` optional, as older OpenRLHF versions send only `query`; extra fields such
  as `metas` are ignored)
- our batch endpoint (`POST /reward`):
  `{"prompts": [...], "completions": [...], "columns": {"answer": [...]}}` ->
  `{"rewards": [... or null], "metrics": {...}}` (+ `step_rewards`, `step_ends` for dense rewards)
- `GET /health` -> `{"status": "ok", "reward": SPEC}`

Bad requests get a 4xx answer naming the field. The OpenRLHF route, which one-item clients call
thousands of times a second, is a lean JSON endpoint (`rewardlab.service.JSONEndpoint`: the standard
`json` parser and field checks of its own) rather than a FastAPI request model, whose per-request
cost in the main process was the limit with 64 single-item clients. The protections are the
verifier service's (`rewardlab.service.add_protections` with `ServiceLimits`): bearer token (401),
body size (413), items per request (413), requests in flight (429 + Retry-After); `/health` stays
open.

Micro-batching (`rewardlab.batching`): requests wait in a queue and a consumer scores the items of
concurrent requests in one reward call (one call at a time, on a worker thread: a reward keeps the
metrics of its last call), so a client sending one query per request (OpenRLHF) gets the verifier
pool's and the RM's batching. Requests are merged only when the reward is itemwise
(`rewards.base.is_itemwise`: each value depends on its own item; a majority vote or a group
normalisation must see each request alone) and the requests carry the same columns. Merged
requests share the metrics of their batch (`extra_logs` / `metrics` say so with `batch/requests`
and `batch/items`). A request is turned away only when the queue is full (503 + Retry-After), or
answered 504 past its deadline (`request_timeout`); OpenRLHF's client retries both.
"""

# no `from __future__ import annotations`: FastAPI reads the request models from real annotations

import itertools
import math
from typing import Any

from rewards.adapters import openrlhf_inputs, openrlhf_outputs
from rewards.base import RewardOutput, is_itemwise, reward_metrics
from rewards.concurrent import call_reward


def _finite(metrics: dict[str, Any]) -> dict[str, float | None]:
    """JSON has no NaN: a NaN metric (e.g. an accuracy over zero items) becomes null."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in metrics.items()}


def _batch_runner(reward: Any) -> Any:
    """The micro-batcher's function for `reward`: one reward call for the items of every request in
    the batch; each gets its own slice of values (and of step rewards when they are dense)."""

    def run_batch(key: Any, payloads: list) -> list:
        prompts = [p for payload in payloads for p in payload[0]]
        completions = [c for payload in payloads for c in payload[1]]
        columns = {name: [v for payload in payloads for v in payload[2][name]] for name in payloads[0][2]}
        out = call_reward(reward, prompts, completions, **columns)
        if len(out) != len(completions):
            raise RuntimeError(f"the reward returned {len(out)} values for {len(completions)} completions")
        metrics = dict(reward_metrics(reward))
        if len(payloads) > 1:
            metrics.update({"batch/requests": float(len(payloads)), "batch/items": float(len(completions))})
        dense = isinstance(out, RewardOutput) and out.is_dense
        results, at = [], 0
        for payload in payloads:
            n = len(payload[1])
            part = {"values": list(out[at : at + n]) if not isinstance(out, RewardOutput) else out.totals[at : at + n],
                    "metrics": metrics}
            if dense:
                part["step_rewards"], part["step_ends"] = out.step_rewards[at : at + n], out.step_ends[at : at + n]
            results.append(part)
            at += n
        return results

    return run_batch


def _check_lengths(prompts: list, completions: list, columns: dict[str, list]) -> None:
    """A 422 unless there is one prompt and one value of each column per completion."""
    from fastapi import HTTPException

    if len(prompts) != len(completions):
        raise HTTPException(422, f"prompts has {len(prompts)} items but completions has {len(completions)}; send one prompt per completion")
    for name, values in columns.items():
        if len(values) != len(completions):
            raise HTTPException(422, f"columns[{name!r}] has {len(values)} values for {len(completions)} completions")


def create_app(reward: Any, spec: str = "", limits: Any = None, none_score: float = 0.0, label_column: str = "answer") -> Any:
    """A FastAPI app serving `reward` (any reward function), protected by `limits`
    (a `rewardlab.service.ServiceLimits`; default limits when None).

    >>> from rewards import build_reward
    >>> app = create_app(build_reward("format:integer"), "format:integer")
    >>> sorted(r.path for r in app.routes if r.path in ("/", "/get_reward", "/reward", "/health"))
    ['/', '/get_reward', '/health', '/reward']
    """
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, Field

    from rewardlab.service import JSONEndpoint, add_protections, batched, check_items, items_field, list_field, make_batcher

    app = FastAPI(title="rewardlab reward service", version="1")
    add_protections(app, limits)

    class BatchRequest(BaseModel):
        prompts: list[Any] = items_field(app, "prompts (strings or chat messages)")
        completions: list[Any] = items_field(app, "completions (strings or chat messages)")
        columns: dict[str, list[Any]] = Field(default_factory=dict, description="extra dataset columns, one value per completion")
    limits = app.state.limits
    merge = is_itemwise(reward)
    alone = itertools.count()  # a key of its own for each request when requests must not be merged

    batcher = make_batcher(limits, _batch_runner(reward), concurrency=1, name="reward-batcher")
    app.state.batcher = batcher

    async def scored(prompts: list, completions: list, columns: dict[str, list]) -> dict[str, Any]:
        key = ("merge", tuple(sorted(columns))) if merge else ("alone", next(alone))
        try:
            return await batched(batcher, limits, key, (prompts, completions, columns), len(completions))
        except (ValueError, TypeError) as exc:  # bad input: the reward's own message names the field
            raise HTTPException(400, str(exc)) from None

    @app.get("/health")  # async: answered on the event loop, never queued behind work in the thread pool
    async def health() -> dict[str, Any]:
        return {"status": "ok", "reward": spec}

    @app.get("/stats")
    async def stats() -> dict[str, Any]:
        """Micro-batching counters: batches, items, mean batch size, refused and expired requests."""
        return {"batching": batcher.stats(), "itemwise": merge}

    async def remote_rm(data: Any) -> dict[str, Any]:
        """OpenRLHF's request: `query` (prompt + response texts), `prompts` (optional: older
        OpenRLHF sends only `query`), `labels` (optional gold labels, given to the reward as column
        `label_column`); other fields (`metas`, ...) are ignored."""
        if not isinstance(data, dict):
            raise HTTPException(422, 'body: expected a JSON object such as {"query": [...], "prompts": [...], "labels": [...]}')
        query = list_field(app, data, "query", str, required=True)
        prompts, labels = list_field(app, data, "prompts", str), list_field(app, data, "labels")
        try:
            prompts, completions, columns = openrlhf_inputs(query, prompts, labels, {}, label_column)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        part = await scored(prompts, completions, columns)
        out = openrlhf_outputs(reward, part["values"], part["metrics"], none_score)
        out["extra_logs"] = _finite(out["extra_logs"])
        return out

    for path in ("/get_reward", "/"):  # one-item clients: a lean route, not FastAPI's request model (see JSONEndpoint)
        app.router.add_route(path, JSONEndpoint(remote_rm), methods=["POST"])

    @app.post("/reward")
    async def batch(request: BatchRequest) -> dict[str, Any]:
        check_items(app, len(request.completions))
        _check_lengths(request.prompts, request.completions, request.columns)
        part = await scored(request.prompts, request.completions, request.columns)
        body: dict[str, Any] = {"rewards": [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in part["values"]],
                                "metrics": _finite(part["metrics"])}
        if "step_rewards" in part:
            body["step_rewards"], body["step_ends"] = part["step_rewards"], part["step_ends"]
        return JSONResponse(body)

    return app
