"""`rewardlab.service.JSONEndpoint`, the lean POST route of one-item clients, called as ASGI in process."""

from __future__ import annotations

import asyncio
import json

from fastapi import HTTPException


def call(endpoint, *bodies: bytes) -> tuple[int, dict, dict]:
    """(status, headers, JSON body) of one request whose body arrives in `bodies` chunks."""
    messages = [{"type": "http.request", "body": b, "more_body": i < len(bodies) - 1} for i, b in enumerate(bodies)]
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(endpoint({"type": "http", "method": "POST", "path": "/x"}, receive, send))
    headers = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    return sent[0]["status"], headers, json.loads(sent[1]["body"])


def test_json_endpoint():
    from rewardlab.service import JSONEndpoint

    async def echo(data):
        if data == "busy":
            raise HTTPException(503, "queue full", headers={"Retry-After": "2"})
        return {"got": data}

    endpoint = JSONEndpoint(echo)
    assert call(endpoint, b'{"a": [1, ', b'"b"]}')[::2] == (200, {"got": {"a": [1, "b"]}})  # a body in two chunks
    status, headers, body = call(endpoint, b'"busy"')
    assert (status, headers["retry-after"], body) == (503, "2", {"detail": "queue full"})
    # a number past Python's digit limit, bytes that are not UTF-8, JSON cut short: 422 saying so, not a 500
    for raw in (b'{"a": ' + b"9" * 5_000 + b"}", b'{"a": "\xff"}', b'{"a": '):
        status, _, body = call(endpoint, raw)
        assert status == 422 and body["detail"].startswith("body") and "not valid JSON" in body["detail"], body
    assert call(endpoint, b"[" * 100_000 + b"]" * 100_000)[::2] == (422, {"detail": "body: JSON nested too deeply; send a flat JSON object"})
