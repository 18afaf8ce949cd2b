"""The `numeric`, `choice`, `string` and `regex` verifier kinds. Pure Python (no sympy), so they are
cheap enough for the in-process fast path (except `regex`, whose user pattern may backtrack for
ever and so always runs in a worker).

Where the answer is read from (`numeric`, `choice`, `string`, and `regex` unless told otherwise):
the last \\boxed{...}, else the last "answer is X" / "Answer: X", else the last non-empty line
(`verifiers._spans.final_answer_span`); only the last 8192 characters of a prediction are read.

>>> verify_numeric("so x = 3.14159", "3.1416", rel_tol=1e-4).verdict.value
'correct'
>>> verify_choice("The answer is (B).", "B").verdict.value
'correct'
>>> verify_string("Answer: paris", "Paris").verdict.value
'correct'
>>> verify_regex("The answer is 42 apples", r"42\\s*apples?").verdict.value
'correct'
"""

from __future__ import annotations

import math
import re
import string
import time
import unicodedata
from fractions import Fraction
from typing import Any

from verifiers import _spans
from verifiers._common import MAX_GOLD_CHARS, check_options, clean, result
from verifiers._numbers import parse_number
from verifiers.types import Verdict, VerifyResult

# ---------------------------------------------------------------- numeric

NUMERIC_OPTIONS: dict[str, Any] = {
    "rel_tol": 1e-6,  # |pred - gold| <= max(rel_tol * max(|pred|, |gold|), abs_tol)
    "abs_tol": 0.0,  # absolute tolerance, for answers near zero
}
MAX_EXPONENT = 10_000  # 1e99999 is not expanded into a 100,000-digit integer: it is not read as a number

# a number token: sign, digits (with 3-digit comma groups), decimals, exponent (e/E or x10^n), percent
_NUM_TOKEN = re.compile(
    r"(?<![\w.])([-+−]?)((?:[1-9]\d{0,2}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    r"(?:\s*/\s*(\d+)(?![\d.]))?"
    r"(?:\s*(?:[eE]|[x×*]\s*10\s*\^|\\times\s*10\s*\^|\\cdot\s*10\s*\^)\s*\{?([-+−]?\d+)\}?)?"
    r"(\s*\\?%)?"
)
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


def read_number(text: str) -> Fraction | None:
    """The last number written in `text` as an exact Fraction: '1,234.5', '-3/4', '2.5e-3',
    '1.5\\times 10^{3}', '45%' (-> 9/20); '\\frac{a}{b}' is read first when the text is one.

    >>> read_number("so it is 1,234.5 m")
    Fraction(2469, 2)
    >>> read_number("about 2.5e-3") == Fraction(1, 400)
    True
    """
    whole = parse_number(_spans.unwrap(text.strip()))
    if whole is not None:
        return whole.value
    text = _LATEX_FRAC.sub(r"\1/\2", text)
    last = None
    for m in _NUM_TOKEN.finditer(text):
        last = m
    if last is None:
        return None
    sign, body, den, exp, pct = last.groups()
    value = Fraction(body.replace(",", ""))
    if den:
        if int(den) == 0:
            return None
        value /= int(den)
    if exp:
        e = int(exp.replace("−", "-"))
        if abs(e) > MAX_EXPONENT:
            return None
        value *= Fraction(10) ** e
    if pct:
        value /= 100
    return -value if sign in ("-", "−") else value


def verify_numeric(prediction: str, gold: str, **options: Any) -> VerifyResult:
    """A number compared with tolerance: `rel_tol` (default 1e-6) and `abs_tol` (default 0.0),
    like `math.isclose` but exact (fractions, no binary rounding)."""
    opts = check_options("numeric", options, NUMERIC_OPTIONS)
    for name in ("rel_tol", "abs_tol"):
        if not isinstance(opts[name], (int, float)) or opts[name] < 0:
            raise ValueError(f"numeric option {name} must be a number >= 0, got {opts[name]!r}")
    start = time.perf_counter()
    g = read_number(clean(gold, tail=MAX_GOLD_CHARS)) if len(gold) <= MAX_GOLD_CHARS else None
    if g is None:
        return result(Verdict.BAD_GOLD, "numeric", start, gold_parsed=gold[:80], detail="gold is not a number")
    span = _spans.final_answer_span(clean(prediction))
    p = read_number(span) if span is not None else None
    if p is None:
        return result(Verdict.NO_ANSWER, "numeric", start, span, _fmt(g), "no number in the prediction's answer")
    tol = max(Fraction(opts["rel_tol"]) * max(abs(p), abs(g)), Fraction(opts["abs_tol"]))
    ok = abs(p - g) <= tol
    return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "numeric", start, _fmt(p), _fmt(g),
                  "within tolerance" if ok else f"differs by {_fmt(abs(p - g))}")


def _fmt(x: Fraction) -> str:
    """Exact text for ordinary numbers; huge or very precise ones as sign and power of ten."""
    if max(abs(x.numerator).bit_length(), x.denominator.bit_length()) > 200:
        if x == 0:
            return "0"
        exponent = math.log10(abs(x.numerator)) - math.log10(x.denominator)
        return f"{'-' if x < 0 else ''}~10^{exponent:.4f}"
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator} (~{float(x):.6g})"


