"""Generative-RM rewards: P(Yes), pointwise voting per prompt group, the flawed-positive check."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from rewards import FlawedPositiveReward, GenerativeRMReward, judge_first_error
from rewards.generative import parse_step_index
from rewards.verifier import VerifierReward
from tests.rewards.conftest import scripted_backend


class Judge:
    """A judge following the GenerativeJudge contract; records its calls."""

    def __init__(self, first_errors=None):
        self.calls = []
        self.first_errors = first_errors or []

    def p_yes(self, questions, solutions):
        self.calls.append(("p_yes", list(questions), list(solutions)))
        return [0.8 if s.strip().endswith("4") else 0.1 for s in solutions]

    def pointwise(self, prompt, responses, k=4, seed=0):
        self.calls.append(("pointwise", prompt, list(responses), k))
        # each of k judgments gives 9 to a right answer and 2 to a wrong one; a "??" response makes
        # the judgments of its prompt unparseable (the contract drops whole judgments)
        if "??" in responses:
            return NS(scores=[0] * len(responses), n_judgments=k, n_unparseable=k)
        return NS(scores=[(9 if r.endswith("4") else 2) * k for r in responses], n_judgments=k, n_unparseable=0)

    def generate(self, prompts, max_new_tokens=8, **kw):
        self.calls.append(("generate", list(prompts)))
        return self.first_errors[: len(prompts)]


def test_p_yes_scores():
    judge = Judge()
    fn = GenerativeRMReward(judge)
    assert fn(["2+2="] * 2, ["so 4", "so 5"]) == [0.8, 0.1]
    assert judge.calls[0][1] == ["2+2="] * 2  # the question is the prompt
    assert fn.last_metrics["p_yes_mean"] == pytest.approx(0.45)


def test_pointwise_votes_per_prompt_group():
    judge = Judge()
    fn = GenerativeRMReward(judge, mode="pointwise", k=3)
    out = fn(["2+2=", "3+1=", "2+2=", "3+1="], ["4", "5", "7", "??"])
    # 2+2=: k = 3 judgments, sums 27 and 6 -> mean votes 9 and 2; 3+1=: no judgment parsed -> None, not 0
    assert out == [9.0, None, 2.0, None]
    assert [c[1] for c in judge.calls] == ["2+2=", "3+1="]  # one judge call per prompt with its responses
    assert fn.last_metrics["n_unparseable"] == 3.0 and fn.last_metrics["unparseable_frac"] == 0.5
    raw = GenerativeRMReward(Judge(), mode="pointwise", k=3, average=False)
    assert raw(["2+2=", "2+2="], ["4", "7"]) == [27.0, 6.0]  # the voted sum


@pytest.mark.parametrize(
    "verdicts, first_errors, expected, flawed",
    [
        # right answer, clean working -> keeps 1; right answer with step 2 wrong -> 1 - 1 = 0
        (["correct", "correct"], ["-1", "2"], [1.0, 0.0], 1.0),
        # wrong answers are not checked (the judge is never asked)
        (["incorrect", "correct"], ["1"], [0.0, 0.0], 1.0),
        # an unreadable judge answer leaves the reward and is counted
        (["correct", "correct"], ["no idea", "-1"], [1.0, 1.0], 0.0),
    ],
)
def test_flawed_positive_check(verdicts, first_errors, expected, flawed):
    judge = Judge(first_errors)
    base = VerifierReward(backend=scripted_backend(verdicts))
    fn = FlawedPositiveReward(base, judge_first_error(judge))
    out = fn(["2+2="] * 2, ["2+2=4\n4", "2+2=5\n4"], answer=["4", "4"])
    assert out == expected
    assert fn.last_metrics["flawed_positives"] == flawed
    asked = judge.calls[0][1]
    assert len(asked) == verdicts.count("correct") and "1. 2+2=" in asked[0]  # numbered steps shown to the judge


@pytest.mark.parametrize(
    "text, expected",
    [("3", 2), (" Step 1.", 0), ("-1", -1), ("7", None), ("none", None)],  # 1-based -> 0-based; out of range -> None
)
def test_parse_step_index(text, expected):
    assert parse_step_index(text, 3) == expected


def test_bad_mode():
    with pytest.raises(ValueError, match="mode must be one of pyes, pointwise"):
        GenerativeRMReward(Judge(), mode="pairwise")


@pytest.mark.slow
def test_real_generative_judge_by_spec(tmp_path):
    from reward_models import local_judge
    from rewards import build_reward
    from tests.rewards.rm_fixtures import make_tiny_causal_lm

    chars = "0123456789+-=.: ?abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n[]"
    path, _ = make_tiny_causal_lm(tmp_path, chars, name="judge")
    judge = local_judge.GenerativeJudge.from_pretrained(path)
    prompts, completions = ["2+2="] * 2, ["4", "5"]
    p_yes = build_reward(f"genrm:{path}")
    out = p_yes(prompts, completions)
    assert out == pytest.approx(judge.p_yes(prompts, completions)) and all(0.0 <= x <= 1.0 for x in out)
    # an untrained judge writes no parseable scores: None (counted), never a silent 0
    pointwise = build_reward(f"genrm:{path}:pointwise:k=2:max_new_tokens=24")
    assert pointwise(prompts, completions) == [None, None]
    assert pointwise.last_metrics["unparseable_frac"] == 1.0
    # FAPO with the real judge: its answers are unreadable, so rewards stay and the count says so
    fapo = build_reward(f"fapo:{path}")
    out = fapo(prompts, ["2+2=4\n4", "2+2=4\n5"], answer=["4", "4"])
    m = fapo.last_metrics
    assert m["positives"] == 1.0 and m["judge_unreadable"] + m["flawed_positives"] == 1.0  # the judge was asked once
    assert out == [1.0 - m["flawed_positives"], 0.0]
