"""Equivalence: the in-process fast path == the slow path (the `math` kind), on generated cases.

The generator draws golds (integers, signed, with thousands separators, decimals, decimal commas, fractions a/b and
\\frac{a}{b}, tiny values, tuples / intervals / sets of such numbers) and predictions (the right value in many formats, off-by-one values,
fraction <-> decimal, rounded decimals, separators, signs, boxed / "$...$" / "The answer is X" /
"Answer: X" / last number of a sentence, distractor numbers earlier in the text). Whenever the fast
path decides, its verdict must equal the slow path's; it must decide the large majority.
"""

from __future__ import annotations

import random
import subprocess
import sys
from fractions import Fraction
from typing import Callable

import pytest

from verifiers.fastpath import _polynomial, fast_verify
from verifiers.math_kind import verify_math
from verifiers.types import Verdict


def _sep(n: int) -> str:
    return f"{n:,}"


def _gold_and_value(rng: random.Random) -> tuple[str, Fraction]:
    kind = rng.choice(["int", "int", "neg", "big", "dec", "comma", "frac", "latexfrac", "tiny"])
    if kind == "int":
        v = rng.randint(0, 999)
        return str(v), Fraction(v)
    if kind == "neg":
        v = -rng.randint(1, 999)
        return str(v), Fraction(v)
    if kind == "big":
        v = rng.randint(1000, 10**9)
        return (_sep(v) if rng.random() < 0.5 else str(v)), Fraction(v)
    if kind in ("dec", "comma"):
        v = Fraction(rng.randint(-9999, 9999), 100)
        text = f"{float(v):.2f}"
        return (text.replace(".", ",") if kind == "comma" else text), v
    if kind == "tiny":
        k = rng.randint(6, 9)
        v = Fraction(rng.randint(1, 9), 10**k)
        return f"{float(v):.{k}f}", v
    a, b = rng.randint(1, 50), rng.randint(2, 30)
    v = Fraction(a, b)
    return (f"{a}/{b}" if kind == "frac" else f"\\frac{{{a}}}{{{b}}}"), v


def _formats(rng: random.Random, v: Fraction) -> list[str]:
    out = []
    if v.denominator == 1:
        out += [str(v.numerator), _sep(v.numerator)]
    else:
        out += [f"{v.numerator}/{v.denominator}", f"\\frac{{{v.numerator}}}{{{v.denominator}}}"]
    for digits in (2, 6, 7):
        out.append(f"{float(v):.{digits}f}")
    out.append(f"{float(v):.2f}".replace(".", ","))  # a decimal comma (1,22), or a list inside LaTeX
    out.append(f"{float(v):.6g}")
    return out


SIMPLE_FRAMES = [  # the forms the fast path is meant to decide
    "{a}", "${a}$", "\\boxed{{{a}}}", "$\\boxed{{{a}}}$", "The answer is {a}.", "Answer: {a}",
    "We add 3 and 4 to get 7, so the answer is {a}", "So we get {a}", "First 12, then {a}.",
    "x = {a}", "The result:\n{a}", "Thus $x = \\boxed{{{a}}}$.", "I think 5. Final: \\boxed{{{a}}}",
    "The answer is ${a}$.", "The answer is +{a}", "The final answer is ${a}$. I hope it is correct.",
    "The final answer is {a}. I hope it is correct.", "Hmm, {a}? Final answer: \\boxed{{{a}}}",
]
GARBAGE = ["", "I don't know.", "\x00\x00", "no idea at all " * 1000, "The answer is unclear.", "(((", "\ud800",
           "answer: none", "The final answer is unknown. I hope it is correct."]
OTHER_FRAMES = ["**{a}**", "{a} apples", "It is {a}%", "so {a} = 2 + 3"]  # left to the slow path


def _wrap(rng: random.Random, ans: str) -> tuple[str, bool]:
    frame = rng.choice(SIMPLE_FRAMES + OTHER_FRAMES)
    return frame.format(a=ans), frame in SIMPLE_FRAMES and "e" not in ans


