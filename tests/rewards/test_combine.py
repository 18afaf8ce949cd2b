"""Combine: weights, log-only components, normalisation order, gating, clipping, None policies, dense."""

from __future__ import annotations

import pytest

from rewards import Combine, Gated, RewardOutput
from rewards.adapters import trl_reward_funcs


def const(values, name):
    def fn(prompts, completions, **kw):
        fn.last_metrics = {"calls": 1.0}
        return list(values)

    fn.__name__ = name
    return fn


A = const([1.0, 0.0, 1.0, None], "a")  # e.g. correctness (None: not applicable)
B = const([1.0, 1.0, 0.0, 1.0], "b")  # e.g. format
C = const([0.5, 2.5, 4.5, 6.5], "c")  # e.g. an RM score
P4 = ["p", "p", "q", "q"]


@pytest.mark.parametrize(
    "settings, expected",
    [
        # weighted sum, None skipped: [1 + 0.5, 0 + 0.5, 1 + 0, 0.5]
        (dict(components=[("a", A, 1.0), ("b", B, 0.5)]), [1.5, 0.5, 1.0, 0.5]),
        # weight 0 = log only: c does not change the total
        (dict(components=[("a", A, 1.0), ("c", C, 0.0)]), [1.0, 0.0, 1.0, None]),
        # None counts as zero
        (dict(components=[("a", A, 1.0), ("b", B, 0.5)], none="zero"), [1.5, 0.5, 1.0, 0.5]),
        # None propagates to the total
        (dict(components=[("a", A, 1.0), ("b", B, 0.5)], none="propagate"), [1.5, 0.5, 1.0, None]),
        # gating: c counts only where b (format) passes: [0.5, 2.5, 0 (gate closed), 6.5]
        (dict(components=[("c", C, 1.0), ("b", B, 0.0)], gates={"c": "b"}), [0.5, 2.5, 0.0, 6.5]),
        # clipping the total to [1, 5]
        (dict(components=[("c", C, 1.0)], clip=(1.0, 5.0)), [1.0, 2.5, 4.5, 5.0]),
        # sum then normalise per group: totals [0.5, 2.5 | 4.5, 6.5] -> z-scores -1, 1 in each prompt group
        (dict(components=[("c", C, 1.0)], normalize="group", order="sum_then_normalize"), [-1.0, 1.0, -1.0, 1.0]),
        # normalise each component over the batch, then sum: mean 3.5, std sqrt(5): 2 * z(c)
        (dict(components=[("c", C, 2.0)], normalize="batch"), [-2.683282, -0.894427, 0.894427, 2.683282]),
    ],
)
def test_combine_table(settings, expected):
    fn = Combine(**settings)
    out = fn(P4, ["x"] * 4)
    assert out == [None if e is None else pytest.approx(e, abs=1e-4) for e in expected]


def test_every_component_is_logged_under_its_name():
    fn = Combine([("a", A, 1.0), ("c", C, 0.0)])
    fn(P4, ["x"] * 4)
    m = fn.last_metrics
    assert m["a/mean"] == pytest.approx(2 / 3) and m["a/none_frac"] == 0.25
    assert m["c/mean"] == 3.5  # logged although its weight is 0
    assert m["a/calls"] == 1.0  # the component's own metrics, under its name
    assert m["total/mean"] == pytest.approx(2 / 3)


def test_dense_component_keeps_steps_and_sums_to_total():
    def dense(prompts, completions, **kw):
        return RewardOutput(totals=[0.3, None], step_rewards=[[0.1, 0.2], []], step_ends=[[2, 5], []])

    fn = Combine([("prm", dense, 2.0), ("b", const([1.0, 1.0], "b"), 0.5)])
    out = fn(["p", "q"], ["ab\ncd", "x"])
    assert isinstance(out, RewardOutput)
    # item 0: 2 * [0.1, 0.2] then + 0.5 (b) on the last step -> total 1.1
    assert out.step_rewards[0] == pytest.approx([0.2, 0.9]) and out.totals[0] == pytest.approx(1.1)
    # item 1: the PRM gave None, b still counts (skip policy): total 0.5 as one step
    assert out.totals[1] == 0.5 and out.step_rewards[1] == [0.5]


def test_trl_form_applies_gates_by_wrapping():
    fn = Combine([("c", C, 1.0), ("b", B, 0.2)], gates={"c": "b"})
    args = trl_reward_funcs(fn)
    assert args["reward_weights"] == [1.0, 0.2]
    gated = args["reward_funcs"][0]
    assert isinstance(gated, Gated) and gated.__name__ == "c"
    assert gated(P4, ["x"] * 4) == [0.5, 2.5, 0.0, 6.5]


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(components=[]), "at least one component"),
        (dict(components=[("a", A, 1), ("a", B, 1)]), "distinct"),
        (dict(components=[("a", A, 1)], normalize="minmax"), "normalize must be one of none, batch, group"),
        (dict(components=[("a", A, 1)], none="drop"), "none must be one of skip, zero, propagate"),
        (dict(components=[("a", A, 1)], gates={"a": "fmt"}), "both must be component names"),
    ],
)
def test_bad_settings(settings, message):
    with pytest.raises(ValueError, match=message):
        Combine(**settings)


def test_component_returning_wrong_length_is_named():
    fn = Combine([("short", const([1.0], "short"), 1.0)])
    with pytest.raises(ValueError, match="component 'short' returned 1 rewards for 4"):
        fn(P4, ["x"] * 4)
