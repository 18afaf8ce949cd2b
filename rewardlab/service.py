"""HTTP service plumbing every rewardlab service shares (`serve-verifier`, `serve-reward`).

`add_protections(app, ServiceLimits(...))` puts one ASGI middleware in front of any app:
request headers' count and size (431, on every path), the `Host` header (400 unless a loopback name,
an IP address, or one of `allowed_hosts`, on every path: a web page that rebinds its own domain
name to 127.0.0.1 sends that name), bearer token (401; `Authorization: Bearer T` or, for clients
that cannot set headers, `?token=T`, removed from the request before it is logged), the body's
content type (415 unless `application/json`: a web page's simple cross-site POST cannot send it),
request body size (413),
a deadline for receiving the body (408; the body is read before the request takes one of the
concurrency slots, which are for work), requests in flight (429 with `Retry-After` past
`max_concurrent`); `/health` stays open. Request models cap their item lists at `max_items`
(`items_field`, `check_items`), so an oversized batch is a 413 before any item is validated;
validation errors are a compact 422 naming each field, never echoing the input (NaN or a million
items included). `make_batcher` / `batched`: the micro-batching queue (`rewardlab.batching`) with
its HTTP answers (503 + `Retry-After` when full, 504 past the request deadline).

>>> ServiceLimits(max_items=10).max_items
10
>>> ServiceLimits(max_items=0)
Traceback (most recent call last):
...
ValueError: ServiceLimits.max_items must be a positive finite number, got 0
"""

# no `from __future__ import annotations`: FastAPI reads the request models from real annotations

import dataclasses
import asyncio
import hmac
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from rewardlab.config import check_fields, opt

TOKEN_ENV = "REWARDLAB_SERVICE_TOKEN"
LOOPBACK = ("127.0.0.1", "localhost", "::1")  # loopback names: always accepted in the Host header
WILDCARD = ("0.0.0.0", "::", "")  # listening on every interface


@dataclass(frozen=True)
class ServiceLimits:
    """Protections of a rewardlab HTTP service."""

    max_body_bytes: int = field(default=16 << 20, metadata={"help": "largest request body (413 past it)"})
    max_items: int = field(default=4096, metadata={"help": "most items in one request (413 past it)"})
    max_concurrent: int = field(default=1024, metadata={"help": "requests in flight at once, queued or being scored (429 past it)"})
    token: Optional[str] = field(
        default=None, metadata={"help": f"bearer token required on every path but the open ones (None: ${TOKEN_ENV} if set)"}
    )
    open_paths: tuple = field(default=("/health",), metadata={"help": "paths served without a token or limits"})
    max_timeout: Optional[float] = field(
        default=None, metadata={"help": "largest per-item timeout a client may ask for (None: the service's own for the kind)"}
    )
    body_timeout: float = field(default=10.0, metadata={"help": "seconds a client has to send its whole body (408 past it)"})
    batch_items: int = field(default=256, metadata={"help": "most items scored in one micro-batch (requests gathered together)"})
    batch_wait: float = field(default=0.005, metadata={"help": "seconds the first queued request waits for others to join its batch"})
    max_queue: int = field(default=16384, metadata={"help": "items waiting to be scored; a request past it gets 503 + Retry-After"})
    request_timeout: float = field(default=120.0, metadata={"help": "deadline of a request in seconds, queue included (504 past it)"})
    max_header_bytes: int = field(default=32 << 10, metadata={"help": "bytes of all request headers, names and values (431 past it)"})
    max_headers: int = field(default=100, metadata={"help": "number of request headers (431 past it)"})
    allowed_hosts: tuple = field(default=(), metadata={"help": "names accepted in the Host header besides loopback names and IP "
                                                                  "addresses ('*': any; a DNS-rebinding web page sends its own name)"})

    def __post_init__(self) -> None:
        if isinstance(self.batch_wait, bool) or not isinstance(self.batch_wait, (int, float)) or not (math.isfinite(self.batch_wait) and self.batch_wait >= 0):
            raise ValueError(f"ServiceLimits.batch_wait must be a finite number of seconds >= 0, got {self.batch_wait!r}")
        for name in ("max_body_bytes", "max_items", "max_concurrent", "max_timeout", "body_timeout", "batch_items", "max_queue",
                     "request_timeout", "max_header_bytes", "max_headers"):
            value = getattr(self, name)
            if value is None and name == "max_timeout":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"ServiceLimits.{name} must be a positive finite number, got {value!r}")
        if self.token is not None and not self.token.strip():
            raise ValueError("ServiceLimits.token must not be empty (use None for no token)")
        if isinstance(self.allowed_hosts, str) or not all(isinstance(h, str) and h.strip() for h in self.allowed_hosts):
            raise ValueError(f"ServiceLimits.allowed_hosts must be a tuple of host names, got {self.allowed_hosts!r}")