def _container_case(rng: random.Random) -> tuple[str, str, bool]:
    """Tuples, intervals and sets of integers/fractions: same, permuted, off by one, other shape."""
    left, right = rng.choice([("(", ")"), ("[", "]"), ("[", ")"), ("(", "]"), ("\\{", "\\}")])
    k = 2 if left + right in ("[)", "(]") else rng.randint(1 if left == "\\{" else 2, 4)
    values = [rng.choice([str(rng.randint(-9, 20)), f"\\frac{{{rng.randint(1, 9)}}}{{{rng.randint(2, 9)}}}"]) for _ in range(k)]
    gold = left + ",".join(values) + right
    change = rng.random()
    if change < 0.3:
        pred_values = values
    elif change < 0.55:
        pred_values = values[::-1]  # permuted: equal for sets only
    elif change < 0.8:
        i = rng.randrange(k)
        pred_values = values[:i] + [str(rng.randint(-9, 20))] + values[i + 1:]  # one element changed
    else:
        pred_values = values + [str(rng.randint(-9, 20))]  # one more element
    pl, pr = (left, right) if rng.random() < 0.8 else rng.choice([("(", ")"), ("[", "]"), ("\\{", "\\}")])
    pred = pl + ",".join(pred_values) + pr
    frame = rng.choice(["\\boxed{{{a}}}", "${a}$", "$${a}$$", "So the answer is $\\boxed{{{a}}}$.", "The answer is ${a}$."])
    return gold, frame.format(a=pred), False


def _cases(n: int, seed: int = 0) -> list[tuple[str, str, bool]]:
    rng = random.Random(seed)
    cases = []
    while len(cases) < n:
        if rng.random() < 0.1:
            cases.append(_container_case(rng))  # not counted as "simple": a bonus when decided
            continue
        gold, v = _gold_and_value(rng)
        choice = rng.random()
        if choice < 0.45:
            value = v  # correct
        elif choice < 0.7:
            value = v + rng.choice([1, -1])  # off by one
        elif choice < 0.8:
            value = -v  # sign error
        else:
            value = v * (1 + Fraction(rng.choice([1, -1]), 10 ** rng.randint(3, 8)))  # near miss
        if rng.random() < 0.03:  # garbage: nothing to read
            cases.append((gold, rng.choice(GARBAGE), True))
            continue
        ans = rng.choice(_formats(rng, value))
        cases.append((gold, *_wrap(rng, ans)))
    return cases


CASES = _cases(3000)


@pytest.mark.parametrize("options", [{}, {"precision": 2}], ids=["default", "precision=2"])
def test_fast_path_agrees_with_slow_path_and_decides_most(options):
    decided, simple, simple_decided, mismatches = 0, 0, 0, []
    for gold, pred, is_simple in CASES:
        fast = fast_verify(pred, gold, **options)
        simple += is_simple
        if fast is None:
            continue
        decided += 1
        simple_decided += is_simple
        slow = verify_math(pred, gold, **options)
        if fast.verdict is not slow.verdict:
            mismatches.append((gold, pred, fast.verdict.value, slow.verdict.value))
    assert not mismatches, f"{len(mismatches)} disagreements, e.g. {mismatches[:10]}"
    assert decided >= 1500  # the agreement above is measured on many decided cases
    assert decided - simple_decided >= 100  # including tuples / intervals / sets
    assert simple_decided / simple >= 0.9, f"fast path decided only {simple_decided}/{simple} simple cases"


def _fast_and_slow_agree(case: Callable[[random.Random], tuple[str, str]], seed: int, n: int) -> int:
    """Draw `n` (gold, prediction) cases; wherever the fast path decides, the slow path must give the same
    verdict. How many the fast path decided."""
    rng = random.Random(seed)
    decided, mismatches = 0, []
    for _ in range(n):
        gold, pred = case(rng)
        fast = fast_verify(pred, gold)
        if fast is None:
            continue
        decided += 1
        slow = verify_math(pred, gold)
        if fast.verdict is not slow.verdict:
            mismatches.append((gold, pred, fast.verdict.value, slow.verdict.value))
    assert not mismatches, f"{len(mismatches)} disagreements, e.g. {mismatches[:10]}"
    return decided


