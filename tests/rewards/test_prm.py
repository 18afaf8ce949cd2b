"""PRM reward: refinements by hand, the padding property, dense output, a real tiny PRM."""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

import pytest

from rewards import PRMReward, REFINEMENTS, build_reward
from rewards.prm import AGGREGATIONS, split_steps
from tests.rewards.conftest import scripted_backend
from rewards.verifier import VerifierReward


@pytest.mark.parametrize(
    "refine, scores, expected",
    [
        ("raw", [0.9, 0.6, 0.8], [0.9, 0.6, 0.8]),  # unchanged
        ("clip", [0.9, 0.6, 0.3], [0.0, 0.0, -0.2]),  # eta 0.5: only the last step is below
        ("delta", [0.9, 0.6, 0.8], [0.3, -0.2, 0.8]),  # 0.9-0.6, 0.6-0.8, last = 0.8
        ("clip-delta", [0.9, 0.2, 0.4], [0.3, -0.2, -0.1]),  # clipped [0, -0.3, -0.1] then delta
        ("delta", [0.7], [0.7]),  # one step: r_1
    ],
)
def test_refinements(refine, scores, expected):
    assert REFINEMENTS[refine](scores, 0.5) == pytest.approx(expected)


def test_delta_telescopes():
    r = [0.9, 0.4, 0.7, 0.6]
    shaped = REFINEMENTS["delta"](r, 0.5)
    for t in range(len(r)):  # the sum from step t onward equals r_t
        assert sum(shaped[t:]) == pytest.approx(r[t])


@pytest.mark.parametrize(
    "aggregate, expected",
    [("min", 0.2), ("last", 0.8), ("product", 0.9 * 0.2 * 0.8), ("mean", (0.9 + 0.2 + 0.8) / 3)],
)
def test_aggregations(aggregate, expected):
    assert AGGREGATIONS[aggregate]([0.9, 0.2, 0.8]) == pytest.approx(expected)


class TablePRM:
    """A fake PRM: the prefix score of a step is looked up by its text (a prefix PRM scores a step
    from the steps so far, so repeated steps get the same score as the original)."""

    kind = "prm"

    def __init__(self, table):
        self.table = table

    def score(self, prompts, steps, batch_size=None):
        return [NS(step_probs=[self.table[s] for s in item]) for item in steps]


PRM = TablePRM({"a": 0.9, "b": 0.7, "c": 0.95, "x": 0.3})


@pytest.mark.parametrize("refine", ["clip", "delta", "clip-delta"])
def test_padding_with_correct_steps_cannot_earn_more(refine):
    success = VerifierReward(backend=scripted_backend(["correct", "correct"]))
    fn = PRMReward(PRM, refine=refine, success=success)
    out = fn(["q", "q"], ["a\nb\nc", "a\nb\nc\nc\nc\nc"], answer=["1", "1"])
    assert out.totals[1] <= out.totals[0] + 1e-12


def test_raw_is_hackable_by_padding():
    out = PRMReward(PRM, refine="raw")(["q", "q"], ["a\nb\nc", "a\nb\nc\nc\nc"])
    assert out.totals[1] > out.totals[0]  # raw scores reward repeating a correct step


def test_dense_output_alpha_success_and_offsets():
    success = VerifierReward(backend=scripted_backend(["correct", "incorrect"]))
    fn = PRMReward(PRM, refine="clip", alpha=0.5, success=success)
    out = fn(["q", "q"], ["a\nx\n", "x\nb"], answer=["1", "1"])
    # item 0: clip [0, -0.2] * 0.5 = [0, -0.1], success 1 at the last step
    assert out.step_rewards[0] == pytest.approx([0.0, 0.9])
    assert out.step_ends[0] == [1, 3]  # "a" ends at 1, "x" at 3 (trailing separator dropped)
    # item 1: clip [-0.2, 0] * 0.5 = [-0.1, 0], success 0
    assert out.step_rewards[1] == pytest.approx([-0.1, 0.0])
    assert out.totals == pytest.approx([0.9, -0.1])
    assert list(out) == out.totals  # behaves as the list of totals


def test_outcome_form_and_empty_completion():
    out = PRMReward(PRM, aggregate="min", alpha=2.0)(["q", "q"], ["a\nx", "   "])
    assert out.step_rewards[0] == pytest.approx([0.0, 0.6])  # 2 * min(0.9, 0.3) at the last step
    assert out.totals[1] is None and out.step_rewards[1] == []
    assert fn_metrics_ok(out.metrics)


