"""The environment service's episodes, called in process: an episode is judged once (a finished one
answers 409 to every later call and keeps its reward), one budget per episode across /step and the
tools, session ids seeded once, every malformed body a 4xx naming what was wrong (never a 500), the
gym-style /step ending with the reward, and NeMo Gym's own request and response shapes.

The adversary is a client of the service (it holds the token): it may send any body to any path,
in any order, with any session id, including ones another client holds."""

from __future__ import annotations

import copy
import itertools

import pytest
from starlette.testclient import TestClient

from rewards.env_service import COOKIE, create_env_app
from rewards.environments import build_env


def client(spec="calculator:cost=0.1"):
    return TestClient(create_env_app(build_env(spec), spec), base_url="http://127.0.0.1:8000", raise_server_exceptions=False)


def responses_answer(text):
    """An OpenAI Responses object as NeMo Gym's agents send it: tool calls, their outputs, the answer."""
    return {"id": "resp_1", "object": "response", "created_at": 0.0, "model": "policy", "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "output": [
                {"type": "function_call", "name": "calculator", "arguments": "{\"expression\": \"734+289\"}",
                 "call_id": "c1", "id": "fc_1", "status": "completed"},
                {"type": "function_call_output", "call_id": "c1", "output": "{\"output\": \"1023\"}"},
                {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                 "content": [{"type": "output_text", "text": text, "annotations": []}]}]}


# ------------------------------------------------------------------ an episode is judged once
ENDINGS = {  # each way an episode ends: (path, body)
    "step": ("/step", {"message": "1023"}),
    "verify message": ("/verify", {"message": "1023"}),
    "verify response": ("/verify", {"response": responses_answer("1023")}),
}
LATER = {  # each call a client may make after the end: the last three would change the reward if accepted
    "step answer": ("/step", {"message": "1022"}),
    "step tool call": ("/step", {"message": "<calc>1+1</calc>"}),
    "tool": ("/calculator", {"expression": "1+1"}),
    "verify": ("/verify", {"message": "1022"}),
}


@pytest.mark.parametrize("ending,later", list(itertools.product(ENDINGS, LATER)))
def test_a_finished_episode_refuses_every_later_call(ending, later):
    with client() as c:
        sid = c.post("/seed_session", json={"task": {"answer": "1023"}}).json()["session_id"]
        assert c.post("/calculator", json={"session_id": sid, "expression": "734+289"}).json() == {"output": "1023"}
        path, body = ENDINGS[ending]
        first = c.post(path, json={"session_id": sid, **body}).json()
        assert first["reward"] == pytest.approx(0.9)  # right, minus one call
        path, body = LATER[later]
        r = c.post(path, json={"session_id": sid, **body})
        assert r.status_code == 409 and "has ended" in r.json()["detail"] and "reward 0.9" in r.json()["detail"], r.text
        assert c.post("/seed_session", json={"session_id": sid, "task": {"answer": "2"}}).status_code == 409


def test_step_returns_the_final_reward_with_done_and_closes_the_session():
    with client() as c:
        sid = c.post("/reset", json={"task": {"prompt": "734+289=", "answer": "1023"}}).json()["session_id"]
        turns = [c.post("/step", json={"session_id": sid, "message": m}).json()
                 for m in ("<calc>734+289</calc>", "<calc>1/0</calc>", "1023")]
        assert [t["done"] for t in turns] == [False, False, True]
        assert turns[0]["reward"] is None and turns[-1]["reward"] == pytest.approx(1.0 - 2 * 0.1)
        assert c.get("/health").json()["sessions"] == 0  # closed by its last step
        wrong = c.post("/seed_session", json={"task": {"answer": "1023"}}).json()["session_id"]
        assert c.post("/step", json={"session_id": wrong, "message": "1022"}).json()["reward"] == 0.0


