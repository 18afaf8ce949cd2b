"""HTTP reward service: one reward spec behind two request shapes.

- OpenRLHF remote RM (`POST /get_reward`, also `POST /`):
  `{"query": [...], "prompts": [...], "labels": [...]}` -> `{"rewards": [...], "scores": [...], "extra_logs": {...}}`
  (`prompts` and `labels` optional, as older OpenRLHF versions send only `query`; extra fields such
  as `metas` are ignored)
- our batch endpoint (`POST /reward`):
  `{"prompts": [...], "completions": [...], "columns": {"answer": [...]}}` ->
  `{"rewards": [... or null], "metrics": {...}}` (+ `step_rewards`, `step_ends` for dense rewards)
- `GET /health` -> `{"status": "ok", "reward": SPEC}`

Bad requests get a 4xx answer naming the field. The protections are the verifier service's
(`verifiers.service.add_protections` with `ServiceLimits`): bearer token (401), body size (413),
items per request (413), concurrent requests (429); `/health` stays open.
Reward calls run one at a time in a worker thread (a reward keeps the metrics of its last call).
"""

# no `from __future__ import annotations`: FastAPI reads the request models from real annotations

import math
import threading
from typing import Any

from rewards.adapters import as_openrlhf_reward_func
from rewards.base import RewardOutput, reward_metrics


def _finite(metrics: dict[str, Any]) -> dict[str, float | None]:
    """JSON has no NaN: a NaN metric (e.g. an accuracy over zero items) becomes null."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in metrics.items()}


def create_app(reward: Any, spec: str = "", limits: Any = None, none_score: float = 0.0, label_column: str = "answer") -> Any:
    """A FastAPI app serving `reward` (any reward function), protected by `limits`
    (a `verifiers.service.ServiceLimits`; default limits when None).

    >>> from rewards import build_reward
    >>> app = create_app(build_reward("format:integer"), "format:integer")
    >>> sorted(r.path for r in app.routes if r.path in ("/", "/get_reward", "/reward", "/health"))
    ['/', '/get_reward', '/health', '/reward']
    """
    from fastapi import FastAPI, HTTPException
    from pydantic import BaseModel, Field

    from verifiers.service import add_protections, check_items, items_field

    app = FastAPI(title="rewardlab reward service", version="1")
    add_protections(app, limits)

    class OpenRLHFRequest(BaseModel):
        query: list[str] = items_field(app, "prompt + response texts")
        prompts: list[str] | None = Field(None, max_length=app.state.limits.max_items,
                                          description="the prompt of each query (older OpenRLHF sends only `query`)")
        labels: list[Any] | None = Field(None, max_length=app.state.limits.max_items,
                                         description="gold labels, given to the reward as column `answer` (the types it expects)")

    class BatchRequest(BaseModel):
        prompts: list[Any] = items_field(app, "prompts (strings or chat messages)")
        completions: list[Any] = items_field(app, "completions (strings or chat messages)")
        columns: dict[str, list[Any]] = Field(default_factory=dict, description="extra dataset columns, one value per completion")
    lock = threading.Lock()
    openrlhf = as_openrlhf_reward_func(reward, label_column=label_column, none_score=none_score)

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            with lock:
                return fn(*args, **kwargs)
        except (ValueError, TypeError) as exc:  # bad input: the reward's own message names the field
            raise HTTPException(400, str(exc)) from None

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "reward": spec}

    def remote_rm(request: OpenRLHFRequest) -> dict[str, Any]:
        check_items(app, len(request.query))
        out = call(openrlhf, request.query, request.prompts, request.labels)
        out["extra_logs"] = _finite(out["extra_logs"])
        return out

    app.post("/get_reward")(remote_rm)
    app.post("/")(remote_rm)

    @app.post("/reward")
    def batch(request: BatchRequest) -> dict[str, Any]:
        check_items(app, len(request.completions))
        if len(request.prompts) != len(request.completions):
            raise HTTPException(422, f"prompts has {len(request.prompts)} items but completions has {len(request.completions)}; send one prompt per completion")
        for name, values in request.columns.items():
            if len(values) != len(request.completions):
                raise HTTPException(422, f"columns[{name!r}] has {len(values)} values for {len(request.completions)} completions")

        def run() -> dict[str, Any]:
            out = reward(request.prompts, request.completions, **request.columns)
            body: dict[str, Any] = {"rewards": [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in out],
                                    "metrics": _finite(reward_metrics(reward))}
            if isinstance(out, RewardOutput) and out.is_dense:
                body["step_rewards"], body["step_ends"] = out.step_rewards, out.step_ends
            return body

        return call(run)

    return app
