"""Remote judges against a real OpenAI chat-completions server on 127.0.0.1 (tests/openai_server.py):
the concurrency limit, the rate limit, retries with backoff (Retry-After honoured), timeouts, the
cache, and failures that give None with their reason counted - never 0. Then the rewards built on
a judge: judge:, hybrid: (rule verifier first), genrm: (P(yes) and pointwise), fapo:."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from openai_server import judge_server  # noqa: E402

from reward_models.remote import Limits, RemoteJudge  # noqa: E402
from rewards import build_reward  # noqa: E402

FAST = dict(backoff=0.02, timeout=5.0)


def judge(server, **limits) -> RemoteJudge:
    return RemoteJudge(server.url, limits=Limits(**{**FAST, **limits}))


def test_concurrency_limit_bounds_requests_in_flight():
    with judge_server(delay=0.15) as srv:
        j = judge(srv, concurrency=3, cache=0)
        start = time.perf_counter()
        out = j.p_yes(["12+7="] * 12, ["19"] * 12)
        elapsed = time.perf_counter() - start
    assert out == pytest.approx([0.9] * 12)
    assert srv.control.max_in_flight == 3  # never more than 3 at once, and the limit was used
    assert elapsed >= 4 * 0.15  # 12 requests, 3 at a time, 0.15 s each


def test_rate_limit_spaces_request_starts():
    with judge_server() as srv:
        j = judge(srv, rate=20.0, concurrency=8, cache=0)
        j.generate([f"q{i}" for i in range(10)], max_new_tokens=4)
        starts = srv.control.starts
    assert len(starts) == 10
    assert starts[-1] - starts[0] >= 9 / 20 * 0.9  # 10 starts at <= 20 per second (10% jitter allowed)


def test_retries_back_off_and_honour_retry_after():
    with judge_server(fail_first=2, retry_after=0.3) as srv:
        j = judge(srv, concurrency=1, retries=3)
        start = time.perf_counter()
        out = j.judge_reference(["1+1="], ["2"], ["2"])
        elapsed = time.perf_counter() - start
    assert out == [True]
    assert j.stats.retries == 2 and j.stats.requests == 3 and not j.stats.failures
    assert elapsed >= 0.6  # two waits of Retry-After: 0.3 s


@pytest.mark.parametrize("status, reason, requests", [
    (429, "http_429", 3),  # rate limited every time: retried, then given up
    (503, "http_5xx", 3),  # server overloaded: retried
    (400, "http_4xx", 1),  # a bad request is not retried
])
def test_failures_give_none_with_the_reason_counted(status, reason, requests):
    with judge_server(fail_first=100, fail_status=status) as srv:
        j = judge(srv, retries=2)
        fn = build_reward(f"judge:{srv.url}:retries=2,backoff=0.01")
        out = fn(["1+1="], ["2"], answer=["2"])
        direct = j.judge_reference(["1+1="], ["2"], ["3"])
    assert out == [None] and direct == [None]  # never 0
    assert j.stats.failures == {reason: 1} and j.stats.requests == requests
    assert fn.last_metrics["failed"] == 1.0 and fn.last_metrics[f"judge/failed/{reason}"] == 1.0
    assert fn.last_metrics["none_frac"] == 1.0


def test_timeouts_are_retried_then_counted():
    with judge_server(delay=1.0) as srv:
        j = judge(srv, timeout=0.2, retries=1)
        assert j.generate(["slow"], max_new_tokens=4) == [None]
    assert j.stats.failures == {"timeout": 1} and j.stats.requests == 2


def test_a_server_that_is_down_is_a_counted_connect_failure():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    j = RemoteJudge(f"http://127.0.0.1:{port}/v1", model="judge", limits=Limits(retries=1, **FAST))
    assert j.p_yes(["1+1="], ["2"]) == [None]
    assert j.stats.failures == {"connect": 1}


def test_unreadable_and_malformed_replies_are_none_and_counted():
    with judge_server(garbage_every=2, malformed_every=3) as srv:  # request 2: unreadable text; 3: no `choices`
        j = judge(srv, concurrency=1, cache=0)
        out = j.judge_reference(["q"] * 3, ["2"] * 3, ["2"] * 3)
    assert out == [True, None, None]
    assert j.stats.failures == {"unparseable": 1, "bad_response": 1}


def test_cache_answers_a_repeated_question_without_a_request():
    with judge_server() as srv:
        j = judge(srv)
        first = j.p_yes(["12+7="] * 2, ["19", "20"])
        again = j.p_yes(["12+7="], ["20"])
        assert srv.control.requests == 2
    assert again == [first[1]] and j.stats.cache_hits == 1


def test_the_judge_works_from_threads_and_inside_a_running_event_loop():
    with judge_server(delay=0.02) as srv:
        fn = build_reward(f"judge:{srv.url}:concurrency=4")
        with ThreadPoolExecutor(4) as pool:  # several trainer threads share one judge
            results = list(pool.map(lambda i: fn(["1+1="], [str(i)], answer=["2"])[0], range(6)))
        assert results == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]

        async def main():  # a reward called synchronously from async code (e.g. an async trainer)
            return fn(["2+2="], ["4"], answer=["4"])

        assert asyncio.run(main()) == [1.0]


# ---------------------------------------------------------------- rewards on a judge
def test_hybrid_asks_the_judge_only_about_what_the_rule_rejects():
    with judge_server() as srv:
        fn = build_reward(f"hybrid:math:{srv.url}")
        # correct by rule | no answer the rule can read, the judge reads "sept" | wrong | judge fails to help
        out = fn(["3+4="] * 4, ["7", "sept", "8", "huit"], answer=["7"] * 4)
        asked = srv.control.requests
    assert out == [1.0, 1.0, 0.0, 0.0]
    assert asked == 3  # the rule's CORRECT verdict is never sent
    m = fn.last_metrics
    assert (m["judge_asked"], m["judge_yes"], m["judge_no"], m["verifier/verdict/correct"]) == (3.0, 1.0, 2.0, 1.0)


def test_hybrid_ask_option_and_failed_judgments():
    with judge_server(fail_first=100) as srv:
        only_wrong = build_reward(f"hybrid:math:{srv.url}:ask=incorrect,retries=0")
        out = only_wrong(["3+4="] * 3, ["7", "sept", "8"], answer=["7"] * 3)
    # "sept" has no number the rule reads: NO_ANSWER is not asked about here; "8" is asked, the judge fails -> None, not 0
    assert out == [1.0, 0.0, None]
    assert only_wrong.last_metrics["judge_failed"] == 1.0 and only_wrong.last_metrics["judge/failed/http_429"] == 1.0
    with pytest.raises(ValueError, match="ask"):
        build_reward("hybrid:math:http://127.0.0.1:1/v1:model=x,ask=correct")


def test_genrm_with_a_url_uses_the_remote_judge_for_p_yes_and_pointwise():
    with judge_server() as srv:
        pyes = build_reward(f"genrm:{srv.url}:model=judge")
        assert pyes(["12+7="] * 2, ["19", "18"]) == pytest.approx([0.9, 0.1])
        point = build_reward(f"genrm:{srv.url}:pointwise:k=2")
        assert point(["1+1="] * 2 + ["2+2="] * 2, ["2", "3", "4", "5"]) == [9.0, 2.0, 9.0, 2.0]
        assert point.last_metrics["judge/requests"] == 4.0  # 2 prompts x k=2 judgments, sent together
        fapo = build_reward(f"fapo:{srv.url}:math")
        assert fapo(["1+1="] * 2, ["1+1=2\n2", "3"], answer=["2", "2"]) == [1.0, 0.0]


def test_genrm_pointwise_failures_are_none_not_zero():
    with judge_server(fail_first=100) as srv:
        point = build_reward(f"genrm:{srv.url}:pointwise:k=2,retries=0")
        out = point(["1+1="] * 2, ["2", "3"])
    assert out == [None, None] and point.last_metrics["none_frac"] == 1.0


def test_judge_spec_keeps_the_url_whole_and_checks_options():
    from rewards.spec import split_spec

    assert split_spec("hybrid:math:https://api.example.com/v1:model=m")[2] == "https://api.example.com/v1"
    with pytest.raises(ValueError, match=r"unknown option 'concurency' \(did you mean 'concurrency'\?\)"):
        build_reward("judge:http://127.0.0.1:1/v1:model=m,concurency=2")
    with pytest.raises(ValueError, match="model="):  # no model named and GET /models unreachable
        build_reward("judge:http://127.0.0.1:1/v1:retries=0")