# ------------------------------------------------------------------ one budget per episode
def test_one_budget_per_episode_across_the_tool_and_step():
    """code:max_attempts=2 allows two judged programs in all: a /run_tests try and a /step try
    (the second is final: no more feedback), never two graded /step tries after a test run."""
    wrong, right = "def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b"
    with client("code:max_attempts=2") as c:
        c.post("/seed_session", json={"task": {"answer": "assert add(1, 2) == 3"}})  # the cookie carries the session
        assert c.post("/run_tests", json={"program": wrong}).json()["output"].startswith("test 1/1: AssertionError")
        turn = c.post("/step", json={"message": wrong}).json()
        assert turn["done"] and turn["reward"] == 0.0 and turn["observation"] is None
        assert c.post("/step", json={"message": right}).status_code == 409
    with client("calculator:max_calls=1") as c:
        c.post("/seed_session", json={"task": {"answer": "2"}})
        assert c.post("/calculator", json={"expression": "1+1"}).json() == {"output": "2"}
        assert c.post("/step", json={"message": "<calc>1+1</calc>"}).json()["tool_error"]  # the same budget


def test_session_ids_are_seeded_once():
    with client() as c:
        assert c.post("/seed_session", json={"session_id": "mine", "task": {"answer": "2"}}).status_code == 200
        c.post("/calculator", json={"session_id": "mine", "expression": "1+1"})
        other = TestClient(c.app, base_url="http://127.0.0.1:8000")  # another client, knowing the id
        r = other.post("/seed_session", json={"session_id": "mine", "task": {"answer": "999"}})
        assert r.status_code == 409 and "seeded once" in r.json()["detail"]
        assert c.post("/verify", json={"session_id": "mine", "message": "2"}).json()["reward"] == pytest.approx(0.9)  # budget kept
        assert c.post("/seed_session", json={"session_id": "mine", "task": {"answer": "2"}}).status_code == 409
        # a seed that failed (a bad row) never started: its id is free
        assert c.post("/seed_session", json={"session_id": "next", "task": {}}).status_code == 400
        assert c.post("/seed_session", json={"session_id": "next", "task": {"answer": "1"}}).status_code == 200


# ------------------------------------------------------------------ malformed bodies
WRONG_VALUES = [None, 7, 1.5, "x", True, [], {}, [1], {"a": 1}]


def _paths(value, path=()):
    """Every path into a JSON value (objects and lists), the value itself first."""
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


def _replaced(value, path, new):
    out = copy.deepcopy(value)
    if not path:
        return new
    target = out
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = new
    return out


def test_every_malformed_responses_object_is_a_4xx_never_a_500():
    """Generated: each field of a valid Responses object (and of a chat completion) replaced by each
    wrong JSON type; /verify answers 200 (a shape it can read) or a 4xx that names the field."""
    chat = {"choices": [{"message": {"role": "assistant", "content": "1023"}}]}
    cases = [(v, p, w) for v in (responses_answer("1023"), chat) for p in _paths(v) for w in WRONG_VALUES]
    assert len(cases) > 300
    seen = set()
    with client() as c:
        for valid, path, wrong in cases:
            sid = c.post("/seed_session", json={"task": {"answer": "1023"}}).json()["session_id"]
            r = c.post("/verify", json={"session_id": sid, "response": _replaced(valid, path, wrong)})
            assert r.status_code in (200, 409, 422), (path, wrong, r.status_code, r.text)
            if r.status_code == 422:
                assert "response" in r.json()["detail"], r.text
            seen.add(r.status_code)
            c.post("/close_session", json={"session_id": sid})
    assert seen == {200, 422}


FIELDS = {"/seed_session": {"task": {"answer": "1"}}, "/step": {"message": "1"}, "/verify": {"message": "1"},
          "/calculator": {"expression": "1"}, "/close_session": {}}


@pytest.mark.parametrize("path", list(FIELDS))
def test_bodies_that_are_not_json_objects_are_4xx_naming_the_content_type(path):
    with client() as c:
        sid = c.post("/seed_session", json={"task": {"answer": "1"}}).json()["session_id"]
        r = c.post(path, content=b"session_id=" + sid.encode(), headers={"content-type": "application/x-www-form-urlencoded"})
        assert r.status_code == 415 and "Content-Type: application/json" in r.json()["detail"]
        for raw in (b"", b"{", b"[1, 2]", b'"text"', b"[" * 50_000 + b"]" * 50_000, b'{"a": "\xff"}'):
            r = c.post(path, content=raw, headers={"content-type": "application/json"})
            assert r.status_code == 422 and "application/json" in r.json()["detail"], (raw[:10], r.text)
        for body in ({"session_id": 5}, {"session_id": "x" * 500}, {"session_id": ["a"]}):
            r = c.post(path, json={**body, **FIELDS[path]})
            assert r.status_code == 422 and "session_id" in r.json()["detail"], r.text


