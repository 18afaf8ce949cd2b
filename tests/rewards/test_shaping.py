"""Shaping rewards: format, overlong, repetition, length, confidence calibration (hand-computed)."""

from __future__ import annotations

import pytest

from rewards import ConfidenceCalibratedReward, FormatReward, LengthPenalty, OverlongPenalty, RepetitionPenalty
from tests.rewards.conftest import scripted_backend
from rewards.verifier import VerifierReward


@pytest.mark.parametrize(
    "pattern, completion, expected",
    [
        ("think-answer", "<think>3+4=7</think>\n<answer>7</answer>", 1.0),  # both tags in order
        ("think-answer", "<answer>7</answer><think>x</think>", 0.0),  # wrong order
        ("think-answer", "<think>x</think><answer>7</answer> trailing", 0.0),  # text after the answer
        ("boxed", "so \\boxed{7}.", 1.0),  # a boxed answer anywhere
        ("integer", " 579\n", 1.0),  # whitespace stripped before matching
        ("integer", "579 apples", 0.0),
        (r"ans: \d+", "ans: 12", 1.0),  # a raw regular expression
    ],
)
def test_format(pattern, completion, expected):
    assert FormatReward(pattern)(["p"], [completion]) == [expected]


def test_format_bad_regex_is_named():
    with pytest.raises(ValueError, match="neither a known format"):
        FormatReward("(")


@pytest.mark.parametrize(
    "length, expected",
    [
        (5, 0.0),  # below L_max - L_cache = 6
        (6, 0.0),  # at the start of the soft zone
        (8, -0.5),  # (8 - 6) / 4
        (10, -1.0),  # at L_max
        (13, -1.0),  # beyond: floored at -1
    ],
)
def test_overlong_by_characters(length, expected):
    fn = OverlongPenalty(max_length=10, cache=4)
    assert fn(["p"], ["x" * length]) == [pytest.approx(expected)]
    assert fn.last_metrics["length_in_tokens"] == 0.0


def test_overlong_uses_token_ids_when_given():
    fn = OverlongPenalty(max_length=10, cache=4)
    # 2 characters but 9 tokens -> (9 - 6) / 4 = 0.75
    assert fn(["p"], ["ab"], completion_ids=[list(range(9))]) == [pytest.approx(-0.75)]
    assert fn.last_metrics["length_in_tokens"] == 1.0


@pytest.mark.parametrize(
    "text, ngram, expected",
    [
        ("a b c d", 2, 0.0),  # 3 distinct bigrams of 3
        ("a b a b a b", 2, -0.6),  # 5 bigrams, 2 distinct -> 1 - 2/5
        ("go go go go", 1, -0.75),  # 4 unigrams, 1 distinct
        ("a", 3, 0.0),  # shorter than n
    ],
)
def test_repetition(text, ngram, expected):
    assert RepetitionPenalty(ngram=ngram, max_penalty=-1.0)(["p"], [text]) == [pytest.approx(expected)]


@pytest.mark.parametrize(
    "length, expected",
    [
        (3, 0.0),  # under target 4
        (6, -0.25),  # -0.5 * (6 - 4) / 4
        (12, -1.0),  # -0.5 * 8 / 4
    ],
)
def test_length(length, expected):
    assert LengthPenalty(target=4, coef=0.5)(["p"], ["x" * length]) == [pytest.approx(expected)]


def test_shaping_settings_are_validated():
    with pytest.raises(ValueError, match="cache"):
        OverlongPenalty(max_length=10, cache=0)
    with pytest.raises(ValueError, match="max_penalty"):
        RepetitionPenalty(max_penalty=0.5)
    with pytest.raises(ValueError, match="target"):
        LengthPenalty(target=0)


@pytest.mark.parametrize(
    "verdict, completion, expected",
    [
        ("correct", "7 <confidence>0.8</confidence>", 1.96),  # 1 + (1 - 0.2^2)
        ("incorrect", "8 <confidence>0.8</confidence>", 0.36),  # 0 + (1 - 0.8^2)
        ("incorrect", "8 confidence: 0.1", 0.99),  # humble and wrong: 1 - 0.01
        ("correct", "7", 0.0),  # no stated confidence: format gate -> 0
        ("correct", "7 <confidence>1.5</confidence>", 0.0),  # out of [0, 1]: format gate
        ("timeout", "7 <confidence>0.5</confidence>", None),  # correctness unknown -> None
    ],
)
def test_confidence_calibrated(verdict, completion, expected):
    backend = scripted_backend([verdict])
    fn = ConfidenceCalibratedReward(VerifierReward(backend=backend))
    out = fn(["q"], [completion], answer=["7"])
    assert out == [expected if expected is None else pytest.approx(expected)]
    assert "confidence" not in backend.calls[0][0][0]  # the confidence is not shown to the verifier


# ---- the format reward sees the whole assistant turn: (prompt, completion, reasoning, expected)
THINK_FORMAT = [
    ("q", "<think>1+1=2</think>\n<answer>2</answer>", "auto", 1.0),  # the model opens and closes the reasoning
    ("q\n<think>\n", "1+1=2</think>\n<answer>2</answer>", "auto", 1.0),  # the prompt ends with the template's <think>
    ([{"role": "user", "content": "q"}], "1+1=2</think>\n<answer>2</answer>", "auto", 1.0),  # chat prompt: closed, never opened
    ("q\n<think>\n", "1+1=2 <answer>2</answer>", "auto", 0.0),  # prefilled but the reasoning is never closed
    ("q", "<answer>2</answer>", "auto", 0.0),  # no reasoning at all
    ("q", "1+1=2</think>\n<answer>2</answer> more", "auto", 0.0),  # text after the answer
    ("q\n<think>\n", "1+1=2</think>\n<answer>2</answer>", "off", 0.0),  # off: the completion alone (the old behaviour)
    ([{"role": "user", "content": "q"}], "1+1=2</think><answer>2</answer>", "prefilled", 1.0),  # always prefilled
]


@pytest.mark.parametrize("prompt, completion, reasoning, expected", THINK_FORMAT,
                         ids=[f"{i}:{c[1][:25]!r}-{c[2]}" for i, c in enumerate(THINK_FORMAT)])
def test_think_answer_format_sees_the_prefill(prompt, completion, reasoning, expected):
    fn = FormatReward("think-answer", reasoning=reasoning)
    assert fn([prompt], [completion]) == [expected]


def test_format_reports_prefilled_share_and_checks_the_mode():
    from rewards import build_reward

    fn = build_reward("format:think-answer:reasoning=auto")
    assert fn(["q<think>", "q"], ["a</think><answer>1</answer>", "<think>a</think><answer>1</answer>"]) == [1.0, 1.0]
    assert fn.last_metrics["prefilled_frac"] == 0.5
    with pytest.raises(ValueError, match="reasoning must be one of"):
        FormatReward("think-answer", reasoning="yes")
