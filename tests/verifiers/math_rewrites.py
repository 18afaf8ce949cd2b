"""Metamorphic generator for the `math` kind: random gold answers of every structure, each written in
many equivalent ways (must be CORRECT) and in near-miss ways (must never be CORRECT).

`generate(seed, per_structure)` returns `Pair`s. A pair names its `structure` (number, expression,
equation, relation, interval, set, tuple, family, function, choice, text, quantity) and its `family`
(the rewrite that produced it: 'dfrac', 'reordered', 'renamed parameter', 'sign', 'hedge', ...), so
failures are read by family, never one probe at a time. Every writing is then wrapped in one of the
ways a completion states an answer (`WRAPPERS`: bare, $ $, \\[ \\], \\( \\), \\boxed, inside a
sentence, with trailing prose), drawn at random.

What is "free" (may be renamed) and what is "fixed by the question" is stated per structure:
- free: the integer parameter of a family (x = 2k\\pi), the constants of a general function
  (f(x) = ax + b), the parameter of a family of tuples ((n, n + 2));
- fixed: the variable of an expression, an equation, a relation, a function's name; renaming one
  of these is a near miss.
Hedges (`_hedges`, `HEDGES_PER_GOLD` per gold): a right writing and a near miss stated together,
offered with words drawn from `_OFFERS` (alternatives, concessions, doubt, or none), joined by a
random gap, the second value in $...$, \\(...\\) or plain, placed after the box, after "the answer
is", in the last sentence, inside the box, or in a second box.
Rounding follows the documented policy (`verifiers._numbers`): a decimal correctly rounded to the
digits written, with at least `MIN_SIG_DIGITS` significant digits, stands for an exact value.

Used by `tests/verifiers/test_math_rewrites.py` (a fixed-seed run) and `bench/math_rewrites.py`
(a larger run, ours and math-verify side by side).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import Callable

from latex2sympy2_extended import latex2sympy

MIN_SIG_DIGITS = 3  # the rounding policy's floor (see verifiers._numbers)
HEDGES_PER_GOLD = 3  # hedged writings drawn per gold (a right answer stated with a wrong one)
CONTEXTS_PER_GOLD = 2  # worked-solution writings drawn per gold (the answer with other quantities of the working around it)


@dataclass(frozen=True)
class Pair:
    structure: str
    family: str  # the rewrite ('dfrac', 'renamed parameter') or the near miss ('sign', 'hedge')
    gold: str
    prediction: str
    equivalent: bool  # True: must be CORRECT; False: a near miss, must never be CORRECT


# ---------------------------------------------------------------- how an answer is stated


WRAPPERS: dict[str, Callable[[str], str]] = {
    "bare": lambda a: a,
    "dollars": lambda a: f"${a}$",
    "display": lambda a: f"\\[ {a} \\]",
    "paren": lambda a: f"\\({a}\\)",
    "boxed": lambda a: f"\\boxed{{{a}}}",
    "sentence": lambda a: f"Putting it together, the answer is ${a}$.",
    "final boxed": lambda a: f"We simplify step by step.\n\nTherefore, the final answer is $\\boxed{{{a}}}$.",
    "trailing prose": lambda a: f"So we obtain \\[\\boxed{{{a}}}\\] which is what we wanted.",
}
TEXT_WRAPPERS = {k: WRAPPERS[k] for k in ("bare", "boxed", "final boxed")} | {
    "sentence": lambda a: f"After checking every case, the answer is {a}.",
}
# a writing of plain text ('3 2/7' as a mixed number, '12 apples') is stated as plain text
PLAIN_WRAPPERS = {"bare": WRAPPERS["bare"], "sentence": TEXT_WRAPPERS["sentence"]}


# the letters a variable, a constant or a parameter is drawn from: any but e and i (the constants)
LETTERS = "abcdfghjklmnopqrstuvwxyz"
CONTEXT_LETTERS = "tuw"  # the worked-solution contexts' own variables: an answer in them would make its steps answers
# two letters after a number that read as a unit, an ordinal or a word ('3kg', '3rd', '3or'): such a
# gold is a quantity, not a product of two variables (the quantity structure covers units)
_READ_AS_WORDS = {"cm", "mm", "km", "ft", "hr", "kg", "lb", "yr", "sq", "rd", "or"}


def _letters(rng: random.Random, k: int, exclude: str = "") -> list[str]:
    return rng.sample([c for c in LETTERS if c not in exclude], k)


UNIONS = ("relation", "interval", "set")  # structures where 'A or B' inside one answer is a union, not a hedge


# the words a second answer is offered with: alternatives, concessions, doubt, or none at all
_OFFERS = ["or maybe {w}", "or {w}", "(or {w})", "but it could also be {w}", "though {w} is possible", "perhaps {w}",
           "it might be {w}", "{w} is also possible", "although {w} would also work", "unless it is {w}", "or possibly {w}",
           "I also got {w}", "alternatively {w}", "and {w} if we count the other case", "({w} by the other method)",
           "but {w} also fits", "hmm, {w}?", "not sure, {w}", "else {w}", "{w} works too"]
_BETWEEN = [", ", ". ", " ", "\n\n", "; ", " -- "]


def _as_written(rng: random.Random, value: str) -> str:
    """A value as it may appear in prose: inside $...$, \\(...\\), or plain (digits only)."""
    plain = value if all(c.isdigit() or c in "-./ " for c in value) else None
    return rng.choice([f"${value}$", f"\\({value}\\)"] + ([plain, plain] if plain else []))


# what a unit measures, for the context quantities (a count noun measures nothing of these)
_MEASURES = {"m": "length", "cm": "length", "km": "length", "kg": "mass", "hours": "time", "years": "time",
             "dollars": "money"}
RELATIONS = ("equation", "relation", "function", "family")  # answers that are equations or conditions themselves


def _contexts(rng: random.Random, answer: str, gold: str, structure: str) -> list[tuple[str, str]]:
    """`answer` stated as a worked solution states it, with other quantities of the working around it
    that are not answers: a measured quantity of another kind in the answer's sentence ('after 5
    years'), a formula in other variables after the box, earlier steps ended by a formula with no full
    stop, a modulus the answer is stated in, a list written as one box per element. With the right
    answer each is CORRECT; with a near miss in its place, never."""
    unit = gold.split("{ ")[-1].rstrip("}") if structure == "quantity" else ""
    kinds = [u for u in ("years", "km", "kg", "dollars") if _MEASURES[u] != _MEASURES.get(unit, "")]
    k, a, b = rng.randint(2, 12), rng.randint(2, 9), rng.randint(2, 9)
    box = rng.choice(["\\boxed{{{}}}", "$\\boxed{{{}}}$"]).format(answer)
    out = [("context: another measured quantity", f"So the value is {box} after {k} {rng.choice(kinds)}."),
           ("context: steps end without a full stop", f"First $t = {a}$ Then $u = {a + b}$ So the result is ${answer}$.")]
    if structure not in RELATIONS:
        out.append(("context: a formula in other variables", f"Hence {box}. Here we used $w = {a} - {b}t$ from the first step."))
    approx = _irrational_value(answer) if structure in ("number", "expression") else None
    if approx is not None:  # its value rounded within the policy, stated as a remark (a coarser one is a second answer)
        places = max(0, MIN_SIG_DIGITS - 1 - math.floor(math.log10(abs(approx)))) + rng.randint(0, 2)
        out.append(("context: an approximation after the box", f"So {box}, which is about {rounded(approx, places)}."))
    if structure == "number" and answer.lstrip("-").isdigit():
        out.append(("context: modulus", f"Then $N \\equiv \\boxed{{{answer}}} \\pmod{{{k + 13}}}$."))
    if structure == "set" and answer.startswith("\\{") and "<" not in answer:
        elems = answer[2:-2].split(", ")
        out.append(("context: one box per element", rng.choice([", ", " \\quad \\text{and} \\quad ", " and "]).join(
            f"\\boxed{{{e}}}" for e in elems)))
    return out


def _irrational_value(answer: str) -> float | None:
    """The value of an answer that is an irrational real number ('9\\sqrt{10}', '\\frac{2\\pi}{3}'), by sympy; else None."""
    try:
        value = latex2sympy(answer)
        if getattr(value, "is_number", False) and value.is_real and value.is_rational is False:
            return float(value)
    except Exception:  # not a plain number: no approximation to state
        pass
    return None


def _hedges(rng: random.Random, right: str, wrong: str, structure: str) -> list[tuple[str, str]]:
    """A right answer and a wrong one stated together: never correct, whatever the words that offer
    the second one and wherever it sits (after the box, after 'the answer is', in the last
    sentence, inside the box; inside one box only where 'or' is not a union), and several boxes
    that disagree."""
    offer = rng.choice(_OFFERS).format(w=_as_written(rng, wrong))
    gap = rng.choice(_BETWEEN)
    box = rng.choice(["\\boxed{{{}}}", "$\\boxed{{{}}}$", "\\[\\boxed{{{}}}\\]"]).format(right)
    hedges = [
        ("hedge after box", f"So the final answer is {box}{gap}{offer}."),
        ("hedge after statement", f"The answer is {_as_written(rng, right)}{gap}{offer}."),
        ("hedge in last sentence", f"We check all cases.\nIt is ${right}${gap}{offer}."),
        ("hedge inside box", f"\\boxed{{{right} \\text{{ {rng.choice(['or', 'or maybe', 'or possibly'])} }} {wrong}}}"),
        ("two boxes", rng.choice([f"\\boxed{{{right}}}, \\boxed{{{wrong}}}", f"\\boxed{{{wrong}}}{gap}\\boxed{{{right}}}"])),
        ("hedge either", f"It is either ${right}$ or ${wrong}$."),
    ]
    return [h for h in hedges if not (structure in UNIONS and h[0] == "hedge inside box")]


# ---------------------------------------------------------------- numbers


def rounded(value: float | Fraction, places: int) -> str:
    """`value` correctly rounded to `places` decimals, as text."""
    q = Decimal(1).scaleb(-places)
    d = Decimal(value.numerator) / Decimal(value.denominator) if isinstance(value, Fraction) else Decimal(repr(value))
    return str(d.quantize(q, rounding=ROUND_HALF_EVEN))


def _places_for(value: float, rng: random.Random, extra: int = 0) -> int:
    """Decimals giving at least MIN_SIG_DIGITS significant digits (and up to 3 more)."""
    lead = math.floor(math.log10(abs(value))) + 1 if value else 1
    return max(1, MIN_SIG_DIGITS - lead + rng.randint(0, 3) + extra)


def _off_last_digit(text: str, rng: random.Random) -> str:
    """A decimal with its last digit moved by one (a rounding one digit off)."""
    places = len(text.split(".")[1])
    step = Decimal(1).scaleb(-places) * rng.choice([-1, 1])
    return str(Decimal(text) + step)


def _decimal_pairs(rng: random.Random, exact_latex: str, value: float) -> tuple[list, list]:
    """Rounded writings of an exact value (within the policy) and rounding near misses."""
    places = _places_for(value, rng)
    good = rounded(value, places)
    eq = [("rounded", good)]
    near = []
    off = _off_last_digit(good, rng)
    half_unit = Decimal(1).scaleb(-places) / 2  # a value halfway rounds either way: neither side is a near miss
    if abs(float(off) - value) > 2e-6 * abs(value) and abs(Decimal(off) - Decimal(repr(value))) > half_unit * (1 + Decimal("1e-6")):
        near.append(("rounding one digit off", off))
    truncated = str(Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), rounding="ROUND_DOWN" if value > 0 else "ROUND_UP"))
    tie = abs(abs(Decimal(repr(value)) - Decimal(truncated)) - Decimal(1).scaleb(-places) / 2) < Decimal(1).scaleb(-places - 6)
    if truncated != good and not tie and abs(float(truncated) - value) > 2e-6 * abs(value):
        near.append(("truncated not rounded", truncated))
    whole = str(round(value))
    if abs(value) >= 10 and Fraction(whole) != Fraction(value).limit_denominator(10**6):
        near.append(("too few significant digits", whole))  # 14 for 100/7
    return eq, near


def _int_text(n: int, rng: random.Random) -> list[tuple[str, str]]:
    out = [("plain", str(n)), ("trailing zeros", f"{n}.0"), ("braces", f"{{{n}}}")]
    if abs(n) >= 1000:
        out.append(("thousands comma", f"{n:,}"))
        out.append(("thousands thin space", f"{n:,}".replace(",", "\\,")))
        out.append(("thousands braced comma", f"{n:,}".replace(",", "{,}")))
        out.append(("thousands space", f"{n:,}".replace(",", "\\ ")))
    if n > 0:
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        out.append(("ordinal", f"{n}^{{\\text{{{suffix}}}}}"))
        out.append(("text wrapper", f"\\text{{{n}}}"))
    return out


def number(rng: random.Random) -> tuple[str, list, list]:
    """Integer, fraction, decimal, mixed number and percent golds."""
    shape = rng.choice(["integer", "fraction", "decimal", "mixed", "percent"])
    if shape == "integer":
        n = rng.choice([rng.randint(-99, 99), rng.randint(1000, 999999)])
        eq = _int_text(n, rng)
        near = [("off by one", str(n + rng.choice([-1, 1]))), ("sign", str(-n) if n else "1"),
                ("digit dropped", str(n)[:-1] or "1") if abs(n) >= 10 else ("times ten", str(10 * n + 1))]
        if abs(n) >= 1000:
            near.append(("thousands comma, a digit off", f"{n + 1000:,}"))
        return str(n), eq, near
    if shape in ("fraction", "mixed"):
        q = rng.randint(2, 13)
        p = rng.choice([k for k in range(1, 6 * q) if math.gcd(k, q) == 1 and k % q])
        p = p if shape == "fraction" and rng.random() < 0.5 else p + q  # mixed: more than one
        sign = rng.choice([1, -1]) if shape == "fraction" else 1
        s = "-" if sign < 0 else ""
        gold = f"{s}\\frac{{{p}}}{{{q}}}"
        eq = [("dfrac", f"{s}\\dfrac{{{p}}}{{{q}}}"), ("tfrac", f"{s}\\tfrac{{{p}}}{{{q}}}"), ("slash", f"{s}{p}/{q}"),
              ("unreduced", f"{s}\\frac{{{2 * p}}}{{{2 * q}}}"), ("left right", f"\\left({s}\\frac{{{p}}}{{{q}}}\\right)"),
              ("spaces", f"{s} \\frac {{ {p} }} {{ {q} }}")]
        if sign > 0 and p > q:
            eq.append(("mixed number", f"{p // q}\\frac{{{p % q}}}{{{q}}}"))
            eq.append(("mixed number plain", f"{p // q} {p % q}/{q}"))
        value = sign * p / q
        dec_eq, dec_near = _decimal_pairs(rng, gold, value)
        eq += dec_eq
        near = [("numerator off by one", f"{s}\\frac{{{p + 1}}}{{{q}}}"), ("sign", f"{'' if s else '-'}\\frac{{{p}}}{{{q}}}"),
                ("inverted", f"{s}\\frac{{{q}}}{{{p}}}")] + dec_near
        if rng.random() < 0.5:  # the same checks with the rounded decimal as the gold
            return dec_eq[0][1], [("exact for rounded", gold)] + [(f, x) for f, x in eq[:3]], \
                [("exact for a wrong rounding", f"{s}\\frac{{{p + 1}}}{{{q}}}")]
        return gold, eq, near
    if shape == "decimal":
        q = rng.choice([2, 4, 5, 8, 20, 25, 40])
        p = rng.choice([k for k in range(1, 5 * q) if math.gcd(k, q) == 1])
        text = rounded(Fraction(p, q), 4).rstrip("0").rstrip(".")
        eq = [("fraction", f"\\frac{{{p}}}{{{q}}}"), ("trailing zero", text + "0"), ("slash", f"{p}/{q}")]
        if text.startswith("0."):
            eq.append(("no leading zero", text[1:]))
        near = [("last digit off", _off_last_digit(text, rng) if "." in text else str(int(text) + 1)),
                ("fraction off", f"\\frac{{{p + 1}}}{{{q}}}")]
        return text, eq, near
    # percent
    p = rng.randint(1, 99)
    frac = Fraction(p, 100)
    gold = rng.choice([f"{p}\\%", f"\\frac{{{frac.numerator}}}{{{frac.denominator}}}"])
    eq = [("percent", f"{p}\\%"), ("fraction", f"\\frac{{{frac.numerator}}}{{{frac.denominator}}}"),
          ("decimal", str(Decimal(p) / 100)), ("percent word", f"{p} \\text{{ percent}}")]
    near = [("percent off by one", f"{p + 1}\\%"), ("decimal off", str(Decimal(p + 1) / 100))]
    return gold, [e for e in eq if e[1] != gold], near


# ---------------------------------------------------------------- expressions


def _sqfree(rng: random.Random) -> int:
    return rng.choice([2, 3, 5, 6, 7, 10, 11, 13, 14, 15])


def expression(rng: random.Random) -> tuple[str, list, list]:
    shape = rng.choice(["radical", "pi", "log", "polynomial", "product", "power"])
    if shape == "radical":
        a, b = rng.randint(2, 9), _sqfree(rng)
        gold = f"{a}\\sqrt{{{b}}}"
        value = a * math.sqrt(b)
        eq = [("one radical", f"\\sqrt{{{a * a * b}}}"), ("cdot", f"{a} \\cdot \\sqrt{{{b}}}"), ("times", f"{a}\\times\\sqrt{{{b}}}"),
              ("factor after", f"\\sqrt{{{b}}}\\,{a}"), ("left right", f"\\left({a}\\right)\\sqrt{{{b}}}")]
        eq += _decimal_pairs(rng, gold, value)[0]
        near = [("coefficient off by one", f"{a + 1}\\sqrt{{{b}}}"), ("radicand off by one", f"{a}\\sqrt{{{b + 1}}}"),
                ("sign", f"-{a}\\sqrt{{{b}}}")] + _decimal_pairs(rng, gold, value)[1]
        return gold, eq, near
    if shape == "pi":
        a, b = rng.randint(1, 9), rng.randint(2, 9)
        g = math.gcd(a, b)
        a, b = a // g, b // g
        if b == 1:
            b = a + 1
        top = "" if a == 1 else str(a)
        gold = f"\\frac{{{top}\\pi}}{{{b}}}"
        eq = [("dfrac", f"\\dfrac{{{top}\\pi}}{{{b}}}"), ("coefficient before", f"\\frac{{{a}}}{{{b}}}\\pi"),
              ("slash", f"{top}\\pi/{b}"), ("cdot", f"\\frac{{{a} \\cdot \\pi}}{{{b}}}")]
        value = a * math.pi / b
        dec_eq, dec_near = _decimal_pairs(rng, gold, value)
        near = [("numerator off by one", f"\\frac{{{a + 1}\\pi}}{{{b}}}"), ("denominator off by one", f"\\frac{{{top}\\pi}}{{{b + 1}}}"),
                ("sign", f"-\\frac{{{top}\\pi}}{{{b}}}")] + dec_near
        return gold, eq + dec_eq, near
    if shape == "log":
        a = rng.choice([2, 3, 5, 6, 7, 10])
        c = rng.randint(1, 4)
        k = "" if c == 1 else str(c)
        gold = rng.choice([f"{k}\\ln {a}", f"{k}\\log {a}"])
        eq = [("ln", f"{k}\\ln {a}"), ("log", f"{k}\\log {a}"), ("ln parenthesis", f"{k}\\ln({a})"),
              ("log parenthesis", f"{k}\\log\\left({a}\\right)"), ("power inside", f"\\ln {a ** c}" if c > 1 else f"\\ln({a})")]
        near = [("argument off by one", f"{k}\\ln {a + 1}"), ("other base", f"{k}\\log_{{2}} {a}"), ("sign", f"-{k}\\ln {a}")]
        return gold, [e for e in eq if e[1] != gold], near
    if shape == "polynomial":
        a, b, c = rng.randint(2, 6), rng.choice([-5, -3, -2, 2, 3, 5]), rng.randint(1, 9)
        x = rng.choice(["x", "x", "t", "s", "m", "n"])  # letters that are also units (t, s, m) stay variables
        sb = f"- {-b}x" if b < 0 else f"+ {b}x"
        gold = f"{a}x^2 {sb} + {c}" if rng.random() < 0.7 else f"{a}x^2 + {c} {sb.replace('x', ' x')}"  # 'x' last, spaced
        eq = [("reordered terms", f"{c} {sb} + {a}x^2"), ("braces", f"{a}x^{{2}}{sb}+{c}"), ("spaces", f"{a} x^2 {sb.replace('x', ' x')} + {c}"),
              ("cdot", f"{a}\\cdot x^2 {sb} + {c}"), ("factored x", f"x({a}x {'-' if b < 0 else '+'} {abs(b)}) + {c}"),
              ("exponent 1 written", f"{a}x^2 {sb}^{{1}} + {c}")]
        near = [("sign of a term", f"{a}x^2 {sb.replace('-', '#').replace('+', '-').replace('#', '+')} + {c}"),
                ("constant off by one", f"{a}x^2 {sb} + {c + 1}"), ("variable renamed", f"{a}y^2 {sb.replace('x', 'y')} + {c}"),
                ("exponent off by one", f"{a}x^3 {sb} + {c}"), ("exponent 1 for 2", f"{a}x^{{1}} {sb} + {c}")]
        rename = lambda text: text.replace("x", x)  # noqa: E731
        return rename(gold), [(f, rename(t)) for f, t in eq], [(f, rename(t)) for f, t in near]
    if shape == "product":
        k = rng.randint(2, 9)
        u, v = _letters(rng, 2)
        while u + v in _READ_AS_WORDS or v + u in _READ_AS_WORDS:
            u, v = _letters(rng, 2)
        gold = f"{k}{u}{v}"
        eq = [("spaces", f"{k} {u} {v}"), ("cdot", f"{k} \\cdot {u} \\cdot {v}"), ("reordered", f"{k}{v}{u}"),
              ("times", f"{k}\\times {u}{v}"), ("factor moved", f"{u} \\cdot {k}{v}")]
        w = rng.choice([x for x in "wyz" if x not in (u, v)])
        near = [("coefficient off by one", f"{k + 1}{u}{v}"), ("variable renamed", f"{k}{u}{w}"), ("sum for product", f"{k}{u}+{v}"),
                ("square", f"{k}{u}^2{v}")]
        return gold, eq, near
    if rng.random() < 0.3:  # a gold that states a closed expression and its value
        n = rng.randint(5, 12)
        k = rng.randint(2, n - 2)
        c = rng.randint(2, 5)
        value = c * math.comb(n, k)
        gold = f"{c}\\binom{{{n}}}{{{k}}} = {value}"
        eq = [("value", str(value)), ("expression", f"{c}\\binom{{{n}}}{{{k}}}"), ("cdot", f"{c} \\cdot \\binom{{{n}}}{{{k}}}")]
        near = [("value off by one", str(value + 1)), ("other binomial", f"{c}\\binom{{{n}}}{{{k + 1 if 2 * k + 1 != n else k - 1}}}"),
                ("coefficient off by one", f"{c + 1}\\binom{{{n}}}{{{k}}}")]
        return gold, eq, near
    base, e = rng.choice([2, 3, 5]), rng.randint(5, 30)
    c = rng.randint(2, 7)
    gold = f"{c}\\cdot {base}^{{{e}}}"
    eq = [("times", f"{c} \\times {base}^{{{e}}}"), ("exponent moved", f"{c * base}\\cdot{base}^{{{e - 1}}}"),
          ("no braces", f"{c}\\cdot{base}^{{{e}}}".replace(f"^{{{e}}}", f"^{e}") if e < 10 else f"{c}({base}^{{{e}}})"),
          ("value", str(c * base ** e))]
    near = [("exponent off by one", f"{c}\\cdot {base}^{{{e + 1}}}"), ("coefficient off by one", f"{c + 1}\\cdot {base}^{{{e}}}"),
            ("value off by one", str(c * base ** e + 1))]
    return gold, eq, near


# ---------------------------------------------------------------- equations, relations, intervals, sets, tuples


def equation(rng: random.Random) -> tuple[str, list, list]:
    m, c = rng.choice([-4, -3, -2, 2, 3, 4, 5]), rng.randint(1, 9)
    y, x = ("y", "x") if rng.random() < 0.5 else _letters(rng, 2, exclude=CONTEXT_LETTERS)  # the question's variables
    gold = f"{y} = {m}{x} + {c}"
    eq = [("sides swapped", f"{m}{x} + {c} = {y}"), ("terms reordered", f"{y} = {c} {'-' if m < 0 else '+'} {abs(m)}{x}"),
          ("no spaces", f"{y}={m}{x}+{c}"), ("moved to one side", f"{y} - {c} = {m}{x}"),
          ("doubled", f"2{y} = {2 * m}{x} + {2 * c}")]
    near = [("constant off by one", f"{y} = {m}{x} + {c + 1}"), ("sign", f"{y} = {m}{x} - {c}"),
            ("variables swapped", f"{x} = {m}{y} + {c}"), ("slope off by one", f"{y} = {m + 1}{x} + {c}")]
    return gold, eq, near


def _rel_sym(strict: bool, greater: bool) -> str:
    return (">" if strict else "\\ge") if greater else ("<" if strict else "\\le")


def relation(rng: random.Random) -> tuple[str, list, list]:
    a = rng.randint(-9, 9)
    strict, greater = rng.random() < 0.5, rng.random() < 0.5
    v = _letters(rng, 1)[0]
    rel = _rel_sym(strict, greater)
    flip = _rel_sym(strict, not greater)
    interval = (f"({a}, \\infty)" if strict else f"[{a}, \\infty)") if greater else (f"(-\\infty, {a})" if strict else f"(-\\infty, {a}]")
    long = {"\\ge": "\\geq", "\\le": "\\leq", ">": ">", "<": "<"}[rel]
    gold = f"{v} {rel} {a}"
    eq = [("reversed", f"{a} {flip} {v}"), ("long command", f"{v} {long} {a}"), ("interval", interval),
          ("membership", f"{v} \\in {interval}"), ("in words", f"\\text{{all real }} {v} \\text{{ with }} {v} {rel} {a}"),
          ("no spaces", f"{v}{rel}{a}".replace("\\ge", "\\ge ").replace("\\le", "\\le "))]
    other = _rel_sym(not strict, greater)
    near = [("strictness", f"{v} {other} {a}"), ("bound off by one", f"{v} {rel} {a + 1}"), ("direction", f"{v} {flip} {a}"),
            ("bound sign", f"{v} {rel} {-a if a else 1}"), ("variable renamed", f"{'y' if v != 'y' else 'z'} {rel} {a}")]
    return gold, eq, near


def interval(rng: random.Random) -> tuple[str, list, list]:
    a = rng.randint(-9, 5)
    b = a + rng.randint(1, 9)
    lo, hi = rng.choice([("[", "]"), ("(", "]"), ("[", ")"), ("(", ")")])
    lrel, rrel = ("\\le" if lo == "[" else "<"), ("\\le" if hi == "]" else "<")
    written = f"{lo}{a}, {b}{hi}"
    x = "x" if rng.random() < 0.5 else _letters(rng, 1, exclude=CONTEXT_LETTERS)[0]
    builder = f"\\{{{x} \\mid {a} {lrel} {x} {rrel} {b}\\}}"
    if (lo, hi) == ("(", ")"):  # (a, b) alone can be a point: the gold is stated as a set
        gold = rng.choice([builder, f"{a} < {x} < {b}"])
        eq = [("interval", written), ("left right", f"\\left({a}, {b}\\right)"), ("builder colon", builder.replace("\\mid", ":")),
              ("relation", f"{a} < {x} < {b}"), ("membership", f"{x} \\in ({a},{b})")]
    else:
        gold = written
        eq = [("left right", f"\\left{lo}{a}, {b}\\right{hi}"), ("relation", f"{a} {lrel} {x} {rrel} {b}"),
              ("set builder", builder), ("builder colon", builder.replace("\\mid", ":")), ("membership", f"{x} \\in {written}"),
              ("no space", written.replace(" ", ""))]
    near = [("left bracket flipped", f"{'(' if lo == '[' else '['}{a}, {b}{hi}"),
            ("right bracket flipped", f"{lo}{a}, {b}{')' if hi == ']' else ']'}"),
            ("end off by one", f"{lo}{a}, {b + 1}{hi}"), ("start sign", f"{lo}{-a - 1 if a >= 0 else -a}, {b}{hi}".replace("--", ""))]
    near = [(f, n) for f, n in near if n != written]
    return gold, [e for e in eq if e[1] != gold], near


def finite_set(rng: random.Random) -> tuple[str, list, list]:
    size = rng.randint(2, 4)
    symbolic = rng.random() < 0.3
    if symbolic:
        r = _sqfree(rng)
        elems = [f"\\sqrt{{{r}}}", f"-\\sqrt{{{r}}}"] + [str(x) for x in rng.sample(range(-9, 10), size - 2)]
    else:
        elems = [str(x) for x in rng.sample(range(-12, 13), size)]
    if rng.random() < 0.2:  # an ordering asked for: the values in increasing order
        r = _sqfree(rng)
        values = sorted({float(x) for x in rng.sample(range(-9, 10), 2)} | {math.sqrt(r)})
        texts = [f"\\sqrt{{{r}}}" if abs(v - math.sqrt(r)) < 1e-12 else str(int(v)) for v in values]
        gold = ", ".join(texts)
        eq = [("chain", " < ".join(texts)), ("chain no spaces", "<".join(texts)), ("descending chain", " > ".join(reversed(texts)))]
        near = [("chain out of order", " < ".join([texts[1], texts[0]] + texts[2:])), ("value dropped", " < ".join(texts[:-1])),
                ("value changed", " < ".join(texts[:-1] + [str(int(values[-1]) + 1) if "sqrt" not in texts[-1] else texts[-1] + "+1"]))]
        return gold, eq, near
    gold = "\\{" + ", ".join(elems) + "\\}"
    x = "x" if rng.random() < 0.5 else _letters(rng, 1, exclude=CONTEXT_LETTERS)[0]
    shuffled = elems[:]
    while shuffled == elems:
        rng.shuffle(shuffled)
    eq = [("reordered", "\\{" + ", ".join(shuffled) + "\\}"), ("no braces", ", ".join(shuffled)),
          ("left right", "\\left\\{" + ", ".join(elems) + "\\right\\}"),
          ("solutions in words", " \\text{ or } ".join(f"{x} = {e}" for e in shuffled)),
          ("membership", f"{x} \\in \\{{" + ", ".join(elems) + "\\}")]
    extra = str(max(int(e) for e in elems if e.lstrip("-").isdigit()) + 1) if not symbolic or size > 2 else "1"
    changed = elems[:]
    i = rng.randrange(size)
    changed[i] = (str(int(changed[i]) + 1) if changed[i].lstrip("-").isdigit() else changed[i].replace("sqrt{", "sqrt{1"))
    near = [("element dropped", "\\{" + ", ".join(elems[:-1]) + "\\}"), ("element added", "\\{" + ", ".join(elems + [extra]) + "\\}"),
            ("element changed", "\\{" + ", ".join(changed) + "\\}")]
    return gold, eq, near


def tuple_answer(rng: random.Random) -> tuple[str, list, list]:
    if rng.random() < 0.35:  # a family of pairs: its parameter is free
        p, q = _letters(rng, 2)
        d = rng.randint(1, 5)
        gold = f"({p}, {p}+{d})"
        eq = [("parameter renamed", f"({q}, {q}+{d})"), ("reordered sum", f"({p}, {d}+{p})"), ("left right", f"\\left({p}, {p}+{d}\\right)")]
        near = [("offset off by one", f"({p}, {p}+{d + 1})"), ("entries swapped", f"({p}+{d}, {p})"),
                ("two parameters", f"({p}, {q}+{d})")]
        return gold, eq, near
    if rng.random() < 0.2:  # the gold offers both orders: either one is right
        a, b = rng.sample(range(1, 20), 2)
        gold = f"({a}, {b}) \\text{{ or }} ({b}, {a})"
        eq = [("first order", f"({a}, {b})"), ("second order", f"({b}, {a})"), ("left right", f"\\left({b},{a}\\right)")]
        near = [("one value twice", f"({a}, {a})"), ("entry off by one", f"({a + 1}, {b})"), ("sign", f"({-a}, {b})")]
        return gold, eq, near
    vals = [rng.randint(-9, 9) for _ in range(rng.randint(2, 3))]
    if len(set(vals)) < len(vals):
        vals = [vals[0], vals[0] + 1] + vals[2:]
    gold = "(" + ", ".join(map(str, vals)) + ")"
    eq = [("left right", "\\left(" + ", ".join(map(str, vals)) + "\\right)"), ("no spaces", gold.replace(" ", "")),
          ("thin spaces", "(" + ",\\, ".join(map(str, vals)) + ")")]
    swapped = vals[:]
    swapped[0], swapped[1] = swapped[1], swapped[0]
    changed = vals[:]
    changed[-1] += 1
    near = [("entries swapped", "(" + ", ".join(map(str, swapped)) + ")"), ("entry off by one", "(" + ", ".join(map(str, changed)) + ")"),
            ("entry dropped", "(" + ", ".join(map(str, vals[:-1])) + ")" if len(vals) > 2 else f"({vals[0]})"),
            ("entry added", "(" + ", ".join(map(str, vals + [0])) + ")")]
    return gold, eq, near


def family(rng: random.Random) -> tuple[str, list, list]:
    """Solutions of a periodic equation: x = c + d k\\pi, k an integer (k is free)."""
    d = rng.choice([1, 2])
    k, other = _letters(rng, 2, exclude="x")
    dk = "" if d == 1 else str(d)
    c = rng.choice(["", "\\frac{\\pi}{2} + ", "\\frac{\\pi}{3} + ", "\\frac{\\pi}{4} + ", "\\frac{\\pi}{6} + "])
    if not c and rng.random() < 0.3:  # '2k\\pi' alone: only its name says it is a parameter ('2\\pi r' is the question's r)
        k, other = rng.sample("knmlj", 2)
        gold = f"{dk}{k}\\pi"
    else:
        gold = f"x = {c}{dk}{k}\\pi" if rng.random() < 0.7 or not c else f"{c}{dk}{k}\\pi"  # with or without 'x ='
    bare = "" if gold.startswith("x") else " (gold without x =)"
    eq = [("parameter renamed" + bare, f"x = {c}{dk}{other}\\pi"), ("without x =", f"{c}{dk}{other}\\pi"),
          ("parameter after pi", f"x = {c}{dk}\\pi {k}"), ("with domain", f"x = {c}{dk}{other}\\pi, \\ {other} \\in \\mathbb{{Z}}"),
          ("spaces", f"x = {c}{dk} {k} \\pi")]
    flipped = "-" + c if c else "\\pi + "  # -pi/2 + 2k pi for pi/2 + 2k pi; pi + 2k pi for 2k pi
    near = [("period changed", f"x = {c}{'' if d == 2 else '2'}{k}\\pi"), ("offset changed", f"x = {c}{dk}{k}\\pi + 1"),
            ("offset sign", f"x = {flipped}{dk}{k}\\pi")]
    return gold, eq, near


def function(rng: random.Random) -> tuple[str, list, list]:
    if rng.random() < 0.5:  # a general function: its constants are free
        a, b, p, q = _letters(rng, 4, exclude="xft")
        gold = f"f(x) = {a}x + {b}"
        eq = [("constants renamed", f"f(x) = {p}x + {q}"), ("terms reordered", f"f(x) = {b} + {a}x"),
              ("constants swapped names", f"f(x) = {b}x + {a}"), ("spaces", f"f(x)={a} x+{b}")]
        near = [("constant dropped", f"f(x) = {a}x"), ("one constant for two", f"f(x) = {a}x + {a}"),
                ("square", f"f(x) = {a}x^2 + {b}"), ("argument not used", f"f(x) = {a}t + {b}")]
        return gold, eq, near
    m, c = rng.randint(2, 9), rng.randint(1, 9)
    gold = f"f(x) = {m}x^2 + {c}"
    eq = [("variable renamed", f"f(t) = {m}t^2 + {c}"), ("right side only", f"{m}x^2 + {c}"), ("reordered", f"f(x) = {c} + {m}x^2"),
          ("dfrac", f"f(x) = \\dfrac{{{2 * m}x^2 + {2 * c}}}{{2}}")]
    near = [("sign", f"f(x) = {m}x^2 - {c}"), ("coefficient off by one", f"f(x) = {m + 1}x^2 + {c}"),
            ("argument not used", f"f(t) = {m}x^2 + {c}"), ("other function", f"g(x) = {m}x^2 + {c + 1}")]
    return gold, eq, near


def choice(rng: random.Random) -> tuple[str, list, list]:
    letter = rng.choice("ABCDE")
    other = rng.choice([x for x in "ABCDE" if x != letter])
    gold = rng.choice([letter, f"({letter})", f"\\text{{{letter}}}"])
    eq = [("letter", letter), ("parenthesised", f"({letter})"), ("text", f"\\text{{({letter})}}"), ("bold", f"\\textbf{{{letter}}}")]
    near = [("other letter", other), ("other parenthesised", f"({other})")]
    return gold, [e for e in eq if e[1] != gold], near


_WORDS = ["necessary", "sufficient"]
_NAMES = ["Alice", "Bob", "Carol", "Dave"]


def text(rng: random.Random) -> tuple[str, list, list]:
    shape = rng.choice(["condition", "winner", "word"])
    if shape == "condition":
        x, y = rng.sample(_WORDS, 2)
        gold = f"\\text{{{x} but not {y}}}"
        eq = [("plain", f"{x} but not {y}"), ("capitalised", f"\\text{{{x.capitalize()} but not {y}}}"),
              ("with article", f"\\text{{a {x} but not {y} condition}}")]
        near = [("word order swapped", f"\\text{{{y} but not {x}}}"), ("negation dropped", f"\\text{{{x} and {y}}}"),
                ("negated", f"\\text{{neither {x} nor {y}}}")]
        return gold, eq, near
    if shape == "winner":
        a, b = rng.sample(_NAMES, 2)
        gold = f"\\text{{{a}}}"
        eq = [("plain", a), ("lower case", a.lower()), ("bold", f"\\textbf{{{a}}}"), ("with verb", f"\\text{{{a} wins}}")]
        near = [("other name", f"\\text{{{b}}}"), ("negated", f"\\text{{not {a}}}"), ("loses", f"\\text{{{a} loses}}"),
                ("both", f"\\text{{{a} and {b}}}")]
        return gold, eq, near
    w = rng.choice(["Monday", "Tuesday", "north", "east", "blue", "odd", "even"])
    o = {"Monday": "Tuesday", "Tuesday": "Monday", "north": "south", "east": "west", "blue": "red", "odd": "even", "even": "odd"}[w]
    gold = f"\\text{{{w}}}"
    eq = [("plain", w), ("upper case", w.upper()), ("period", f"{w}.")]
    near = [("other word", o), ("negated", f"\\text{{not {w}}}")]
    return gold, eq, near


def quantity(rng: random.Random) -> tuple[str, list, list]:
    """One number with a unit: the unit is part of the answer."""
    n = rng.randint(2, 500)
    unit, others = rng.choice([("m", ["cm", "km"]), ("cm", ["m", "mm"]), ("kg", ["g"]), ("apples", ["pears"]),
                               ("hours", ["minutes"]), ("dollars", ["cents"])])
    gold = f"{n} \\text{{ {unit}}}"
    eq = [("no space", f"{n}\\text{{ {unit}}}"), ("mathrm", f"{n}\\,\\mathrm{{{unit}}}"), ("plain", f"{n} {unit}"),
          ("number alone", str(n))]
    near = [("other unit", f"{n} \\text{{ {rng.choice(others)}}}"), ("other unit plain", f"{n} {rng.choice(others)}"),
            ("number off by one", f"{n + 1} \\text{{ {unit}}}")]
    return gold, eq, near


STRUCTURES: dict[str, Callable[[random.Random], tuple[str, list, list]]] = {
    "number": number, "expression": expression, "equation": equation, "relation": relation, "interval": interval,
    "set": finite_set, "tuple": tuple_answer, "family": family, "function": function, "choice": choice, "text": text,
    "quantity": quantity,
}


def _stated(rng: random.Random, structure: str, family_name: str, writing: str) -> str:
    wrappers = PLAIN_WRAPPERS if family_name.endswith("plain") else TEXT_WRAPPERS if structure == "text" else WRAPPERS
    return wrappers[rng.choice(list(wrappers))](writing)


def generate(seed: int, per_structure: int, structures: list[str] | None = None) -> list[Pair]:
    """`per_structure` golds of each structure, every equivalent writing and near miss of each
    (each in a wrapper drawn at random), plus hedges (a right answer stated with a wrong one)."""
    rng = random.Random(seed)
    pairs = []
    for name in structures or list(STRUCTURES):
        for _ in range(per_structure):
            gold, eq, near = STRUCTURES[name](rng)
            for fam, writing in eq:
                pairs.append(Pair(name, fam, gold, _stated(rng, name, fam, writing), True))
            for fam, writing in near:
                pairs.append(Pair(name, fam, gold, _stated(rng, name, fam, writing), False))
            if name not in ("text", "choice"):  # worked solutions: the right answer, then a near miss, in context
                for right in (True, False)[: 2 if near else 1]:
                    stated = gold if right or not near else rng.choice(near)[1]
                    for _ in range(CONTEXTS_PER_GOLD):
                        fam, writing = rng.choice(_contexts(rng, stated, gold, name))
                        pairs.append(Pair(name, fam, gold, writing, right))
            if near and name != "text":
                for _ in range(HEDGES_PER_GOLD):
                    fam, writing = rng.choice(_hedges(rng, rng.choice(eq)[1] if eq else gold, rng.choice(near)[1], name))
                    pairs.append(Pair(name, fam, gold, writing, False))
    return pairs