# ---------------------------------------------------------------- choice

CHOICE_OPTIONS: dict[str, Any] = {
    "n_options": None,  # number of options: the valid letters are the first n (A, B, C, ...)
    "letters": None,  # the valid letters as a string, e.g. "ABCDE" (default: "ABCDEFGHIJ")
}
# a letter as an answer: (B) / [B] / **B** / **(B)** / B) / a bare capital B followed by the end,
# punctuation, or a word like "or" / "because" (so "I think" is not the letter I)
_BARE_END = r"(?=\s*(?:$|[.,;:!?)\]*\n]|(?:or|and|because|since|as|is)\b))"
_LETTER = (r"(?:\(([A-Za-z])\)|\[([A-Za-z])\]|\*\*\(?([A-Z])\)?\*\*|\b([A-Z])\)|\b([A-Z])\b(?!')" + _BARE_END + ")")
_AMBIGUOUS = re.compile(r"\s*(?:,|/|&|\bor\b|\band\b)\s*(?:\*\*)?[(\[]?([A-Z])\b")
_ANSWER_CHOICE = re.compile(r"(?i:\banswer\b(?:\s+is)?|\boption\b|\bchoice\b)\s*(?:is\s*)?[:=]?\s*(?:\*\*)?\s*(?:option\s+)?" + _LETTER)
# a last line that gives a letter: the letter alone, or "(B) option text" / "B) option text"
_LINE = re.compile(r"^\s*(?:\*\*)?(?:\(([A-Z])\)|([A-Z])\)|([A-Z])(?:\*\*)?\s*[.:]?\s*$)")


def _valid_letters(opts: dict[str, Any]) -> str:
    if opts["letters"] is not None:
        if not isinstance(opts["letters"], str) or not opts["letters"].isalpha():
            raise ValueError(f"choice option letters must be a string of letters like 'ABCD', got {opts['letters']!r}")
        return opts["letters"].upper()
    n = opts["n_options"]
    if n is None:
        return string.ascii_uppercase[:10]
    if not isinstance(n, int) or not 1 <= n <= 26:
        raise ValueError(f"choice option n_options must be an int in [1, 26], got {n!r}")
    return string.ascii_uppercase[:n]


def _letter_of(m: re.Match) -> str:
    return next(g for g in m.groups() if g).upper()


def read_choice(text: str, valid: str = "ABCDEFGHIJ") -> tuple[str | None, str]:
    """(letter, how) read from a completion; letter None when none, or '?' when two different
    letters are given as the final answer (e.g. "\\boxed{A} or \\boxed{B}", "Answer: A or C").
    "Answer:" may be written in another language ("Réponse : B", "答案：B")."""
    text = _spans.english_answer_prefix(text)
    boxed = [b for b in _spans.boxed_contents(text)]
    if boxed:
        letters = []
        for b in boxed[-2:]:
            inner = _spans.strip_wrappers(b)
            m = _LINE.match(inner.upper() if len(inner) == 1 else inner)  # a lone boxed 'b' is option B
            if m and _letter_of(m) in valid:
                letters.append(_letter_of(m))
        if letters:
            return ("?" if len(set(letters)) > 1 and _hedged(text) else letters[-1]), "boxed"
    found = None
    for m in _ANSWER_CHOICE.finditer(text):
        if _letter_of(m) in valid:
            found = m
    if found is not None:
        nxt = _AMBIGUOUS.match(text, found.end())
        if nxt and nxt.group(1) in valid and nxt.group(1) != _letter_of(found):
            return "?", "answer statement names two letters"
        return _letter_of(found), "answer statement"
    line = _spans.last_line(text)
    if line is not None:
        m = _LINE.match(line)
        if m and _letter_of(m) in valid:
            nxt = _AMBIGUOUS.match(line, m.end())
            if nxt and nxt.group(1) in valid and nxt.group(1) != _letter_of(m):
                return "?", "last line names two letters"
            return _letter_of(m), "last line"
    return None, "no option letter found"


def _hedged(text: str) -> bool:
    """Two different boxed letters count as one hedged answer when the last two boxes are joined
    by 'or' / 'and' / ',' (an earlier box that was later corrected is not a hedge)."""
    return bool(re.search(r"\}\s*(?:\$\s*)?(?:,|or|and|/)\s*(?:\$\s*)?\\(?:boxed|fbox)", text))