# ---------------------------------------------------------------- closed forms: q*sqrt(n), q*pi
def _closed_text(rng: random.Random, q: Fraction, root: int) -> str:
    """q*sqrt(root) (root 0: q*pi) written one of the ways people write it, squares moved in or out."""
    if root:
        k = rng.choice([1, 1, 2, 3])  # sqrt(k^2 n) = k sqrt(n): the square moved inside
        if q.numerator % k == 0:
            q, root = q / k, root * k * k
    atom = "\\pi" if root == 0 else f"\\sqrt{{{root}}}"
    sign, q = ("-" if q < 0 else ""), abs(q)
    num, den = q.numerator, q.denominator
    frac = rng.choice(["frac", "frac", "dfrac"])
    if den == 1:
        return sign + ("" if num == 1 else str(num)) + rng.choice(["", " "]) * (num != 1) + atom
    shape = rng.randrange(2)
    if shape == 0:
        return f"{sign}\\{frac}{{{'' if num == 1 else num}{atom}}}{{{den}}}"
    return f"{sign}\\{frac}{{{num}}}{{{den}}}{atom}"


def _closed_case(rng: random.Random) -> tuple[str, str]:
    root = rng.choice([0, 0, 2, 3, 5, 6, 7, 10, 11, 13, 4, 8, 12, 18, 27, 50, 1])  # 4, 1: rational; 8 = 4*2 ...
    q = Fraction(rng.choice([1, 1, -1]) * rng.randint(1, 12), rng.choice([1, 1, 2, 3, 4, 6, 16]))
    gold = _closed_text(rng, q, root)
    change = rng.random()
    if change < 0.45:
        value, other = (q, root), None  # the same value, maybe written otherwise
    elif change < 0.6:
        value, other = (q + rng.choice([1, -1, Fraction(1, 2)]), root), None  # coefficient off
    elif change < 0.7:
        value, other = (-q, root), None  # sign
    elif change < 0.8:
        value, other = (q, (root or 2) + rng.choice([1, -1])), None  # another radicand, or a root for pi
    elif change < 0.85:
        value, other = (q * 1000001 / 1000000, root), None  # a near miss inside every tolerance's reach
    else:
        other = rng.choice([f"{float(q) * (3.141592653589793 if root == 0 else root ** 0.5):.{rng.choice([2, 4, 6])}f}",
                            "\\sqrt{2} + 1", "2\\pi r", "\\frac{\\pi}{2}\\sqrt{2}", "\\sqrt{-4}", "\\sqrt{0}",
                            "0\\pi", "\\pi^2", "\\sqrt{x}", "\\sqrt[3]{8}", "\\frac{\\sqrt{3}}{0}", "07\\sqrt{2}"])
    answer = other if other is not None else _closed_text(rng, *value)
    frame = rng.choice(SIMPLE_FRAMES + OTHER_FRAMES + ["{a}", "{a}", "$\\boxed{{{a}}}$ or maybe $\\sqrt{{2}}$",
                                                       "\\boxed{{{a}}} \\approx 1.41", "{a} cm", "\\boxed{{{a}}}\\text{{ m}}"])
    return gold, frame.format(a=answer)


def test_closed_forms_fast_and_slow_agree():
    """q*sqrt(n) and q*pi: the same value rewritten (squares in and out of the root, fraction shapes, signs), near
    misses (coefficient, sign, radicand, a relative 1e-6), decimals, other forms, hedges and units around them:
    whenever the fast path decides, the slow path agrees; and it decides most same-shape cases."""
    decided = _fast_and_slow_agree(_closed_case, seed=7, n=1500)
    assert decided >= 360, decided  # 414-440 of 1,500 over seeds 1-7 (358-394 before rational roots were decided)


