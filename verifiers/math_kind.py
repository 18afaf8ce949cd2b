"""The `math` verifier kind: math-verify's extraction and symbolic comparison, with its known wrong
verdicts fixed by configuration and by checks on its parsed output (math-verify itself is not
modified; see RESEARCH.md, "Rule verifiers").

What changes compared with calling `math_verify.parse` + `math_verify.verify` directly:
- numbers are compared with `verifiers._numbers.numbers_match` (exact when both sides are exact,
  relative tolerance otherwise) instead of rounding both to 6 decimals, so 1e-7 != 2e-7 and
  1/2^99 != 1/2^98, while 1/3 == 0.333333 still holds; exact symbolic numbers (3*sqrt(2) vs
  sqrt(18)) are compared exactly, at 60 digits relative precision, never with an absolute chop;
  the `precision` option (decimal places, default 6 as math-verify) accepts a decimal that gives
  at least that many places, correctly rounded (0.33 for 1/3 with precision=2);
- containers, sets of tuples and solution sets, assignments of lists or intervals (n = 1, 2, 3),
  and relation / set pairs are compared by the rules of `verifiers._math_compare` (math-verify
  crashed or read some of them wrongly);
- an undefined value (12:00 read as 12/0) matches only the same written answer (math-verify
  called 1:00 and 12:00 equal), and an answer written exactly as the gold is correct;
- a \\pm the parser cannot place (inside a fraction, in a list) is read as the set of both signs;
- a decimal comma is read where it cannot be a thousands separator ('1,22', '0,111'; see
  `verifiers._numbers`); in LaTeX a comma still separates a list;
- a gold that is a single capital letter ("B", "(B)", "\\boxed{B}") is a multiple-choice answer and
  goes to the `choice` kind (math-verify reads \\boxed{B} as the symbol b);
- unit stripping: a single letter glued to a number ("5t", "3x") is a variable, not a unit, on both
  sides; a separated unit ("5 m", "5 cm", "5\\text{ kg}") is still removed, but never one inside a
  group (math-verify strips \\mathrm{e} from 1 - \\frac{1}{\\mathrm{e}} and reads 1);
- a plain number gold ("1,234", "-3/4", "0.5") is read as a number, never as a LaTeX set;
- text answers (gold "\\text{Monday}" or a plain word) also match the prediction's stated answer
  after case/space/punctuation folding;
- a "+5" answer is read as 5 and "\\$12" as 12 (math-verify finds nothing there); a fraction
  followed by a sentence's period ("3/4.") stays exact;
- 'i' is tried as the imaginary unit when the plain comparison fails (i^2 = -1, 1/i = -i);
- two answers stated as separate boxes ("\\boxed{41}, \\boxed{42}") are a set, as in
  math-verify: a hedge does not match a single gold;
- no signal-based timeouts: `parsing_timeout=None`, `timeout_seconds=None`; the runtime kills a
  worker that runs past its wall-clock limit.
Gold is always passed first to math-verify (`verify(gold, target)`), as its asymmetric rules expect.

Speed (same verdicts, less work): one extraction config for every parse (math-verify keeps the
compiled regexes of one config only); the parsed gold and each decision are cached per process
(RL scores several completions of one prompt against the same gold); polynomials with rational
coefficients are compared by expansion and linear equations by proportionality instead of
sympy.simplify / sympy.solve.

Only the last `TAIL_CHARS` (8192) characters of a prediction are searched for the answer; a gold
longer than `MAX_GOLD_CHARS` (10,000) is BAD_GOLD.

>>> verify_math("so the answer is $\\\\frac{1}{2}$", "0.5").verdict.value
'correct'
>>> verify_math("0.0000002", "0.0000001").verdict.value
'incorrect'
>>> verify_math("\\\\boxed{B}", "(B)").verdict.value
'correct'
>>> verify_math("no idea", "3").verdict.value
'no_answer'
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from functools import lru_cache
from typing import Any

import sympy
from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, normalize_latex
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify
from sympy import Basic, Float, MatrixBase, Rational

from verifiers import _spans
from verifiers._common import MAX_GOLD_CHARS, clean, result
from verifiers._math_compare import Settings, expr_equal, has_symbol_i, undefined, with_imaginary_unit
from verifiers._numbers import Num, canonical_number, prepare_prediction, numbers_match, parse_number
from verifiers.fastpath import MATH_OPTIONS, math_options
from verifiers.simple_kinds import verify_choice
from verifiers.types import Verdict, VerifyResult

logging.getLogger("math_verify").setLevel(logging.ERROR)  # it warns once that timeouts are off: on purpose

KIND = "math"
OPTIONS = MATH_OPTIONS


_TEXT_GOLD_RE = re.compile(r"^\s*(?:\\(?:text|textbf|mathrm)\{([^{}]*)\}|([A-Za-z][A-Za-z' -]*[A-Za-z]))\s*\.?\s*$")
_NOT_WORDS = {"sin", "cos", "tan", "log", "ln", "exp", "sqrt", "pi", "frac", "infty", "inf", "cot", "sec", "csc"}
_FOLD_RE = re.compile(r"[\s.,;:!?'\"`*$]+")


# ---------------------------------------------------------------- parsing


# One extraction config for every parse: math-verify caches its compiled regexes per config with
# room for one, so alternating configs would recompile them on every call.
NORMALIZATION = NormalizationConfig(basic_latex=True, units=False, malformed_operators=True, nits=True,
                                    boxed="all", equations=False)
UNIT_STRIPPING = dataclasses.replace(NORMALIZATION, units=True)
CONFIG = [LatexExtractionConfig(boxed_match_priority=0, normalization_config=NORMALIZATION), ExprExtractionConfig()]
LATEX_ONLY = CONFIG[:1]  # the same LaTeX config object, so its compiled regexes are shared
MAX_PLUS_MINUS = 2  # an answer with more \pm signs than this is not expanded (2**n readings)


def _parse(text: str, config: list = CONFIG) -> list:
    """math-verify `parse` with unit stripping decided per answer (see module docstring): parse
    without unit stripping; when the answer has free symbols and ends in a unit, strip it and keep
    that reading only if what was removed is a separated unit, not a letter glued to a number.
    An answer the parser cannot read because of a \\pm inside a fraction or a list is read as the
    set of its sign choices (see `_plus_minus`)."""
    raw = parse(text, config, parsing_timeout=None)
    if len(raw) == 1 and isinstance(raw[0], str):
        return _plus_minus(raw[0], config) or raw
    if len(raw) != 2 or not isinstance(raw[1], str) or not getattr(raw[0], "free_symbols", None):
        return raw
    stripped = normalize_latex(raw[1], UNIT_STRIPPING)
    if stripped and stripped != raw[1] and _is_separated_unit(raw[1], stripped):
        again = parse(f"${stripped}$", config, parsing_timeout=None)
        if again and isinstance(again[0], (Basic, MatrixBase)):
            return again
    return raw


_PM_RE = re.compile(r"\\(pm|mp)(?![A-Za-z])")


def _plus_minus(latex: str, config: list) -> list:
    """'x = \\frac{-1 \\pm \\sqrt{13}}{4}' -> the set of both readings, [set, text]; [] when the
    text has no (or too many) \\pm / \\mp or a sign choice does not parse. The parser reads a
    \\pm it can place (x = 1 \\pm \\sqrt{19}) by itself; this covers the ones it cannot."""
    signs = _PM_RE.findall(latex)
    if not signs or len(signs) > MAX_PLUS_MINUS:
        return []
    readings = []
    for choice in range(2 ** len(signs)):
        flips = iter(range(len(signs)))
        text = _PM_RE.sub(lambda m: "+-"[((choice >> next(flips)) & 1) ^ (m.group(1) == "mp")], latex)
        parsed = parse(f"${text}$", config, parsing_timeout=None)
        if not parsed or not isinstance(parsed[0], Basic):
            return []
        readings.extend(parsed[0].args if isinstance(parsed[0], sympy.FiniteSet) else [parsed[0]])
    return [sympy.FiniteSet(*readings), latex]


_GLUED_TAIL_RE = re.compile(r"(?<![\w.\\])([+-]?\d+(?:\.\d+)?[A-Za-z])[.!]?\s*$")
_LATEX_MARKERS = ("$", "\\boxed", "\\fbox", "\\(", "\\[")


def _parse_prediction(prediction: str, latex_only: bool = False) -> list:
    """`_parse` for a completion. In plain text (no LaTeX markers), math-verify's plain-expression
    pattern reads a final "5t" as 5, dropping the letter; a final number glued to one letter is a
    variable answer (see the module docstring), so it is read as LaTeX, the way a gold "5t" is.
    `latex_only`: only answers written in LaTeX are read (math-verify's LaTeX extraction alone)."""
    if latex_only:
        return _parse(prediction, LATEX_ONLY)
    if not any(marker in prediction for marker in _LATEX_MARKERS):
        glued = _GLUED_TAIL_RE.search(_spans.final_answer_span(prediction) or "")
        if glued:
            parsed = _parse(f"${glued.group(1)}$")
            if parsed:
                return parsed
    return _parse(prediction)


def _is_separated_unit(before: str, after: str) -> bool:
    removed = before[len(after):] if before.startswith(after) else ""
    if not removed or after.count("{") != after.count("}"):
        return False  # a "unit" inside a group (\\frac{1}{\\mathrm{e}}) is not a trailing unit
    inner = re.sub(r"\\(?:text|mathrm|mbox)\s*\{([^{}]*)\}", r"\1", removed).strip("{} ")
    glued = not removed[0].isspace() and not removed.startswith("\\") and not removed.startswith("~")
    return not (len(inner) == 1 and inner.isalpha() and glued) and bool(inner)


@lru_cache(maxsize=4096)  # RL scores several completions per prompt: the gold repeats
def _parse_gold(gold: str) -> tuple[list, Num | None]:
    num = parse_number(gold)
    if num is not None:
        value = Rational(num.value.numerator, num.value.denominator)
        expr = value if num.exact else Float(num.text(), max(15, len(num.text()) + 5))
        return [expr, gold.strip()], num
    has_env = any(tok in gold for tok in ("$", "\\boxed", "\\(", "\\["))
    parsed = _parse(gold if has_env else f"$${gold}$$")
    if not any(isinstance(x, (Basic, MatrixBase)) for x in parsed):
        parsed = _parse(gold)
    return parsed, _num_from(parsed)


def _num_from(parsed: list) -> Num | None:
    """The plain-literal reading of a parse result (same function as the fast path uses)."""
    if len(parsed) == 2 and isinstance(parsed[1], str) and isinstance(parsed[0], (Basic, MatrixBase)):
        # math-verify's plain-expression pattern keeps a sentence's final period ("3/4." -> 3/4.0,
        # a float); the period is punctuation, the fraction stays exact. Its text has a decimal
        # comma already turned into a point; a comma left in it separates a LaTeX list.
        return parse_number(parsed[1].rstrip().removesuffix("."), decimal_comma=False)
    return None


# ---------------------------------------------------------------- text answers


def _fold(text: str) -> str:
    text = re.sub(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}", r"\1", text)
    return _FOLD_RE.sub(" ", text).strip().lower()


def _text_gold(gold: str) -> str | None:
    m = _TEXT_GOLD_RE.match(gold)
    if not m:
        return None
    word = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
    if m.group(2) is not None and (len(word) < 2 or word.lower() in _NOT_WORDS):
        return None
    return _fold(word) or None


# ---------------------------------------------------------------- the kind


def verify_math(prediction: str, gold: str, **options: Any) -> VerifyResult:
    """Check a completion's final math answer against `gold` (LaTeX or plain text).

    Options (`verifiers.fastpath.MATH_OPTIONS`): `rel_tol` (default 1e-6) and `precision`
    (decimal places a decimal answer may be rounded to, default 6 as math-verify's float_rounding;
    see `verifiers._numbers` for the rule), `strict` (default True: variable names must match),
    `relation_as_set` (default False: a relation answer such as -2 <= x <= 7 does not match a set
    gold [-2, 7]; a set answer always matches a relation gold), `latex_only` (default False: read
    the answer only where it is written in LaTeX). See the module docstring for what is fixed
    relative to math-verify.

    >>> verify_math("The answer is \\\\boxed{3\\\\sqrt{2}}", "\\\\sqrt{18}").correct
    True
    >>> verify_math("0.33", "\\\\frac{1}{3}", precision=2).correct
    True
    """
    opts = math_options(options)
    start = time.perf_counter()
    if len(gold) > MAX_GOLD_CHARS:
        return result(Verdict.BAD_GOLD, KIND, start, detail=f"gold is {len(gold)} characters (limit {MAX_GOLD_CHARS})")
    settings = Settings(opts["rel_tol"], opts["precision"], opts["strict"], opts["relation_as_set"])
    verdict, extracted, gold_text, detail = _decide(prepare_prediction(clean(prediction)), clean(gold, tail=None),
                                                    settings, opts["latex_only"])
    return result(verdict, KIND, start, extracted, gold_text, detail)


Decision = tuple  # (verdict, extracted, gold_parsed, detail)


@lru_cache(maxsize=2048)  # deterministic; RL groups often repeat a completion for the same prompt
def _decide(prediction: str, gold: str, s: Settings, latex_only: bool) -> Decision:
    letter = _spans.choice_gold_letter(gold)
    if letter is not None:
        res = verify_choice(prediction, letter)
        return res.verdict, res.extracted, res.gold_parsed, f"choice: {res.detail}"

    gold_parsed, gold_num = _parse_gold(gold)
    gold_exprs = [x for x in gold_parsed if isinstance(x, (Basic, MatrixBase))]
    if not gold_exprs:
        return Verdict.BAD_GOLD, None, gold, "gold cannot be parsed as math"
    gold_text = str(gold_parsed[-1]) if isinstance(gold_parsed[-1], str) else str(gold_exprs[0])
    text_gold = _text_gold(gold)

    pred_parsed = _parse_prediction(prediction, latex_only)
    span = _spans.final_answer_span(prediction) if text_gold else None
    if text_gold and span is not None and _fold(span) == text_gold:
        return Verdict.CORRECT, span, gold_text, "text answer matches"
    if not pred_parsed:
        if text_gold and span is not None:
            return Verdict.INCORRECT, span, gold_text, "text answer differs"
        return Verdict.NO_ANSWER, None, gold_text, "no answer found in prediction"
    extracted = str(pred_parsed[-1])
    pred_num = _num_from(pred_parsed)
    if gold_num is not None and pred_num is not None:  # two plain literals: the fast path's rule
        ok = numbers_match(gold_num, pred_num, s.rel_tol, s.precision)
        return _verdict(ok), extracted, gold_text, "numbers equal" if ok else "numbers differ"
    pred_exprs = [x for x in pred_parsed if isinstance(x, (Basic, MatrixBase))]
    if not pred_exprs:
        ok = bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))  # string fallback compare
        return _verdict(ok), extracted, gold_text, "same text" if ok else f"answer could not be parsed as math: {extracted[:60]!r}"
    if _squash(extracted) == _squash(gold_text):
        # written exactly as the gold: '\\boxed{93,43}' is a list in LaTeX, but not against a gold 93,43
        return Verdict.CORRECT, extracted, gold_text, "same answer text"
    gold_expr, pred_expr = gold_exprs[0], pred_exprs[0]
    if undefined(gold_expr) or undefined(pred_expr):
        # "12:00" reads as the ratio 12/0; an undefined value equals nothing but the same writing
        ok = _squash(gold_text) == _squash(extracted)
        return _verdict(ok), extracted, gold_text, f"undefined value (division by zero): {'same' if ok else 'different'} text"
    ok = expr_equal(gold_expr, pred_expr, s)
    if not ok and has_symbol_i(gold_expr, pred_expr):  # 'i' as the imaginary unit: i^2 = -1
        ok = expr_equal(with_imaginary_unit(gold_expr), with_imaginary_unit(pred_expr), s)
    return _verdict(ok), extracted, gold_text, "equivalent" if ok else "not equivalent"


def _squash(text: str) -> str:
    return "".join(text.split())


def _verdict(ok: bool) -> Verdict:
    return Verdict.CORRECT if ok else Verdict.INCORRECT


def extract_math(text: str) -> str | None:
    """The answer `verify_math` reads from `text`, as text (a plain number in canonical form)."""
    parsed = _parse_prediction(prepare_prediction(clean(text)))
    if not parsed:
        return None
    num = _num_from(parsed)
    return canonical_number(num) if num is not None else str(parsed[-1])
