"""Decide the common cheap cases in microseconds, in the calling process, without sympy.

`fast_verify(prediction, gold, kind, **options)` returns the verdict the slow path (the kind
function, run in a worker) would return, or None when it cannot be sure. Importing this module
never imports sympy or math-verify.

For `math` it decides:
- a gold that is a plain number (integer with optional '-' and 3-digit comma groups, decimal,
  'a/b', '\\frac{a}{b}') against a prediction whose answer is a plain number stated as
  the whole prediction (bare, in $...$, or boxed), in the only \\boxed{...} of the prediction,
  as "The answer is X" / "Answer: X" ending a prediction without LaTeX, or as the last number
  of a plain-text prediction, with the same numeric rule as the slow path (`_numbers.numbers_match`);
- a multiple-choice gold ("B", "(B)", "\\boxed{B}") through the pure-Python `choice` kind, as the
  slow path does;
- a boxed / $-wrapped answer whose text is identical to the gold's (simple LaTeX only);
- tuples, intervals, sets and pmatrix / bmatrix matrices of exact literals against the same shape;
- a polynomial in one letter with integer coefficients against one in the same letter, both bare,
  both assigned to the same letter or both defining the same function ('y = 14 + 8x' for 'y=8x+14',
  '(x+3)^2' for 'x^2+6x+9', 'f(t) = t^2 + 3' for 'f(x)=x^2+3'): exact coefficients, no parser (`_polynomial`);
- a bare answer made of exact literals (`_fast_bare`): a bound against a half-line ("x > 7" for
  "(7, \\infty)"), a solution set ("x = 13 or x = -9" for "-9, 13"), assignments against a tuple;
- a closed form against a closed form, both q*sqrt(n) or q*pi with q rational ("\\sqrt{28}" for
  "2\\sqrt{7}", "\\frac{5}{16}\\pi" for "\\frac{5\\pi}{16}"), boxed, in $...$, stated, or bare: exact
  arithmetic on (q, square-free n), no parser (`_closed_form`).
  A bare formula otherwise ("3\\sqrt{2}", "x = 2 or x = -3" against a number) and plain text ending
  in a hedge ("2 or 3") are left to the slow path, which reads them whole.
Anything else (percent, currency, units, "final answer is ... I hope", several boxes, LaTeX
environments around text, ...) returns None. A generated equivalence test keeps this in agreement
with the slow path.

For `numeric`, `choice` and `string` (pure Python, bounded input) it calls the kind itself. `regex`
(a user pattern can backtrack for ever) and `code` always return None.

>>> fast_verify("The answer is 1,234.", "1234").verdict.value
'correct'
>>> fast_verify("\\\\boxed{\\\\frac{1}{3}}", "0.333333").verdict.value
'correct'
>>> fast_verify("\\\\boxed{\\\\sin x}", "\\\\cos x") is None
True
"""

from __future__ import annotations

import math
import re
import time
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable

from verifiers import _forms, _spans
from verifiers._common import MAX_GOLD_CHARS, check_options, clean, result
from verifiers._numbers import DEFAULT_PRECISION, DEFAULT_SIG_DIGITS, DEFAULT_REL_TOL, Num, prepare_prediction, numbers_match, parse_number
from verifiers.simple_kinds import verify_choice, verify_numeric, verify_string
from verifiers.types import Verdict, VerifyResult

MATH_OPTIONS: dict[str, Any] = {
    "rel_tol": DEFAULT_REL_TOL,  # relative tolerance when a decimal/float is involved (see verifiers._numbers)
    "precision": DEFAULT_PRECISION,  # decimal places a decimal answer may be rounded to (math-verify's float_rounding)
    "sig_digits": DEFAULT_SIG_DIGITS,  # rounding policy: significant digits a correctly rounded decimal needs (0: off)
    "strict": True,  # math-verify's `strict`: variable names matter (x+1 != y+1)
    "relation_as_set": False,  # a relation answer (-2 <= x <= 7) may match a set gold ([-2, 7]); allow_set_relation_comp
    "latex_only": False,  # read the prediction's answer only from LaTeX (boxed, $...$, \\(...\\), \\[...\\])
}

