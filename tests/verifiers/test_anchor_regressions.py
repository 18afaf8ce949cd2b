"""Known wrong verdicts of the anchor (math-verify called the usual way) that the `math` kind fixes.

Each case asserts both halves: plain math-verify gets it wrong (documenting the bug, so this file
notices when a new math-verify release fixes it) and `verify_math` gets it right.
The anchor is called as its README shows: `verify(parse("$" + gold + "$"), parse(prediction))`,
gold first; with its signal-based timeouts off (they would cancel pytest-timeout's alarm).
"""

from __future__ import annotations

import pytest

from verifiers.math_kind import verify_math
from verifiers.types import Verdict

import math_verify  # noqa: E402 - the anchor, a hard dependency


def anchor_says_correct(prediction: str, gold: str) -> bool:
    gold_parsed = math_verify.parse("$" + gold + "$", parsing_timeout=None)
    return bool(math_verify.verify(gold_parsed, math_verify.parse(prediction, parsing_timeout=None), timeout_seconds=None))


FALSE_POSITIVES = [  # the anchor says CORRECT; the answer is wrong
    ("0.0000002", "0.0000001"),  # tiny values differ 2x; both round to 0.000000
    ("0.000001", "0.0000014"),  # tiny values differ 40%
    ("0.1234561", "0.1234564"),  # 7-digit decimals that differ in the 7th digit
    (r"$\frac{1}{2^{98}}$", r"\frac{1}{2^{99}}"),  # exact values a factor 2 apart; evalf(chop) calls both ~0
    (r"$10^{-20}$", r"2 \cdot 10^{-20}"),  # exact powers of ten a factor 2 apart
    (r"$\{0.0000002\}$", r"\{0.0000001\}"),  # the rounding also applies inside sets
    (r"$(0.0000001, 1)$", r"(0.0000002, 1)"),  # ... and inside tuples
    (r"$5$", "5t"),  # the 't' of 5t is stripped as a unit (tonnes): a variable answer lost
    ("The answer is 5.", "5t"),  # same, plain-text prediction
    (r"$7$", "7s"),  # 's' stripped as seconds although 7s is a variable expression
]

FALSE_NEGATIVES = [  # the anchor says INCORRECT (or reads nothing); the answer is right
    ("The answer is (B).", "B"),  # a plain-text choice letter is never extracted
    ("Answer: C", "C"),  # same with a label
    (r"The answer is \$12.", "12"),  # an escaped dollar sign hides the number
    ("The answer is +5.", "5"),  # a leading plus sign hides the number
]


@pytest.mark.parametrize("prediction, gold", FALSE_POSITIVES)
def test_anchor_false_positive_fixed(prediction, gold):
    assert anchor_says_correct(prediction, gold)  # the documented bug
    res = verify_math(prediction, gold)
    assert res.verdict is Verdict.INCORRECT, res.detail


@pytest.mark.parametrize("prediction, gold", FALSE_NEGATIVES)
def test_anchor_false_negative_fixed(prediction, gold):
    assert not anchor_says_correct(prediction, gold)  # the documented bug
    assert verify_math(prediction, gold).verdict is Verdict.CORRECT


def test_gold_goes_first():
    # math-verify's verify(gold, target) is asymmetric: a relation gold "1 < x < 2" is turned into a
    # set only when it is the gold. Swapping the arguments loses the right verdict ...
    gold = math_verify.parse("$1 < x < 2$", parsing_timeout=None)
    pred = math_verify.parse("$(1,2)$", parsing_timeout=None)
    assert math_verify.verify(gold, pred, timeout_seconds=None)
    assert not math_verify.verify(pred, gold, timeout_seconds=None)
    # ... and the kind passes the reference first, so the interval answer is correct
    assert verify_math("$(1,2)$", "1 < x < 2").verdict is Verdict.CORRECT
    assert verify_math("$(1,3)$", "1 < x < 2").verdict is Verdict.INCORRECT
    # an assignment gold "x = 2" accepts the bare value
    assert verify_math("2", "x = 2").verdict is Verdict.CORRECT
