"""HTTP environment service (`rewardlab serve-env --env SPEC`): an environment of
`rewards.environments` behind NeMo Gym's resource-server shape, sessions included.

    POST /seed_session {"task": {row}, "session_id"?}  -> {"session_id", "observation"}   (a fresh episode)
                       or NeMo Gym's shape: the row's fields at the top level, beside `responses_create_params`
    POST /reset        (the same, gym-style)
    POST /step         {"session_id", "message"}       -> {"observation", "reward", "done", "tool_call", "tool_error"}
    POST /<tool>       {"session_id", <arguments>}      -> {"output"}   (each of the environment's tools, e.g. /calculator)
    POST /verify       {"session_id", "response" | "message"} -> {"session_id", "reward"}  (the final answer; the session ends)
                       or NeMo Gym's `BaseVerifyRequest` -> its `BaseVerifyResponse` (the request's fields + `reward`)
    POST /close_session {"session_id"}                 -> {"closed"}
    GET  /health                                       -> {"status", "env", "sessions"}

`/verify` takes the policy's final answer as NeMo Gym sends it (an OpenAI Responses object, whose
last assistant message is the answer) or as plain text (`message`), hands it to the environment as
its final message and returns the environment's `reward()`: the reward reads what the policy wrote,
never the tool results. `/step` is the gym-style way through the same episode: the step that ends
it answers `done: true` with the episode's reward (that turn's own reward + the environment's
final one; `null` when not applicable) and ends the session. The session id also comes back as a
cookie (`rewardlab_session`, set again on every answer, as NeMo Gym's agents keep the cookies of
the last answer), so a client that keeps cookies need not send it.

An episode is judged once: one budget per episode across `/step` and the tools (the environment's
own), a finished episode answers 409 to every later call (its reward in the message) and is never
re-judged, and a session id that is open, or ended within `session_ttl`, cannot be seeded again
(409): a client cannot reset another's episode or its own budget. Bodies are JSON objects (a body
that is not - wrong content type, bad JSON, a field of the wrong type, a malformed Responses
object - is a 4xx naming what was wrong, never a 500).

Protections: the other services' (`rewardlab.service.add_protections`: bearer token 401, body size
413, headers 431, requests in flight 429 + Retry-After), plus sessions: at most `max_sessions` open
(503 + Retry-After past it: backpressure, a client retries), idle ones closed after `session_ttl`
seconds, one call at a time per session (409 while one runs), an unknown session 404.
"""

# no `from __future__ import annotations`: FastAPI reads the endpoints' annotations

import inspect
import json
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Optional

COOKIE = "rewardlab_session"
MAX_SESSION_ID = 128  # characters
JSON_HINT = "send a JSON object with Content-Type: application/json"


class EpisodeFinished(Exception):
    """A call for a session whose episode has ended (409)."""


class OpenSession:
    """One open session: its environment, a lock (one call at a time) and its last use."""

    def __init__(self, env: Any) -> None:
        self.env, self.lock, self.used = env, threading.Lock(), time.monotonic()
        self.over = False  # the episode has ended (set under the lock, so no call slips in before the session ends)


class Sessions:
    """Open episodes by id, and the ids of ended ones (kept `ttl` seconds, so that no id is
    seeded twice while a client may still hold it)."""

    def __init__(self, factory: Callable[[], Any], max_sessions: int, ttl: float) -> None:
        self.factory, self.max_sessions, self.ttl = factory, max_sessions, ttl
        self.open: dict[str, OpenSession] = {}
        self.ended: "OrderedDict[str, tuple[float, Optional[float], str]]" = OrderedDict()  # id -> (when, reward, how)
        self.guard = threading.Lock()

    def seed(self, session_id: Optional[str]) -> tuple[str, Any]:
        with self.guard:
            self._expire()
            if session_id is not None and (session_id in self.open or session_id in self.ended):
                raise EpisodeFinished(f"session {session_id!r} is {'open' if session_id in self.open else 'ended'}; a session "
                                      "id is seeded once (leave session_id out for a fresh one)")
            if len(self.open) >= self.max_sessions:
                raise OverflowError(f"{len(self.open)} sessions are open, the limit (--max-sessions); close finished ones "
                                    "(/verify or /close_session) or retry later")
            session_id = session_id or secrets.token_urlsafe(16)
            env = self.factory()
            self.open[session_id] = OpenSession(env)
            return session_id, env

    def get(self, session_id: Optional[str]) -> OpenSession:
        with self.guard:
            self._expire()
            key = session_id or ""
            if key in self.ended:
                _, reward, how = self.ended[key]
                raise EpisodeFinished(f"session {session_id!r} has ended ({how}" + (f", reward {reward:g}" if reward is not None
                                      else "") + "); an episode is judged once: seed a new session for another")
            entry = self.open.get(key)
            if entry is None:
                raise KeyError(f"no open session {session_id!r}: seed one with /seed_session (sessions end at /verify, "
                               f"/close_session, the step that ends the episode, or after {self.ttl:g} s idle)")
            entry.used = time.monotonic()
            return entry

    def end(self, session_id: Optional[str], reward: Optional[float] = None, how: str = "closed") -> bool:
        with self.guard:
            entry = self.open.pop(session_id or "", None)
            if entry is not None:
                self.ended[session_id] = (time.monotonic(), reward, how)
                while len(self.ended) > 16 * self.max_sessions:  # ids of ended sessions are kept, within a bound
                    self.ended.popitem(last=False)
            return entry is not None

    def _expire(self) -> None:
        now = time.monotonic()
        for key in [k for k, e in self.open.items() if now - e.used > self.ttl and not e.lock.locked()]:
            del self.open[key]
            self.ended[key] = (now, None, "expired")
        while self.ended and now - next(iter(self.ended.values()))[0] > self.ttl:
            self.ended.popitem(last=False)


