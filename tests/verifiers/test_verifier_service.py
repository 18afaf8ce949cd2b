"""`rewardlab serve-verifier`: a real uvicorn server in a subprocess, spoken to over HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

import httpx

from tests.serving import SERVICE_AUTH, running_server

TOKEN = "test-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def server():
    with running_server(["serve-verifier", "--token", TOKEN, "--max-items", "4", "--max-body-kb", "64",
                         "--max-concurrent", "1", "--body-timeout", "2", "--log-level", "warning"],
                        env={"REWARDLAB_VERIFY_WORKERS": "2"}) as url:
        yield url


def test_health_is_open(server):
    body = httpx.get(server + "/health").json()
    assert body["status"] == "ok" and "math" in body["kinds"]


def test_batch_verify_keeps_order(server):
    items = [
        {"prediction": "The answer is $\\boxed{\\frac{1}{2}}$", "gold": "0.5"},  # math, correct
        {"prediction": "Answer: Lyon", "gold": "Paris", "kind": "string"},  # incorrect
        {"prediction": "The speed is 3.1416", "gold": "3.14159", "kind": "numeric", "options": {"rel_tol": 1e-4}},
        {"prediction": "I don't know", "gold": "B", "kind": "choice"},  # no answer
    ]
    response = httpx.post(server + "/verify", json={"items": items}, headers=AUTH, timeout=30)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [r["verdict"] for r in body["results"]] == ["correct", "incorrect", "correct", "no_answer"]
    assert [r["score"] for r in body["results"]] == [1.0, 0.0, 1.0, 0.0]
    assert body["counts"] == {"correct": 2, "incorrect": 1, "no_answer": 1}


def test_request_timeout_gives_timeout_verdicts(server):
    items = [{"prediction": "$\\boxed{9^{9^{9^{9}}}}$", "gold": "1"}]
    start = time.monotonic()
    body = httpx.post(server + "/verify", json={"items": items, "timeout": 0.5}, headers=AUTH, timeout=30).json()
    assert body["results"][0]["verdict"] == "timeout"
    assert time.monotonic() - start < 3


# (headers, body, expected status, text in the error detail)
REJECTIONS = [
    ({}, {"items": []}, 401, "bearer token"),  # no token
    ({"Authorization": "Bearer wrong"}, {"items": []}, 401, "bearer token"),  # wrong token
    (AUTH, {"items": [{"prediction": "1", "gold": "1"}] * 5}, 413, "limit is 4"),  # 5 items > 4
    (AUTH, {"items": [{"prediction": "x" * 70_000, "gold": "1"}]}, 413, "over the limit"),  # 70 KB > 64 KiB
    (AUTH, {"items": [{"prediction": 5, "gold": "1"}]}, 422, "prediction"),  # wrong type
    (AUTH, {"items": [{"gold": "1"}]}, 422, "prediction"),  # missing field
    (AUTH, {"items": [{"prediction": "1", "gold": "1", "kind": "maths"}]}, 422, "items[0].kind: unknown kind 'maths'"),
    (AUTH, {"items": [{"prediction": "1", "gold": "1"}], "timeout": 0}, 422, "timeout"),
    (AUTH, {"items": [{"prediction": "1", "gold": "1", "kind": "numeric", "options": {"tol": 1}}]}, 422, "unknown option(s) 'tol'"),
    (AUTH, {"items": [{"prediction": "1", "gold": "1"}], "timeout": 1000}, 422, "over this service's limit"),
    # nested past 64 levels but not past the JSON parser's limit (was a 500 and a lost worker)
    (AUTH, {"items": [{"prediction": "1", "gold": "1", "kind": "numeric", "options": {"rel_tol": json.loads("[" * 600 + "1" + "]" * 600)}}]},
     422, "option 'rel_tol' is nested more than 64 levels deep"),
    # a wide option list (3 million values held /health for 2.3 s): refused on its size, before it joins a batch
    (AUTH, {"items": [{"prediction": "1", "gold": "1", "kind": "numeric", "options": {"rel_tol": [0] * 20_000}}]},
     422, "items[0].options: numeric verifier option 'rel_tol' holds more than 10000 values"),
    # a client may shorten the timeout, not extend it: 10 s on math items (the service's is 5 s) would let a few
    # power towers hold the workers that unrelated requests wait for
    (AUTH, {"items": [{"prediction": "$9^{9^{9^{9}}}$", "gold": "1"}], "timeout": 10}, 422,
     "timeout: 10 s is over this service's limit of 5 s for kind 'math'"),
    # the sandbox policy is the operator's: a client cannot turn off the uid drop, turn on the network, or raise limits
    (AUTH, {"items": [{"prediction": "print(1)", "gold": '[{"output": "1"}]', "kind": "code", "options": {"drop_privileges": False}}]},
     422, "items[0].options: 'drop_privileges' belong to the service's sandbox policy"),
    (AUTH, {"items": [{"prediction": "print(1)", "gold": '[{"output": "1"}]', "kind": "code", "options": {"network": True}}]},
     422, "'network' belong to the service's sandbox policy"),
    (AUTH, {"items": [{"prediction": "print(1)", "gold": '[{"output": "1"}]', "kind": "code",
                       "options": {"cpu_seconds": 600, "compare": "tokens"}}]}, 422, "'cpu_seconds' belong to the service's sandbox policy"),
]


@pytest.mark.parametrize("headers,body,status,text", REJECTIONS)
def test_rejections(server, headers, body, status, text):
    response = httpx.post(server + "/verify", json=body, headers=headers, timeout=30)
    assert response.status_code == status, response.text
    assert text in response.text


def test_code_items_run_under_the_operators_policy(server):
    # `compare` is a per-item option, not policy: allowed; the sandbox settings stay the service's
    item = {"prediction": "```python\nprint(' 3 ')\n```", "gold": '[{"input": "", "output": "3"}]', "kind": "code",
            "options": {"compare": "tokens"}}
    response = httpx.post(server + "/verify", json={"items": [item]}, headers=AUTH, timeout=60)
    assert response.status_code == 200, response.text
    result = response.json()["results"][0]
    assert result["verdict"] == "correct"
    if os.geteuid() == 0:
        assert {"uid-65534", "no-network"} <= set(result["extra"]["protections"])


# non-finite numbers are valid JSON for Python's parser: each must be a 4xx naming the field, not a 500
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_timeout_is_a_4xx_naming_the_field(server, value):
    body = '{"items": [{"prediction": "1", "gold": "1"}], "timeout": ' + value + "}"
    response = httpx.post(server + "/verify", content=body, headers={**AUTH, "content-type": "application/json"}, timeout=30)
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith("timeout: ")


def _trickle(url: str, seconds: float) -> bytes:
    """Send headers announcing a 2,000-byte body, then one byte every 0.25 s; return the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=seconds + 5) as sock:
        sock.sendall(f"POST /verify HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
                     f"authorization: Bearer {TOKEN}\r\ncontent-length: 2000\r\n\r\n{{".encode())
        end = time.monotonic() + seconds
        sock.settimeout(0.25)
        answer = b""
        while time.monotonic() < end:
            try:
                sock.sendall(b" ")
                answer += sock.recv(4096)
                if answer:
                    break
            except socket.timeout:
                pass
            except OSError:
                break
        return answer


