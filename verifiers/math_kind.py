"""The `math` verifier kind: math-verify's extraction and symbolic comparison, with its known wrong
verdicts fixed by configuration and by checks on its parsed output (math-verify itself is not
modified; see RESEARCH.md, "Rule verifiers").

The reading runs in stages (docs/verifiers.md, "The stages and the policy"): extraction
(`verifiers._spans`), one writing for what is written many ways (`verifiers._forms.normalise_writing`,
on the gold and the prediction), a structured answer (`verifiers._forms.read` and math-verify's
parser), and a comparison by structure (`verifiers._math_compare`), with free symbols matched up to
renaming where the gold does not fix them; the verdict's `extra["reason"]` names the rule.

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
  math-verify: a hedge does not match a single gold; so is plain text ending in several numbers
  joined by "or" / "and" / ", " ("I think it is 2 or 3");
- an answer written alone (a bare prediction, the only box, one formula) is read through
  `verifiers._forms`: bare LaTeX is parsed (never an empty answer unless it is prose), "x = 2 or
  x = -3" is one solution set, "12 apples, 25 pears" are quantities compared element by element,
  words for sets, set-builder notation, e-notation and \\pm inside tuples are rewritten; golds
  written as answers get the same reading;
- answers that need their written shape: assignments against a tuple (by name when the tuple
  names its variables), a gold that lists a value twice, an answer that only names the gold's
  variable ("M" for "M = m"), descriptions in words ("All even n" for "$n$ is even", by content
  words), degrees against radians where the gold writes ^\\circ or \\pi;
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

from verifiers import _forms, _spans
from verifiers._common import MAX_GOLD_CHARS, clean, result
from verifiers._math_compare import (Settings, as_num, degrees_to_radians, equal_up_to_renaming, expr_equal, has_symbol_i,
                                      is_condition, numeric_value, radians_to_degrees, undefined, with_imaginary_unit)
from verifiers._numbers import Num, canonical_number, prepare_prediction, numbers_match, parse_number
from verifiers.fastpath import MATH_OPTIONS, math_choice, math_options
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


def _parse(text: str, config: list = CONFIG, keep: frozenset = frozenset()) -> list:
    """math-verify `parse` with unit stripping decided per answer (see module docstring): parse
    without unit stripping; when the answer has free symbols and ends in a unit, strip it and keep
    that reading only if what was removed is a separated unit, not a letter glued to a number, and
    not letters in `keep` (the gold's own variables: '6cm' is 6cm, not 6 centimetres, for a gold 6mc).
    An answer the parser cannot read because of a \\pm inside a fraction or a list is read as the
    set of its sign choices (see `_plus_minus`)."""
    if "d" in text and "\\int" not in text:  # 'd \\cdot 3a': the parser reads a differential 'd\\cdot'; here a factor
        text = _D_BEFORE_COMMAND_RE.sub(r"d\\,", text)
    raw = _products_of_d(parse(text, config, parsing_timeout=None))
    if len(raw) == 1 and isinstance(raw[0], str):
        return _plus_minus(raw[0], config) or raw
    if len(raw) != 2 or not isinstance(raw[1], str) or not getattr(raw[0], "free_symbols", None):
        return raw
    stripped = normalize_latex(raw[1], UNIT_STRIPPING)
    if stripped and stripped != raw[1] and _is_separated_unit(raw[1], stripped, keep):
        again = parse(f"${stripped}$", config, parsing_timeout=None)
        if again and isinstance(again[0], (Basic, MatrixBase)):
            return again
    return raw


_D_BEFORE_COMMAND_RE = re.compile(r"(?<![\\A-Za-z])d(?=\s*\\[A-Za-z])")


def _products_of_d(parsed: list) -> list:
    """The parser reads 'd' before a letter as a differential: '3da' is the symbol 'da'. Outside an
    integral or a derivative (none is left after parsing) it is the product d*a, as '3ad' is; not
    inside a word ('odd', which a gold '\\text{odd}' is too)."""
    expr = parsed[0] if parsed else None
    if not isinstance(expr, Basic) or len(parsed) < 2 or not isinstance(parsed[1], str):
        return parsed
    alone = set(re.findall(r"(?<![A-Za-z\\])d([A-Za-z])", parsed[1]))  # 'd' not preceded by a letter: '3da', 'da + 1'
    names = {s: sympy.Symbol("d", **s.assumptions0) * sympy.Symbol(s.name[1:], **s.assumptions0) for s in expr.free_symbols
             if isinstance(s, sympy.Symbol) and re.fullmatch(r"d[A-Za-z]", s.name) and s.name[1] in alone}
    if not names or expr.has(sympy.Integral, sympy.Derivative):
        return parsed
    return [expr.xreplace(names), *parsed[1:]]


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


_GLUED_TAIL_RE = re.compile(r"(?<![\w.\\])([+-]?\d+(?:\.\d+)?([A-Za-z]+))[.!]?\s*$")
_LATEX_MARKERS = ("$", "\\boxed", "\\fbox", "\\(", "\\[")


def _parse_prediction(prediction: str, latex_only: bool = False,
                      keep: frozenset = frozenset()) -> tuple[list, _forms.Reading | None]:
    """`_parse` for a completion, and the answer's form when it was read through `verifiers._forms`.

    An answer written alone (a bare prediction, the only \\boxed{}, a prediction that is one
    formula) is read by `_forms.read` when that changes something ("x = 2 or x = -3", units, words
    for sets, \\pm in a tuple); a bare prediction that is not prose is always read that way (it is
    the answer itself: "3\\sqrt{2}", "f(x) = \\frac{2}{x}"), never as an empty answer. Plain text
    that ends in several numbers joined by "or" / "and" / ", " is the set of them (a hedge).
    In plain text (no LaTeX markers), math-verify's plain-expression pattern reads a final "5t" as
    5, dropping the letter; a final number glued to one letter is a variable answer (see the
    module docstring), so it is read as LaTeX, the way a gold "5t" is; so is "3am" when a and m are the
    gold's variables (`keep`), else its letters may be a word or a unit ("3 am", "3kg").
    `latex_only`: only answers written in LaTeX are read (math-verify's LaTeX extraction alone)."""
    bare = _forms.is_bare(prediction)
    span = _answer_span(prediction)
    family = _without_parameter_domain(span) if span is not None else None
    if span is not None and not (latex_only and bare) and parse_number(span) is None:
        reading = _forms.bare_reading(family) if bare else _forms.read(family)
        if reading is not None and (reading.changed or bare or family != span):
            parsed = _read_parse(reading, keep)
            if parsed:
                return parsed, reading
    if latex_only:
        return _parse(prediction, LATEX_ONLY), None
    hedge = _forms.trailing_alternatives(_hedge_span(prediction))
    if hedge is not None:  # "I think it is 2 or 3", "$3$ (or maybe $4$)": the set of both, never one of them
        parsed = _parse(f"${hedge}$", LATEX_ONLY)
        if parsed:
            return parsed, None
    if not any(marker in prediction for marker in _LATEX_MARKERS):
        glued = _GLUED_TAIL_RE.search(_spans.final_answer_span(prediction) or "")
        if glued and (len(glued.group(2)) == 1 or set(glued.group(2)) <= keep):  # '3am' is 3am for a gold in a and m
            parsed = _parse(f"${glued.group(1)}$", keep=keep)
            if parsed:
                return parsed, None
    return _parse(prediction, keep=keep), None


def _hedge_span(prediction: str) -> str:
    """Where a hedge is looked for: the final answer span of plain text; with LaTeX, the only box's
    content or the last line as written (math delimiters kept, so that a list inside one formula,
    '$n = 1, 2, 3$', is not taken for alternatives)."""
    if not any(marker in prediction for marker in _LATEX_MARKERS):
        return _spans.final_answer_span(prediction) or ""
    boxes = _spans.boxed_contents(prediction)
    if boxes:
        return boxes[-1] if len(boxes) == 1 else ""
    lines = [line for line in prediction.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _answer_span(prediction: str) -> str | None:
    """The answer when it is written alone: a bare prediction, the only \\boxed{} of a
    prediction, a prediction that is one formula ($...$, \\(...\\)), the "answer is" statement
    of a plain-text prediction, or the formula a text without a box ends with ('So the result is
    $\\{x \\mid -5 < x < -2\\}$.'); else None."""
    s = prediction.strip()
    if _forms.is_bare(s):
        return s
    if s.count("\\boxed") + s.count("\\fbox") == 1:
        boxes = _spans.boxed_contents(s)
        return boxes[0] if len(boxes) == 1 and boxes[0] else None
    inner = _spans.unwrap(s)
    if inner != s and inner and not any(d in inner for d in ("$", "\\(", "\\[", "\\boxed")) and "\n" not in inner:
        return inner
    stated = _spans.answer_statement(s)  # 'the answer is 3 2/7', 'the answer is $-1 < \\sqrt{15} < 5$.'
    if stated and "$" not in stated and ("\\" in stated or re.search(r"\d", stated)) and _forms.is_bare(stated):
        return stated
    return _spans.closing_formula(s) if "\\boxed" not in s and "\\fbox" not in s else None


def _read_parse(reading: _forms.Reading, keep: frozenset = frozenset()) -> list:
    """Parse a form's LaTeX; inequalities joined by "or" / "and" become one condition (the union /
    the intersection of what they describe). [] when it does not parse."""
    if not reading.latex:
        return []
    parsed = _parse(f"${reading.latex}$", LATEX_ONLY, keep)
    if not parsed or not isinstance(parsed[0], (Basic, MatrixBase)):
        return []
    expr = parsed[0]
    if reading.joiner in ("or", "and") and isinstance(expr, sympy.FiniteSet) and all(map(is_condition, expr.args)):
        expr = (sympy.Or if reading.joiner == "or" else sympy.And)(*expr.args)
    return [expr, reading.latex]


def _is_separated_unit(before: str, after: str, keep: frozenset = frozenset()) -> bool:
    removed = before[len(after):] if before.startswith(after) else ""
    if not removed or after.count("{") != after.count("}"):
        return False  # a "unit" inside a group (\\frac{1}{\\mathrm{e}}) is not a trailing unit
    if re.search(r"(?:\\cdot|\\times|[-+*/^=])\s*$", after):
        return False  # '6 \\cdot m': what precedes the "unit" still needs it
    inner = re.sub(r"\\(?:text|mathrm|mbox)\s*\{([^{}]*)\}", r"\1", removed).strip("{} ")
    if inner.isalpha() and set(inner) <= keep:
        return False  # the gold's variables ('6cm' against '6mc'), not a unit
    glued = not removed[0].isspace() and not removed.startswith("\\") and not removed.startswith("~")
    if glued and inner.isalpha() and len(inner) <= 3 and inner.lower() not in _forms.SHORT_UNITS:
        return False  # '\\frac{1}{2}ab', '5t': variables glued to a value, not a unit ('5cm' is one)
    if len(inner) == 1 and inner.isalpha() and re.search(r"[A-Za-z]\s*$", after):
        return False  # '2 a c': a product of variables written with spaces, not the unit 'c'
    if len(inner) == 1 and inner.isalpha() and re.search(rf"(?<![A-Za-z\\]){inner}(?![A-Za-z])", after):
        return False  # 't^2 - 21 + 4 t': a variable of the expression itself, not the unit 't'
    return bool(inner)


@lru_cache(maxsize=4096)  # RL scores several completions per prompt: the gold repeats
def _parse_gold(gold: str) -> tuple[list, Num | None, _forms.Reading | None]:
    """The gold parsed, its plain-number reading, and its form when `verifiers._forms` rewrote it
    (units after each value, words for sets, "or", a set-builder, e-notation...)."""
    gold = _worked_value(_without_parameter_domain(gold))
    num = parse_number(gold)
    if num is not None:
        value = Rational(num.value.numerator, num.value.denominator)
        expr = value if num.exact else Float(num.text(), max(15, len(num.text()) + 5))
        return [expr, gold.strip()], num, None
    gold = gold.replace("\\$", " ")  # an escaped dollar sign is currency, as in a prediction
    if "\\boxed" not in gold and "\\fbox" not in gold:
        plain = gold.replace("$", " ")
        dual = _dual_gold(plain)
        reading = _answer_form(dual)
        if reading is not None and (reading.changed or len(reading.parts) > 1 or dual != plain):
            parsed = _read_parse(reading)
            if parsed:
                return parsed, _num_from(parsed), reading
        if reading is not None and len(reading.parts) > 1 and reading.joiner == "or":
            return [], None, None  # several answers, not all readable: never read as one of them
    has_env = any(tok in gold for tok in ("$", "\\boxed", "\\(", "\\["))
    parsed = _parse(gold if has_env else f"$${gold}$$")
    if not any(isinstance(x, (Basic, MatrixBase)) for x in parsed):
        parsed = _parse(gold)
    return parsed, _num_from(parsed), None


# '(1, n) \text{ for any } n \ge 1', '2^k \text{ where } k \text{ is a positive integer}': the domain of a
# parameter of the answer, stated in words after it (one variable, one condition, nothing after it)
_DOMAIN_IN_WORDS_RE = re.compile(
    r"^(?P<answer>.+?)\s*,?\s*\\text\s*\{\s*(?:for|where|with)(?:\s+(?:all|any|every|each|some))?"
    r"(?:\s+(?:positive|nonnegative|non-negative|negative))?(?:\s+(?:integers?|reals?|real\s+numbers?))?\s*\}"
    r"\s*(?P<var>[A-Za-z](?:\s*,\s*[A-Za-z])*)(?![A-Za-z])\s*(?P<cond>(?:\\(?:ge|le|geq|leq|gt|lt|ne|neq|in)(?![A-Za-z])|[<>]|\\text\s*\{\s*is\b)[^,;]*)?\s*\.?\s*$")


def _parameter_domain(text: str) -> str | None:
    """The domain stated in words after a family ('\\text{ for any } n \\ge 1' -> '#\\ge1', the
    variable written '#'); None when there is none (`_DOMAIN_IN_WORDS_RE`)."""
    m = _DOMAIN_IN_WORDS_RE.match(text.replace("$", " ").strip())
    if m is None or not m.group("cond"):
        return None
    cond = re.sub(r"\\([lg])eq(?![A-Za-z])", r"\\\1e", f"{m.group('var')} {m.group('cond')}")  # \\geq -> \\ge
    for name in _names(m):
        cond = re.sub(rf"(?<![A-Za-z\\]){name}(?![A-Za-z])", "#", cond)
    return _squash(cond)


def _names(m: re.Match) -> list[str]:
    """The parameters a domain in words is stated for ('a, x' -> ['a', 'x'])."""
    return [v.strip() for v in m.group("var").split(",")]


def _without_parameter_domain(gold: str) -> str:
    """'(2, 6), (1, n) \\text{ for any } n \\ge 1' -> '(2, 6), (1, n)': a family of answers whose
    parameter's domain is stated in words after it is the family (its parameter is a free symbol,
    matched up to renaming); any other gold as it is. Only when the variable occurs in the answer
    and the words state a domain, never a case split ('1 \\text{ when } n \\text{ is odd}, 0 ...')."""
    m = _DOMAIN_IN_WORDS_RE.match(gold.replace("$", " ").strip())
    if m is None or not all(re.search(rf"(?<![A-Za-z\\]){v}(?![A-Za-z])", m.group("answer")) for v in _names(m)):
        return gold
    return m.group("answer")


_WORKED_RE = re.compile(r"^([^=<>]+)=\s*([^=<>]+)$")


def _worked_value(gold: str) -> str:
    """'3\\binom{10}{5} = 756' -> '756': a gold that states a closed expression and its value is
    the value (an answer may give either); any other gold as it is."""
    m = _WORKED_RE.match(gold.replace("$", " ").strip())
    if m is None or re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", m.group(1))):
        return gold  # 'x = 3': an assignment, not a worked value
    lhs, rhs = _value(m.group(1)), _value(m.group(2))
    if lhs is None or rhs is None or numeric_value(lhs) is None or numeric_value(rhs) is None:
        return gold
    return m.group(2).strip() if expr_equal(rhs, lhs, Settings()) else gold


def _answer_form(text: str) -> _forms.Reading | None:
    """The form of a gold written as an answer (one line, not prose once read); None for a gold
    that is a whole solution text, which math-verify's extraction reads."""
    if "\n" in text.strip() or len(text) > _forms.MAX_FORM_CHARS:
        return None
    reading = _forms.read(text)
    return None if _forms.is_prose(reading.latex) else reading


_DUAL_GOLD_RE = re.compile(r"^\s*([^:]*(?:<|>|\\[lg]eq?(?:slant)?)[^:]*?)\s*:\s*([(\[][^:]*[)\]])\s*\.?\s*$")


def _dual_gold(gold: str) -> str:
    """'-1<x \\leqslant 1:(-1,1]' (a relation, then the same set in interval notation, as some
    data sets write golds) -> '(-1,1]'; any other gold as it is."""
    m = _DUAL_GOLD_RE.match(gold)
    return m.group(2) if m else gold


def _decimal_against_exact(gold_num: Num | None, gold_expr: Any, pred_num: Num | None, pred_parsed: list,
                           s: Settings) -> bool | None:
    """A written decimal on one side and an exact number that is not a plain literal (3\\sqrt{11},
    \\pi/4) on the other, by `numbers_match` with the decimal's digits as written (the parser
    drops trailing zeros: 9.9500 would read as 9.95); None when the pair is not one."""
    for num, other in ((pred_num, gold_expr), (gold_num, pred_parsed[0] if pred_parsed else None)):
        if num is None or num.decimals is None or not isinstance(other, Basic) or other.has(Float):
            continue
        value = numeric_value(other)
        if value is not None and value.is_real and value.is_finite:
            return numbers_match(as_num(value), num, s.rel_tol, s.precision, s.sig_digits)
    return None


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
    `sig_digits` (default 3: the rounding policy, a correctly rounded decimal with this many
    significant digits stands for an exact value; 0 turns it off),
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
    settings = Settings(opts["rel_tol"], opts["precision"], opts["strict"], opts["relation_as_set"], opts["sig_digits"])
    # stage 1-2: the answer's text, with one writing for what is written many ways (_forms.normalise_writing)
    verdict, extracted, gold_text, detail = _decide(_forms.normalise_writing(prepare_prediction(clean(prediction))),
                                                    _forms.normalise_writing(clean(gold, tail=None)), settings, opts["latex_only"])
    return result(verdict, KIND, start, extracted, gold_text, detail, reason=detail.split(":")[0])


Decision = tuple  # (verdict, extracted, gold_parsed, detail)


@lru_cache(maxsize=2048)  # deterministic; RL groups often repeat a completion for the same prompt
def _decide(prediction: str, gold: str, s: Settings, latex_only: bool) -> Decision:
    alternative = _spans.stated_alternative(prediction)
    letter = _spans.choice_gold_letter(gold)
    if letter is not None:
        letters = _spans.offered_letters(prediction)
        if alternative is None and len(letters) > 1:
            alternative = ", ".join(sorted(letters))  # '\\boxed{(D)} -- perhaps (B)': two choices offered
        if alternative is not None:
            return Verdict.INCORRECT, None, letter, f"hedge: a second answer stated ({alternative[:40]!r})"
        verdict, extracted, detail = math_choice(prediction, letter)
        return verdict, extracted, letter, detail

    gold_parsed, gold_num, gold_form = _parse_gold(gold)
    gold_exprs = [x for x in gold_parsed if isinstance(x, (Basic, MatrixBase))]
    if not gold_exprs:
        return _unreadable_gold(prediction, gold)
    gold_text = str(gold_parsed[-1]) if isinstance(gold_parsed[-1], str) else str(gold_exprs[0])
    if _several_values(gold_exprs[0], gold_form):  # '\\boxed{(1, 2)}, \\boxed{(2, 1)}': one list, for a gold of several values
        prediction = _spans.join_adjacent_boxes(prediction)
    if alternative is not None and (_spans.HEDGE_WORDS_RE.search(alternative)
                                    or not (_several_values(gold_exprs[0], gold_form) or is_condition(gold_exprs[0]))):
        # '\\boxed{3} or maybe 4', '$3$ (or $4$)': a hedge never matches one answer; a solution set
        # stated as '$x = 1$ or $x = 3$' is read below against a gold with several values
        return Verdict.INCORRECT, None, gold_text, f"hedge: a second answer stated ({alternative[:40]!r})"
    keep = frozenset(str(x) for x in getattr(gold_exprs[0], "free_symbols", ()))
    pred_parsed, pred_form = _parse_prediction(prediction, latex_only, keep)
    worded = _worded_answer(prediction, gold, gold_text, gold_form, bool(pred_parsed))
    if worded is not None:
        return worded
    extracted = str(pred_parsed[-1])
    second = _second_candidate(prediction, pred_parsed, gold_exprs[0], gold_form, s)
    if second is not None:  # '\\boxed{3}, though 4 is possible': a second answer offered, whatever the words
        return Verdict.INCORRECT, extracted, gold_text, f"hedge: a second answer stated ({second[:40]!r})"
    chain = _forms.ordered_chain(_answer_span(prediction) or "")
    if chain is not None and not _chain_holds(chain, _answer_span(prediction)):
        return Verdict.INCORRECT, extracted, gold_text, "the ordering stated is false"
    units = _units_differ(gold_form, _answer_span(prediction) or _spans.final_answer_span(prediction), pred_form)
    if units is not None:  # '5 cm' for '5 m', '12 apples' for '12 pears': the unit is part of the answer
        return Verdict.INCORRECT, extracted, gold_text, units
    domains = _parameter_domain(gold), _parameter_domain(_answer_span(prediction) or "")
    if None not in domains and domains[0] != domains[1]:  # '(1, n) for any n >= 2' for '(1, n) for any n >= 1'
        return Verdict.INCORRECT, extracted, gold_text, "the parameter's domain differs"
    pred_num = _num_from(pred_parsed)
    if gold_num is not None and pred_num is not None:  # two plain literals: the fast path's rule
        ok = numbers_match(gold_num, pred_num, s.rel_tol, s.precision, s.sig_digits)
        return _verdict(ok), extracted, gold_text, "numbers equal" if ok else "numbers differ"
    written = _decimal_against_exact(gold_num, gold_exprs[0], pred_num, pred_parsed, s)
    if written is not None:  # '9.9500' for 3\sqrt{11}: the digits as written, not as the parser keeps them
        return _verdict(written), extracted, gold_text, "numbers equal (rounding policy)" if written else "numbers differ"
    pred_exprs = [x for x in pred_parsed if isinstance(x, (Basic, MatrixBase))]
    if not pred_exprs:
        ok = bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))  # string fallback compare
        return _verdict(ok), extracted, gold_text, "same text" if ok else f"answer could not be parsed as math: {extracted[:60]!r}"
    if gold_num is not None and gold_num.decimals is not None and "," in gold and _is_list(pred_exprs[0]):
        # '14,16' is 14.16 with a decimal comma, or the list 14, 16 (MATH's "separated by commas"):
        # a list answer is compared with the list reading
        as_list = _parse(f"${gold}$", LATEX_ONLY)
        if as_list and _is_list(as_list[0]):
            ok = expr_equal(as_list[0], pred_exprs[0], s)
            return _verdict(ok), extracted, gold_text, "equivalent (the gold read as a list)" if ok else "not equivalent"
    for ordering in _orderings(gold_form):  # '(4,5) \\text{ or } (5,4)': the order was not asked for
        if expr_equal(ordering, pred_exprs[0], s):
            return Verdict.CORRECT, extracted, gold_text, "equivalent: one of the gold's orderings"
    pred_span = _answer_span(prediction)
    shaped = _by_shape(gold, gold_form, gold_exprs[0], pred_span, pred_form, pred_exprs[0], s)
    if shaped is not None:
        ok, why = shaped
        return _verdict(ok), extracted, gold_text, why
    if _squash(extracted) == _squash(gold_text):
        # written exactly as the gold: '\\boxed{93,43}' is a list in LaTeX, but not against a gold 93,43
        return Verdict.CORRECT, extracted, gold_text, "same answer text"
    return _compare_expressions(gold, gold_text, extracted, gold_exprs[0], pred_exprs[0], s)


def _worded_answer(prediction: str, gold: str, gold_text: str, gold_form: _forms.Reading | None,
                   parsed: bool) -> Decision | None:
    """The decision for a gold in words ('\\text{Alice wins}', a description 'all n with ...'), or
    for a prediction with no math to read; None where the comparison goes on by value."""
    text_gold = _text_gold(gold)
    described = None if gold_form is not None else _description_gold(gold)
    span = _spans.final_answer_span(prediction) if text_gold or described else None
    if text_gold and span is not None and _fold(span) == text_gold:
        return Verdict.CORRECT, span, gold_text, "text answer matches"
    gold_key = described or (_forms.description_key(gold) if text_gold else None)
    if gold_key is not None and span is not None and _forms.description_key(span) == gold_key:
        return Verdict.CORRECT, span, gold_text, "same description"
    if described:  # the gold's words are the answer: its math alone ("n") is not
        if span is None:
            return Verdict.NO_ANSWER, None, gold_text, "no answer found in prediction"
        return Verdict.INCORRECT, span, gold_text, "description differs"
    if not parsed:
        if text_gold and span is not None:
            return Verdict.INCORRECT, span, gold_text, "text answer differs"
        return Verdict.NO_ANSWER, None, gold_text, "no answer found in prediction"
    return None


def _unreadable_gold(prediction: str, gold: str) -> Decision:
    """A gold the parser cannot read: CORRECT for the same statement written alike ('ML \\perp NK'
    for '\\text{ML} \\perp \\text{NK}'), else BAD_GOLD."""
    span = _answer_span(prediction) or _spans.final_answer_span(prediction)
    if span is not None and _plain_text(span) == _plain_text(gold):
        return Verdict.CORRECT, span, gold, "same answer text (the gold is not read as math)"
    return Verdict.BAD_GOLD, None, gold, "gold cannot be parsed as math"


def _compare_expressions(gold: str, gold_text: str, extracted: str, gold_expr: Any, pred_expr: Any, s: Settings) -> Decision:
    """The last stage of `_decide`: two parsed expressions, equal by value, up to a renaming of free
    symbols, with `i` as the imaginary unit, or across degrees and radians."""
    if undefined(gold_expr) or undefined(pred_expr):
        # "12:00" reads as the ratio 12/0; an undefined value equals nothing but the same writing
        ok = _squash(gold_text) == _squash(extracted)
        return _verdict(ok), extracted, gold_text, f"undefined value (division by zero): {'same' if ok else 'different'} text"
    ok = expr_equal(gold_expr, pred_expr, s)
    if not ok:
        renamed = equal_up_to_renaming(gold_expr, pred_expr, s)
        if renamed:
            return Verdict.CORRECT, extracted, gold_text, f"equivalent: free symbols renamed ({renamed})"
    if not ok and has_symbol_i(gold_expr, pred_expr):  # 'i' as the imaginary unit: i^2 = -1
        ok = expr_equal(with_imaginary_unit(gold_expr), with_imaginary_unit(pred_expr), s)
    if not ok:
        converted = _other_angle_unit(gold, extracted, pred_expr)
        if converted is not None and expr_equal(gold_expr, converted, s):
            return Verdict.CORRECT, extracted, gold_text, "equivalent (degrees and radians)"
    return _verdict(ok), extracted, gold_text, "equivalent" if ok else "not equivalent"


# ---------------------------------------------------------------- a second answer in the answer region


def _second_candidate(prediction: str, pred_parsed: list, gold_expr: Any, gold_form: _forms.Reading | None,
                      s: Settings) -> str | None:
    """A value stated in the answer region (`_spans.answer_candidates`: the boxes, and what follows
    the final box or 'the answer is') that is not the answer read, or None. A candidate is the
    answer when it equals it (or one of its elements, for a list), in any writing and within the
    rounding policy ('\\frac{100}{7} \\approx 14.3'); a computation that holds ('2 \\cdot 3 = 6') is
    a check, not a candidate; a quantity named in a unit other than the gold's (or in two units) is
    another answer. Whatever the words around it ('or', 'though', 'might be', none at all), a value
    that differs is a second answer."""
    candidates = _spans.answer_candidates(prediction)
    if not candidates or not pred_parsed or not isinstance(pred_parsed[0], (Basic, MatrixBase)):
        return None
    answer = pred_parsed[0]
    gold_unit = (_forms.canonical_unit(gold_form.units[0])
                 if gold_form is not None and len(gold_form.parts) == 1 and gold_form.units else None)
    units = {gold_unit} - {None}
    kind = _forms.unit_dimension(gold_unit or _answer_unit(prediction))  # what the answer measures, if it says
    symbols = getattr(gold_expr, "free_symbols", set()) | getattr(answer, "free_symbols", set())
    differing: dict[int, list[str]] = {}
    orderings = _orderings(gold_form)  # '(2, 7) or (7, 2)': each stated beside the answer is the gold's own
    checks = set()  # sentences with a computation that gives the answer: a check, its other numbers its steps
    exact = _exact_value(gold_expr)
    for sentence, text in candidates:
        rounded = _rounding_of(text, exact, _num_from(pred_parsed), s)
        if rounded is not None:  # '\\boxed{28.5}, or 28.47' for 9\\sqrt{10}: each decimal against the gold itself
            if not rounded:
                differing.setdefault(sentence, []).append(text)
            continue
        chain = _forms.ordered_chain(text)
        if chain is not None and not _chain_holds(chain, text):  # '-4 < -6 < \\sqrt{7} works too': a false ordering
            differing.setdefault(sentence, []).append(text)
            continue
        form = _forms.read(text)
        unit = _single_unit(text, form) if len(form.parts) == 1 else None  # '436 g', '73\\text{ kg}'
        if unit and _forms.unit_dimension(unit) in _forms.DIMENSIONS and _forms.unit_dimension(unit) != kind:
            continue  # 'after 5 years' beside a sum of money: another measured quantity, not an answer
        if unit:
            units.add(_forms.canonical_unit(unit))
        if _is_check(text, answer, s):
            checks.add(sentence)
        elif not _is_the_answer(text, form, answer, symbols, s) and not (
                any(_is_the_answer(text, form, o, symbols, s) for o in orderings)
                and any(expr_equal(o, answer, s) for o in orderings + [gold_expr])):  # the answer is one of them, or all
            differing.setdefault(sentence, []).append(text)
    for sentence, texts in differing.items():
        if sentence not in checks or sentence == 0:  # the answer's own sentence is never a check
            return texts[0]
    return f"units {sorted(units)}" if len(units) > 1 else None


def _exact_value(gold_expr: Any) -> Num | None:
    """A gold that is an exact real number (3\\sqrt{11}, \\frac{100}{7}) as a `Num` (40 digits); None for
    a decimal gold (itself a rounding) or anything that is not a number."""
    value = numeric_value(gold_expr)
    if value is None or value.has(Float) or not value.is_real or not value.is_finite:
        return None
    return as_num(value)


def _rounding_of(text: str, exact: Num | None, answer: Num | None, s: Settings) -> bool | None:
    """For a decimal candidate beside an exact gold: whether it is an answer by the rounding policy
    against the gold itself (not against the answer: '28.47' rounds to a boxed 28.5, and is not
    9\\sqrt{10} = 28.4605 rounded); None when the candidate is not a decimal, the gold is not exact, or
    the candidate is the answer as read."""
    num = parse_number(text.strip())
    if exact is None or num is None or not num.decimals or (answer is not None and answer.value == num.value):
        return None
    return numbers_match(exact, num, s.rel_tol, s.precision, s.sig_digits)


_UNIT_AFTER_BOX_RE = re.compile(r"[\s$]*(?:\\text\s*\{\s*)?([A-Za-z]+)")


def _answer_unit(prediction: str) -> str | None:
    """The unit the final box is stated in: inside it ('\\boxed{5 \\text{ cm}}') or the word right
    after it ('\\boxed{16386.16} dollars'); None without a unit."""
    boxes = _spans.boxed_contents(prediction)
    if not boxes:
        return None
    form = _forms.read(boxes[-1])
    inside = _single_unit(boxes[-1], form) if len(form.parts) == 1 else None
    after = _UNIT_AFTER_BOX_RE.match(_spans.after_last_box(prediction) or "")
    return inside or (after.group(1) if after and _forms.is_unit_word(after.group(1)) else None)


def _is_check(text: str, answer: Any, s: Settings) -> bool:
    """A computation without a variable that holds and gives the answer ('7 + 5 = 12' for 12)."""
    if not re.search(r"\d\s*(?:[-+*/^×·=]|\\cdot|\\times)\s*\(?\s*\d", text):
        return False
    value = _value(text)
    if not isinstance(value, sympy.Eq) or value.free_symbols:
        return False
    return _same_value(value.rhs, value.lhs, "", s) and _same_value(value.rhs, answer, "", s)


def _is_the_answer(text: str, form: _forms.Reading, answer: Any, symbols: set, s: Settings) -> bool:
    """Whether one candidate states the answer (or a check of it); an unreadable one is not counted.
    `symbols`: the gold's and the answer's free symbols (a relation in others: `_step_of_the_working`)."""
    num = parse_number(text.strip()) if not isinstance(answer, (sympy.FiniteSet, sympy.Tuple)) else None
    keep = frozenset(map(str, symbols))  # letters that are variables here, never units ('6cm' for 6mc)
    if num is not None:  # a plain number in prose reads as the fast path reads it ('421,00': a decimal comma)
        value = sympy.Rational(num.value.numerator, num.value.denominator)
    else:
        value = _value(form.latex, keep) if form.latex else None
    if value is None:
        value = _value(text, keep)
    if value is None:
        return True  # words, not a value: nothing to compare
    if _names_another_quantity(value, answer):
        return True  # 'where $a = 3$' next to '\\boxed{b = 7}': another quantity, not a second answer
    if value in (sympy.true, sympy.false):
        return True  # a computation the parser already decided: a remark, not a value
    if isinstance(value, sympy.Eq) and isinstance(value.lhs, sympy.core.function.AppliedUndef) \
            and value.rhs.free_symbols and not value.lhs.free_symbols & value.rhs.free_symbols:
        return False  # 'f(t) = 4x^2 + 1': a function of t whose body is in x is not the answer's function
    if not getattr(value, "free_symbols", set()) <= symbols and _step_of_the_working(value, answer, symbols):
        return True
    if symbols and _relation_kind(value) == "condition" and not value.free_symbols <= symbols:
        return False  # 'y \\le 5' beside '(-\\infty, 5]' for 'm \\le 5': the condition on another variable
    if isinstance(value, sympy.Eq) and not value.free_symbols:
        if _same_value(value.rhs, value.lhs, "", s):
            return True  # a computation written out that holds ('2 \\cdot 3 = 6'): a check of the answer
        value, text = value.rhs, ""
    if _same_value(value, answer, text, s):
        return True
    if isinstance(value, (sympy.Set, sympy.Or, sympy.And)):
        return False  # a sub-list ('\\{3\\}' beside '\\{3, 12\\}') is another answer
    # one element of a list (a pair of a set of pairs), or one branch of a union ('x < 1 \\text{ or } x > 2')
    elements = answer.args if isinstance(answer, (sympy.FiniteSet, sympy.Or, sympy.Union)) else ()  # not a pair's entries
    if any(isinstance(e, sympy.Tuple) for e in elements) and re.fullmatch(r"\s*\([^(),]+,[^(),]+\)\s*", text):
        pair = [_value(x) for x in text.strip()[1:-1].split(",")]  # '(98, 2)' is a pair here, not an interval
        value = sympy.Tuple(*pair) if None not in pair else value
    alike = [e for e in elements if isinstance(e, sympy.Tuple) == isinstance(value, sympy.Tuple)]
    return any(_same_value(value, e, text, s) for e in alike)


def _relation_kind(value: Any) -> str:
    """'equation', 'condition' (an inequality, a condition, an interval or union of them) or 'value'."""
    if isinstance(value, sympy.Eq):
        return "equation"
    if isinstance(value, (sympy.core.relational.Relational, sympy.And, sympy.Or)) or is_condition(value) \
            or (isinstance(value, sympy.Set) and not isinstance(value, sympy.FiniteSet)):
        return "condition"
    return "value"


def _step_of_the_working(value: Any, answer: Any, symbols: set) -> bool:
    """Whether a relation in variables the answer and the gold do not have is a step of the working,
    not a second answer: an equation beside an answer that is not one ('y = 8.8 - 0.4x' beside
    (7, 6), 'w = 6 - 7t' beside 7ct), a condition beside a number ('\\Delta x' \\geq 2' beside 100%),
    a relation of the answer's kind in other variables and more of them ('w = 3 - 9t' beside
    '-2 < x < 7'). An expression or tuple in other variables ('4ry' for 4rt, '(t, n + 4)'), or the
    answer's relation renamed ('y \\le 8' for '(-\\infty, 8]'), or a name set to a value in the answer's
    or the gold's own symbols ('x = \\frac{\\pi}{3} + 2k\\pi + 1' beside '\\frac{\\pi}{3} + 2m\\pi'), is a
    second answer; a name given a formula beside a pair ('w = 6 - 2t' beside '(t, t + 1)') is a step.
    `symbols`: the gold's and the answer's free symbols."""
    mine, theirs = _relation_kind(value), _relation_kind(answer)
    if mine == "value":
        return False
    if mine == "equation" and isinstance(value.lhs, (sympy.Symbol, sympy.core.function.AppliedUndef)):
        if isinstance(answer, (sympy.Tuple, sympy.Interval)) and value.lhs not in symbols and value.rhs.free_symbols \
                and not isinstance(value.rhs, (sympy.Tuple, sympy.Set)):
            return True  # 'w = 6 - 2t' beside the pair '(t, t+1)' (read as a pair or an interval): a formula for one name
        said = value.rhs.free_symbols  # what is said of the name is in the answer's terms: a second answer
        if said in (answer.free_symbols, symbols - answer.free_symbols, symbols):
            return False
    if mine != theirs:
        return mine == "equation" or theirs == "value"
    count = len(answer.free_symbols) or (1 if isinstance(answer, sympy.Set) else 0)  # an interval: one variable
    return not (value.free_symbols & answer.free_symbols) and len(value.free_symbols) != count


def _names_another_quantity(value: Any, answer: Any) -> bool:
    """Both are assignments of a number ('x = 2', 'y = 4') to different names."""
    named = [v.lhs for v in (value, answer)
             if isinstance(v, sympy.Eq) and isinstance(v.lhs, sympy.Symbol) and not getattr(v.rhs, "free_symbols", True)]
    return len(named) == 2 and named[0] != named[1]


def _same_value(value: Any, answer: Any, text: str, s: Settings) -> bool:
    try:
        if expr_equal(answer, value, s) or expr_equal(value, answer, s):
            return True
    except Exception:  # sympy cannot compare the two: not shown to be the same answer
        return False
    num = parse_number(text)  # a rounded decimal of the answer ('\\approx 14.29'): by the rounding policy
    written = _decimal_against_exact(None, answer, num, [value], s) if num is not None else None
    return bool(written)


# ---------------------------------------------------------------- answer shapes


_NAME = r"(?:\\mathrm\s*\{\s*~?\s*[A-Za-z]\s*\}|[A-Za-z])(?:_\{?[\w\\ ]+\}?)?"
_ASSIGNMENT_RE = re.compile(rf"^\s*({_NAME})\s*=\s*([^=]+?)\s*$")
_WORDY_GOLD_RE = re.compile(r"[A-Za-z]{2,}")


def _orderings(gold_form: _forms.Reading | None) -> list:
    """The tuples of a gold that offers the same values in several orders ('(4,5) or (5,4)'): each
    is a right answer. [] for any other gold ('x = 1 or x = 3' is a solution set: both are needed)."""
    if gold_form is None or gold_form.joiner != "or" or len(gold_form.parts) < 2:
        return []
    values = [_value(p) for p in gold_form.parts]
    entries = [_tuple_of(v)[1] if v is not None else None for v in values]
    if any(e is None for e in entries) or len({tuple(sorted(map(str, e))) for e in entries}) != 1:
        return []
    return [sympy.Tuple(*e) for e in entries]


def _chain_holds(chain: list[str], written: str) -> bool:
    """Whether '\\sqrt{2} < 2 < 3' (or the same with '>') is true of the values written."""
    values = [numeric_value(_value(p)) if _value(p) is not None else None for p in chain]
    if any(v is None or not v.is_real for v in values):
        return False
    increasing = "<" in written or "\\lt" in written
    pairs = zip(values, values[1:])
    try:
        return all(bool(a < b) if increasing else bool(a > b) for a, b in pairs)
    except TypeError:  # not decidable: not an ordering that holds
        return False


def _several_values(gold_expr: Any, gold_form: _forms.Reading | None) -> bool:
    """A gold that states several values (a set, a solution set, 'x < 1 or x > 2')."""
    return (isinstance(gold_expr, (sympy.FiniteSet, sympy.Or, sympy.Union))
            or (gold_form is not None and len(gold_form.parts) > 1))


def _is_list(expr: Any) -> bool:
    return isinstance(expr, sympy.FiniteSet) and len(expr) > 1


def _description_gold(gold: str) -> frozenset | None:
    """The content words of a gold that is an answer in words ("$n$ is even", "Infinite number of
    solutions", "\\text{a necessary but not a sufficient condition}"): no digit, no math but single
    letters; None for any other gold."""
    plain = re.sub(r"\$\s*[A-Za-z]\s*\$", " v ", gold)
    plain = re.sub(r"\\(?:text|textbf|mathrm)\s*\{([^{}]*)\}", r" \1 ", plain)
    if "$" in plain or "\\" in plain or re.search(r"\d", plain) or len(_WORDY_GOLD_RE.findall(plain)) < 2:
        return None
    return _forms.description_key(gold)


def _by_shape(gold: str, gold_form: _forms.Reading | None, gold_expr: Any, pred_span: str | None,
              pred_form: _forms.Reading | None, pred_expr: Any, s: Settings) -> tuple[bool, str] | None:
    """Verdicts that need the written shape of the answers, not only their parsed values: lists of
    quantities with units, assignments against a tuple, a gold that lists a value twice, an answer
    that only names the gold's variable. None when no such rule applies."""
    if pred_span is None:
        return None
    gold_plain = gold.replace("$", " ").strip()
    m = _ASSIGNMENT_RE.match(gold_plain)
    if m and "," not in m.group(2) and _squash(pred_span) == _squash(m.group(1)):
        return False, "names the variable, not its value"
    pred_shape = pred_form or _forms.read(pred_span)
    gold_shape = gold_form or _answer_form(gold_plain)
    if gold_shape is None:  # a gold that is a whole solution text: its parsed answer decides
        return None
    if len(gold_shape.units) > 1 or len(pred_shape.units) > 1:
        return _quantities_equal(gold_shape, pred_shape, s)

    if isinstance(gold_expr, sympy.FiniteSet) and len(gold_shape.parts) > len(gold_expr) and gold_shape.joiner == ",":
        if len(pred_shape.parts) != len(gold_shape.parts):  # 36, 36, 108: a repeated value counts
            return False, f"{len(pred_shape.parts)} values for the gold's {len(gold_shape.parts)}"
    return _assignments_equal(gold_expr, pred_shape, s) or _assignments_equal(pred_expr, gold_shape, s, gold_is_tuple=False)


_LETTER_UNIT_RE = re.compile(r"^\s*[-+]?[\d.,]+\s+([A-Za-z]{1,3})\s*\.?\s*$")


def _units_differ(gold_form: _forms.Reading | None, pred_span: str | None, pred_form: _forms.Reading | None) -> str | None:
    """'units differ: ...' when a one-quantity gold and the answer both name a unit and the units
    are not the same (after `_forms.canonical_unit`); None otherwise (an answer without a unit is
    compared by its value)."""
    if gold_form is None or pred_span is None or len(gold_form.parts) != 1 or not gold_form.units:
        return None
    g_unit = _forms.canonical_unit(gold_form.units[0])
    p_unit = _forms.canonical_unit(_single_unit(pred_span, pred_form or _forms.read(pred_span)))
    return f"units differ: {p_unit!r} for {g_unit!r}" if g_unit and p_unit and g_unit != p_unit else None


def _single_unit(span: str, shape: _forms.Reading) -> str | None:
    """The unit of a one-quantity answer: the reader's, or a short word after a space ('312 g'),
    which the parser strips as a unit too."""
    if len(shape.parts) == 1 and shape.units:
        return shape.units[0]
    m = _LETTER_UNIT_RE.match(span)
    return m.group(1).lower() if m else None


def _value(latex: str, keep: frozenset = frozenset()) -> Any:
    parsed = _parse(f"${latex}$", LATEX_ONLY, keep)
    return parsed[0] if parsed and isinstance(parsed[0], (Basic, MatrixBase)) else None


def _quantities_equal(gold: _forms.Reading, pred: _forms.Reading, s: Settings) -> tuple[bool, str]:
    """Lists of quantities with units ("12 apples, 25 pears"): element by element, paired by unit
    when both sides name the same distinct units, else by position; never by the first number."""
    if len(gold.parts) != len(pred.parts):
        return False, f"{len(pred.parts)} quantities for the gold's {len(gold.parts)}"
    pairs = list(zip(gold.parts, pred.parts))
    g_units, p_units = gold.units, pred.units
    if g_units and p_units and None not in g_units and None not in p_units:
        if len(set(g_units)) == len(g_units) == len(set(p_units)) and set(g_units) == set(p_units):
            by_unit = dict(zip(p_units, pred.parts))
            pairs = [(g, by_unit[u]) for g, u in zip(gold.parts, g_units)]
        elif set(g_units) & set(p_units) and list(g_units) != list(p_units):
            return False, "units differ"  # the same unit names, on other items ('12 apples, 25 apples')
        # disjoint names ('hr' against 'hours'): the values in order
    for g, p in pairs:
        gv, pv = _value(g), _value(p)
        if gv is None or pv is None or not expr_equal(gv, pv, s):
            return False, f"quantities differ: {p[:40]!r} for {g[:40]!r}"
    return True, "quantities equal"


def _assignments(form: _forms.Reading) -> list[tuple[str, str]] | None:
    """[(name, value)] when every part of an answer assigns a value to its own name (a=1, b=2)."""
    if len(form.parts) < 2:
        return None
    found = [_ASSIGNMENT_RE.match(p) for p in form.parts]
    if not all(found):
        return None
    pairs = [(m.group(1), m.group(2)) for m in found]
    return pairs if len({_squash(n) for n, _ in pairs}) == len(pairs) else None


def _tuple_of(expr: Any) -> tuple[list | None, tuple | None]:
    """(names, values) of a gold tuple: '(a,b)=(1,2)' -> ([a, b], (1, 2)); '(1,2)' -> (None, (1, 2))."""
    names = None
    if isinstance(expr, sympy.Eq) and isinstance(expr.lhs, sympy.Tuple) and all(isinstance(a, sympy.Symbol) for a in expr.lhs):
        names, expr = list(expr.lhs), expr.rhs
    if isinstance(expr, sympy.Tuple):
        return names, tuple(expr)
    if isinstance(expr, sympy.Interval) and expr.left_open and expr.right_open and expr.start.is_finite and expr.end.is_finite:
        return names, (expr.start, expr.end)  # (1, 2) is read as an open interval; here it is a pair
    return names, None


def _assignments_equal(tuple_expr: Any, assigned: _forms.Reading, s: Settings,
                       gold_is_tuple: bool = True) -> tuple[bool, str] | None:
    """Assignments ('a=1, b=2', written on one side) against a tuple on the other: by name when
    the tuple names its variables ('(a,b)=(1,2)'), else by the order they are written ('(1, 2)').
    None when the pair is not one."""
    pairs = _assignments(assigned)
    names, values = _tuple_of(tuple_expr)
    if pairs is None or values is None or len(pairs) != len(values):
        return None
    if names is not None:
        named = {str(_value(n)): v for n, v in pairs}
        if set(named) != {str(n) for n in names}:
            return (False, "assigns other names than the tuple's") if s.strict else None
        ordered = [named[str(n)] for n in names]
    else:
        ordered = [v for _, v in pairs]
    got = [_value(v) for v in ordered]
    if any(v is None for v in got):
        return None
    pair = (sympy.Tuple(*values), sympy.Tuple(*got))
    ok = expr_equal(*(pair if gold_is_tuple else pair[::-1]), s)
    return ok, "assignments equal the tuple" if ok else "assignments differ from the tuple"


def _other_angle_unit(gold: str, extracted: str, pred_expr: Any) -> Any:
    """The prediction in the gold's angle unit when the two are written in different ones (a gold
    in degrees and an answer with \\pi, or the reverse); None otherwise."""
    g_deg, g_pi = _forms.angle_marks(gold)
    p_deg, p_pi = _forms.angle_marks(extracted)
    if g_deg and not g_pi and p_pi and not p_deg:
        return radians_to_degrees(pred_expr)
    if g_pi and not g_deg and p_deg and not p_pi:
        return degrees_to_radians(pred_expr)
    return None


def _plain_text(text: str) -> str:
    """The writing without delimiters, \\text{} wrappers, spaces and a final period."""
    text = re.sub(r"\\(?:text|textrm|mathrm|mbox|operatorname)\s*\{([^{}]*)\}", r"\1", text.replace("$", ""))
    return _squash(text).removesuffix(".")


def _squash(text: str) -> str:
    return "".join(text.split())


def _verdict(ok: bool) -> Verdict:
    return Verdict.CORRECT if ok else Verdict.INCORRECT


def extract_math(text: str) -> str | None:
    """The answer `verify_math` reads from `text`, as text (a plain number in canonical form)."""
    parsed, _ = _parse_prediction(prepare_prediction(clean(text)))
    if not parsed:
        return None
    num = _num_from(parsed)
    return canonical_number(num) if num is not None else str(parsed[-1])