# ---------------------------------------------------------------- polynomials in one letter
def _poly_text(rng: random.Random, roots: list[int], lead: int, letter: str) -> str:
    """lead * prod(letter - r) written factored, expanded (terms shuffled), or half and half, with the
    spellings people use (braced exponents, \\cdot, spaces, x^1)."""
    def expanded(rs: list[int], k: int) -> str:
        coeffs = [k]
        for r in rs:  # multiply by (letter - r)
            coeffs = [a - r * b for a, b in zip(coeffs + [0], [0] + coeffs)]
        terms = []
        for power, c in zip(range(len(coeffs) - 1, -1, -1), coeffs):
            if c == 0:
                continue
            mono = "" if power == 0 else letter + ("" if power == 1 and rng.random() < 0.8 else
                                                   rng.choice([f"^{power}", f"^{{{power}}}"]) if power < 10 else f"^{{{power}}}")
            num = "" if abs(c) == 1 and power else str(abs(c))
            mul = rng.choice(["", "", " ", "\\cdot ", "*"]) if num and mono else ""
            terms.append(("-" if c < 0 else "+") + num + mul + mono)
        if rng.random() < 0.3:
            rng.shuffle(terms)
        text = rng.choice(["", " "]).join(terms)
        return text[1:] if text.startswith("+") else text

    def factor(r: int) -> str:
        return f"({letter}{'-' if r > 0 else '+'}{abs(r)})" if r else letter

    shape = rng.random()
    if shape < 0.4 or not roots:
        return expanded(roots, lead)
    if shape < 0.75:
        counts = {r: roots.count(r) for r in roots}
        body = "".join(factor(r) + (f"^{n}" if n > 1 and n < 10 else f"^{{{n}}}" if n > 1 else "") for r, n in counts.items())
        return ("" if lead == 1 else "-" if lead == -1 else str(lead)) + body if lead > 0 or lead == -1 else f"{lead}{body}"
    return factor(roots[0]) + "(" + expanded(roots[1:], lead) + ")"


def _poly_case(rng: random.Random) -> tuple[str, str]:
    letter = rng.choice("xxxtnab")
    roots = [rng.randint(-9, 9) for _ in range(rng.choice([1, 1, 2, 2, 3, 4]))]
    lead = rng.choice([1, 1, 2, 3, -1, -2, 5])
    lhs = rng.choice([None] * 6 + ["y", "y", "f", "f"])  # bare, assigned, a function of the letter
    gold = {None: "", "y": "y = ", "f": f"f({letter}) = "}[lhs] + _poly_text(rng, roots, lead, letter)
    renamed = letter if lhs != "f" or rng.random() < 0.6 else rng.choice("stuvw")  # a function's variable is bound
    change = rng.random()
    if change < 0.45:
        pred = _poly_text(rng, roots, lead, renamed)  # the same polynomial, written otherwise
    elif change < 0.6:
        pred = _poly_text(rng, roots[:-1] + [roots[-1] + rng.choice([1, -1])], lead, renamed)  # a root off by one
    elif change < 0.7:
        pred = _poly_text(rng, roots, -lead, renamed)  # the sign
    elif change < 0.75:
        pred = _poly_text(rng, roots + [0], lead, renamed)  # one degree more
    elif change < 0.8:
        pred = _poly_text(rng, roots, lead, "z")  # another letter
    elif change < 0.85:
        pred = _poly_text(rng, roots, lead * 1000001, renamed)  # a relative 1e-6 on every coefficient
    else:
        pred = rng.choice([f"{_poly_text(rng, roots, lead, letter)} + 0.5", f"{_poly_text(rng, roots, lead, letter)}^{{-1}}",
                           f"e{letter}", f"i{letter} + 1", f"{letter}^23", f"2 3{letter}", f"{letter}3", f"({letter}+1)2",
                           f"\\frac{{{letter}}}{{2}}", f"{letter}^{{13}}", f"({letter}+1)^{{7}}({letter}-1)^{{7}}", f"-{letter}^-2",
                           f"{letter}{letter}", f"\\sqrt{{{letter}}}", f"{letter}^2 = 4", f"|{letter}|", "42"])
    if lhs == "y":
        pred = rng.choice(["y = ", "y=", "", "x = ", "f(x) = "]) + pred
    elif lhs == "f":
        pred = rng.choice([f"f({renamed}) = ", f"f({renamed})=", f"g({renamed}) = ", "y = ", "", f"f({letter}) = "]) + pred
    frame = rng.choice(SIMPLE_FRAMES + OTHER_FRAMES + ["{a}", "{a}", "$\\boxed{{{a}}}$ or maybe $x$", "\\boxed{{{a}}} \\approx 1.41",
                                                       "{a} cm", "\\boxed{{{a}}}\\text{{ m}}", "$${a}$$", "So $f(x) = {a}$."])
    return gold, frame.format(a=pred)