def _final_text(response: Any) -> str:
    """The last assistant message's text of an OpenAI Responses object (`output` items of type
    `message` with `output_text` parts), or of a chat completion (`choices[0].message.content`);
    ValueError naming the first malformed field. No assistant message is an empty answer.

    >>> _final_text({"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "7"}]}]})
    '7'
    >>> _final_text({"output": [{"type": "message", "content": [{"type": "output_text", "text": 7}]}]})
    Traceback (most recent call last):
    ...
    ValueError: response.output[0].content[0].text must be a string, got a number
    """
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        raise ValueError(f"response must be an OpenAI Responses object (with `output`), a chat completion or a string, "
                         f"got {_json_type(response)}")
    if "output" in response:
        text = ""
        for i, item in enumerate(_typed(response["output"], list, "response.output")):
            item = _typed(item, dict, f"response.output[{i}]")
            if item.get("type") != "message" or item.get("role", "assistant") != "assistant":
                continue
            content = item.get("content")
            if isinstance(content, str):
                text = content
                continue
            parts = [_typed(p, dict, f"response.output[{i}].content[{j}]")
                     for j, p in enumerate(_typed(content, list, f"response.output[{i}].content"))]
            text = "".join(_typed(p.get("text"), str, f"response.output[{i}].content[{j}].text")
                           for j, p in enumerate(parts) if p.get("type") in ("output_text", "text"))
        return text
    if "choices" in response:
        choices = _typed(response["choices"], list, "response.choices")
        if not choices:
            return ""
        message = _typed(_typed(choices[0], dict, "response.choices[0]").get("message"), dict, "response.choices[0].message")
        content = message.get("content")
        return "" if content is None else _typed(content, str, "response.choices[0].message.content")
    raise ValueError("response has neither `output` (Responses API) nor `choices` (chat completions)")


def _typed(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind):
        raise ValueError(f"{where} must be {_json_type(kind())}, got {_json_type(value)}")
    return value


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


async def read_object(request: Any) -> dict:
    """The request's JSON object; ValueError (a 4xx message) for anything else, naming the fix."""
    content_type = request.headers.get("content-type", "")
    raw = await request.body()
    if content_type and "json" not in content_type.split(";")[0].lower():
        raise ValueError(f"the body is {content_type.split(';')[0]!r}, not JSON: {JSON_HINT}")
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"the body is not valid JSON ({str(exc)[:120]}): {JSON_HINT}") from None
    except RecursionError:
        raise ValueError(f"the body's JSON is nested too deeply: {JSON_HINT}") from None
    if not isinstance(body, dict):
        raise ValueError(f"the body must be a JSON object, got {_json_type(body)}: {JSON_HINT}")
    return body


def _session_id(body: dict, request: Any) -> Optional[str]:
    value = body.get("session_id")
    if value is None:
        return request.cookies.get(COOKIE)
    if not isinstance(value, str) or not value or len(value) > MAX_SESSION_ID:
        raise ValueError(f"session_id must be a non-empty string of at most {MAX_SESSION_ID} characters, got {_json_type(value)}")
    return value


def seed_row(body: dict) -> dict:
    """The dataset row a /seed_session body carries: `task` (this project's shape), else its
    top-level fields (NeMo Gym's: the row's fields beside `responses_create_params`, whose `input`
    becomes the `prompt` when the row has none).

    >>> seed_row({"task": {"answer": "3"}, "session_id": "a"})
    {'answer': '3'}
    >>> seed_row({"responses_create_params": {"input": "1+2="}, "answer": "3"})
    {'answer': '3', 'prompt': '1+2='}
    """
    if "responses_create_params" not in body and "task" in body:
        return dict(_typed(body["task"], dict, "task"))
    row = {k: v for k, v in body.items() if k not in ("session_id", "responses_create_params")}
    params = body.get("responses_create_params")
    if isinstance(params, dict) and "prompt" not in row and params.get("input") is not None:
        row["prompt"] = params["input"]
    return row


