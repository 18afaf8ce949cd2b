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


# ---- reasoning models: (prompt, completion, reasoning mode, gold, expected reward), one comment each
REASONING = [
    ("2+2=", "<think>maybe \\boxed{5}</think> The answer is \\boxed{4}", "auto", "4", 1.0),  # a box inside the reasoning is not the answer
    ("2+2=", "<think>it is \\boxed{4}</think> The answer is \\boxed{5}", "auto", "4", 0.0),  # ... nor when it is right and the answer wrong
    ("2+2=", "<think>it is \\boxed{4}", "auto", "4", 0.0),  # reasoning never closed: no answer (NO_ANSWER)
    ("2+2=", "<think>a</think> 3 <think>b</think> \\boxed{4}", "auto", "4", 1.0),  # several blocks: after the last one
    ("2+2=", "<think>a</think> \\boxed{4} <think>b", "auto", "4", 0.0),  # a block reopened and not closed
    ("2+2=<think>\n", "so \\boxed{5}? no.</think> \\boxed{4}", "auto", "4", 1.0),  # prompt prefilled <think>: answer after </think>
    ("2+2=<think>\n", "so it is \\boxed{4}", "auto", "4", 0.0),  # prefilled and never closed: no answer
    ([{"role": "user", "content": "2+2="}], "so \\boxed{5}? no.</think> \\boxed{4}", "auto", "4", 1.0),  # chat prompt: the closing tag shows the prefill
    ([{"role": "user", "content": "2+2="}], "so it is \\boxed{4}", "auto", "4", 1.0),  # no tags at all: read whole
    ([{"role": "user", "content": "2+2="}], "so it is \\boxed{4}", "prefilled", "4", 0.0),  # the template always prefills: unclosed
    ([{"role": "user", "content": "2+2="}], "hmm \\boxed{5}</think> \\boxed{4}", "prefilled", "4", 1.0),  # prefilled, closed
    ("2+2=", "<think>\\boxed{4}</think> \\boxed{5}", "off", "4", 0.0),  # off: two boxes read as a set, a hedge
    ("2+2=", "<think>it is 4</think> Answer: 4", "off", "4", 1.0),  # off: the text is read as it is
    ("2+2=", "<think>so 4</think> Réponse : 4", "auto", "4", 1.0),  # answer prefix in another language after the reasoning
]


@pytest.mark.parametrize("prompt, completion, reasoning, gold, expected", REASONING,
                         ids=[f"{i}:{c[1][:30]!r}-{c[2]}" for i, c in enumerate(REASONING)])
def test_reasoning_answer_is_read_after_think(prompt, completion, reasoning, gold, expected):
    fn = VerifierReward(kind="math", reasoning=reasoning)
    assert fn([prompt], [completion], answer=[gold]) == [expected]


def test_unclosed_reasoning_is_no_answer_and_counted():
    backend = scripted_backend(["correct"])
    fn = VerifierReward(backend=backend, rewards=verdict_rewards(no_answer=-0.5))
    out = fn(["q", "q <think>"], ["<think>x</think> 4", "still thinking 4"], answer=["4", "4"])
    assert out == [1.0, -0.5]  # the unclosed one is NO_ANSWER, through the visible mapping
    assert backend.calls[0][0] == [" 4"]  # only the answer part of the closed turn was sent
    assert fn.last_metrics["unclosed_reasoning"] == 1.0 and fn.last_metrics["verdict/no_answer"] == 1.0


def test_reasoning_mode_is_checked_and_in_the_spec():
    with pytest.raises(ValueError, match="reasoning must be one of 'auto', 'prefilled', 'off'"):
        VerifierReward(reasoning="on")
    fn = build_reward("verifier:math:reasoning=prefilled")
    assert fn.reasoning == "prefilled"
    assert fn(["q"], ["4"], answer=["4"]) == [0.0]  # prefilled and never closed: no answer
