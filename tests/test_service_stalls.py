"""One request must not stall a service. The adversary is a client (or the policy, whose text a
client forwards): it sends text built to make a parser backtrack, up to the 16 MiB body limit. Every
parser of client text in the services and rewards reads it in linear time (metamorphic tests hold
each rewrite to the regular expression it replaced), and `/health` is answered on the event loop,
never queued behind work in the thread pool."""

from __future__ import annotations

import asyncio
import random
import re
import time

import httpx
import pytest

from rewards.environments import CalculatorEnv
from rewards.shaping import FORMAT_PATTERNS, FormatReward
from rewards.verifier import with_prompt_code

# the regular expressions these parsers replaced: the reference for what each must answer
OLD_CALC = re.compile(r"<calc>(.*?)</calc>\s*$", re.S)
OLD_DEFINES = r"^\s*def {}\("


def _defines_by_regex(text: str, name: str) -> bool:
    return re.search(OLD_DEFINES.format(re.escape(name)), text, re.M) is not None


def _texts(pieces: list[str], n: int = 20_000, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 7))) for _ in range(n)]


def test_linear_parsers_answer_as_the_regular_expressions_did():
    from rewards.environments import calc_call

    for text in _texts(["<calc>", "</calc>", " ", "\n", "1+1", "x", "<", "calc>", "\u00a0", "\x0c"]):
        m = OLD_CALC.search(text)
        assert calc_call(text) == (m.group(1) if m else None), repr(text)
    for text in _texts(["def f(", "def g(", " ", "\n", "\t", "\r", "x", "\u2028", "```"]):
        alone = _defines_by_regex(text, "f") or "```" in text  # the completion is the whole program
        assert with_prompt_code("def f(x):\n", text, "f") == (text if alone else "def f(x):\n" + text), repr(text)
    for name, pattern in FORMAT_PATTERNS.items():
        fn = FormatReward(name, reasoning="off")
        texts = _texts(["<think>", "</think>", "<answer>", "</answer>", " ", "\n", "x", "\\boxed{", "}", "{", "1", "-"], 5_000)
        expected = [1.0 if re.fullmatch(pattern, t.strip(), re.DOTALL) else 0.0 for t in texts]
        assert fn([""] * len(texts), texts) == expected, name


def _calculator_step(text: str) -> None:
    env = CalculatorEnv()
    env.reset({"answer": "1"})
    env.step(text)  # what serve-env's /step, TRL and verl call with the policy's message


def _seconds(fn, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best


# (what parses the text, the text pumped): each text makes the replaced regular expression backtrack
# quadratically (measured on the old code: 4x the text took 14-16x the time)
PUMPS = [
    ("calculator tag", _calculator_step, "<calc>", ""),
    ("calculator tag, closed early", _calculator_step, "<calc>1</calc>x", ""),
    ("entry_point, newlines", lambda t: with_prompt_code("def f(x):\n", t, "f"), "\n", "x"),
    ("entry_point, indented lines", lambda t: with_prompt_code("def f(x):\n", t, "f"), " \n", "x"),
    *[(f"format {name}", (lambda fn: lambda t: fn([""], [t]))(FormatReward(name, reasoning="off")), pump, "")
      for name, pump in (("think-answer", "</think><answer>"), ("answer-tag", "<answer>"), ("boxed", "\\boxed{"))],
    *[(f"format {name} on think tags", (lambda fn: lambda t: fn([""], [t]))(FormatReward(name, reasoning="off")), pump, "")
      for name, pump in (("think-answer", "<think></think> "),)],
]


@pytest.mark.parametrize("what,parse,pump,tail", PUMPS, ids=[p[0] for p in PUMPS])
def test_client_text_is_parsed_in_linear_time(what, parse, pump, tail):
    # 4x the text may take about 4x the time (8x allows for a loaded machine); quadratic would be 16x
    small = pump * (40_000 // len(pump)) + tail
    large = pump * (160_000 // len(pump)) + tail
    t_small, t_large = _seconds(parse, small), _seconds(parse, large)
    assert t_large < max(8 * t_small, 0.05), f"{what}: {len(small)} chars {t_small:.4f} s, {len(large)} chars {t_large:.4f} s"


def _apps():
    from rewards import build_reward
    from rewards.env_service import create_env_app
    from rewards.environments import build_env
    from rewards.service import create_app as reward_app
    from verifiers.service import create_app as verifier_app

    return {"serve-verifier": verifier_app(), "serve-reward": reward_app(build_reward("format:integer"), "format:integer"),
            "serve-env": create_env_app(build_env("calculator"), "calculator")}


@pytest.mark.parametrize("service", ["serve-verifier", "serve-reward", "serve-env"])
def test_health_answers_while_the_thread_pool_is_full(service):
    # 44 slow calls fill the thread pool (40 threads) that synchronous routes share; /health must not wait for them
    app = _apps()[service]

    @app.post("/slow")
    def slow() -> dict:
        time.sleep(2.0)
        return {}

    async def run() -> float:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            calls = [asyncio.create_task(client.post("/slow", json={})) for _ in range(44)]
            await asyncio.sleep(0.3)  # the pool is full now
            start = time.perf_counter()
            health = await client.get("/health")
            waited = time.perf_counter() - start
            assert health.status_code == 200
            assert all(r.status_code == 200 for r in await asyncio.gather(*calls))
            return waited

    waited = asyncio.run(run())
    assert waited < 1.0, f"/health waited {waited:.2f} s behind the work"
