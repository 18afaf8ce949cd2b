"""Verifier reward: verdict -> float mapping, counts, gold column errors, real verifiers."""

from __future__ import annotations

import math

import pytest

from rewards import VerifierReward, build_reward, verdict_rewards
from tests.rewards.conftest import scripted_backend

ALL = ["correct", "incorrect", "no_answer", "bad_gold", "timeout", "error"]


@pytest.mark.parametrize(
    "mapping, expected",
    [
        # default: failures are None (never a silent 0), no answer counts as wrong
        ({}, [1.0, 0.0, 0.0, None, None, None]),
        # penalise unreadable answers and timeouts
        ({"no_answer": -0.5, "timeout": -1.0}, [1.0, 0.0, -0.5, None, -1.0, None]),
        # a mapping that scores bad gold as 0 on purpose (visible, not silent)
        ({"bad_gold": 0.0, "error": -0.2}, [1.0, 0.0, 0.0, 0.0, None, -0.2]),
    ],
)
def test_verdict_mapping(mapping, expected):
    backend = scripted_backend(ALL)
    fn = VerifierReward(kind="math", rewards=verdict_rewards(**mapping), backend=backend)
    out = fn(["q"] * 6, [f"c{i}" for i in range(6)], answer=["g"] * 6)
    assert out == expected
    for verdict in ALL:  # one of each verdict was returned, and each is counted
        assert fn.last_metrics[f"verdict/{verdict}"] == 1.0
    assert fn.last_metrics["accuracy"] == pytest.approx(1 / 6)
    assert fn.last_metrics["none_frac"] == pytest.approx(sum(x is None for x in expected) / 6)


def test_gold_column_configurable_and_missing_column_is_named():
    backend = scripted_backend(["correct"])
    fn = VerifierReward(kind="math", answer_column="solution", backend=backend)
    assert fn(["q"], ["4"], solution=["4"]) == [1.0]
    assert backend.calls[0][:3] == (["4"], ["4"], "math")
    with pytest.raises(ValueError, match=r"column 'solution'.*\['answer'\]"):
        fn(["q"], ["4"], answer=["4"], trainer_state=None)  # trainer extras are not listed as columns


def test_rows_without_gold_are_not_applicable():
    backend = scripted_backend(["correct"])
    fn = VerifierReward(backend=backend)
    assert fn(["q", "q"], ["4", "5"], answer=[None, "4"]) == [None, 1.0]
    assert backend.calls[0][:2] == (["5"], ["4"])  # only the row with a gold is verified
    assert fn.last_metrics["missing_gold"] == 1.0 and fn.last_metrics["none_frac"] == 0.5


def test_bad_mapping_and_lengths():
    with pytest.raises(ValueError, match="unknown verdict"):
        verdict_rewards(correctish=1.0)
    with pytest.raises(ValueError, match="missing"):
        VerifierReward(rewards={"correct": 1.0})
    fn = VerifierReward(backend=scripted_backend(["correct"] * 2))
    with pytest.raises(ValueError, match="2 prompts but 1 completions"):
        fn(["a", "b"], ["1"], answer=["1", "1"])
    with pytest.raises(ValueError, match="column 'answer' has 1 values for 2"):
        fn(["a", "b"], ["1", "2"], answer=["1"])


def test_real_math_verifier_on_arithmetic_and_chat():
    fn = build_reward("verifier:math")
    completions = [
        "579",  # exact integer
        "580",  # wrong
        [{"role": "assistant", "content": "The answer is \\boxed{579}"}],  # chat message, boxed
        "",  # nothing to read
    ]
    out = fn(["123+456="] * 4, completions, answer=["579"] * 4, completion_ids=[[1]] * 4, trainer_state=None)
    assert out == [1.0, 0.0, 1.0, 0.0]
    assert fn.last_metrics["verdict/correct"] == 2.0
    assert fn.last_metrics["verdict/no_answer"] + fn.last_metrics["verdict/incorrect"] == 2.0


def test_spec_verdict_overrides_and_logging_callback():
    fn = build_reward("verifier:math:no_answer=-0.5,bad_gold=none")
    assert fn.rewards["no_answer"] == -0.5 and fn.rewards["bad_gold"] is None
    logged = {}
    out = fn(["1+1="], ["no idea"], answer=["2"], log_metric=lambda k, v: logged.__setitem__(k, v))
    assert out == [-0.5]
    assert logged["verifier_math/verdict/no_answer"] == 1.0
    assert math.isclose(logged["verifier_math/accuracy"], 0.0)