# thousands groups (1,234) or a decimal comma (1,22: see _numbers.parse_number) or plain digits
_NUM = r"-?(?:[1-9]\d{0,2}(?:,\d{3})+(?![\d,])|\d+,\d+(?![\d,])|\d+)(?:\.\d+)?"
# "The answer is 42." / "Answer: 42" ending a text without LaTeX
_FRACTION = r"-?\d+/\d+"
_LITERAL = rf"(?:\$?(?:-?\\frac\{{-?\d+\}}\{{\d+\}}|{_FRACTION}|{_NUM})\$?)"
# "The answer is 42." / "Answer: $\frac{1}{2}$" ending the prediction
_ANSWER_END_RE = re.compile(rf"(?i)\banswer\b(?:\s+is\s*:?|\s*:)\s*({_LITERAL}|\$[^$\n%]+\$)\s*\.?\s*$", re.ASCII)
# "The final answer is $X$. I hope it is correct." (the Minerva / lm-eval template)
_FINAL_HOPE_RE = re.compile(rf"(?i:final answer is):?\s*({_LITERAL})\.?\s?I hope it is correct\.?\s*$", re.ASCII)
# the last number of a text: preceded by start / newline / a letter, ':' or '=' and a space
_LAST_NUMBER_RE = re.compile(rf"(?:^|(?<=\n)|(?<=[A-Za-z:=] ))({_LITERAL})\s*[.!]?\s*$", re.ASCII)
_LATEX_OR_SPECIAL = re.compile(r"[$\\\[%€£¥]|\bpercent|\bpct\b|(?i:final answer)")
_NOTHING_TO_READ_RE = re.compile(r"^[^\d$\\\[]*$")
_BARE_ASSIGNMENT_RE = re.compile(rf"^[A-Za-z]\s*=\s*(?:-?\\frac\{{-?\d+\}}\{{\d+\}}|{_FRACTION}|{_NUM})\.?$", re.ASCII)  # 'x = 7': one value, read alike by both paths
_DOLLARS_RE = re.compile(r"^\$\$?([^$]*?)\$?\$$")
# identical-text rule: simple LaTeX the slow path surely parses the same way on both sides
_SIMPLE_TEXT_RE = re.compile(r"^(?:[A-Za-z0-9(){}^_+\-*/=,. ]|\\(?:frac|sqrt|pi|cdot|times|infty)\b)+$")


def _latex_num(text: str) -> Num | None:
    """A literal inside LaTeX. math-verify's normaliser rewrites exactly '0.5' / '.5' to 1/2."""
    num = parse_number(text, decimal_comma=False)  # in LaTeX, '1,22' is a list
    if num is not None and text.strip() in ("0.5", ".5"):
        return Num(num.value, exact=True)
    return num


def pred_literal(pred: str) -> tuple[str, Num | None] | None:
    """(answer text, number or None) when the prediction's answer is certain, else None."""
    s = pred.strip()
    if "\\fbox" in s:
        return None
    lowered = s.lower()
    if "final answer" in lowered and not (s.count("\\boxed") == 1 and "i hope" not in lowered):
        # the common "The final answer is X. I hope it is correct." template: math-verify's
        # highest-priority pattern, so only a \boxed could compete with it
        m = _FINAL_HOPE_RE.search(s)
        if m is None or lowered.count("final answer") != 1 or "\\boxed" in s:
            return None
        literal = m.group(1)
        if literal.startswith("$") != literal.endswith("$"):
            return None
        inner = literal.strip("$")
        return inner, (_latex_num(inner) if literal.startswith("$") else parse_number(inner))
    if s.count("\\boxed") == 1:
        boxed = _spans.boxed_contents(s)
        after = s[s.index("\\boxed"):]
        if len(boxed) != 1 or re.search(r"\}\s*\$*\s*(?:\\?%|\\text|\\mathrm|\\,)", after) or "\\boxed{" not in after:
            return None
        return boxed[0], _latex_num(boxed[0])
    if "\\boxed" in s:
        return None
    m = _DOLLARS_RE.match(s)
    if m:
        inner = m.group(1).strip()
        return (inner, _latex_num(inner)) if "$" not in inner and "%" not in inner else None
    whole = parse_number(s)
    if whole is not None:  # the whole prediction is one literal, also '\\frac{a}{b}'
        return s, whole
    n_answer = len(re.findall(r"(?i)answer", s))
    if n_answer > 1:
        return None
    m = (_ANSWER_END_RE if n_answer else _LAST_NUMBER_RE).search(s)
    if m is not None and not n_answer:
        if _forms.trailing_alternatives(s[s.rfind("\n") + 1:]) is not None:
            return None  # "2 or 3", "1, 2 and 3" ending the text: several values, a set for the slow path
        if _forms.is_bare(s) and not _BARE_ASSIGNMENT_RE.match(s) and _forms.bare_latex(s) is not None:
            return None  # a bare formula ("x = 2 or x = -3"): the slow path parses it whole
    # only the final literal may be LaTeX: anything before it would compete in math-verify's patterns
    if m is None or _LATEX_OR_SPECIAL.search(s[: m.start(1)]):
        return None
    literal = m.group(1)
    if literal.startswith("$") != literal.endswith("$"):
        return None
    inner = literal.strip("$")
    return inner, (_latex_num(inner) if literal.startswith("$") else parse_number(inner))


