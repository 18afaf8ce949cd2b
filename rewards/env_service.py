"""HTTP environment service (`rewardlab serve-env --env SPEC`): an environment of
`rewards.environments` behind NeMo Gym's resource-server shape, sessions included.

    POST /seed_session {"task": {row}, "session_id"?}  -> {"session_id", "observation"}   (a fresh episode)
    POST /reset        (the same, gym-style)
    POST /step         {"session_id", "message"}       -> {"observation", "reward", "done", "tool_call", "tool_error"}
    POST /<tool>       {"session_id", <arguments>}      -> {"output"}   (each of the environment's tools, e.g. /calculator)
    POST /verify       {"session_id", "response" | "message"} -> {"session_id", "reward"}  (the final answer; the session ends)
    POST /close_session {"session_id"}                 -> {"closed"}
    GET  /health                                       -> {"status", "env", "sessions"}

`/verify` takes the policy's final answer as NeMo Gym sends it (an OpenAI Responses object, whose
last assistant message is the answer) or as plain text (`message`), hands it to the environment as
its final message and returns the environment's `reward()`: the reward reads what the policy wrote,
never the tool results. The session id also comes back as a cookie (`rewardlab_session`), so a
client that keeps cookies (NeMo Gym's) need not send it.

Protections: the other services' (`rewardlab.service.add_protections`: bearer token 401, body size
413, headers 431, requests in flight 429 + Retry-After), plus sessions: at most `max_sessions` open
(503 + Retry-After past it: backpressure, a client retries), idle ones closed after `session_ttl`
seconds, one call at a time per session (409 while one runs), an unknown or closed session 404.
"""

# no `from __future__ import annotations`: FastAPI reads the request models from real annotations

import inspect
import secrets
import threading
import time
from typing import Any, Callable, Optional

COOKIE = "rewardlab_session"


class Sessions:
    """Open episodes by id, each with its environment, a lock and its last use."""

    def __init__(self, factory: Callable[[], Any], max_sessions: int, ttl: float) -> None:
        self.factory, self.max_sessions, self.ttl = factory, max_sessions, ttl
        self.open: dict[str, list] = {}  # id -> [env, lock, last used]
        self.guard = threading.Lock()

    def seed(self, session_id: Optional[str]) -> tuple[str, Any]:
        with self.guard:
            self._expire()
            if session_id not in self.open and len(self.open) >= self.max_sessions:
                raise OverflowError(f"{len(self.open)} sessions are open, the limit (--max-sessions); close finished ones "
                                    "(/verify or /close_session) or retry later")
            session_id = session_id or secrets.token_urlsafe(16)
            env = self.factory()
            self.open[session_id] = [env, threading.Lock(), time.monotonic()]
            return session_id, env

    def get(self, session_id: Optional[str]) -> list:
        with self.guard:
            self._expire()
            entry = self.open.get(session_id or "")
            if entry is None:
                raise KeyError(f"no open session {session_id!r}: seed one with /seed_session (sessions end at /verify, "
                               f"/close_session, or after {self.ttl:g} s idle)")
            entry[2] = time.monotonic()
            return entry

    def close(self, session_id: Optional[str]) -> bool:
        with self.guard:
            return self.open.pop(session_id or "", None) is not None

    def _expire(self) -> None:
        now = time.monotonic()
        for key in [k for k, (_, lock, used) in self.open.items() if now - used > self.ttl and not lock.locked()]:
            del self.open[key]