def test_polynomials_fast_and_slow_agree():
    """Integer polynomials in one letter, bare, assigned ('y = ...') or a function ('f(t) = ...', its variable
    renamed or not): the same polynomial rewritten
    (factored, expanded, terms shuffled, \\cdot and braces), near misses (a root, the sign, a degree, another
    letter, a relative 1e-6), other forms (fractions, e and i, 'x^23' which LaTeX reads as x^2 * 3, '2 3x',
    degrees past the cap), hedges and units around them: whenever the fast path decides, the slow path agrees."""
    decided = _fast_and_slow_agree(_poly_case, seed=11, n=600)
    assert decided >= 100, decided  # 121-136 of 600 over seeds 1-7, 11, 21, 22


# ---------------------------------------------------------------- matrices of exact literals
def _matrix_text(rng: random.Random, rows: list[list[Fraction]], env: str | None = None) -> str:
    def entry(v: Fraction | float) -> str:
        if isinstance(v, float):
            return str(v)
        if v.denominator == 1:
            return str(v.numerator)
        if v.denominator == 2 and rng.random() < 0.3:
            return f"{float(v):g}"  # 0.5, -1.5: exact decimals
        return rng.choice([f"\\frac{{{v.numerator}}}{{{v.denominator}}}", f"{'-' if v < 0 else ''}\\frac{{{abs(v.numerator)}}}{{{v.denominator}}}",
                           f"{v.numerator}/{v.denominator}"])
    gap = rng.choice(["", " "])
    body = (gap + "\\\\" + gap).join((gap + "&" + gap).join(entry(v) for v in row) for row in rows)
    env = env or rng.choice(["pmatrix", "pmatrix", "bmatrix"])
    return f"\\begin{{{env}}}{gap}{body}{gap}\\end{{{env}}}"


def _matrix_case(rng: random.Random) -> tuple[str, str]:
    n, m = rng.randint(1, 3), rng.randint(1, 3)
    rows = [[Fraction(rng.randint(-9, 9), rng.choice([1, 1, 1, 2, 3])) for _ in range(m)] for _ in range(n)]
    gold = _matrix_text(rng, rows)
    change = rng.random()
    if change < 0.45:
        pred = _matrix_text(rng, rows)  # the same matrix, written otherwise
    elif change < 0.6:
        i, j = rng.randrange(n), rng.randrange(m)
        rows2 = [r[:] for r in rows]
        rows2[i][j] += rng.choice([1, -1, Fraction(1, 2)])
        pred = _matrix_text(rng, rows2)  # one entry off
    elif change < 0.7:
        pred = _matrix_text(rng, [list(c) for c in zip(*rows)])  # transposed
    elif change < 0.8:
        pred = _matrix_text(rng, rows[:-1] or [r + [Fraction(0)] for r in rows])  # a row dropped or a column added
    elif change < 0.85:
        pred = _matrix_text(rng, [[-v for v in r] for r in rows])  # the sign
    else:
        pred = rng.choice([_matrix_text(rng, rows, "vmatrix"), _matrix_text(rng, rows) + "\\\\", "(" + ", ".join(str(v) for v in rows[0]) + ")",
                           _matrix_text(rng, rows).replace("&", "&&", 1), _matrix_text(rng, [[round(float(v), 3) for v in r] for r in rows]),
                           _matrix_text(rng, rows).replace("\\end", "x\\end"), str(rows[0][0]), "\\begin{pmatrix}\\end{pmatrix}"])
    frame = rng.choice(SIMPLE_FRAMES + OTHER_FRAMES + ["{a}", "$\\boxed{{{a}}}$ or maybe $\\begin{{pmatrix}}1\\end{{pmatrix}}$",
                                                       "$$\\boxed{{{a}}}$$", "\\[{a}\\]", "The matrix is $A = {a}$."])
    return gold, frame.format(a=pred)


