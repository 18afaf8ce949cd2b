"""Async rewards (`async def`, TRL's convention) and `Combine` running its parts at once."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from rewards import Combine, FormatReward, build_reward
from rewards.adapters import as_openrlhf_reward_func, as_verl_batch_compute_score, trl_reward_funcs
from rewards.combine import Gated
from rewards.concurrent import AsyncReward, call_reward, is_async_reward, run_sync
from training.reward_calls import RewardError, score

DELAY = 0.3  # each slow part; two of them one after another would take 2 * DELAY


async def slow_async_len(prompts, completions, **columns):
    """An async reward (e.g. a remote judge): waits DELAY, then the completion's length."""
    await asyncio.sleep(DELAY)
    return [float(len(c)) for c in completions]


class SlowBlocking:
    """A blocking reward (e.g. an RM forward pass) that records its own metrics and the threads it ran on."""

    def __init__(self, name: str, value: float) -> None:
        self.name, self.value, self.last_metrics, self.threads = name, value, {}, []

    @property
    def __name__(self) -> str:
        return self.name

    def __call__(self, prompts, completions, **columns):
        self.threads.append(threading.get_ident())
        time.sleep(DELAY)
        self.last_metrics = {"calls_value": self.value, "n": float(len(completions))}
        return [self.value] * len(completions)


class AsyncWithMetrics:
    """An async callable object (async `__call__`) that publishes metrics, like our reward classes."""

    name = "judge"
    __name__ = "judge"

    def __init__(self) -> None:
        self.last_metrics: dict[str, float] = {}

    async def __call__(self, prompts, completions, **columns):
        await asyncio.sleep(DELAY)
        self.last_metrics = {"yes_frac": 0.5}
        return [1.0 if "2" in c else 0.0 for c in completions]


def test_async_reward_is_recognised_in_its_three_forms():
    import functools

    # async def, a partial of one, and an object whose __call__ is async: the forms TRL awaits
    assert is_async_reward(slow_async_len)
    assert is_async_reward(functools.partial(slow_async_len))
    assert is_async_reward(AsyncWithMetrics())
    assert not is_async_reward(FormatReward("integer")) and not is_async_reward(lambda p, c, **k: [])


def test_trainer_scoring_awaits_an_async_reward():
    s = score(slow_async_len, ["q", "q"], ["ab", "abcd"], {})
    assert s.totals == [2.0, 4.0]


def test_a_failing_async_reward_is_a_reward_error_naming_it():
    async def broken(prompts, completions, **columns):
        raise ValueError("judge unreachable")

    with pytest.raises(RewardError, match="reward 'broken' raised ValueError: judge unreachable"):
        score(broken, ["q"], ["a"], {})


def test_combine_awaits_async_parts_together_and_logs_each():
    judge = AsyncWithMetrics()
    fn = Combine([("length", slow_async_len, 0.5), ("judge", judge, 1.0), ("format", FormatReward("integer"), 0.0)])
    start = time.perf_counter()
    out = fn(["q", "q"], ["12", "ab!"])
    elapsed = time.perf_counter() - start
    assert out == [0.5 * 2 + 1.0, 0.5 * 3 + 0.0]  # the weight-0 format part is logged, not summed
    assert elapsed < 1.6 * DELAY, elapsed  # at once: one after another would be 2 * DELAY
    m = fn.last_metrics
    assert m["length/mean"] == 2.5 and m["judge/mean"] == 0.5 and m["judge/yes_frac"] == 0.5
    assert m["format/mean"] == 0.5 and m["total/mean"] == 1.75


def test_combine_runs_blocking_parts_on_threads_unless_told_not_to():
    a, b = SlowBlocking("a", 1.0), SlowBlocking("b", 2.0)
    fn = Combine([("a", a, 1.0), ("b", b, 1.0)])
    start = time.perf_counter()
    assert fn(["q"], ["x"]) == [3.0]
    assert time.perf_counter() - start < 1.6 * DELAY
    assert a.threads[-1] != b.threads[-1]  # two threads
    assert fn.last_metrics["a/calls_value"] == 1.0 and fn.last_metrics["b/calls_value"] == 2.0
    serial = Combine([("a", a, 1.0), ("b", b, 1.0)], concurrent=False)
    start = time.perf_counter()
    assert serial(["q"], ["x"]) == [3.0]
    assert time.perf_counter() - start >= 2 * DELAY