def verify_choice(prediction: str, gold: str, **options: Any) -> VerifyResult:
    """Multiple choice: `gold` is a letter ("B", "(B)", "B)", "\\boxed{B}"). The prediction may give
    it as \\boxed{B}, (B), B), **B**, "Answer: B", "The answer is B" or a last line "B".
    A prediction that names two different letters as its final answer ("A or B") is INCORRECT
    (a hedge must never earn reward; the detail says "ambiguous").
    Options: `n_options` (valid letters are the first n) or `letters` (e.g. "ABCDE")."""
    opts = check_options("choice", options, CHOICE_OPTIONS)
    valid = _valid_letters(opts)
    start = time.perf_counter()
    g_text = _spans.strip_wrappers(_spans.final_answer_span(clean(gold, tail=200)) or "")
    g = _LINE.match(g_text.upper() if len(g_text) == 1 else g_text)
    if g is None or _letter_of(g) not in valid or len(gold.strip()) > 40:
        return result(Verdict.BAD_GOLD, "choice", start, gold_parsed=gold[:80],
                      detail=f"gold is not one of the letters {valid}")
    gold_letter = _letter_of(g)
    letter, how = read_choice(clean(prediction), valid)
    if letter is None:
        return result(Verdict.NO_ANSWER, "choice", start, None, gold_letter, how)
    if letter == "?":
        return result(Verdict.INCORRECT, "choice", start, "?", gold_letter, f"ambiguous: {how}")
    ok = letter == gold_letter
    return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "choice", start, letter, gold_letter,
                  f"{how}: {letter}" + ("" if ok else f" != {gold_letter}"))


# ---------------------------------------------------------------- string

STRING_OPTIONS: dict[str, Any] = {
    "case_sensitive": False,  # compare letter case too
    "fold_whitespace": True,  # runs of whitespace count as one space; ends are stripped
    "ignore_punctuation": True,  # drop punctuation (Unicode category P*) before comparing
    "extract": True,  # read the final answer (boxed / "answer is" / last line); False: whole prediction
}


def normalize_string(text: str, case_sensitive: bool = False, fold_whitespace: bool = True,
                     ignore_punctuation: bool = True) -> str:
    """NFKC, then the chosen foldings. \\text{...} wrappers are removed.

    >>> normalize_string("  The  Eiffel-Tower! ")
    'the eiffeltower'
    """
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"\\(?:text|textbf|mathrm)\s*\{([^{}]*)\}", r"\1", text)
    if ignore_punctuation:
        text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    if fold_whitespace:
        text = " ".join(text.split())
    return text if case_sensitive else text.casefold()


def verify_string(prediction: str, gold: str, **options: Any) -> VerifyResult:
    """Normalised exact match. Options: `case_sensitive` (False), `fold_whitespace` (True),
    `ignore_punctuation` (True), `extract` (True)."""
    opts = check_options("string", options, STRING_OPTIONS)
    start = time.perf_counter()
    fold = {k: opts[k] for k in ("case_sensitive", "fold_whitespace", "ignore_punctuation")}
    g = normalize_string(clean(gold, tail=None), **fold) if len(gold) <= MAX_GOLD_CHARS else ""
    if not g:
        return result(Verdict.BAD_GOLD, "string", start, gold_parsed=gold[:80], detail="gold is empty after normalisation (or too long)")
    pred = clean(prediction)
    span = _spans.final_answer_span(pred) if opts["extract"] else pred
    p = normalize_string(span, **fold) if span is not None else ""
    if not p:
        return result(Verdict.NO_ANSWER, "string", start, span, g, "no answer text")
    ok = p == g
    return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "string", start, p, g, "equal" if ok else "different")


# ---------------------------------------------------------------- regex

REGEX_OPTIONS: dict[str, Any] = {
    "mode": "fullmatch",  # "fullmatch": the pattern must match the whole answer; "search": anywhere
    "extract": True,  # apply to the final answer (boxed / "answer is" / last line); False: whole prediction
    "ignore_case": False,  # re.IGNORECASE
}
_REGEX_MODES = {"fullmatch": re.Pattern.fullmatch, "search": re.Pattern.search}


def verify_regex(prediction: str, gold: str, **options: Any) -> VerifyResult:
    """`gold` is a Python regular expression; an invalid pattern is BAD_GOLD. Options: `mode`
    ("fullmatch" or "search"), `extract` (True), `ignore_case` (False). A catastrophic pattern
    may run long: the runtime's wall-clock limit stops it."""
    opts = check_options("regex", options, REGEX_OPTIONS)
    if opts["mode"] not in _REGEX_MODES:
        raise ValueError(f"regex option mode must be one of {sorted(_REGEX_MODES)}, got {opts['mode']!r}")
    start = time.perf_counter()
    try:
        pattern = re.compile(gold, re.IGNORECASE if opts["ignore_case"] else 0)
    except (re.error, RecursionError, OverflowError) as e:
        return result(Verdict.BAD_GOLD, "regex", start, gold_parsed=gold[:80], detail=f"invalid pattern: {e}")
    pred = clean(prediction)
    target = _spans.final_answer_span(pred) if opts["extract"] else pred.strip()
    if target is None:
        return result(Verdict.NO_ANSWER, "regex", start, None, gold[:80], "empty prediction")
    ok = _REGEX_MODES[opts["mode"]](pattern, target) is not None
    return result(Verdict.CORRECT if ok else Verdict.INCORRECT, "regex", start, target, gold[:80],
                  f"{opts['mode']} {'matches' if ok else 'does not match'}")