def fn_metrics_ok(metrics):
    return metrics["empty"] == 1.0 and math.isclose(metrics["prm_min_mean"], 0.3)


def test_truncated_steps_keep_the_last_visible_score():
    prm = NS(kind="prm", score=lambda p, s, batch_size=None: [NS(step_probs=[0.9, 0.8, float("nan")])])
    out = PRMReward(prm, refine="delta")(["q"], ["a\nb\nc"])
    assert out.step_rewards[0] == pytest.approx([0.1, 0.0, 0.8]) and out.metrics["truncated_steps"] == 1.0


def test_split_steps_custom_separator():
    assert split_steps("s1 ;; s2 ;; ", " ;; ") == (["s1", "s2"], [2, 8])


def test_bad_settings():
    with pytest.raises(ValueError, match="refine must be one of raw, clip, delta, clip-delta"):
        PRMReward(PRM, refine="clamp")
    with pytest.raises(ValueError, match="unknown option 'clamp'"):
        build_reward("prm:/nowhere:clamp")


@pytest.mark.slow
def test_real_tiny_prm_by_spec(tmp_path):
    from tests.rewards.rm_fixtures import make_tiny_rm

    path = make_tiny_rm(tmp_path, "prm")
    fn = build_reward(f"prm:{path}:clip-delta:success=math:alpha=0.5")
    out = fn(["12+30="] * 2, ["12+30=42\nThe answer is 42", "12+30=41\nThe answer is 41"], answer=["42", "42"])
    assert len(out.step_rewards[0]) == 2 and all(math.isfinite(x) for x in out.step_rewards[0])
    assert sum(out.step_rewards[0]) == pytest.approx(out.totals[0])
    assert out.totals[0] - out.totals[1] == pytest.approx(1.0, abs=0.5)  # success 1 vs 0 dominates alpha * (PRM part <= 0)
    with pytest.raises(ValueError, match="is a 'prm' reward model.*use prm:"):
        build_reward(f"rm:{path}")


class SeparatorPRM(TablePRM):
    config = NS(step_separator=" ")  # trained on worked arithmetic: steps separated by a space


def test_the_prm_splits_steps_as_it_was_trained_and_specs_can_say_space(monkeypatch):
    import rewards.learned

    out = PRMReward(SeparatorPRM({"a": 0.9, "b": 0.7}), refine="raw")(["q"], ["a b"])
    assert out.step_rewards[0] == pytest.approx([0.9, 0.7])  # two steps, split on the PRM's own separator
    assert PRMReward(SeparatorPRM({}), separator="\n").separator == "\n"  # an explicit separator wins
    monkeypatch.setattr(rewards.learned, "load_reward_model_for", lambda path, kind, name, **hub_options: SeparatorPRM({}))
    assert build_reward("prm:some/prm").separator == " "  # the default: the PRM's own
    for text, sep in (("space", " "), ("newline", "\n"), ("tab", "\t"), (";;", ";;")):
        assert build_reward(f"prm:some/prm:sep={text}").separator == sep
    with pytest.raises(ValueError, match="sep= is empty"):
        build_reward("prm:some/prm:sep= ")  # a bare space is stripped by the spec parser: say `space`


def test_most_completions_as_one_step_is_warned_about():
    from rewards.prm import PRMWarning

    prm = TablePRM({"a b": 0.9, "a b c": 0.5})
    with pytest.warns(PRMWarning, match="100% of the completions are a single step when split on '\\\\n'"):
        PRMReward(prm, refine="raw")(["q", "q"], ["a b", "a b c"])  # written with spaces, split on newlines


@pytest.mark.parametrize("stored, expected", [(0.0, 0.0), (0.25, 0.25), (None, 0.5)])
def test_the_prms_stored_clip_threshold_is_used_even_when_zero(stored, expected):
    # train-rm stores the 10% quantile of held-out correct-step scores; 0.0 is a real threshold, not "unset"
    model = NS(config=NS(clip_eta=stored, step_separator="\n"))
    assert PRMReward(model).eta == expected
    assert PRMReward(model, eta=0.7).eta == 0.7  # an explicit eta wins
