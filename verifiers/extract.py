"""`extract_answer(text, kind)`: the final answer a completion states, as text, for majority voting.

It reads the answer exactly where the kind reads it, and returns a canonical text so that equal
answers vote together where that is cheap to see: a plain number becomes its exact value ('1,234'
and '1234.0' give '1234'; '\\frac{2}{4}', '1/2' and '0.5' give '1/2'). Equivalence beyond that
(x+1 vs 1+x) is the verifier's job: vote, then check candidates with `verify`.

- math: the fast path's reading when it is certain (no sympy), else math-verify's extraction
  (imported on first use), as the `math` kind does;
- numeric: the number the `numeric` kind reads, canonical ('2469/2' for 1,234.5);
- choice: the letter ('?' when two letters are given as the answer, which votes for nothing: None);
- string / regex: the answer span (last \\boxed, "answer is", last line), whitespace-folded.

>>> extract_answer("so the answer is 1,234.")
'1234'
>>> extract_answer("I pick \\\\boxed{(C)}", kind="choice")
'C'
>>> extract_answer("nothing here", kind="numeric") is None
True
"""

from __future__ import annotations

from typing import Callable

from verifiers import _spans
from verifiers._common import clean
from verifiers._numbers import canonical_number, prepare_prediction
from verifiers.fastpath import pred_literal
from verifiers.simple_kinds import read_choice, read_number


def _math(text: str) -> str | None:
    fast = pred_literal(prepare_prediction(clean(text)))
    if fast is not None and fast[1] is not None:
        return canonical_number(fast[1])
    from verifiers.math_kind import extract_math  # sympy + math-verify, loaded on first use

    return extract_math(text)


def _numeric(text: str) -> str | None:
    span = _spans.final_answer_span(clean(text))
    value = read_number(span) if span is not None else None
    if value is None:
        return None
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _choice(text: str) -> str | None:
    letter, _ = read_choice(clean(text))
    return None if letter in (None, "?") else letter


def _span(text: str) -> str | None:
    span = _spans.final_answer_span(clean(text))
    return " ".join(span.split()) if span else None


EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "math": _math,
    "numeric": _numeric,
    "choice": _choice,
    "string": _span,
    "regex": _span,
}


def extract_answer(text: str, kind: str = "math") -> str | None:
    """The final answer `text` states for verifier `kind`, as canonical text, or None."""
    if not isinstance(text, str):
        raise TypeError(f"extract_answer: text must be a string, got {type(text).__name__}")
    if kind not in EXTRACTORS:
        raise ValueError(f"extract_answer: no answer extraction for kind {kind!r}; valid kinds: {', '.join(sorted(EXTRACTORS))}")
    return EXTRACTORS[kind](text)