def host_name(header: str) -> str:
    """The name in a `Host` header, lower case, without its port or trailing dot.

    >>> [host_name(h) for h in ("LocalHost:8000", "[::1]:80", "127.0.0.1", "example.com.")]
    ['localhost', '::1', '127.0.0.1', 'example.com']
    """
    header = header.strip().lower()
    if header.startswith("["):
        header = header[1:].partition("]")[0]
    elif header.count(":") == 1:
        header = header.partition(":")[0]
    return header.rstrip(".")


def _is_ip(name: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_allowed(header: str, allowed: tuple = ()) -> bool:
    """Whether a request's `Host` header names this service: a loopback name, an IP address (DNS
    rebinding needs a name the attacker's DNS answers for, so an address literal cannot carry it),
    or one of `allowed` ("*" allows any).

    >>> [host_allowed(h) for h in ("localhost:8000", "10.0.0.7:8000", "attacker.example:8000")]
    [True, True, False]
    >>> host_allowed("node17.cluster:8000", ("node17.cluster",))
    True
    """
    name = host_name(header)
    return "*" in allowed or name in LOOPBACK or _is_ip(name) or name in {host_name(h) for h in allowed}


def _media_type(value: str) -> str:
    return value.partition(";")[0].strip().lower()


BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


@dataclass(frozen=True)
class ServiceConfig:
    """The HTTP settings of every `serve-*` command (a piece of its config: flat on the command line)."""

    host: str = opt("127.0.0.1", "interface to listen on (0.0.0.0 exposes it to the network: use --token)")
    port: int = opt(8000, "TCP port")
    token: Optional[str] = opt(None, "bearer token clients must send (default: $REWARDLAB_SERVICE_TOKEN, else a random one printed at start)")
    no_token: bool = opt(False, "serve without a token: every local user (and web page) that can reach the port may call it")
    allowed_hosts: list[str] = opt([], "names clients may use in the Host header besides loopback names, IP addresses and --host (repeatable)")
    max_body_kb: int = opt(16 * 1024, "largest request body in KiB (413 past it)", ge=1)
    max_concurrent: int = opt(1024, "requests in flight at once, queued or being scored (429 + Retry-After past it)", ge=1)
    body_timeout: float = opt(10.0, "seconds a client has to send its request body (408 past it)", seconds=True)
    max_header_kb: int = opt(32, "largest total size of a request's headers in KiB (431 past it)", ge=1)
    max_headers: int = opt(100, "most headers in one request (431 past it)", ge=1)
    log_level: str = opt("info", "uvicorn log level", choices=LOG_LEVELS)

    def check_service(self) -> None:
        check_fields(self, ServiceConfig)
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be in 1..65535, got {self.port}")
        if self.token is not None and not self.token.strip():
            raise ValueError("--token must not be empty")
        if self.token is not None and self.no_token:
            raise ValueError("--token and --no-token contradict each other: give one")

    __post_init__ = check_service

    def service_limits(self, command: str, **more: Any) -> "ServiceLimits":
        """The `ServiceLimits` these settings (and a piece's `more`, e.g. the batching ones) give,
        with the token and the Host names of `service_access` (a token is made and printed if none is given)."""
        return ServiceLimits(max_body_bytes=self.max_body_kb * 1024, max_concurrent=self.max_concurrent,
                             body_timeout=self.body_timeout, max_header_bytes=self.max_header_kb * 1024,
                             max_headers=self.max_headers, **service_access(self, command), **more)


@dataclass(frozen=True)
class BatchingConfig:
    """Micro-batching and request limits of a service that scores items (`serve-verifier`, `serve-reward`)."""

    max_items: int = opt(4096, "most items per request (413 past it)", ge=1)
    batch_items: int = opt(256, "most items scored in one micro-batch of concurrent requests", ge=1)
    batch_wait: float = opt(0.005, "seconds the first waiting request waits for others to join its batch")
    max_queue: int = opt(16384, "items waiting to be scored; a request that finds the queue full gets 503 + Retry-After", ge=1)
    request_timeout: float = opt(120.0, "deadline of one request in seconds, time in the queue included (504 past it)", seconds=True)

    def check_batching(self) -> None:
        check_fields(self, BatchingConfig)
        if not (math.isfinite(self.batch_wait) and self.batch_wait >= 0):
            raise ValueError(f"--batch-wait must be a number of seconds >= 0, got {self.batch_wait}")

    __post_init__ = check_batching

    def batching_limits(self) -> dict[str, Any]:
        """These settings as `ServiceLimits` keywords."""
        return {"max_items": self.max_items, "batch_items": self.batch_items, "batch_wait": self.batch_wait,
                "max_queue": self.max_queue, "request_timeout": self.request_timeout}


async def _reply(send: Any, status: int, detail: str, headers: tuple = ()) -> None:
    body = json.dumps({"detail": detail}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class ProtectionMiddleware:
    """Pure ASGI middleware: header count and size, token, body size and deadline, then concurrency, before the app sees
    anything. The whole body is read (within `body_timeout`) before a slot is taken, so clients
    that trickle their bodies cannot hold the slots."""

    def __init__(self, app: Any, limits: ServiceLimits, token: Optional[str]) -> None:
        self.app, self.limits, self.token = app, limits, token
        self.in_flight = 0  # one event loop: no lock needed

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":  # every path, /health included
            raw = scope.get("headers", [])
            if len(raw) > self.limits.max_headers:
                await _reply(send, 431, f"{len(raw)} request headers; the limit is {self.limits.max_headers}",
                             ((b"connection", b"close"),))
                return
            size = sum(len(k) + len(v) for k, v in raw)
            if size > self.limits.max_header_bytes:
                await _reply(send, 431, f"request headers of {size} bytes; the limit is {self.limits.max_header_bytes} bytes",
                             ((b"connection", b"close"),))
                return
            host = next((v.decode("latin-1") for k, v in raw if k.lower() == b"host"), None)
            if host is not None and not host_allowed(host, self.limits.allowed_hosts):
                await _reply(send, 400, f"Host {host_name(host)!r} is not a name of this service: call it by a loopback name or "
                                        f"an IP address, or start it with --allowed-host {host_name(host)}")
                return
        if scope["type"] != "http" or scope["path"] in self.limits.open_paths:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        query_token = _take_query_token(scope)  # removed from the scope before anything logs the path
        if self.token is not None:
            given = headers.get("authorization", "")
            given = given[7:] if given.startswith("Bearer ") else query_token
            if given is None or not hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
                await _reply(send, 401, "missing or wrong bearer token: send 'Authorization: Bearer <token>' (or ?token=<token> "
                                        "in the URL, for clients that cannot set headers); the service printed it when it started",
                             ((b"www-authenticate", b"Bearer"),))
                return
        if scope.get("method") in BODY_METHODS and _media_type(headers.get("content-type", "")) != "application/json":
            got = _media_type(headers.get("content-type", "")) or "none"
            await _reply(send, 415, f"Content-Type {got!r} is not accepted: send the body as JSON with 'Content-Type: application/json'")
            return
        body = await self._read_body(headers, receive, send)
        if body is None:
            return  # answered already (413 / 408), or the client went away
        if self.in_flight >= self.limits.max_concurrent:
            await _reply(send, 429, f"too many concurrent requests (limit {self.limits.max_concurrent}); retry shortly",
                         ((b"retry-after", b"1"),))
            return
        self.in_flight += 1
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        try:
            await self.app(scope, replay, send)
        finally:
            self.in_flight -= 1

    async def _read_body(self, headers: dict, receive: Any, send: Any) -> Optional[bytes]:
        """The whole body, or None after answering 413 (too big) or 408 (not sent in time)."""
        limit, seconds = self.limits.max_body_bytes, self.limits.body_timeout
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await _reply(send, 413, f"request body of {declared} bytes is over the limit of {limit} bytes; split the batch")
            return None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        chunks, size = [], 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                await _reply(send, 408, f"request body not received within {seconds:g} s; send it at once",
                             ((b"connection", b"close"),))
                return None
            if message["type"] != "http.request":
                return None  # client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                await _reply(send, 413, f"request body is over the limit of {limit} bytes; split the batch")
                return None
            if not message.get("more_body", False):
                return b"".join(chunks)


def _take_query_token(scope: dict) -> Optional[str]:
    """The `token` query parameter, removed from `scope["query_string"]` in place (the server's
    access log prints the path from this scope after the answer)."""
    from urllib.parse import parse_qsl, urlencode

    raw = scope.get("query_string", b"")
    if b"token=" not in raw:
        return None
    pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True)
    token = next((v for k, v in pairs if k == "token"), None)
    scope["query_string"] = urlencode([(k, v) for k, v in pairs if k != "token"]).encode("latin-1")
    return token


def service_token(token: Optional[str], host: str, command: str, no_token: bool = False) -> Optional[str]:
    """The bearer token a service requires: `token`, else $REWARDLAB_SERVICE_TOKEN, else a fresh
    random one, printed once on stdout (loopback is no boundary: every local user and, through
    the browser, every web page can reach it). `no_token=True` turns the token off, with a warning."""
    import secrets
    import sys

    if no_token:
        print(f"rewardlab {command}: warning: no token (--no-token): every user of this machine"
              f"{'' if host in LOOPBACK else ' and of the network'} may call it", file=sys.stderr)
        return None
    token = token or os.environ.get(TOKEN_ENV) or None
    if token is None:
        token = secrets.token_urlsafe(24)
        print(f"rewardlab {command}: token for this run (choose one with --token or ${TOKEN_ENV}): {token}\n"
              f"  send it as 'Authorization: Bearer {token}' (or ?token={token} in the URL)", flush=True)
    return token


def service_access(config: Any, command: str) -> dict:
    """`ServiceLimits` fields from a service command's config (`token`, `no_token`, `host`,
    `allowed_hosts`): the token (`service_token`) and the names accepted in `Host`: those given,
    the `--host` name, and on a wildcard address the machine's own names."""
    import socket

    hosts = [*config.allowed_hosts]
    if config.host in WILDCARD:
        hosts += [socket.gethostname(), socket.getfqdn()]
    elif not _is_ip(config.host):
        hosts.append(config.host)
    return {"token": service_token(config.token, config.host, command, config.no_token),
            "allowed_hosts": tuple(h for h in dict.fromkeys(hosts) if h)}


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
    try:
        from fastapi.exceptions import RequestValidationError
    except ImportError:  # a plain Starlette app: no request models to validate
        return limits
    app.add_exception_handler(RequestValidationError, _validation_error)
    return limits


def items_field(app: Any, description: str) -> Any:
    """A pydantic `Field` for a request's list of items, capped at `max_items`: the length is
    checked before any item is validated (a 413, see `_validation_error`)."""
    from pydantic import Field

    return Field(..., max_length=app.state.limits.max_items, description=description)


class JSONEndpoint:
    """A lean POST route for the hot path of one-item clients: `await handler(data) -> dict`, where
    `data` is the request body parsed by the standard `json` module and the dict is sent back as
    JSON; an `HTTPException` becomes its status, `{"detail": ...}` and headers. The handler checks
    its own fields (a 422 naming the field, as a request model would). FastAPI's request machinery
    (dependency solving, the pydantic model, response encoding) costs more main-process time per
    request than scoring one item, and the main process is what 64 one-item clients saturate.
    Mount it with `app.router.add_route(path, JSONEndpoint(handler), methods=["POST"])`: the
    protections still come first."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        from starlette.exceptions import HTTPException

        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        try:
            data = json.loads(b"".join(chunks))
        except ValueError as exc:  # also UnicodeDecodeError, and a number past Python's digit limit
            where = f" (at character {exc.pos})" if isinstance(exc, json.JSONDecodeError) else ""
            await _reply(send, 422, f"body{where}: not valid JSON ({exc}); send a JSON object")
            return
        except RecursionError:
            await _reply(send, 422, "body: JSON nested too deeply; send a flat JSON object")
            return
        try:
            out = await self.handler(data)
        except HTTPException as exc:
            headers = tuple((k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in (exc.headers or {}).items())
            await _reply(send, exc.status_code, str(exc.detail), headers)
            return
        body = json.dumps(out, allow_nan=False).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def list_field(app: Any, data: dict, name: str, of: Optional[type] = None, required: bool = False) -> Optional[list]:
    """`data[name]` checked as a request model's list field would be: a list (None when absent and
    not required), at most `max_items` long (413), each item an `of` when given (422 naming the
    first bad one)."""
    from fastapi import HTTPException

    value = data.get(name)
    if value is None:
        if required:
            raise HTTPException(422, f"{name}: field required (a list)")
        return None
    if not isinstance(value, list):
        raise HTTPException(422, f"{name}: expected a list, got {_json_type(value)}")
    check_items(app, len(value))
    if of is not None:
        bad = [i for i, v in enumerate(value) if not isinstance(v, of)]
        if bad:
            more = f" ({len(bad)} items are not)" if len(bad) > 1 else ""
            raise HTTPException(422, f"{name}[{bad[0]}]: expected {_JSON_TYPES.get(of, of.__name__)}, got {_json_type(value[bad[0]])}{more}")
    return value


_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}


def _json_type(value: Any) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)


def check_items(app: Any, n: int) -> None:
    """413 when a request carries more items than `app.state.limits.max_items`."""
    from fastapi import HTTPException

    limit = app.state.limits.max_items
    if n > limit:
        raise HTTPException(413, _too_many(n, limit))


def _too_many(n: Any, limit: int) -> str:
    return f"{n} items in one request; the limit is {limit} (split the batch)"


MAX_ERRORS_SHOWN = 10


async def _validation_error(request: Any, exc: Any) -> Any:
    """FastAPI's validation errors as one short, JSON-safe message that names each field (the
    default answer echoes the input: a 500 for NaN, minutes of work for a million bad items).
    A list over `max_items` is a 413."""
    from fastapi.responses import JSONResponse

    errors = exc.errors()
    for error in errors:
        if error.get("type") == "too_long" and error.get("loc", ())[:1] == ("body",):
            ctx = error.get("ctx") or {}
            return JSONResponse({"detail": _too_many(ctx.get("actual_length", "too many"), ctx.get("max_length"))}, status_code=413)
    parts = []
    for error in errors[:MAX_ERRORS_SHOWN]:
        loc = [str(p) for p in error.get("loc", ()) if p != "body"]
        where = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc).lstrip(".") or "body"
        if error.get("type") == "json_invalid":  # its location is a character position, not a field
            where = f"body (at character {loc[0]})" if loc else "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    if len(errors) > MAX_ERRORS_SHOWN:
        parts.append(f"... and {len(errors) - MAX_ERRORS_SHOWN} more errors")
    return JSONResponse({"detail": "; ".join(parts)}, status_code=422)


def make_batcher(limits: ServiceLimits, run_batch: Any, concurrency: int, name: str) -> Any:
    """The service's `MicroBatcher`, sized by `limits`."""
    from rewardlab.batching import MicroBatcher

    return MicroBatcher(run_batch, max_batch_items=limits.batch_items, max_wait=limits.batch_wait,
                        max_queue_items=limits.max_queue, concurrency=concurrency, name=name)


async def batched(batcher: Any, limits: ServiceLimits, key: Any, payload: Any, n_items: int) -> Any:
    """`batcher.submit(...)` with the HTTP answers: 503 + Retry-After when the queue is full, 504
    past the request deadline."""
    from fastapi import HTTPException

    from rewardlab.batching import DeadlineExceeded, QueueFull

    try:
        return await batcher.submit(key, payload, n_items, limits.request_timeout)
    except QueueFull as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
    except DeadlineExceeded as exc:
        raise HTTPException(504, str(exc)) from None