def test_slow_bodies_do_not_hold_the_slots(server):
    # three clients trickle their bodies (slowloris); the service has one concurrency slot
    answers: list[bytes] = []
    threads = [threading.Thread(target=lambda: answers.append(_trickle(server, 8))) for _ in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    ok = httpx.post(server + "/verify", json={"items": [{"prediction": "1", "gold": "1"}]}, headers=AUTH, timeout=30)
    assert ok.status_code == 200, ok.text  # the slot is free: slots are for work, not for waiting on a socket
    for thread in threads:
        thread.join(timeout=15)
    assert len(answers) == 3 and all(a.startswith(b"HTTP/1.1 408") for a in answers), answers  # cut off at --body-timeout 2


def test_a_million_tiny_items_are_refused_before_any_work():
    body = '{"items": [' + ",".join(["{}"] * 1_000_000) + "]}"  # 3 MB, within the default body limit
    with running_server(["serve-verifier", "--log-level", "warning"], env={"REWARDLAB_VERIFY_WORKERS": "1"}) as url:
        answer: dict = {}
        thread = threading.Thread(target=lambda: answer.update(r=httpx.post(
            url + "/verify", content=body, headers={**SERVICE_AUTH, "content-type": "application/json"}, timeout=20)))
        thread.start()
        time.sleep(0.2)
        start = time.monotonic()
        assert httpx.get(url + "/health", timeout=20).status_code == 200
        health_wait = time.monotonic() - start
        thread.join()
        assert answer["r"].status_code == 413 and "1000000 items in one request; the limit is 4096" in answer["r"].text
        assert health_wait < 2
        assert answer["r"].elapsed.total_seconds() < 5


def test_too_many_concurrent_requests(server):
    slow = {"items": [{"prediction": "$\\boxed{10^{10^{10^{10}}}}$", "gold": "1"}], "timeout": 1.5}
    first: dict = {}
    thread = threading.Thread(target=lambda: first.update(
        r=httpx.post(server + "/verify", json=slow, headers=AUTH, timeout=30)))
    thread.start()
    time.sleep(0.5)  # the first request is now being verified (max-concurrent is 1)
    second = httpx.post(server + "/verify", json={"items": [{"prediction": "1", "gold": "1"}]}, headers=AUTH, timeout=30)
    thread.join()
    assert second.status_code == 429 and second.headers["retry-after"] == "1"
    assert first["r"].status_code == 200 and first["r"].json()["results"][0]["verdict"] == "timeout"
    assert httpx.post(server + "/verify", json={"items": [{"prediction": "1", "gold": "1"}]}, headers=AUTH).status_code == 200


@pytest.mark.parametrize("args,text", [
    (["--port", "0"], "--port must be in 1..65535"),
    (["--sandbox", "cpu_secs=2"], "--sandbox must be key=value with key one of"),  # a typo in the policy
    (["--sandbox", "network=maybe"], "SandboxLimits.network must be true or false"),
    (["--body-timeout", "nan"], "--body-timeout must be a positive number"),
])
def test_bad_command_line_exits_2(args, text):
    proc = subprocess.run([sys.executable, "-m", "rewardlab.cli", "serve-verifier", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and text in proc.stderr, proc.stderr


@pytest.mark.parametrize("path", ["/health", "/verify"])
def test_oversized_or_too_many_headers_are_a_431(server, path):
    # one 1 MiB header, or 1,000 small ones (limit 100): refused on every path (the open /health included) before any work
    method = httpx.get if path == "/health" else httpx.post
    kwargs = {} if path == "/health" else {"json": {"items": []}}
    for headers in ({**AUTH, "x-big": "a" * (1 << 20)}, {**AUTH, **{f"x-h{i}": "1" for i in range(1_000)}}):
        response = method(server + path, headers=headers, timeout=30, **kwargs)
        assert response.status_code == 431, (response.status_code, response.text[:200])
        assert "limit is" in response.json()["detail"]
    assert method(server + path, headers=AUTH, timeout=30, **kwargs).status_code == 200
