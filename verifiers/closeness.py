"""How close a completion's final number is to a numeric gold answer: the graded label of
`rewardlab rm-data` and the "badly wrong" share `rl` reports.

`closeness` = 1 - min(|pred - gold| / max(|gold|, 1) / 0.1, 1): 1 for the gold number, falling
linearly to 0 at a relative error of 10% (`BADLY_WRONG`), and 0 when either side has no number.

>>> closeness("579", "579"), closeness("580", "579"), closeness("666678", "579"), closeness("", "579")
(1.0, 0.9827288428324698, 0.0, 0.0)
>>> is_numeric_answer("1,234.5"), is_numeric_answer("-3/4"), is_numeric_answer("yes"), is_numeric_answer("assert f(3, 4) == 12")
(True, True, False, False)
"""

from __future__ import annotations

from typing import Any

from verifiers import _spans
from verifiers.simple_kinds import parse_number, read_number

__all__ = ["BADLY_WRONG", "closeness", "is_numeric_answer"]

BADLY_WRONG = 0.1  # relative error beyond which an answer is badly wrong (closeness 0)


def closeness(completion: str, answer: Any) -> float:
    """1 for the gold number, falling linearly to 0 at a relative error of 10% (and for no number)."""
    pred, gold = read_number(completion), read_number(str(answer))
    if pred is None or gold is None:
        return 0.0
    error = abs(float(pred) - float(gold)) / max(abs(float(gold)), 1.0)
    return max(0.0, 1.0 - error / BADLY_WRONG)


def is_numeric_answer(answer: Any) -> bool:
    """Whether a gold answer is a number (`closeness` can grade completions against it): the whole
    text, not a number somewhere in it (`assert f(3, 4) == 12` is code, not a number)."""
    text = _spans.unwrap(str(answer).strip())
    return parse_number(text.removesuffix("%").strip()) is not None