def test_polynomial_reader_declines_what_it_cannot_bound():
    """A policy's completion is untrusted: deep nesting, huge degrees and long sums are declined or read in
    linear time, never a RecursionError or a slow expansion in the calling process."""
    assert fast_verify("\\boxed{" + "(" * 400 + "x" + ")" * 400 + "}", "x^2+1") is None
    assert fast_verify("$(x+1)^{99}$", "x+1") is None
    assert fast_verify("$(x+1)^{9}(x-1)^{9}$", "x+1") is None  # degree 18: past the cap
    assert _polynomial("+".join(["x"] * 300)) is None  # 599 characters: past the length cap, read by the slow path
    assert _polynomial("+".join(["x"] * 200)) == (None, "x", ((1, 200),))
    assert fast_verify("$" + "+".join(["x"] * 50) + "$", "50x").verdict is Verdict.CORRECT


def test_matrices_fast_and_slow_agree():
    """pmatrix / bmatrix of integers, fractions and exact decimals: the same matrix rewritten (environment,
    spacing, fraction shapes), near misses (an entry, transposed, a row or column, the sign), other forms
    (a determinant, a trailing row break, a tuple, rounded decimals, a variable), hedges and frames around
    them: whenever the fast path decides, the slow path agrees."""
    decided = _fast_and_slow_agree(_matrix_case, seed=13, n=400)
    assert decided >= 60, decided  # 70-91 of 400 over seeds 1-5 and 13 (a decimal entry other than 0.5 is left to the slow path)


