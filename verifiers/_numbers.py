"""Number literals and the one numeric-equality rule shared by the `math` kind and the fast path.

Pure Python (fractions, re): importing this never imports sympy. Both the slow path and the fast
path turn a plain literal into a `Num` with the functions here, and both decide equality with
`numbers_match`, so they cannot disagree on a number.

The rule (why: math-verify rounds both sides to 6 decimals, so 1e-7 == 2e-7 and 1/2^99 == 1/2^98):
- both sides exact (integers, fractions, exact symbolic values) -> exact equality, nothing else;
- both sides decimals -> equal when |a - b| <= rel_tol * max(|a|, |b|) (relative, so tiny and huge
  values are compared at the same precision);
- a decimal against an exact value: the same tolerance only when the decimal writes at least
  `precision` places ('1.0909090' for 12/11), else only the roundings below: '368472012.00' is not
  368472011 (writing '.00' must not buy an integer a margin of hundreds);
- in addition a written decimal `d` with k digits after the point matches a value `x` that rounds
  to it (|x - d| <= 0.5 * 10**-k) provided `d` is precise enough: 0.5 * 10**-k <= 5 * rel_tol * |d|
  (with the default rel_tol = 1e-6 this means "at least 6 significant digits": 0.142857 matches
  1/7, 0.33 does not match 1/3, 0.0000002 does not match 0.0000001);
- or, against an exact value (the rounding policy): `d` is that value correctly rounded to the
  decimals written and has at least `sig_digits` significant digits (default 3): 14.29 and 14.3
  match 100/7, 14 never does (no decimal written), 0.33 does not match 1/3 (two digits) while 0.333
  does; a percent is its fraction (41.4% for sqrt(2) - 1). `sig_digits=0` turns this off;
- or, against an exact value, provided `d` states at least `precision` decimal places (math-verify's
  `float_rounding`, same default 6) and is not zero: with precision=2, 0.33 matches 1/3 and 2.6667
  matches 8/3 (a correct rounding at the digits written), 0.34 and 2.6651 do not. Unlike math-verify,
  both sides are never rounded to `precision` places, so 0.0000001 and 0.0000002 stay different, and
  0.000000 (no significant digit) matches nothing but 0.

A comma is a decimal comma where it cannot be a thousands separator: one comma, and the digits
after it are not exactly three or the digits before it start with 0 ('1,22' -> 1.22, '0,111' ->
0.111, '1,234' -> 1234). Only in plain text: inside LaTeX '1,22' is a list (`parse_number(...,
decimal_comma=False)`).

>>> numbers_match(parse_number("1/7"), parse_number("0.142857"))
True
>>> numbers_match(parse_number("0.0000001"), parse_number("0.0000002"))
False
>>> numbers_match(parse_number("1,234"), parse_number("1234.0"))
True
>>> numbers_match(parse_number("368472011"), parse_number("368472012.00"))
False
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from verifiers._spans import english_answer_prefix

DEFAULT_REL_TOL = 1e-6
DEFAULT_SIG_DIGITS = 3  # rounding policy: a decimal with this many significant digits, correctly rounded, stands for an exact value
DEFAULT_PRECISION = 6  # decimal places a written decimal may be rounded to (math-verify's float_rounding default)
MAX_LITERAL_CHARS = 400  # longer "numbers" are not decided here (the slow path or a clear verdict)


@dataclass(frozen=True)
class Num:
    """A number read from text: its exact value, whether it is exact (integer or fraction, not a
    decimal), and for a written decimal how many digits follow the point."""

    value: Fraction
    exact: bool
    decimals: int | None = None  # digits after the point of a written decimal, else None

    def text(self) -> str:
        """Canonical text: '1234', '-3/4', '0.125' (decimals keep their written precision)."""
        if self.decimals is not None:
            sign = "-" if self.value < 0 else ""
            scaled = abs(self.value) * 10**self.decimals
            whole, frac = divmod(int(scaled), 10**self.decimals)
            return f"{sign}{whole}.{frac:0{self.decimals}d}" if self.decimals else f"{sign}{whole}"
        v = self.value
        return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"


# An unsigned integer: plain digits, or 1-3 digits (not starting with 0) then groups of exactly 3
# after commas.
_INT = r"(?:[1-9]\d{0,2}(?:,\d{3})+|\d+)"
_DEC = rf"(?:{_INT}\.\d+|\.\d+|{_INT})"
_NUMBER_RE = re.compile(rf"^(-?)({_DEC})$", re.ASCII)
_SLASH_RE = re.compile(rf"^(-?)({_INT})\s*/\s*(-?)({_INT})$", re.ASCII)
_FRAC_RE = re.compile(rf"^(-?)\\[dt]?frac\{{\s*(-?)({_INT})\s*\}}\{{\s*(-?)({_INT})\s*\}}$", re.ASCII)
_DECIMAL_COMMA_RE = re.compile(r"^(-?)(\d+),(\d+)$", re.ASCII)


_PLUS_RE = re.compile(r"(^|[{$:=(]|\bis)(\s*)\+(?=\d)")


def prepare_prediction(text: str) -> str:
    """What both the slow and the fast path do to a prediction before reading it: '+5' -> '5'
    where a number starts an answer (math-verify finds no answer in '+5'), an escaped dollar
    '\\$12' -> ' 12' (math-verify finds no answer after a backslash), and an answer prefix in
    another language -> 'Answer:' ('Réponse : 5', '答案：5'; see `verifiers._spans`).

    >>> prepare_prediction("The answer is +5, and 2 +3 stays")
    'The answer is 5, and 2 +3 stays'
    >>> prepare_prediction("Antwort: 12")
    'Answer: 12'
    """
    return _PLUS_RE.sub(r"\1\2", english_answer_prefix(text.replace("\\$", " ")))


def _int(s: str) -> int:
    return int(s.replace(",", ""))


def parse_number(text: str, decimal_comma: bool = True) -> Num | None:
    """A plain number literal -> Num, else None. Accepts an optional leading '-', thousands
    separators in groups of three ('1,234,567'), decimals ('0.5', '.5', '2.50'), a decimal comma
    where it cannot be a thousands separator ('1,22', '0,111'; only with `decimal_comma`, for plain
    text), fractions 'a/b' and '\\frac{a}{b}' (also \\dfrac, \\tfrac). Anything else (spaces
    inside, exponents, units, '%') is not a plain literal and gives None.

    >>> parse_number("-1,234.50").text()
    '-1234.50'
    >>> parse_number("\\\\frac{6}{8}").value
    Fraction(3, 4)
    >>> parse_number("1,22").text(), parse_number("1,234").text()
    ('1.22', '1234')
    >>> parse_number("1,22", decimal_comma=False) is None
    True
    """
    text = text.strip()
    if not text or len(text) > MAX_LITERAL_CHARS:
        return None
    m = _NUMBER_RE.match(text)
    if m:
        sign, body = m.groups()
        decimals = len(body) - body.index(".") - 1 if "." in body else None
        value = Fraction(body.replace(",", ""))
        return Num(-value if sign else value, exact=decimals is None, decimals=decimals)
    m = _DECIMAL_COMMA_RE.match(text) if decimal_comma else None
    if m:  # the thousands reading ('1,234') was tried above; this comma cannot be one
        sign, whole, frac = m.groups()
        value = Fraction(f"{whole}.{frac}")
        return Num(-value if sign else value, exact=False, decimals=len(frac))
    m = _SLASH_RE.match(text)
    if m:
        sign, num, den_sign, den = m.groups()
        return _fraction(num, den, negative=(sign == "-") != (den_sign == "-"))
    m = _FRAC_RE.match(text)
    if m:
        sign, num_sign, num, den_sign, den = m.groups()
        return _fraction(num, den, negative=[sign, num_sign, den_sign].count("-") % 2 == 1)
    return None


def _fraction(num: str, den: str, negative: bool) -> Num | None:
    if _int(den) == 0:
        return None
    value = Fraction(_int(num), _int(den))
    return Num(-value if negative else value, exact=True)


def canonical_number(num: Num) -> str:
    """The exact value as text, for voting: '1234', '-3/4', '1/2' (for 0.5 too).

    >>> canonical_number(parse_number("2.50")), canonical_number(parse_number("-1,234"))
    ('5/2', '-1234')
    """
    v = num.value
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"


def significant_digits(num: Num) -> int:
    """Significant digits of a written decimal: 14.29 -> 4, 0.0414 -> 3, 2.50 -> 3."""
    mantissa = abs(num.value) * 10 ** (num.decimals or 0)
    return len(str(int(mantissa))) if mantissa >= 1 else 0


def numbers_match(gold: Num, pred: Num, rel_tol: float = DEFAULT_REL_TOL, precision: int = DEFAULT_PRECISION,
                  sig_digits: int = DEFAULT_SIG_DIGITS) -> bool:
    """The numeric equality rule of the module docstring (symmetric in its two arguments).

    >>> third, coarse = parse_number("1/3"), parse_number("0.33")
    >>> numbers_match(third, coarse), numbers_match(third, coarse, precision=2)
    (False, True)
    >>> numbers_match(parse_number("100/7"), parse_number("14.29")), numbers_match(parse_number("100/7"), parse_number("14"))
    (True, False)
    """
    a, b = gold.value, pred.value
    if a == b:
        return True
    if gold.exact and pred.exact:
        return False
    tol = Fraction(rel_tol)
    written = [n for n in (gold, pred) if not n.exact]
    if abs(a - b) <= tol * max(abs(a), abs(b)) and (len(written) == 2 or (written[0].decimals or 0) >= precision):
        return True  # two decimals, or a decimal with the places asked for: at the same relative precision
    for side, other in ((gold, pred), (pred, gold)):
        if side.decimals is None or side.exact:
            continue
        half_unit = Fraction(1, 2 * 10**side.decimals)
        if abs(other.value - side.value) > half_unit:
            continue  # not a correct rounding at the digits written
        if half_unit <= 5 * tol * abs(side.value):
            return True  # precise enough to stand for any value that rounds to it
        if other.exact and side.decimals >= precision and side.value != 0:
            return True  # the decimal places asked for, rounded correctly
        if other.exact and sig_digits and side.decimals and significant_digits(side) >= sig_digits:
            return True  # the rounding policy: enough significant digits, rounded correctly
    return False