_LONE_LETTER_RE = re.compile(r"^\(?([A-Z])\)?\.?$")


def math_choice(prediction: str, letter: str) -> tuple[Verdict, str | None, str]:
    """A multiple-choice gold in the `math` kind: the final answer written as a lone letter in
    any wrapper ('\\[ D \\]', '$(A)$', '\\text{(E)}', '\\textbf{B}') is that letter; anything else
    is read by the `choice` kind. (verdict, extracted letter, detail)."""
    span = _spans.final_answer_span(prediction)
    several_boxes = len(set(_spans.boxed_contents(prediction))) > 1  # '\\boxed{A} or \\boxed{B}': the choice kind calls it a hedge
    m = _LONE_LETTER_RE.match(_spans.strip_wrappers(span)) if span and not several_boxes else None
    if m is not None:
        ok = m.group(1) == letter
        return (Verdict.CORRECT if ok else Verdict.INCORRECT), m.group(1), f"choice: the answer is the letter {m.group(1)}"
    res = verify_choice(prediction, letter)
    return res.verdict, res.extracted, f"choice: {res.detail}"


def _fast_math(prediction: str, gold: str, rel_tol: float, precision: int, sig_digits: int = DEFAULT_SIG_DIGITS) -> VerifyResult | None:
    start = time.perf_counter()
    if len(gold) > MAX_GOLD_CHARS:
        return None
    gold = clean(gold, tail=None)
    prepared = prepare_prediction(clean(prediction))
    if _spans.stated_alternative(prepared) is not None:
        return None  # a second answer stated next to the first: the slow path decides (hedge or solution set)
    letter = _spans.choice_gold_letter(gold)
    if letter is not None:  # the slow path reads these the same way
        if len(_spans.offered_letters(prepared)) > 1:
            return None  # two letters offered: the slow path says why it is a hedge
        verdict, extracted, detail = math_choice(prepared, letter)
        return result(verdict, "math", start, extracted, letter, detail)
    gold_num = _gold_number(gold)
    if gold_num is not None and _NOTHING_TO_READ_RE.match(prepared) and _forms.bare_latex(prepared) is None:
        # no digit and no LaTeX at all, and not a bare answer ("x", "all real numbers"): nothing
        # is extracted, and a numeric gold has no text-answer fallback in the slow path
        return result(Verdict.NO_ANSWER, "math", start, None, gold.strip(), "no answer found in prediction")
    if gold_num is None and _forms.is_bare(prepared):
        bare = _fast_bare(prepared, gold.strip())
        if bare is not None:
            ok, text, detail = bare
            return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "math", start, text, gold.strip(), detail)
    pred = pred_literal(prepared)
    bare = pred is None and gold_num is None and _forms.is_bare(prepared)
    if bare:
        pred = prepared.strip(), None  # a bare answer is read whole by the slow path too (here: closed forms only)
    if pred is None:
        return None
    text, pred_num = pred
    if gold_num is None and pred_num is None:
        symbolic = _fast_closed_forms(text, gold.strip(), rel_tol) or _fast_polynomials(text, gold.strip())
        if symbolic is not None and _region_states_only(prepared, text, None):
            ok, detail = symbolic
            return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "math", start, text, gold.strip(), detail)
    if bare:
        return None
    if not _region_states_only(prepared, text, pred_num):
        return None  # another value where the answer is stated ('\\boxed{5}. The final answer is 6'): the slow path decides
    if gold_num is not None and pred_num is not None:
        ok = numbers_match(gold_num, pred_num, rel_tol, precision, sig_digits)
        return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "math", start, text, gold.strip(),
                      "numbers equal" if ok else "numbers differ")
    g = gold.strip()
    if text == g and _SIMPLE_TEXT_RE.match(g) and g.count("{") == g.count("}") and g[-1] not in "+-*/^_=,.":
        return result(Verdict.CORRECT, "math", start, text, g, "equivalent")
    gold_matrix, pred_matrix = _matrix(g), _matrix(text)
    if gold_matrix is not None and pred_matrix is not None:  # entry by entry, as the slow path's sympy Matrix
        ok = gold_matrix == pred_matrix
        return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "math", start, text, g, "equivalent" if ok else "not equivalent")
    gold_items, pred_items = _container(g), _container(text)
    if gold_items is not None and pred_items is not None:
        (g_shape, golds), (p_shape, preds) = gold_items, pred_items
        if g_shape == p_shape:
            ok = set(golds) == set(preds) if g_shape == "{}" else golds == preds
        elif _is_interval(g_shape, golds) and _is_interval(p_shape, preds):
            ok = False  # two intervals that differ in which ends are open
        else:
            return None
        return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "math", start, text, g,
                      "equivalent" if ok else "not equivalent")
    return None