@pytest.mark.parametrize("pred, gold, expected", [
    ("42", "42", Verdict.CORRECT),  # bare integer
    ("-1,234", "-1234", Verdict.CORRECT),  # sign and thousands separator
    ("The answer is 0.5.", "1/2", Verdict.CORRECT),  # decimal vs fraction
    ("\\boxed{\\frac{2}{4}}", "0.5", Verdict.CORRECT),  # boxed latex fraction vs decimal
    ("\\boxed{0.0000002}", "0.0000001", Verdict.INCORRECT),  # tiny values are not rounded together
    ("So we get 43", "42", Verdict.INCORRECT),  # last number, off by one
    ("\\boxed{B}", "(B)", Verdict.CORRECT),  # multiple-choice gold goes to the choice kind
    ("\\boxed{x^2+1}", "x^2+1", Verdict.CORRECT),  # identical simple latex
    ("The answer is $x^2+1$.", "x^2+1", Verdict.CORRECT),  # identical latex after "answer is"
    ("\\boxed{(2,1)}", "(1,2)", Verdict.INCORRECT),  # a pair in the wrong order
    ("$\\{2,1\\}$", "\\{1,2\\}", Verdict.CORRECT),  # a set in another order
    ("$[1,2]$", "[1,2)", Verdict.INCORRECT),  # an interval with the other end closed
    ("1,22", "1.22", Verdict.CORRECT),  # a decimal comma where it cannot be a thousands separator
    ("0.111", "0,111", Verdict.CORRECT),  # a leading 0 is never a thousands group
    ("111", "0,111", Verdict.INCORRECT),  # ... so 0,111 is not 111
    ("1.234", "1,234", Verdict.INCORRECT),  # three digits after the comma: thousands
    ("\\boxed{x^2}", "2x", Verdict.INCORRECT),  # polynomials in one letter: exact coefficients
    ("$y = 14 + 8x$", "y=8x+14", Verdict.CORRECT),  # ... assigned to the same letter
    ("The answer is $(x+3)^2$.", "x^2+6x+9", Verdict.CORRECT),
    ("$\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}$", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", Verdict.CORRECT),  # a matrix
    ("$\\begin{pmatrix}1&3\\\\2&4\\end{pmatrix}$", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", Verdict.INCORRECT),  # transposed
])
def test_fast_path_table(pred, gold, expected):
    res = fast_verify(pred, gold)
    assert res is not None and res.verdict is expected
    assert verify_math(pred, gold).verdict is expected  # the slow path agrees


@pytest.mark.parametrize("pred, gold", [
    ("\\boxed{\\frac{x}{2}}", "0.5x"),  # symbolic beyond integer polynomials: needs sympy
    ("\\boxed{t^2}", "x^2"),  # another letter: `strict` and renamings are the slow path's
    ("It is 50%", "0.5"),  # percent: left to the slow path
    ("\\boxed{1} and \\boxed{2}", "1"),  # several boxes
    ("The final answer is 5 or 6. I hope it is correct.", "5"),  # not the plain template
    ("\\boxed{4} The final answer is 5. I hope it is correct.", "5"),  # a box competes with the template
    ("5 = 3 + 2", "5"),  # the last number is part of an expression
    ("2 or 3", "3"),  # a hedge: the slow path reads the set {2, 3}
    ("I think it is 2, 3 or 4.", "4"),  # the same in a sentence
    ("x = 2 or x = -3", "-3"),  # a bare solution set, not its last number
    ("12 apples, 25 pears, 15 plums", "15"),  # quantities: the slow path compares them element by element
])
def test_fast_path_declines(pred, gold):
    assert fast_verify(pred, gold) is None  # None means: ask the slow path


BARE = ["x = 7", "x = 3/4", "x = 855,00", "n = 1,234", "7 apples", "so we get 7", "x > 7", "7 or 8", "f(x) = 7",
        "(7, 8)", "7, 8", "7.", "x = -7", "1,22", "all real numbers", "\\frac{7}{1}", "y = 7x"]


BARE += ["x = 13 or x = -9", "x = -9 and x = 13", "13, -9", "x = 13 or y = -9", "13 or 13", "x = 13", "p=3, q=12", "q=12, p=3",
         "p=12, q=3", "a=3, b=12", "P=3, Q=12", "x=6, y=5", "x=5, y=6", "p = 3/2, q = 12", "p=3, q=12, r=1", "x = 0.5 or x = 13",
         "x > 7", "x < 7", "x \\ge 7", "x \\geq 7", "7 < x", "7 \\le x", "x >= 7", "x > 6", "x > -7", "y \\le 7", "x > \\frac{7}{1}",
         "seven", "1 1/2", "x = 7 (double root)", "infinity", "2 sqrt(2)", "7 sec", "a"]


@pytest.mark.parametrize("pred", BARE)
@pytest.mark.parametrize("gold", ["7", "0.75", "855", "1234", "1.22", "-9, 13", "$-9, 13$", "(p,q)=(3,12)", "(6,5)", "(5,6)",
                                  "13, 13, -9", "-9, 13, 0", "(7,\\infty)", "[7, +\\infty)", "(-\\infty, 7)", "(-\\infty,7]",
                                  "$(7, \\infty)$", "\\left(7, \\infty\\right)", "(7,\\infty]"])
def test_bare_answers_fast_and_slow_agree(pred, gold):
    """Bare answers: whenever the fast path decides, the slow path (which parses them whole) agrees."""
    fast = fast_verify(pred, gold)
    if fast is not None:
        assert fast.verdict is verify_math(pred, gold).verdict


def test_other_kinds_and_options():
    assert fast_verify("Answer: B", "B", kind="choice").verdict is Verdict.CORRECT
    assert fast_verify("3.0", "3", kind="numeric").verdict is Verdict.CORRECT
    assert fast_verify("abc", "a.c", kind="regex") is None  # user patterns run in workers only
    with pytest.raises(TypeError, match="rel_tol"):
        fast_verify("1", "1", kind="math", tolerance=0.1)  # names the valid options
    assert fast_verify("The answer is 9", "9", latex_only=True) is None  # the plain-text reading is what it turns off
    assert fast_verify("0.33", "1/3", precision=2).verdict is Verdict.CORRECT  # the same precision rule as the slow path


def test_importing_fastpath_keeps_sympy_out():
    code = "import sys, verifiers.fastpath; bad = [m for m in ('sympy', 'math_verify') if m in sys.modules]; print(bad)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
