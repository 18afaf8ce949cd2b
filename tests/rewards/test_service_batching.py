"""The reward and verifier services under many concurrent single-item clients: requests are
micro-batched, none is lost, backpressure only when the queue is full, deadlines hold."""

from __future__ import annotations

import concurrent.futures
import threading

import httpx
import pytest

from tests.serving import SERVICE_AUTH, OpenRLHFClient, running_server

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
        stats = httpx.get(url + "/stats", headers=SERVICE_AUTH).json()
        assert stats["itemwise"] and stats["batching"]["requests"] == len(problems)
        assert stats["batching"]["mean_batch"] > 2  # concurrent single items were scored together


def test_verifier_service_batches_single_items_and_keeps_each_timeout():
    with running_server(["serve-verifier", "--log-level", "warning", "--batch-wait", "0.05"],
                        env={"REWARDLAB_VERIFY_WORKERS": "2"}) as url:
        items = [({"prediction": f"\\boxed{{{i}}}", "gold": str(i if i % 4 else i + 1)}, "correct" if i % 4 else "incorrect")
                 for i in range(CLIENTS)]
        tower = {"prediction": "$\\boxed{9^{9^{9^{9}}}}$", "gold": "1"}

        def one(item):
            with httpx.Client(timeout=60, headers=SERVICE_AUTH) as c:
                return c.post(url + "/verify", json={"items": [item]}).json()["results"][0]["verdict"]

        def slow():
            with httpx.Client(timeout=60, headers=SERVICE_AUTH) as c:
                return c.post(url + "/verify", json={"items": [tower], "timeout": 0.5}).json()["results"][0]["verdict"]

        with concurrent.futures.ThreadPoolExecutor(CLIENTS + 1) as pool:
            tower_verdict = pool.submit(slow)
            verdicts = list(pool.map(one, [it for it, _ in items]))
        assert verdicts == [v for _, v in items]
        assert tower_verdict.result() == "timeout"  # its own 0.5 s limit, inside a shared batch
        batching = httpx.get(url + "/health").json()["batching"]
        assert batching["requests"] == CLIENTS + 1 and batching["mean_batch"] > 2


def _post(url: str, text: str) -> httpx.Response:
    with httpx.Client(timeout=30, headers=SERVICE_AUTH) as c:
        return c.post(url + "/reward", json={"prompts": ["p"], "completions": [text]})


def test_backpressure_only_when_the_queue_is_full():
    # a long deadline, so the only answers are 200 and 503: which ones depends on arrival order, not on timing
    with running_server(["serve-reward", "--reward", "tests.rewards.user_reward:slow_length", "--batch-items", "2",
                         "--max-queue", "4", "--request-timeout", "60", "--log-level", "warning"]) as url:
        # one at a time: never refused
        assert [_post(url, "ab").json()["rewards"] for _ in range(3)] == [[2.0]] * 3
        # 16 at once: 2 scored per 0.2 s call, 4 may wait; the rest are told when to come back
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda i: _post(url, "x" * (i + 1)), range(16)))
        codes = [a.status_code for a in answers]
        assert set(codes) == {200, 503}, codes
        for i, a in enumerate(answers):
            if a.status_code == 200:
                assert a.json()["rewards"] == [float(i + 1)]
            else:
                assert int(a.headers["retry-after"]) >= 1 and "queue is full" in a.json()["detail"]
        assert codes.count(200) >= 4, codes  # a queue with room never refuses: the first 4 to arrive always fit
        assert httpx.get(url + "/stats", headers=SERVICE_AUTH).json()["batching"]["refused"] == codes.count(503)


def test_a_request_past_its_deadline_gets_504_and_the_others_their_reward():
    # one item per 0.2 s call and a queue that never fills: 5 at once end at 0.2, 0.4, 0.6, 0.8, 1.0 s,
    # so the first is always within the 0.5 s deadline and the last two never are
    with running_server(["serve-reward", "--reward", "tests.rewards.user_reward:slow_length", "--batch-items", "1",
                         "--max-queue", "64", "--request-timeout", "0.5", "--log-level", "warning"]) as url:
        with concurrent.futures.ThreadPoolExecutor(5) as pool:
            answers = list(pool.map(lambda _: _post(url, "y"), range(5)))
        codes = [a.status_code for a in answers]
        assert set(codes) == {200, 504} and codes.count(200) >= 1 and codes.count(504) >= 2, codes
        assert all(a.json()["rewards"] == [1.0] for a in answers if a.status_code == 200)
        # OpenRLHF's client would retry these
        assert all("request deadline of 0.5 s" in a.json()["detail"] for a in answers if a.status_code == 504)


def test_a_group_reward_never_merges_requests():
    # ttrl votes among the completions of a prompt in one call: merging two requests would change the vote
    with running_server(["serve-reward", "--reward", "ttrl", "--batch-wait", "0.3", "--log-level", "warning"]) as url:
        a = {"prompts": ["p"] * 3, "completions": ["5", "5", "6"]}
        b = {"prompts": ["p"] * 4, "completions": ["6", "6", "6", "5"]}
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            ra, rb = pool.map(lambda body: httpx.post(url + "/reward", json=body, headers=SERVICE_AUTH, timeout=30).json(), [a, b])
        assert ra["rewards"] == [1.0, 1.0, 0.0]  # its own majority (5), not the merged one (6)
        assert rb["rewards"] == [1.0, 1.0, 1.0, 0.0]
        assert httpx.get(url + "/stats", headers=SERVICE_AUTH).json()["itemwise"] is False
