"""`rewardlab serve-verifier`: a real uvicorn server in a subprocess, spoken to over HTTP."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

import httpx

from tests.serving import running_server

TOKEN = "test-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def server():
    with running_server(["serve-verifier", "--token", TOKEN, "--max-items", "4", "--max-body-kb", "64",
                         "--max-concurrent", "1", "--log-level", "warning"], env={"REWARDLAB_VERIFY_WORKERS": "2"}) as url:
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
]


@pytest.mark.parametrize("headers,body,status,text", REJECTIONS)
def test_rejections(server, headers, body, status, text):
    response = httpx.post(server + "/verify", json=body, headers=headers, timeout=30)
    assert response.status_code == status, response.text
    assert text in response.text


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


def test_bad_command_line_exits_2():
    proc = subprocess.run([sys.executable, "-m", "rewardlab.cli", "serve-verifier", "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--port must be in 1..65535" in proc.stderr