# ---------------------------------------------------------------- closed forms: q*sqrt(n) and q*pi
_INT = r"(?:[1-9]\d{0,7})"  # no leading zero, at most 8 digits (the radicand is factored by trial division)
_ATOM = rf"(?:\\sqrt\{{({_INT})\}}|(\\pi))"
_CLOSED_RES = (  # (sign)(coefficient)atom | \frac{(coefficient)atom}{den} | \frac{num}{den}atom
    re.compile(rf"^(-?)({_INT})?{_ATOM}$"),
    re.compile(rf"^(-?)\\[dt]?frac\{{({_INT})?{_ATOM}\}}\{{({_INT})\}}$"),
    re.compile(rf"^(-?)\\[dt]?frac\{{({_INT})\}}\{{({_INT})\}}{_ATOM}$"),
)


@lru_cache(maxsize=4096)  # the gold repeats within a prompt's group
def _closed_form(text: str) -> tuple[Fraction, int] | None:
    """`text` as q*sqrt(m) (m square-free; m = 1: the value is rational, '3\\sqrt{4}') or q*pi (m = 0), q a
    non-zero rational; None for anything else. Only called when neither side is a plain number: a rational
    closed form against a number ('6' for '2\\sqrt{9}') stays with the slow path."""
    t = re.sub(r"\s+", "", text)
    for number, pattern in enumerate(_CLOSED_RES):
        m = pattern.match(t)
        if m is None:
            continue
        if number == 2:
            sign, num, den, root, pi = m.groups()
        else:
            sign, num, root, pi, *rest = m.groups()
            den = rest[0] if rest else None
        q = Fraction(int(num or 1), int(den or 1)) * (-1 if sign else 1)
        if pi:
            return q, 0
        n, square, f = int(root), 1, 2
        while f * f <= n:
            while n % (f * f) == 0:
                n //= f * f
                square *= f
            f += 1
        return q * square, n  # n == 1: a rational value written as a root ('2\\sqrt{9}')
    return None


def _fast_closed_forms(text: str, gold: str, rel_tol: float = DEFAULT_REL_TOL) -> tuple[bool, str] | None:
    """A prediction and a gold that are both closed forms (`_closed_form`): equal exactly when the rational and
    the square-free radicand (or pi) are; values that differ but lie within 1e-3 (or 2 * rel_tol) of each other
    are left to the slow path (its tolerances decide there)."""
    pred_form, gold_form = _closed_form(text), _closed_form(gold)
    if pred_form is None or gold_form is None:
        return None
    if pred_form == gold_form:
        return True, "equivalent"
    value = lambda f: float(f[0]) * (math.pi if f[1] == 0 else math.sqrt(f[1]))  # noqa: E731
    a, b = value(pred_form), value(gold_form)
    if abs(a - b) <= max(1e-3, 2 * rel_tol) * max(abs(a), abs(b)):
        return None
    return False, "not equivalent"


# ---------------------------------------------------------------- polynomials in one variable
_POLY_TOKEN_RE = re.compile(r"\s*(?:(\d{1,6})|([a-df-hj-z])|(\\cdot|\\times|[-+*()^{}=]))")  # no e, i (constants to the slow path)
_MAX_DEGREE = 12  # (x+1)^{12} expands in microseconds here and well inside the slow path's limit
_MAX_PARENS = 32
_MAX_POLY_CHARS = 500  # longer answers go to the slow path (a chain of 20,000 factors took 0.7 s to read here)


