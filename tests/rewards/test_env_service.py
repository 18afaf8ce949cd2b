"""The environment service (`rewardlab serve-env`): a real uvicorn subprocess driven by an HTTP
client in NeMo Gym's shape (seed a session, call the tool, verify a Responses-API answer), and the
services' protections: token (401), body size (413), sessions as backpressure (503 + Retry-After)."""

from __future__ import annotations

import httpx
import pytest

from tests.serving import running_server

pytestmark = pytest.mark.slow  # a real uvicorn server in a subprocess

TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def server():
    with running_server(["serve-env", "--env", "calculator:cost=0.1", "--token", TOKEN, "--max-sessions", "3",
                         "--max-body-kb", "2", "--log-level", "warning"]) as url:
        yield url


def responses_answer(text):
    """What NeMo Gym sends to /verify: an OpenAI Responses object whose last message is the answer."""
    return {"id": "resp_1", "object": "response", "output": [
        {"type": "function_call", "name": "calculator", "arguments": "{\"expression\": \"734+289\"}", "call_id": "c1"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]}


def test_an_episode_in_nemo_gyms_shape(server):
    with httpx.Client(base_url=server, headers=AUTH, timeout=30) as client:  # keeps the session cookie, as NeMo Gym's does
        seeded = client.post("/seed_session", json={"task": {"prompt": "734+289=", "answer": "1023"}}).json()
        assert seeded["observation"] is None and seeded["session_id"]
        assert client.post("/calculator", json={"expression": "734+289"}).json() == {"output": "1023"}
        turn = client.post("/step", json={"message": "<calc>1/0</calc>"}).json()  # the text protocol, same session
        assert turn == {"observation": "<result>error: division by zero</result>", "reward": None, "done": False,
                        "tool_call": True, "tool_error": True}
        out = client.post("/verify", json={"response": responses_answer("1023")}).json()
        assert out["reward"] == pytest.approx(1.0 - 2 * 0.1)  # right, minus two calls
        ended = client.post("/calculator", json={"expression": "1+1"})  # /verify ended the episode: judged once
        assert ended.status_code == 409 and "has ended (verified, reward 0.8)" in ended.json()["detail"]
    # a wrong answer, by session id instead of a cookie
    sid = httpx.post(f"{server}/seed_session", json={"task": {"answer": "1023"}}, headers=AUTH).json()["session_id"]
    assert httpx.post(f"{server}/verify", json={"session_id": sid, "message": "1022"}, headers=AUTH).json()["reward"] == 0.0


@pytest.mark.parametrize("path,body,status,fragment", [
    ("/seed_session", {"task": {"prompt": "1+1="}}, 400, "no 'answer' column"),
    ("/step", {"session_id": "nope", "message": "2"}, 404, "no open session"),
    ("/calculator", {"session_id": "nope", "expr": "1"}, 422, "unknown argument(s) ['expr']"),
    ("/verify", {"session_id": "nope"}, 404, "no open session"),
])
def test_bad_requests_name_what_was_wrong(server, path, body, status, fragment):
    r = httpx.post(f"{server}{path}", json=body, headers=AUTH)
    assert r.status_code == status and fragment in r.json()["detail"]


def test_token_is_required(server):
    assert httpx.post(f"{server}/seed_session", json={"task": {"answer": "1"}}).status_code == 401
    assert httpx.post(f"{server}/seed_session", json={"task": {"answer": "1"}}, headers={"Authorization": "Bearer x"}).status_code == 401
    assert httpx.get(f"{server}/health").status_code == 200  # open


def test_body_size_limit(server):
    r = httpx.post(f"{server}/step", json={"session_id": "x", "message": "9" * 4096}, headers=AUTH)
    assert r.status_code == 413


def test_sessions_are_backpressure(server):
    opened = []
    for _ in range(10):
        r = httpx.post(f"{server}/seed_session", json={"task": {"answer": "1"}}, headers=AUTH)
        if r.status_code != 200:
            break
        opened.append(r.json()["session_id"])
    assert r.status_code == 503 and r.headers["Retry-After"] and "--max-sessions" in r.json()["detail"]
    assert len(opened) <= 3
    httpx.post(f"{server}/close_session", json={"session_id": opened[0]}, headers=AUTH)
    assert httpx.post(f"{server}/seed_session", json={"task": {"answer": "1"}}, headers=AUTH).status_code == 200
    for sid in opened[1:]:
        httpx.post(f"{server}/close_session", json={"session_id": sid}, headers=AUTH)


def test_the_code_environment_over_http_runs_tests_then_verifies():
    """The code environment's tool is an endpoint too: a client runs the tests, reads the failure,
    and its final answer is what /verify scores."""
    with running_server(["serve-env", "--env", "code", "--token", TOKEN, "--log-level", "warning"]) as url:
        with httpx.Client(base_url=url, headers=AUTH, timeout=60) as client:
            client.post("/seed_session", json={"task": {"prompt": "Write add(a, b).", "answer": "assert add(1, 2) == 3"}})
            out = client.post("/run_tests", json={"program": "def add(a, b):\n    return a - b"}).json()
            assert out == {"output": "test 1/1: AssertionError at test line 1: assert add(1, 2) == 3"}
            right = client.post("/verify", json={"message": "def add(a, b):\n    return a + b"}).json()
            assert right["reward"] == 1.0
