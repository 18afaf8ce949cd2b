"""The `math` verifier kind: math-verify's extraction and symbolic comparison, with its known wrong
verdicts fixed by configuration and by checks on its parsed output (math-verify itself is not
modified; see RESEARCH.md, "Rule verifiers").

What changes compared with calling `math_verify.parse` + `math_verify.verify` directly:
- numbers are compared with `verifiers._numbers.numbers_match` (exact when both sides are exact,
  relative tolerance otherwise) instead of rounding both to 6 decimals, so 1e-7 != 2e-7 and
  1/2^99 != 1/2^98, while 1/3 == 0.333333 still holds; exact symbolic numbers (3*sqrt(2) vs
  sqrt(18)) are compared exactly, at 60 digits relative precision, never with an absolute chop;
- a gold that is a single capital letter ("B", "(B)", "\\boxed{B}") is a multiple-choice answer and
  goes to the `choice` kind (math-verify reads \\boxed{B} as the symbol b);
- unit stripping: a single letter glued to a number ("5t", "3x") is a variable, not a unit, on both
  sides; a separated unit ("5 m", "5 cm", "5\\text{ kg}") is still removed;
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
from math_verify.grader import is_assignment_relation, is_relation, take_last_relation
from sympy import Basic, Float, MatrixBase, Rational, UnevaluatedExpr

from verifiers import _spans
from verifiers._common import MAX_GOLD_CHARS, clean, result
from verifiers._numbers import Num, canonical_number, prepare_prediction, numbers_match, parse_number
from verifiers.fastpath import MATH_OPTIONS, math_options
from verifiers.simple_kinds import verify_choice
from verifiers.types import Verdict, VerifyResult

logging.getLogger("math_verify").setLevel(logging.ERROR)  # it warns once that timeouts are off: on purpose

KIND = "math"
OPTIONS = MATH_OPTIONS
EXACT_DIGITS = 60  # exact symbolic numbers are compared at this many significant digits


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


def _parse(text: str) -> list:
    """math-verify `parse` with unit stripping decided per answer (see module docstring): parse
    without unit stripping; when the answer has free symbols and ends in a unit, strip it and keep
    that reading only if what was removed is a separated unit, not a letter glued to a number."""
    raw = parse(text, CONFIG, parsing_timeout=None)
    if len(raw) != 2 or not isinstance(raw[1], str) or not getattr(raw[0], "free_symbols", None):
        return raw
    stripped = normalize_latex(raw[1], UNIT_STRIPPING)
    if stripped and stripped != raw[1] and _is_separated_unit(raw[1], stripped):
        again = parse(f"${stripped}$", CONFIG, parsing_timeout=None)
        if again and isinstance(again[0], (Basic, MatrixBase)):
            return again
    return raw


_GLUED_TAIL_RE = re.compile(r"(?<![\w.\\])([+-]?\d+(?:\.\d+)?[A-Za-z])[.!]?\s*$")
_LATEX_MARKERS = ("$", "\\boxed", "\\fbox", "\\(", "\\[")


def _parse_prediction(prediction: str) -> list:
    """`_parse` for a completion. In plain text (no LaTeX markers), math-verify's plain-expression
    pattern reads a final "5t" as 5, dropping the letter; a final number glued to one letter is a
    variable answer (see the module docstring), so it is read as LaTeX, the way a gold "5t" is."""
    if not any(marker in prediction for marker in _LATEX_MARKERS):
        glued = _GLUED_TAIL_RE.search(_spans.final_answer_span(prediction) or "")
        if glued:
            parsed = _parse(f"${glued.group(1)}$")
            if parsed:
                return parsed
    return _parse(prediction)


def _is_separated_unit(before: str, after: str) -> bool:
    removed = before[len(after):] if before.startswith(after) else ""
    if not removed:
        return False
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
        # a float); the period is punctuation, the fraction stays exact
        return parse_number(parsed[1].rstrip().removesuffix("."))
    return None


# ---------------------------------------------------------------- comparison


def _is_pct(expr: Any) -> bool:
    return isinstance(expr, sympy.Mul) and len(expr.args) == 2 and expr.args[1] == UnevaluatedExpr(Rational(1, 100))


def _numeric_value(expr: Any) -> Basic | None:
    """`expr` evaluated to a plain (possibly symbolic) number, or None when it is not one."""
    if not isinstance(expr, Basic) or isinstance(expr, (sympy.Set, sympy.Tuple)) or is_relation(expr):
        return None
    try:
        value = expr.doit()
        return value if value.is_number and not value.free_symbols else None
    except Exception:  # sympy raises many kinds of errors on odd input; then it is not a plain number
        return None


def _exact_numbers_equal(a: Basic, b: Basic) -> bool:
    if isinstance(a, Rational) and isinstance(b, Rational):
        return a == b
    if not (a.is_finite and b.is_finite):  # oo, -oo, zoo, nan: only identical values match
        return a == b
    try:
        diff = abs(sympy.N(a - b, EXACT_DIGITS))
        scale = max(abs(sympy.N(a, EXACT_DIGITS)), abs(sympy.N(b, EXACT_DIGITS)))
        if scale == 0:
            return diff == 0
        if diff > scale * sympy.Float(10) ** (10 - EXACT_DIGITS):
            return False
        return sympy.simplify(a - b) == 0 or diff <= scale * sympy.Float(10) ** (5 - EXACT_DIGITS)
    except Exception:  # comparison not decidable numerically: let math-verify decide
        return bool(verify(a, b, timeout_seconds=None))


def _float_numbers_equal(a: Basic, b: Basic, rel_tol: float) -> bool:
    try:
        av, bv = sympy.N(a, 30), sympy.N(b, 30)
        return bool(abs(av - bv) <= sympy.Float(rel_tol) * max(abs(av), abs(bv)))
    except Exception:  # not comparable numerically (e.g. an unevaluable form): let math-verify decide
        return bool(verify(a, b, timeout_seconds=None))


def _numbers_equal(gold: Basic, pred: Basic, rel_tol: float) -> bool:
    """Two plain numbers: exact when both are exact, relative tolerance otherwise; a percentage
    matches its fraction or its bare number (50% ~ 1/2 ~ 50)."""
    golds = [gold] + ([gold.args[0]] if _is_pct(gold) else [])
    preds = [pred] + ([pred.args[0]] if _is_pct(pred) else [])
    for g in golds:
        for p in preds:
            gv, pv = g.doit(), p.doit()
            exact = not (gv.has(Float) or pv.has(Float))
            if exact and _exact_numbers_equal(gv, pv):
                return True
            if not exact and _float_numbers_equal(gv, pv, rel_tol):
                return True
    return False


def _expr_equal(gold: Any, pred: Any, rel_tol: float, strict: bool) -> bool:
    """Numbers and containers of numbers by our rule; everything else by math-verify."""
    if isinstance(gold, (Basic, MatrixBase)) and isinstance(pred, (Basic, MatrixBase)):
        if is_assignment_relation(gold) and not is_relation(pred):
            gold = take_last_relation(gold).rhs  # "x = 2" vs "2"
        if is_relation(pred) and not is_relation(gold) and isinstance(take_last_relation(pred), sympy.Eq):
            pred = take_last_relation(pred).rhs  # "2" vs "x = 2"
        g_num, p_num = _numeric_value(gold), _numeric_value(pred)
        if g_num is not None and p_num is not None:
            return _numbers_equal(gold, pred, rel_tol)
        same_container = _elementwise(gold, pred)
        if same_container is not None:
            return all(_expr_equal(g, p, rel_tol, strict) for g, p in same_container)
        if strict and _linear_equations(gold, pred):
            # two linear equations have the same solutions iff one is a multiple of the other;
            # math-verify reaches the same verdict through sympy.solve, far more slowly
            ratio = sympy.cancel((gold.lhs - gold.rhs) / (pred.lhs - pred.rhs))
            return bool(ratio.is_number and ratio != 0)
        if strict and _exact_polynomials(gold, pred):
            # expanded polynomials with rational coefficients are a canonical form: this decides
            # both ways, as sympy.simplify inside math-verify would, at a fraction of its cost
            return sympy.expand(gold - pred) == 0
    return bool(verify(gold, pred, strict=strict, timeout_seconds=None))


def _linear_equations(gold: Any, pred: Any) -> bool:
    """Both sides single equations whose (lhs - rhs) are polynomials of degree 1 with rational
    coefficients in the same symbols."""
    if not (isinstance(gold, sympy.Eq) and isinstance(pred, sympy.Eq)):
        return False
    g, p = gold.lhs - gold.rhs, pred.lhs - pred.rhs
    if not g.free_symbols or g.free_symbols != p.free_symbols or not _exact_polynomials(g, p):
        return False
    symbols = sorted(g.free_symbols, key=str)
    try:
        return sympy.Poly(g, *symbols).total_degree() == 1 and sympy.Poly(p, *symbols).total_degree() == 1
    except sympy.PolynomialError:
        return False


def _exact_polynomials(gold: Any, pred: Any) -> bool:
    """Both sides polynomials in plain symbols with integer/rational coefficients (no floats, no
    constants like e or pi, no bare symbol, which math-verify compares by name)."""
    if not (isinstance(gold, sympy.Expr) and isinstance(pred, sympy.Expr)):
        return False
    if isinstance(gold, sympy.Symbol) or isinstance(pred, sympy.Symbol):
        return False
    if not (gold.free_symbols or pred.free_symbols):
        return False
    atoms = gold.atoms() | pred.atoms()
    if not all(isinstance(a, (sympy.Symbol, sympy.Integer, sympy.Rational)) for a in atoms):
        return False
    try:
        return gold.is_polynomial() and pred.is_polynomial()
    except Exception:  # is_polynomial raises on some unevaluated forms: then not a plain polynomial
        return False


def _elementwise(gold: Any, pred: Any) -> list[tuple] | None:
    """Pairs of elements to compare when both sides are the same kind of container of numbers."""
    if isinstance(gold, sympy.Tuple) and isinstance(pred, sympy.Tuple) and len(gold) == len(pred):
        pairs = list(zip(gold.args, pred.args))
    elif isinstance(gold, MatrixBase) and isinstance(pred, MatrixBase) and gold.shape == pred.shape:
        pairs = list(zip(gold, pred))
    elif isinstance(gold, sympy.Interval) and isinstance(pred, sympy.Interval):
        if (gold.left_open, gold.right_open) != (pred.left_open, pred.right_open):
            return None
        pairs = [(gold.start, pred.start), (gold.end, pred.end)]
    elif isinstance(gold, sympy.FiniteSet) and isinstance(pred, sympy.FiniteSet) and len(gold) == len(pred):
        try:
            key = lambda x: sympy.N(x, 30)  # noqa: E731  sort numbers by value so {2, 1} pairs with {1, 2}
            pairs = list(zip(sorted(gold.args, key=key), sorted(pred.args, key=key)))
        except (TypeError, ValueError):
            return None
    else:
        return None
    if all(_numeric_value(g) is not None and _numeric_value(p) is not None for g, p in pairs):
        return pairs
    return None


def _has_symbol_i(*exprs: Any) -> bool:
    return any(isinstance(e, Basic) and any(s.name == "i" for s in e.free_symbols) for e in exprs)


def _with_imaginary_unit(expr: Any) -> Any:
    """The parser reads 'i' as a plain symbol; substituting sympy.I only ever adds equalities that
    hold for complex numbers (i^2 = -1), so it is tried only after the plain comparison fails."""
    if not isinstance(expr, Basic):
        return expr
    return expr.subs({s: sympy.I for s in expr.free_symbols if s.name == "i"})


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

    Options: `rel_tol` (default 1e-6; see `verifiers._numbers` for the rule), `strict` (default
    True: variable names must match). See the module docstring for what is fixed relative to
    math-verify.

    >>> verify_math("The answer is \\\\boxed{3\\\\sqrt{2}}", "\\\\sqrt{18}").correct
    True
    """
    opts = math_options(options)
    start = time.perf_counter()
    if len(gold) > MAX_GOLD_CHARS:
        return result(Verdict.BAD_GOLD, KIND, start, detail=f"gold is {len(gold)} characters (limit {MAX_GOLD_CHARS})")
    verdict, extracted, gold_text, detail = _decide(prepare_prediction(clean(prediction)), clean(gold, tail=None),
                                                    opts["rel_tol"], opts["strict"])
    return result(verdict, KIND, start, extracted, gold_text, detail)


