"""Generated rewrites (metamorphic tests) of the `math` kind: equivalent writings of random golds are
CORRECT, near misses never are. The generator is `tests/verifiers/math_rewrites.py`; the larger run
with math-verify side by side is `bench/math_rewrites.py`. Plus one test per stage of the reading
(normalisation of the writing, a second answer stated, descriptions in words, units, rounding,
free symbols renamed), each over generated inputs.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest

from math_rewrites import MIN_SIG_DIGITS, STRUCTURES, _hedges, generate, rounded
from verifiers._forms import canonical_unit, description_key, normalise_writing
from verifiers._numbers import DEFAULT_SIG_DIGITS, numbers_match, parse_number, significant_digits
from verifiers._spans import answer_candidates, stated_alternative
from verifiers.fastpath import fast_verify
from verifiers.math_kind import verify_math
from verifiers.types import Verdict

SEED = 0  # the suite's fixed run; the bench uses seed 1, and a held-out seed is reported, never tuned on
PER_STRUCTURE = 5  # golds per structure here (about 500 pairs, well under a minute)
MIN_ACCEPTED = 0.97  # equivalent writings accepted, per structure, in this run (the bench reports the exact share)


@pytest.fixture(scope="module")
def verdicts():
    pairs = generate(SEED, PER_STRUCTURE)
    return [(p, verify_math(p.prediction, p.gold)) for p in pairs]


def test_generator_covers_every_structure_both_ways():
    pairs = generate(SEED, 2)
    seen = Counter((p.structure, p.equivalent) for p in pairs)
    for name in STRUCTURES:
        assert seen[(name, True)] >= 4 and seen[(name, False)] >= 4, name


def test_no_near_miss_is_accepted(verdicts):
    wrong = [(p.structure, p.family, p.gold, p.prediction) for p, r in verdicts if not p.equivalent and r.verdict is Verdict.CORRECT]
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("structure", sorted(STRUCTURES))
def test_equivalent_writings_are_accepted(verdicts, structure):
    mine = [(p, r) for p, r in verdicts if p.structure == structure and p.equivalent]
    missed = [(p.family, p.gold, p.prediction, r.detail) for p, r in mine if r.verdict is not Verdict.CORRECT]
    assert len(mine) >= 10
    assert 1 - len(missed) / len(mine) >= MIN_ACCEPTED, missed[:10]


def test_the_fast_path_agrees_on_every_generated_pair(verdicts):
    """`verify` answers simple literals on the fast path before the slow path runs: on every generated
    writing, near miss and hedge it decides, it must give the slow path's verdict (a hedge such as
    '\\boxed{5}. The final answer is 6' was once accepted there while the slow path rejected it)."""
    decided = [(p, r, fast) for p, r in verdicts if (fast := fast_verify(p.prediction, p.gold)) is not None]
    differ = [(p.family, p.gold, p.prediction, fast.verdict.value, r.verdict.value)
              for p, r, fast in decided if fast.verdict is not r.verdict]
    assert len(decided) >= 50 and not differ, differ[:10]


def test_a_second_value_where_the_answer_is_stated_is_never_accepted_on_either_path():
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(-999, 999)
        m = n + rng.choice([-1, 1]) * rng.randint(1, 50)
        for text in (f"\\boxed{{{n}}}. The final answer is {m}", f"\\boxed{{{n}}} \\pmod{{{abs(m) + 2}}}, or maybe {m}",
                     f"The answer is {n}. {m} works too."):
            fast = fast_verify(text, str(n))
            assert fast is None or fast.verdict is not Verdict.CORRECT, text
            assert verify_math(text, str(n)).verdict is not Verdict.CORRECT, text


def test_verdicts_say_why(verdicts):
    for _, r in verdicts[:50]:
        assert r.extra.get("reason") and r.detail.startswith(r.extra["reason"])


# ---------------------------------------------------------------- the stages, each over generated inputs


def test_normalisation_is_idempotent_and_keeps_based_logs():
    rng = random.Random(1)
    for _ in range(200):
        a, b = rng.randint(1, 99), rng.randint(2, 9)
        nth = "th" if 11 <= a % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(a % 10, "th")
        text = rng.choice([f"\\dfrac{{{a}}}{{{b}}}", f"\\tfrac{{{a}}}{{{b}}}", f"\\log {a}", f"\\log_{{{b}}} {a}", f"{a}^{{\\text{{{nth}}}}}",
                           f"x = {a}k\\pi, k \\in \\mathbb{{Z}}", f"{a} > m", f"{a} < x < {a + b}"])
        thousands = rng.randint(1000, 10**7)
        sep = rng.choice(["\\,", "{,}", "\\ ", "\\!"])
        assert normalise_writing(f"{thousands:,}".replace(",", sep)) == str(thousands)  # thousands separators in LaTeX
        assert normalise_writing(f"{a} \\text{{ percent}}") == f"{a}\\%" == normalise_writing(f"{a} percent")
        assert normalise_writing(f"({a},\\, {b})") == f"({a},\\, {b})"  # a list keeps its thin space
        once = normalise_writing(text)
        assert normalise_writing(once) == once
        assert "dfrac" not in once and "tfrac" not in once and "^{\\text" not in once and "mathbb" not in once
        assert ("\\log_" in once) == ("\\log_" in text)  # a log with a base stays one
        wrong = "th" if nth != "th" else "st"  # '22th', '3st': not an ordinal English writes, kept as written
        assert normalise_writing(f"{a}{wrong}") == f"{a}{wrong}"
        assert (f"{a} < x < {a + b}" in once) == (f"{a} < x < {a + b}" in text)  # a chain reads as it is


def test_a_second_answer_is_found_wherever_it_is_stated():
    rng = random.Random(2)
    for _ in range(200):
        x, y = rng.randint(-50, 50), rng.randint(-50, 50)
        hedged = rng.choice([f"so \\boxed{{{x}}} or maybe {y}", f"\\boxed{{{x}}} (or {y})", f"The answer is ${x}$ (or maybe ${y}$).",
                             f"It is either ${x}$ or ${y}$.", f"$\\boxed{{{x}}}$, perhaps ${y}$"])
        assert stated_alternative(hedged) is not None, hedged
        plain = rng.choice([f"so \\boxed{{{x}}}. Done.", f"The answer is ${x}$.", f"We get ${x}$ and check ${y}$ fits.\nSo ${x}$."])
        assert stated_alternative(plain) is None, plain
        assert verify_math(hedged, str(x)).verdict is Verdict.INCORRECT


def test_a_second_candidate_in_the_answer_region_is_never_accepted_whatever_the_words():
    """The hedge family by construction: a right answer and a wrong one in the answer region (after
    the box, after 'the answer is', in the last sentence, inside the box, in a second box), offered
    with random words or none; the same response is accepted for neither gold (a policy gains
    nothing by offering two answers). Without a box or an 'answer is', the last value of the last
    line is the answer read, so a value offered after it is read and one before it is not: such a
    response is accepted for at most one gold, never for the value stated first."""
    rng = random.Random(7)
    for _ in range(150):
        right, wrong = rng.sample(range(-99, 1000), 2)
        for family, response in _hedges(rng, str(right), str(wrong), "number"):
            assert verify_math(response, str(right)).verdict is Verdict.INCORRECT, (family, response)
            if family != "hedge in last sentence":
                assert verify_math(response, str(wrong)).verdict is Verdict.INCORRECT, (family, response)
    for _ in range(40):  # one quantity in two units, in two boxes or after the box
        n = rng.randint(2, 500)
        unit, other = rng.choice([("m", "cm"), ("kg", "g"), ("hours", "minutes"), ("dollars", "cents")])
        response = rng.choice([f"\\boxed{{{n} \\text{{ {unit}}}}}, \\boxed{{{n} \\text{{ {other}}}}}",
                               f"\\boxed{{{n}}}. Perhaps ${n} \\text{{ {other}}}$.", f"The answer is {n} {unit}, or {n} {other}."])
        assert verify_math(response, f"{n} \\text{{ {unit}}}").verdict is Verdict.INCORRECT, response


def test_the_answer_restated_or_checked_after_the_box_is_not_a_second_answer():
    rng = random.Random(8)
    for _ in range(40):
        a, b = rng.randint(2, 30), rng.randint(2, 30)
        q = rng.choice([7, 9, 11, 13])
        assert verify_math(f"\\boxed{{{a * b}}}, since ${a} \\cdot {b} = {a * b}$.", str(a * b)).correct  # a check
        assert verify_math(f"\\boxed{{{a * b}}} (check: {a}*{b} = {a * b})", str(a * b)).correct
        exact = f"\\frac{{{100 * a + 1}}}{{{q}}}"
        approx = rounded(Fraction(100 * a + 1, q), 2)
        assert verify_math(f"\\boxed{{{exact}}} \\approx {approx}", exact).correct  # the same value, rounded
        assert verify_math(f"\\boxed{{{a}}} apples in all.", f"{a}").correct
        assert verify_math(f"\\boxed{{x = {a}}}, where $y = {b}$.", f"{a}").correct  # another quantity, named
        assert verify_math(f"\\boxed{{x = {a} \\text{{ or }} x = {b}}}", f"{a}, {b}").correct  # a solution set
        assert verify_math(f"\\boxed{{x < {a} \\text{{ or }} x > {a + b}}}", f"x < {a} \\text{{ or }} x > {a + b}").correct


def test_answer_candidates_are_every_value_of_the_region():
    rng = random.Random(9)
    for _ in range(100):
        x, y = rng.sample(range(2, 1000), 2)
        gap = rng.choice([", ", ". ", "\n\n", " "])
        text = rng.choice([f"We get \\boxed{{{x}}}{gap}though ${y}$ is possible.", f"The answer is {x}{gap}or {y}.",
                           f"So $\\boxed{{{x}}}$.{gap}I also got {y}.", f"\\boxed{{{x} \\text{{ or }} {y}}}"])
        assert [c for _, c in answer_candidates(text)] == [str(x), str(y)], text
        assert answer_candidates(f"Steps with {y} and {y + 1}.\nSo \\boxed{{{x}}}.") == [(0, str(x))]  # before the answer: the derivation


def test_descriptions_with_a_negation_keep_their_word_order():
    rng = random.Random(3)
    words = ["necessary", "sufficient", "continuous", "bounded", "convergent", "finite"]
    for _ in range(100):
        a, b = rng.sample(words, 2)
        joiner = rng.choice(["but not", "and not", "rather than", "without being"])
        assert description_key(f"{a} {joiner} {b}") != description_key(f"{b} {joiner} {a}")
        assert description_key(f"\\text{{{a} {joiner} {b}}}") == description_key(f"a {a} {joiner} {b} condition")
        assert verify_math(f"\\boxed{{\\text{{{b} {joiner} {a}}}}}", f"\\text{{{a} {joiner} {b}}}").verdict is not Verdict.CORRECT


def test_one_quantity_keeps_its_unit():
    rng = random.Random(4)
    units = [("m", "cm"), ("kg", "g"), ("apples", "pears"), ("hours", "minutes"), ("km", "m"), ("dollars", "cents")]
    for _ in range(60):
        n = rng.randint(1, 999)
        unit, other = rng.choice(units)
        gold = f"{n} \\text{{ {unit}}}"
        way = rng.choice(["\\boxed{{{}}}", "the answer is {}", "${}$"])
        assert verify_math(way.format(f"{n} {other}"), gold).verdict is Verdict.INCORRECT
        assert verify_math(way.format(f"{n} {unit}"), gold).verdict is Verdict.CORRECT
        assert verify_math(way.format(str(n)), gold).verdict is Verdict.CORRECT  # no unit: the value decides
    assert canonical_unit("meters") == canonical_unit("m") and canonical_unit("hr") == canonical_unit("hours")


def test_rounding_policy_over_random_fractions():
    rng = random.Random(5)
    for _ in range(500):
        q = rng.randint(3, 97)
        exact = parse_number(f"{rng.randint(1, 10 * q)}/{q}")
        places = rng.randint(0, 5)
        text = rounded(exact.value, places)
        dec = parse_number(text)
        if dec.value == exact.value:
            continue
        expected = places > 0 and significant_digits(dec) >= DEFAULT_SIG_DIGITS
        assert numbers_match(exact, dec) is expected, (exact, text)
        assert numbers_match(dec, exact) is expected  # and back: the rounded value as the gold
        if places:
            off = parse_number(str(Fraction(text) + Fraction(1, 10 ** places) * rng.choice([-1, 1])).rstrip("0"))
            if off is not None and off.decimals == places:
                assert not numbers_match(exact, off), (exact, off)
    assert MIN_SIG_DIGITS == DEFAULT_SIG_DIGITS


def test_a_decimal_never_buys_an_integer_a_margin():
    """An exact integer against a decimal off by a unit in its last integer digit, written with fewer
    places than `precision`: never equal, however large (a relative tolerance would take 368472012.00
    for 368472011); with the same digits, always."""
    rng = random.Random(11)
    for _ in range(500):
        n = rng.randint(10**3, 10**12)
        places = rng.randint(1, 5)
        for sep in (".", ","):
            written = f"{n + rng.choice([-1, 1])}{sep}{'0' * places}"
            assert not numbers_match(parse_number(str(n)), parse_number(written)), written
            assert numbers_match(parse_number(str(n)), parse_number(f"{n}{sep}{'0' * places}"))


def test_free_symbols_renamed_only_where_the_question_does_not_fix_them():
    rng = random.Random(6)
    for _ in range(30):
        k, m = rng.sample("knm", 2)
        d = rng.randint(1, 4)
        assert verify_math(f"\\boxed{{x = {d}{m}\\pi}}", f"x = {d}{k}\\pi").correct  # a family's parameter
        assert verify_math(f"\\boxed{{x = {d}{m}\\pi}}", f"{d}{k}\\pi").correct  # the equation form on either side
        assert verify_math(f"\\boxed{{{d}{m}\\pi}}", f"x = {d}{k}\\pi").correct
        a, b, p, q = "a", "b", *rng.sample("pqrs", 2)
        assert verify_math(f"\\boxed{{f(x) = {p}x + {q}}}", f"f(x) = {a}x + {b}").correct  # constants of a general function
        assert verify_math(f"\\boxed{{({m}, {m}+{d})}}", f"({k}, {k}+{d})").correct  # a family of pairs
        assert not verify_math(f"\\boxed{{{d}y^2 + 1}}", f"{d}x^2 + 1").correct  # an expression's variable is fixed
        assert not verify_math(f"\\boxed{{f(x) = {p}x + {p}}}", f"f(x) = {a}x + {b}").correct  # one constant for two
        assert not verify_math(f"\\boxed{{y \\ge {d}}}", f"x \\ge {d}").correct  # a relation's variable is fixed