def _final_text(response: Any) -> str:
    """The last assistant message's text of an OpenAI Responses object (`output` items of type
    `message` with `output_text` parts), or of a chat completion (`choices[0].message.content`)."""
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        raise ValueError("response must be an OpenAI Responses object (with `output`), a chat completion or a string")
    if "output" in response:
        texts = []
        for item in response.get("output") or []:
            if isinstance(item, dict) and item.get("type") == "message" and item.get("role", "assistant") == "assistant":
                parts = item.get("content") or []
                texts = [p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") in ("output_text", "text")]
        return "".join(texts)
    if "choices" in response:
        return ((response.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
    raise ValueError("response has neither `output` (Responses API) nor `choices` (chat completions)")


def _request_models() -> tuple:
    """The request bodies of /seed_session and /reset, /step, /verify, /close_session."""
    from pydantic import BaseModel, Field

    class SeedRequest(BaseModel):
        task: dict[str, Any] = Field(default_factory=dict, description="the dataset row (prompt, answer, ...)")
        session_id: Optional[str] = Field(None, max_length=128, description="a caller-assigned id (default: a new one)")

    class StepRequest(BaseModel):
        session_id: Optional[str] = Field(None, max_length=128)
        message: str = Field(..., description="the policy's message")

    class VerifyRequest(BaseModel):
        session_id: Optional[str] = Field(None, max_length=128)
        response: Any = Field(None, description="the final answer as an OpenAI Responses object (NeMo Gym) or a chat completion")
        message: Optional[str] = Field(None, description="... or as plain text")

    class SessionRequest(BaseModel):
        session_id: Optional[str] = Field(None, max_length=128)

    return SeedRequest, StepRequest, VerifyRequest, SessionRequest


def _locked(entry: list, work: Callable[[Any], Any]) -> Any:
    """`work(env)` on a session's environment, one call at a time (409 for a second); the
    environment's ValueError / TypeError is a 400 with its message."""
    from fastapi import HTTPException

    if not entry[1].acquire(blocking=False):
        raise HTTPException(409, "a call of this session is still running; an episode takes one call at a time")
    try:
        return work(entry[0])
    except (ValueError, TypeError) as exc:  # the environment's own message names what was wrong
        raise HTTPException(400, str(exc)) from None
    finally:
        entry[1].release()


def _finish_episode(env: Any, text: str) -> Optional[float]:
    """The final answer as the last step, then the episode's reward."""
    from rewards.environments import final_reward, run_step

    run_step(env, text)
    return final_reward(env)


def create_env_app(factory: Callable[[], Any], spec: str = "", limits: Any = None, max_sessions: int = 1024,
                   session_ttl: float = 600.0) -> Any:
    """A FastAPI app serving the environments `factory` makes (module docstring).

    >>> from rewards.environments import build_env
    >>> app = create_env_app(build_env("calculator"), "calculator")
    >>> sorted(r.path for r in app.routes if r.methods and "POST" in r.methods)
    ['/calculator', '/close_session', '/reset', '/seed_session', '/step', '/verify']
    """
    from fastapi import FastAPI, HTTPException, Request, Response

    from rewards.environments import resolve, run_step
    from rewardlab.service import add_protections

    app = FastAPI(title="rewardlab environment service", version="1")
    add_protections(app, limits)
    sessions = Sessions(factory, max_sessions, session_ttl)
    app.state.sessions = sessions

    SeedRequest, StepRequest, VerifyRequest, SessionRequest = _request_models()

    def session_of(body_id: Optional[str], request: Request) -> list:
        try:
            return sessions.get(body_id or request.cookies.get(COOKIE))
        except KeyError as exc:
            raise HTTPException(404, str(exc.args[0])) from None

    def seed(request: SeedRequest, response: Response) -> dict[str, Any]:
        try:
            session_id, env = sessions.seed(request.session_id)
        except OverflowError as exc:
            raise HTTPException(503, str(exc), headers={"Retry-After": "1"}) from None
        try:
            observation = resolve(env.reset(dict(request.task)))
        except (ValueError, KeyError, TypeError) as exc:
            sessions.close(session_id)
            raise HTTPException(400, f"task: {exc}") from None
        response.set_cookie(COOKIE, session_id, httponly=True, samesite="strict")
        return {"session_id": session_id, "observation": observation}

    app.post("/seed_session")(seed)
    app.post("/reset")(seed)

    @app.post("/step")
    def step(request: StepRequest, http: Request) -> dict[str, Any]:
        entry = session_of(request.session_id, http)
        turn = _locked(entry, lambda env: run_step(env, request.message))
        return {"observation": turn.observation, "reward": turn.reward, "done": turn.done, "tool_call": turn.tool_call,
                "tool_error": turn.tool_error}

    @app.post("/verify")
    def verify(request: VerifyRequest, http: Request) -> dict[str, Any]:
        session_id = request.session_id or http.cookies.get(COOKIE)
        entry = session_of(session_id, http)
        if request.message is None and request.response is None:
            raise HTTPException(422, "send the final answer as `response` (an OpenAI Responses object) or `message` (text)")
        try:
            text = request.message if request.message is not None else _final_text(request.response)
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None

        reward = _locked(entry, lambda env: _finish_episode(env, text))
        sessions.close(session_id)
        return {"session_id": session_id, "reward": reward}

    @app.post("/close_session")
    def close(request: SessionRequest, http: Request) -> dict[str, Any]:
        return {"closed": sessions.close(request.session_id or http.cookies.get(COOKIE))}

    probe = factory()
    for tool in (probe.tools() if callable(getattr(probe, "tools", None)) else []):
        app.post(f"/{tool.__name__}")(_tool_endpoint(tool.__name__, inspect.signature(tool), session_of, _locked))

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "env": spec, "sessions": len(sessions.open)}

    return app


def _tool_endpoint(name: str, signature: inspect.Signature, session_of: Any, locked: Any) -> Any:
    """POST /<tool>: {"session_id", <the tool's arguments>} -> {"output"}; unknown or missing
    arguments are a 422 naming them."""
    from fastapi import HTTPException, Request

    params = [p for p in signature.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    required = {p.name for p in params if p.default is p.empty}

    async def endpoint(http: Request) -> dict[str, Any]:
        try:
            body = await http.json()
        except ValueError:
            raise HTTPException(422, "the body must be a JSON object of the tool's arguments") from None
        if not isinstance(body, dict):
            raise HTTPException(422, "the body must be a JSON object of the tool's arguments")
        session_id = body.pop("session_id", None)
        unknown, missing = sorted(set(body) - {p.name for p in params}), sorted(required - set(body))
        if unknown or missing:
            raise HTTPException(422, f"{name}: " + "; ".join(
                ([f"unknown argument(s) {unknown}"] if unknown else []) + ([f"missing argument(s) {missing}"] if missing else []))
                + f"; it takes {[p.name for p in params]}")
        entry = session_of(session_id, http)
        from starlette.concurrency import run_in_threadpool

        output = await run_in_threadpool(locked, entry, lambda env: getattr(env, name)(**body))
        return {"output": output}

    endpoint.__name__ = f"tool_{name}"
    return endpoint
