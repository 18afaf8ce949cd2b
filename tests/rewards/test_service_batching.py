"""The reward and verifier services under many concurrent single-item clients: requests are
micro-batched, none is lost, backpressure only when the queue is full, deadlines hold."""

from __future__ import annotations

import concurrent.futures
import threading

import httpx
import pytest

from tests.serving import OpenRLHFClient, running_server

pytestmark = pytest.mark.slow  # real uvicorn servers in subprocesses

CLIENTS = 64


def _problems(n: int) -> list[tuple[str, str, str, float]]:
    """(query, prompt, label, expected reward) for `verifier:math*1.0+format:integer*0.5`."""
    out = []
    for i in range(n):
        a, b = i % 50, (7 * i) % 90
        prompt, gold = f"{a}+{b}=", str(a + b)
        answer = gold if i % 3 else str(a + b + 1)  # every third is wrong
        out.append((prompt + answer, prompt, gold, 1.5 if i % 3 else 0.5))
    return out


def _run_clients(url: str, problems: list, clients: int = CLIENTS) -> tuple[list, list[int]]:
    """`clients` OpenRLHF-style clients at once, each sending its share of `problems` one by one."""
    shares = [problems[i::clients] for i in range(clients)]
    results: dict[int, list] = {}
    statuses: list[int] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        c = OpenRLHFClient(url + "/get_reward")
        try:
            got = [c.reward(q, p, label) for q, p, label, _ in shares[k]]
        finally:
            c.close()
        with lock:
            results[k] = got
            statuses.extend(c.statuses)

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    flat = [None] * len(problems)
    for k in range(clients):
        for j, value in enumerate(results[k]):
            flat[k + j * clients] = value
    return flat, statuses


def test_64_openrlhf_clients_lose_no_reward_and_are_batched():
    with running_server(["serve-reward", "--reward", "verifier:math*1.0+format:integer*0.5", "--log-level", "warning"]) as url:
        problems = _problems(4 * CLIENTS)
        rewards, statuses = _run_clients(url, problems)
        assert [r is None for r in rewards].count(True) == 0  # zero lost rewards
        assert rewards == [p[3] for p in problems]  # and each is the reward of its own query
        assert set(statuses) == {200}  # not one retry was needed: the queue had room
        stats = httpx.get(url + "/stats").json()
        assert stats["itemwise"] and stats["batching"]["requests"] == len(problems)
        assert stats["batching"]["mean_batch"] > 2  # concurrent single items were scored together


def test_verifier_service_batches_single_items_and_keeps_each_timeout():
    with running_server(["serve-verifier", "--log-level", "warning", "--batch-wait", "0.05"],
                        env={"REWARDLAB_VERIFY_WORKERS": "2"}) as url:
        items = [({"prediction": f"\\boxed{{{i}}}", "gold": str(i if i % 4 else i + 1)}, "correct" if i % 4 else "incorrect")
                 for i in range(CLIENTS)]
        tower = {"prediction": "$\\boxed{9^{9^{9^{9}}}}$", "gold": "1"}

        def one(item):
            with httpx.Client(timeout=60) as c:
                return c.post(url + "/verify", json={"items": [item]}).json()["results"][0]["verdict"]

        def slow():
            with httpx.Client(timeout=60) as c:
                return c.post(url + "/verify", json={"items": [tower], "timeout": 0.5}).json()["results"][0]["verdict"]

        with concurrent.futures.ThreadPoolExecutor(CLIENTS + 1) as pool:
            tower_verdict = pool.submit(slow)
            verdicts = list(pool.map(one, [it for it, _ in items]))
        assert verdicts == [v for _, v in items]
        assert tower_verdict.result() == "timeout"  # its own 0.5 s limit, inside a shared batch
        batching = httpx.get(url + "/health").json()["batching"]
        assert batching["requests"] == CLIENTS + 1 and batching["mean_batch"] > 2


def test_backpressure_only_when_the_queue_is_full_and_deadlines():
    with running_server(["serve-reward", "--reward", "tests.rewards.user_reward:slow_length", "--batch-items", "2",
                         "--max-queue", "4", "--request-timeout", "0.5", "--log-level", "warning"]) as url:
        def post(text):
            with httpx.Client(timeout=30) as c:
                return c.post(url + "/reward", json={"prompts": ["p"], "completions": [text]})

        # one at a time: never refused
        assert [post("ab").json()["rewards"] for _ in range(3)] == [[2.0]] * 3
        # 16 at once: 2 scored per 0.2 s call, 4 may wait; the rest are told when to come back
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(post, ["x" * (i + 1) for i in range(16)]))
        codes = [a.status_code for a in answers]
        assert set(codes) <= {200, 503, 504} and 503 in codes, codes
        for i, a in enumerate(answers):
            if a.status_code == 200:
                assert a.json()["rewards"] == [float(i + 1)]
            if a.status_code == 503:
                assert int(a.headers["retry-after"]) >= 1 and "queue is full" in a.json()["detail"]
        served = codes.count(200)
        assert served >= 3, codes  # the first call (1-2 items) and the next (2 from the queue) end within the deadline
        # deadline: 5 at once always fit in the queue (1 or 2 run, the rest wait); the third call would
        # end at 0.6 s, past the 0.5 s deadline: its requests get 504 (OpenRLHF's client would retry them)
        with concurrent.futures.ThreadPoolExecutor(5) as pool:
            answers = list(pool.map(post, ["y"] * 5))
        codes = [a.status_code for a in answers]
        assert 503 not in codes and 504 in codes and codes.count(200) >= 2, codes
        assert all("request deadline of 0.5 s" in a.json()["detail"] for a in answers if a.status_code == 504)


def test_a_group_reward_never_merges_requests():
    # ttrl votes among the completions of a prompt in one call: merging two requests would change the vote
    with running_server(["serve-reward", "--reward", "ttrl", "--batch-wait", "0.3", "--log-level", "warning"]) as url:
        a = {"prompts": ["p"] * 3, "completions": ["5", "5", "6"]}
        b = {"prompts": ["p"] * 4, "completions": ["6", "6", "6", "5"]}
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            ra, rb = pool.map(lambda body: httpx.post(url + "/reward", json=body, timeout=30).json(), [a, b])
        assert ra["rewards"] == [1.0, 1.0, 0.0]  # its own majority (5), not the merged one (6)
        assert rb["rewards"] == [1.0, 1.0, 1.0, 0.0]
        assert httpx.get(url + "/stats").json()["itemwise"] is False