def _session_helpers(sessions: "Sessions") -> tuple:
    """(answer, parsed, session_of, locked): the plumbing every endpoint of create_env_app shares."""
    from fastapi import HTTPException, Request
    from fastapi.responses import JSONResponse

    from rewards.environments import EpisodeOver

    def answer(content: dict, session_id: Optional[str]) -> Any:
        reply = JSONResponse(content)
        if session_id:
            reply.set_cookie(COOKIE, session_id, httponly=True, samesite="strict")
        return reply

    async def parsed(request: Request) -> dict:
        try:
            return await read_object(request)
        except ValueError as exc:
            status = 415 if "not JSON" in str(exc) else 422
            raise HTTPException(status, f"{request.url.path}: {exc}") from None

    def session_of(body: dict, request: Request) -> tuple[str, OpenSession]:
        try:
            session_id = _session_id(body, request)
            return session_id, sessions.get(session_id)
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        except KeyError as exc:
            raise HTTPException(404, str(exc.args[0])) from None
        except EpisodeFinished as exc:
            raise HTTPException(409, str(exc)) from None

    def locked(entry: OpenSession, work: Callable[[Any], Any]) -> Any:
        if not entry.lock.acquire(blocking=False):
            raise HTTPException(409, "a call of this session is still running; an episode takes one call at a time")
        try:
            if entry.over:
                raise EpisodeOver("the episode is over; an episode is judged once: seed a new session for another")
            return work(entry.env)
        except EpisodeOver as exc:
            raise HTTPException(409, str(exc)) from None
        except (ValueError, TypeError) as exc:  # the environment's own message names what was wrong
            raise HTTPException(400, str(exc)) from None
        finally:
            entry.lock.release()

    return answer, parsed, session_of, locked


def _seed_route(sessions: "Sessions", helpers: tuple) -> Any:
    """POST /seed_session and /reset: a new episode from the body's task."""
    from fastapi import HTTPException, Request
    from starlette.concurrency import run_in_threadpool

    from rewards.environments import resolve

    answer, parsed, session_of, locked = helpers

    async def seed(http: Request) -> Any:
        body = await parsed(http)
        try:
            requested = body.get("session_id")
            if requested is not None and (not isinstance(requested, str) or not requested or len(requested) > MAX_SESSION_ID):
                raise ValueError(f"session_id must be a non-empty string of at most {MAX_SESSION_ID} characters")
            row = seed_row(body)
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        try:
            session_id, env = sessions.seed(requested)
        except EpisodeFinished as exc:
            raise HTTPException(409, str(exc)) from None
        except OverflowError as exc:
            raise HTTPException(503, str(exc), headers={"Retry-After": "1"}) from None
        try:
            observation = await run_in_threadpool(lambda: resolve(env.reset(row)))
        except (ValueError, KeyError, TypeError) as exc:
            with sessions.guard:
                sessions.open.pop(session_id, None)  # never started: the id may be seeded again
            raise HTTPException(400, f"task: {exc}") from None
        return answer({"session_id": session_id, "observation": observation}, session_id)

    return seed


def _step_route(sessions: "Sessions", helpers: tuple) -> Any:
    """POST /step: one policy message; the last step carries the episode's reward."""
    from fastapi import HTTPException, Request
    from starlette.concurrency import run_in_threadpool

    from rewards.environments import final_reward, run_step

    answer, parsed, session_of, locked = helpers

    async def step(http: Request) -> Any:
        body = await parsed(http)
        message = body.get("message")
        if not isinstance(message, str):
            raise HTTPException(422, f"message: the policy's message must be a string, got {_json_type(message)}")
        session_id, entry = session_of(body, http)

        def work(env: Any) -> tuple[Any, Optional[float]]:
            turn = run_step(env, message)
            if not turn.done:
                return turn, turn.reward
            entry.over = True
            final = final_reward(env)  # the episode's reward comes with its last step
            return turn, None if final is None else final + (turn.reward or 0.0)

        turn, reward = await run_in_threadpool(locked, entry, work)
        if turn.done:
            sessions.end(session_id, reward, "done")
        return answer({"observation": turn.observation, "reward": reward, "done": turn.done, "tool_call": turn.tool_call,
                       "tool_error": turn.tool_error}, session_id)

    return step