def _poly_tokens(text: str) -> list[tuple[str, str]] | None:
    """('n', digits) / ('v', letter) / ('o', operator) tokens, or None for anything outside the grammar,
    including two numbers apart only by spaces ('2 3x': LaTeX reads 23x)."""
    tokens: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        m = _POLY_TOKEN_RE.match(text, at)
        if m is None:
            return None
        number, letter, op = m.groups()
        kind = "n" if number else "v" if letter else "o"
        if kind == "n" and tokens and tokens[-1][0] == "n":
            return None
        tokens.append((kind, m.group(m.lastindex)))
        at = m.end()
    return tokens


def _times(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    product: dict[int, int] = {}
    for i, x in a.items():
        for j, y in b.items():
            product[i + j] = product.get(i + j, 0) + x * y
    return product


class _Poly:
    """A recursive-descent reader of integer polynomials: expr := ['-'] term (('+'|'-') term)*;
    term := power (['*' | '\\cdot' | '\\times' | juxtaposition] power)*; power := atom ['^' digit | '^{' int '}'];
    atom := int | letter | '(' expr ')'. Juxtaposition only as LaTeX reads it unambiguously: a number or ')'
    before a letter or '(' ('2x', '3(x+1)', '(x+1)(x-1)', '(x+1)x'); 'x3', 'xx', 'x(x+1)' (read as a call: 'n(3)'),
    '(x+1)2', '-x^-2', 'x^23' (LaTeX: x^2 * 3) are outside the grammar. A polynomial is {exponent: coefficient}."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens, self.at, self.letters = tokens, 0, set()

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, value: str) -> bool:
        if self.peek() == ("o", value):
            self.at += 1
            return True
        return False

    def expr(self) -> dict[int, int] | None:
        sign = -1 if self.take("-") else 1
        total = self.term()
        if total is None:
            return None
        total = {k: sign * c for k, c in total.items()}
        while (op := self.peek()) in (("o", "+"), ("o", "-")):
            self.at += 1
            nxt = self.term()
            if nxt is None:
                return None
            for k, c in nxt.items():
                total[k] = total.get(k, 0) + (c if op[1] == "+" else -c)
        return total

    def term(self) -> dict[int, int] | None:
        product = self.power()
        while product is not None:
            before = self.tokens[self.at - 1]
            nxt = self.peek()
            if nxt in (("o", "*"), ("o", "\\cdot"), ("o", "\\times")):
                self.at += 1
            elif nxt is None or not (nxt[0] == "v" or nxt == ("o", "(")) or before[0] == "v":
                return product  # no juxtaposition here: 'x x', 'x(3)' (LaTeX parsers read a call), anything before a number
            factor = self.power()
            if factor is None:
                return None
            product = _times(product, factor)
            if max(product, default=0) > _MAX_DEGREE:
                return None
        return product

    def power(self) -> dict[int, int] | None:
        base = self.atom()
        if base is None or not self.take("^"):
            return base
        braced = self.take("{")
        tok = self.peek()
        if tok is None or tok[0] != "n" or (not braced and len(tok[1]) > 1):
            return None  # 'x^23' is x^2 * 3 in LaTeX, 'x^{-1}' not a polynomial
        self.at += 1
        n = int(tok[1])
        if (braced and not self.take("}")) or n * max(base, default=0) > _MAX_DEGREE:
            return None
        result = {0: 1}
        for _ in range(n):
            result = _times(result, base)
        return result

    def atom(self) -> dict[int, int] | None:
        tok = self.peek()
        if tok is None:
            return None
        self.at += 1
        if tok[0] == "n":
            return {0: int(tok[1])}
        if tok[0] == "v":
            self.letters.add(tok[1])
            return {1: 1}
        if tok == ("o", "("):
            inner = self.expr()
            return inner if inner is not None and self.take(")") else None
        return None


@lru_cache(maxsize=4096)  # the gold repeats within a prompt's group
def _polynomial(text: str) -> tuple[str | None, str, tuple[tuple[int, int], ...]] | None:
    """`text` as a polynomial of degree >= 1 in one letter with integer coefficients, optionally
    assigned to another letter ('y = 8x + 14') or defining a function of that letter ('f(t) = t^2 + 3'):
    (the assigned letter, 'f()' for a function, or None; the letter, '' for a function, whose variable is
    bound; the non-zero (exponent, coefficient) pairs, sorted); None for anything else."""
    tokens = _poly_tokens(text) if len(text) <= _MAX_POLY_CHARS else None
    if tokens is None or tokens.count(("o", "=")) > 1 or tokens.count(("o", "(")) > _MAX_PARENS:
        return None  # the reader recurses per parenthesis: a completion of 400 nested ones must not crash it
    assigned = bound = None
    if ("o", "=") in tokens:
        lhs = tokens[:tokens.index(("o", "="))]
        if len(lhs) == 1 and lhs[0][0] == "v":
            assigned = lhs[0][1]
        elif len(lhs) == 4 and lhs[0][0] == "v" and lhs[1] == ("o", "(") and lhs[2][0] == "v" and lhs[3] == ("o", ")"):
            assigned, bound = lhs[0][1] + "()", lhs[2][1]
        else:
            return None
        tokens = tokens[len(lhs) + 1:]
    reader = _Poly(tokens)
    poly = reader.expr()
    if poly is None or reader.at != len(tokens) or len(reader.letters) != 1 or (assigned or "")[:1] in reader.letters:
        return None
    letter = next(iter(reader.letters))
    if bound is not None and bound != letter:
        return None  # 'f(x) = t^2': t is not the function's variable
    terms = tuple(sorted((k, c) for k, c in poly.items() if c))
    if not any(k for k, _ in terms):
        return None  # a constant ('x - x'): a number, for the number rules
    return assigned, "" if bound else letter, terms


def _fast_polynomials(text: str, gold: str) -> tuple[bool, str] | None:
    """A prediction and a gold that are both polynomials (`_polynomial`) in the same letter, both bare or both
    assigned to the same letter, or both defining the same function (its variable may be renamed, as the slow
    path's `_function_renamed` allows): equal exactly when their coefficients are (the slow path's sympy agrees: integer
    coefficients, no tolerance). Another letter or another shape is left to the slow path (`strict`, renamings,
    an equation against its right-hand side, scaled equations)."""
    pred_poly, gold_poly = _polynomial(text), _polynomial(gold)
    if pred_poly is None or gold_poly is None or pred_poly[:2] != gold_poly[:2]:
        return None
    return (True, "equivalent") if pred_poly[2] == gold_poly[2] else (False, "not equivalent")


def _region_states_only(prepared: str, text: str, num: Num | None) -> bool:
    """Whether every value of the answer region (`_spans.answer_candidates`, what the slow path reads
    for a second answer) is the literal read here, written as read or as the same number."""
    for _, candidate in _spans.answer_candidates(prepared):
        other = parse_number(candidate.strip())
        if candidate.strip() != text and not (other is not None and num is not None and other.value == num.value):
            return False
    return True


_ASSIGNED_RE = re.compile(r"^(?:([A-Za-z])\s*=\s*)?(.+)$")
_NAMED_TUPLE_RE = re.compile(r"^\$?\s*\(\s*([A-Za-z](?:\s*,\s*[A-Za-z])+)\s*\)\s*=\s*(\([^()]*\))\s*\$?$")


def _exact(text: str) -> Fraction | None:
    num = parse_number(text, decimal_comma=False)
    return num.value if num is not None and num.exact else None


def _fast_bare(pred: str, gold: str) -> tuple[bool, str, str] | None:
    """Bare answers made of exact literals, as the slow path compares them: a bound against a
    half-line ('x > 7' against '(7, \\infty)'), a solution set ('x = 13 or x = -9' against '-9, 13')
    and assignments against a tuple ('p=3, q=12' against '(p,q)=(3,12)' by name, against '(6,5)'
    by position). (ok, answer text, detail) or None."""
    return _fast_inequality(pred, gold) or _fast_lists(pred, gold)


_OPS = {">": (False, True), "<": (True, True), "\\ge": (False, False), "\\geq": (False, False), "\\geqslant": (False, False),
        "\\le": (True, False), "\\leq": (True, False), "\\leqslant": (True, False), ">=": (False, False), "<=": (True, False)}
_OP = r"(>=|<=|>|<|\\geqslant|\\leqslant|\\geq|\\leq|\\ge|\\le)"
_LIT = r"(-?\d+(?:/\d+)?|-?\\frac\{\d+\}\{\d+\})"
_INEQUALITY_RE = re.compile(rf"^(?:[A-Za-z]\s*{_OP}\s*{_LIT}|{_LIT}\s*{_OP}\s*[A-Za-z])$")
_HALF_LINE_RE = re.compile(rf"^\$?\s*(?:\\left)?([(\[])\s*(?:{_LIT}\s*,\s*\+?\\infty|-\\infty\s*,\s*{_LIT})\s*(?:\\right)?([)\]])\s*\$?$")


def _fast_inequality(pred: str, gold: str) -> tuple[bool, str, str] | None:
    """'x > 7' against '(7, \\infty)': a bound on one variable against a half-line with exact ends,
    compared as sets as the slow path does. (ok, answer text, detail) or None."""
    m, g = _INEQUALITY_RE.match(pred.strip()), _HALF_LINE_RE.match(gold)
    if m is None or g is None:
        return None
    if m.group(1):  # x OP a
        below, is_open = _OPS[m.group(1)]
        value = _exact(m.group(2))
    else:  # a OP x: the variable is on the other side
        below, is_open = _OPS[m.group(4)]
        below, value = not below, _exact(m.group(3))
    g_below = g.group(3) is not None  # (-\infty, a): the set lies below a
    g_value = _exact(g.group(3) if g_below else g.group(2))
    g_open = (g.group(4) if g_below else g.group(1)) in "()"
    if value is None or g_value is None or (g.group(1) if g_below else g.group(4)) not in "()":
        return None  # an infinite end written closed: the slow path decides
    ok = (below, is_open, value) == (g_below, g_open, g_value)
    return ok, pred.strip(), "equivalent" if ok else "not equivalent"


def _fast_lists(pred: str, gold: str) -> tuple[bool, str, str] | None:
    """The literal-list cases of `_fast_bare`."""
    reading = _forms.bare_reading(pred)
    if reading is None or reading.units or len(reading.parts) < 2 or reading.joiner not in (",", "or", "and"):
        return None
    parts = [_ASSIGNED_RE.match(p) for p in reading.parts]
    names = [m.group(1) for m in parts]
    values = [_exact(m.group(2)) for m in parts]
    if None in values:
        return None
    tuple_gold = _NAMED_TUPLE_RE.match(gold)
    if tuple_gold or _container(gold) is not None and _container(gold)[0] == "()":
        if None in names or len({n.lower() for n in names}) != len(names):
            return None
        if tuple_gold:
            gold_names = [n.strip().lower() for n in tuple_gold.group(1).split(",")]
            shaped = _container(tuple_gold.group(2))
            if shaped is None or shaped[0] != "()" or sorted(gold_names) != sorted(n.lower() for n in names):
                return None  # other names: the slow path decides (it depends on `strict`)
            by_name = dict(zip((n.lower() for n in names), values))
            got = [by_name[n] for n in gold_names]
        else:
            shaped, got = _container(gold), values
        if len(shaped[1]) != len(got):
            return None
        ok = shaped[1] == got
        return ok, reading.latex, "assignments equal the tuple" if ok else "assignments differ from the tuple"
    gold_parts = _forms.split_top(gold.replace("$", " ").strip())
    gold_values = [_exact(p) for p, _ in gold_parts]
    if len(gold_parts) < 2 or None in gold_values or {j for _, j in gold_parts[:-1]} != {","}:
        return None
    if len(set(names)) != 1 or len(set(values)) != len(values) or len(set(gold_values)) != len(gold_values):
        return None  # names mixed, or a value repeated: the slow path decides
    ok = set(values) == set(gold_values)
    return ok, reading.latex, "equivalent" if ok else "not equivalent"


@lru_cache(maxsize=4096)  # RL scores several completions per prompt: the gold repeats
def _gold_number(gold: str) -> Num | None:
    return parse_number(gold)


def _is_interval(shape: str, values: list[Fraction]) -> bool:
    """The parser reads (a, b), [a, b], [a, b), (a, b] as an interval when a < b."""
    return shape in ("()", "[]", "[)", "(]") and len(values) == 2 and values[0] < values[1]


_CONTAINER_RE = re.compile(r"^(\(|\[|\\\{)([^()\[\]{}]*|(?:[^()\[\]]*\\frac\{[^{}]*\}\{[^{}]*\})+[^()\[\]{}]*)(\)|\]|\\\})$", re.ASCII)
_SHAPES = {"()", "[]", "[)", "(]", "{}"}


def _container(text: str) -> tuple[str, list[Fraction]] | None:
    """('()', [1, 2]) for a tuple / interval / set of exact literals: '(1,2)', '[1,3)', '\\{1,2\\}'.
    Decimals are left to the slow path (tolerance is not transitive inside sets)."""
    m = _CONTAINER_RE.match(text)
    if not m:
        return None
    shape = (m.group(1) + m.group(3)).replace("\\", "")
    parts = m.group(2).split(",")
    if shape not in _SHAPES or (shape != "{}" and len(parts) < 2) or (shape in ("[)", "(]") and len(parts) != 2):
        return None
    nums = [parse_number(part) for part in parts]
    if any(n is None or not n.exact for n in nums):
        return None
    if shape in ("[)", "(]") and nums[0].value >= nums[1].value:
        return None  # an empty half-open interval: the slow path compares it as a set
    return shape, [n.value for n in nums]


_MATRIX_RE = re.compile(r"^\\begin\{([pb]matrix)\}(.*)\\end\{\1\}$", re.DOTALL)


def _matrix(text: str) -> tuple[tuple[Fraction, ...], ...] | None:
    """The rows of a pmatrix / bmatrix of exact literals ('\\begin{pmatrix}1&-2\\\\\\frac{1}{2}&4\\end{pmatrix}');
    None for anything else (a vmatrix is a determinant, an empty or ragged row, a decimal, an expression)."""
    m = _MATRIX_RE.match(text.strip())
    if m is None:
        return None
    rows = []
    for row in m.group(2).split("\\\\"):
        values = [_latex_num(entry.strip()) for entry in row.split("&")]
        if not values or any(v is None or not v.exact for v in values):
            return None
        rows.append(tuple(v.value for v in values))
    return tuple(rows) if len({len(r) for r in rows}) == 1 else None


def math_options(options: dict[str, Any]) -> dict[str, Any]:
    """The `math` kind's options, checked (shared by the fast and the slow path)."""
    if not options:
        return MATH_OPTIONS  # the defaults (the common call); read-only for every caller
    opts = check_options("math", options, MATH_OPTIONS)
    rel_tol, precision = opts["rel_tol"], opts["precision"]
    if isinstance(rel_tol, bool) or not isinstance(rel_tol, (int, float)) or not 0 <= rel_tol < 1:
        raise ValueError(f"math option rel_tol must be a number in [0, 1), got {rel_tol!r}")
    if isinstance(precision, bool) or not isinstance(precision, int) or not 0 <= precision <= 100:
        raise ValueError(f"math option precision must be a whole number of decimal places in [0, 100] (default 6), got {precision!r}")
    sig = opts["sig_digits"]
    if isinstance(sig, bool) or not isinstance(sig, int) or not 0 <= sig <= 100:
        raise ValueError(f"math option sig_digits must be a whole number in [0, 100] (default 3; 0 turns the rounding policy off), got {sig!r}")
    for name in ("strict", "relation_as_set", "latex_only"):
        if not isinstance(opts[name], bool):
            raise ValueError(f"math option {name} must be True or False, got {opts[name]!r}")
    return {**opts, "rel_tol": float(rel_tol)}


def _fast_math_kind(prediction: str, gold: str, **options: Any) -> VerifyResult | None:
    opts = math_options(options)
    if opts["latex_only"]:
        return None  # the plain-text readings below are exactly what this option turns off
    # `strict` and `relation_as_set` do not matter here: the only symbolic answers decided are polynomials
    # in the same letter on both sides (`_fast_polynomials`), never a relation or a renamed letter
    return _fast_math(prediction, gold, opts["rel_tol"], opts["precision"], opts["sig_digits"])


FAST_KINDS: dict[str, Callable[..., VerifyResult | None]] = {
    "math": _fast_math_kind,
    "numeric": verify_numeric,
    "choice": verify_choice,
    "string": verify_string,
}


def fast_verify(prediction: str, gold: str, kind: str = "math", **options: Any) -> VerifyResult | None:
    """The verdict of `kind` for this pair when it is certain without sympy, else None.
    Unknown options raise TypeError exactly as the kind would."""
    fn = FAST_KINDS.get(kind)
    return None if fn is None else fn(prediction, gold, **options)