@pytest.mark.parametrize("body,fragment", [
    ({"message": 5}, "message"),
    ({"message": None}, "message"),
    ({"message": ["a"]}, "message"),
])
def test_a_step_without_a_text_message_is_a_422(body, fragment):
    with client() as c:
        sid = c.post("/seed_session", json={"task": {"answer": "1"}}).json()["session_id"]
        r = c.post("/step", json={"session_id": sid, **body})
        assert r.status_code == 422 and fragment in r.json()["detail"]
        bad_task = c.post("/seed_session", json={"task": "1+1"})
        assert bad_task.status_code == 422 and "task must be an object" in bad_task.json()["detail"]


# ------------------------------------------------------------------ NeMo Gym's shapes
# Recorded from NeMo Gym 0.4.0's simple agent (responses_api_agents/simple_agent/app.py): `run` posts
# `body.model_dump()` of its run request to /seed_session (the row's fields at the top level beside
# `responses_create_params`), each tool call's parsed arguments to /<tool> with the cookies of the
# last answer, and the run request + `response` to /verify, expecting a `BaseVerifyResponse`
# (`responses_create_params`, `response`, `reward`; extra fields allowed).
NEMO_RUN_REQUEST = {
    "responses_create_params": {
        "input": [{"role": "user", "content": "734+289=", "type": "message"}],
        "tools": [{"type": "function", "name": "calculator", "strict": None, "description": "Evaluate an arithmetic expression",
                   "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}],
        "background": None, "include": None, "instructions": None, "max_output_tokens": None, "max_tool_calls": None,
        "metadata": None, "model": None, "parallel_tool_calls": True, "previous_response_id": None, "reasoning": None,
        "store": None, "temperature": 1.0, "text": None, "tool_choice": "auto", "top_logprobs": None, "top_p": None,
        "truncation": None, "user": None, "stream": None},
    "answer": "1023",
    "agent_ref": {"type": "responses_api_agents", "name": "calculator_simple_agent"},
}


def test_an_episode_in_nemo_gyms_own_shapes_gives_the_rl_reward():
    with client() as c:
        seeded = c.post("/seed_session", json=NEMO_RUN_REQUEST)
        assert seeded.status_code == 200, seeded.text
        cookie = seeded.cookies.get(COOKIE)
        for arguments in ({"expression": "734+289"}, {"expression": "1/0"}):
            c.cookies.clear()  # the agent sends the cookies of the last answer only
            out = c.post("/calculator", json=arguments, headers={"cookie": f"{COOKIE}={cookie}"})  # the arguments alone
            cookie = out.cookies.get(COOKIE)
            assert out.status_code == 200 and cookie, out.text
        c.cookies.clear()
        verified = c.post("/verify", json={**NEMO_RUN_REQUEST, "response": responses_answer("1023")},
                          headers={"cookie": f"{COOKIE}={cookie}"})
        assert verified.status_code == 200, verified.text
        out = verified.json()
        assert out["reward"] == pytest.approx(1.0 - 2 * 0.1)
        assert out["responses_create_params"] == NEMO_RUN_REQUEST["responses_create_params"]
        assert out["response"] == responses_answer("1023") and out["answer"] == "1023"  # BaseVerifyResponse's fields
        assert isinstance(out["reward"], float)
    with client() as c:  # this project's own shape stays
        seeded = c.post("/seed_session", json={"task": {"answer": "1023"}}).json()
        assert set(seeded) == {"session_id", "observation"}
        out = c.post("/verify", json={"message": "1023"}).json()
        assert set(out) == {"session_id", "reward"} and out["reward"] == 1.0