def test_one_reward_object_in_two_components_is_called_in_turn_with_its_own_metrics():
    class Recorder:
        name = "rec"

        def __init__(self):
            self.last_metrics, self.active = {}, 0

        def __call__(self, prompts, completions, **columns):
            self.active += 1
            assert self.active == 1, "called twice at once: its last_metrics would mix"
            time.sleep(0.05)
            self.last_metrics = {"first": float(len(completions[0]))}
            self.active -= 1
            return [float(len(c)) for c in completions]

    shared = Recorder()
    fn = Combine([("x", shared, 1.0), ("y", shared, 2.0)])
    assert fn(["q"], ["abc"]) == [9.0]
    assert fn.last_metrics["x/first"] == fn.last_metrics["y/first"] == 3.0


def test_combine_from_inside_a_running_event_loop():
    fn = Combine([("length", slow_async_len, 1.0), ("format", FormatReward("integer"), 1.0)])

    async def main():
        awaited = await fn.acall(["q"], ["12"])
        blocking = fn(["q"], ["12"])  # a sync call inside a loop: a thread of its own runs the parts
        return awaited, blocking

    assert asyncio.run(main()) == ([3.0], [3.0])


def test_an_async_part_that_raises_fails_the_whole_call():
    async def broken(prompts, completions, **columns):
        await asyncio.sleep(0.01)
        raise ValueError("column 'answer' missing")

    fn = Combine([("ok", FormatReward("integer"), 1.0), ("broken", broken, 1.0)])
    with pytest.raises(ValueError, match="column 'answer' missing"):
        fn(["q"], ["1"])
    blocking = Combine([("ok", FormatReward("integer"), 1.0), ("bad", build_reward("verifier:math"), 1.0)])
    with pytest.raises(ValueError, match="needs the column 'answer'"):
        blocking(["q"], ["1"])  # a blocking part's error is raised too (from its thread)


def test_gate_around_an_async_reward():
    fn = Combine([("judge", AsyncWithMetrics(), 1.0), ("format", FormatReward("integer"), 0.0)], gates={"judge": "format"})
    assert fn(["q", "q"], ["12", "ab2"]) == [1.0, 0.0]  # the second fails the integer format: gate closed
    gated = Gated(AsyncWithMetrics(), FormatReward("integer"))
    assert gated.is_async and gated(["q"], ["72"]) == [1.0]


def test_trl_adapter_passes_async_rewards_through():
    judge = AsyncWithMetrics()
    combined = Combine([("judge", judge, 1.0), ("length", slow_async_len, 0.5), ("format", FormatReward("integer"), 0.1)],
                       gates={"length": "format"})
    args = trl_reward_funcs(combined)
    funcs = args["reward_funcs"]
    assert funcs[0] is judge  # passed through untouched: TRL awaits it on its own loop
    assert is_async_reward(funcs[1]) and funcs[1].__name__ == "length"  # gated async part: still awaitable
    assert not is_async_reward(funcs[2])  # a blocking part stays blocking by default
    assert args["reward_weights"] == [1.0, 0.5, 0.1]
    everything = trl_reward_funcs(combined, concurrent=True)["reward_funcs"]
    assert all(is_async_reward(f) for f in everything)
    assert isinstance(everything[2], AsyncReward) and everything[2].__name__ == "format"
    # what TRL does with them: gather the coroutines on one loop
    async def gather():
        return await asyncio.gather(*(f(prompts=["q", "q"], completions=["12", "12!"]) for f in everything))

    # "12!" is not an integer: the gate on length is closed for it
    assert run_sync(gather()) == [[1.0, 1.0], [2.0, 0.0], [1.0, 0.0]]


def test_verl_and_openrlhf_adapters_accept_async_rewards():
    assert as_verl_batch_compute_score(slow_async_len)(["d"], ["abc"], ["3"], None) == [3.0]
    out = as_openrlhf_reward_func(slow_async_len)(["q:ab"], ["q:"], ["1"])
    assert out["rewards"] == [2.0]
    assert call_reward(AsyncReward(FormatReward("integer")), ["q"], ["5"]) == [1.0]