def _verify_route(sessions: "Sessions", helpers: tuple) -> Any:
    """POST /verify: the final answer, judged once; NeMo Gym's BaseVerifyResponse shape when asked."""
    from fastapi import HTTPException, Request
    from starlette.concurrency import run_in_threadpool

    from rewards.environments import final_reward, run_step

    answer, parsed, session_of, locked = helpers

    async def verify(http: Request) -> Any:
        body = await parsed(http)
        session_id, entry = session_of(body, http)
        try:
            if body.get("message") is None and body.get("response") is None:
                raise ValueError("send the final answer as `response` (an OpenAI Responses object) or `message` (text)")
            if body.get("message") is not None:
                text = _typed(body["message"], str, "message")
            else:
                text = _final_text(body["response"])
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None

        def finish(env: Any) -> Optional[float]:
            entry.over = True
            run_step(env, text)
            return final_reward(env)

        try:
            reward = await run_in_threadpool(locked, entry, finish)
        except HTTPException:
            if entry.over:  # the answer was taken but could not be judged: the episode still ends
                sessions.end(session_id, None, "failed")
            raise
        sessions.end(session_id, reward, "verified")
        out = {"session_id": session_id, "reward": reward}
        if "responses_create_params" in body:  # NeMo Gym's BaseVerifyResponse: the request's fields and the reward
            out = {**{k: v for k, v in body.items() if k != "session_id"}, **out}
        return answer(out, session_id)

    return verify


def _close_route(sessions: "Sessions", helpers: tuple) -> Any:
    """POST /close_session."""
    from fastapi import HTTPException, Request


    answer, parsed, session_of, locked = helpers

    async def close(http: Request) -> Any:
        body = await parsed(http)
        try:
            session_id = _session_id(body, http)
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        return {"closed": sessions.end(session_id)}

    return close


def create_env_app(factory: Callable[[], Any], spec: str = "", limits: Any = None, max_sessions: int = 1024,
                   session_ttl: float = 600.0) -> Any:
    """A FastAPI app serving the environments `factory` makes (module docstring).

    >>> from rewards.environments import build_env
    >>> app = create_env_app(build_env("calculator"), "calculator")
    >>> sorted(r.path for r in app.routes if r.methods and "POST" in r.methods)
    ['/calculator', '/close_session', '/reset', '/seed_session', '/step', '/verify']
    """
    from fastapi import FastAPI

    from rewardlab.service import add_protections

    app = FastAPI(title="rewardlab environment service", version="1")
    add_protections(app, limits)
    sessions = Sessions(factory, max_sessions, session_ttl)
    app.state.sessions = sessions

    helpers = _session_helpers(sessions)
    answer, parsed, session_of, locked = helpers
    seed = _seed_route(sessions, helpers)
    app.post("/seed_session")(seed)
    app.post("/reset")(seed)
    app.post("/step")(_step_route(sessions, helpers))
    app.post("/verify")(_verify_route(sessions, helpers))
    app.post("/close_session")(_close_route(sessions, helpers))

    probe = factory()
    for tool in (probe.tools() if callable(getattr(probe, "tools", None)) else []):
        app.post(f"/{tool.__name__}")(_tool_endpoint(tool.__name__, inspect.signature(tool), parsed, session_of, locked, answer))

    @app.get("/health")  # async: answered on the event loop, never queued behind work in the thread pool
    async def health() -> dict[str, Any]:
        return {"status": "ok", "env": spec, "sessions": len(sessions.open)}

    return app


def _tool_endpoint(name: str, signature: inspect.Signature, parsed: Any, session_of: Any, locked: Any, answer: Any) -> Any:
    """POST /<tool>: {"session_id", <the tool's arguments>} -> {"output"}; unknown or missing
    arguments are a 422 naming them."""
    from fastapi import HTTPException, Request
    from starlette.concurrency import run_in_threadpool

    params = [p for p in signature.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    required = {p.name for p in params if p.default is p.empty}

    async def endpoint(http: Request) -> Any:
        body = await parsed(http)
        arguments = {k: v for k, v in body.items() if k != "session_id"}
        unknown, missing = sorted(set(arguments) - {p.name for p in params}), sorted(required - set(arguments))
        if unknown or missing:
            raise HTTPException(422, f"{name}: " + "; ".join(
                ([f"unknown argument(s) {unknown}"] if unknown else []) + ([f"missing argument(s) {missing}"] if missing else []))
                + f"; it takes {[p.name for p in params]}")
        session_id, entry = session_of(body, http)
        output = await run_in_threadpool(locked, entry, lambda env: getattr(env, name)(**arguments))
        return answer({"output": output}, session_id)

    endpoint.__name__ = f"tool_{name}"
    return endpoint