Decision = tuple  # (verdict, extracted, gold_parsed, detail)


@lru_cache(maxsize=2048)  # deterministic; RL groups often repeat a completion for the same prompt
def _decide(prediction: str, gold: str, rel_tol: float, strict: bool) -> Decision:
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

    pred_parsed = _parse_prediction(prediction)
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
        ok = numbers_match(gold_num, pred_num, rel_tol)
        return _verdict(ok), extracted, gold_text, "numbers equal" if ok else "numbers differ"
    pred_exprs = [x for x in pred_parsed if isinstance(x, (Basic, MatrixBase))]
    if not pred_exprs:
        ok = bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))  # string fallback compare
        return _verdict(ok), extracted, gold_text, "same text" if ok else f"answer could not be parsed as math: {extracted[:60]!r}"
    ok = _expr_equal(gold_exprs[0], pred_exprs[0], rel_tol, strict)
    if not ok and _has_symbol_i(gold_exprs[0], pred_exprs[0]):  # 'i' as the imaginary unit: i^2 = -1
        ok = _expr_equal(_with_imaginary_unit(gold_exprs[0]), _with_imaginary_unit(pred_exprs[0]), rel_tol, strict)
    return _verdict(ok), extracted, gold_text, "equivalent" if ok else "not equivalent"


def _verdict(ok: bool) -> Verdict:
    return Verdict.CORRECT if ok else Verdict.INCORRECT


def extract_math(text: str) -> str | None:
    """The answer `verify_math` reads from `text`, as text (a plain number in canonical form)."""
    parsed = _parse_prediction(prepare_prediction(clean(text)))
    if not parsed:
        return None
    num = _num_from(parsed)
    return canonical_number(num) if num is not None else str(parsed[-1])
