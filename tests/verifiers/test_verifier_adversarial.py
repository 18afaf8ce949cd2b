"""Adversarial inputs through the real kinds: each gets a verdict within timeout + 1 s and the pool
stays healthy (a normal item that needs a worker verifies right afterwards)."""

from __future__ import annotations

import time

import pytest

from verifiers import Verdict, verify, verify_batch
from verifiers.api import verify_items
from verifiers.pool import get_pool


TIMEOUT = 1.0

# (case id, prediction, gold, verdicts allowed for kind=math)
HOSTILE = [
    ("power tower 9", "$9^{9^{9^{9}}}$", "1", {Verdict.TIMEOUT, Verdict.INCORRECT}),  # exact value has ~10^(3.7e8) digits
    ("power tower 10", "\\boxed{10^{10^{10^{10}}}}", "1", {Verdict.TIMEOUT, Verdict.INCORRECT}),
    ("factorial call", "The answer is factorial(10^7)", "5", {Verdict.TIMEOUT, Verdict.INCORRECT, Verdict.NO_ANSWER}),
    ("factorial latex", "\\boxed{(10^7)!}", "5", {Verdict.TIMEOUT, Verdict.INCORRECT}),
    ("1 MB prediction", "7" * 1_000_000, "7", {Verdict.INCORRECT, Verdict.NO_ANSWER, Verdict.TIMEOUT}),
    ("1 MB of prose", "word " * 200_000 + "\\boxed{7}", "7", {Verdict.CORRECT, Verdict.TIMEOUT}),
    ("10k nested braces", "\\boxed{" + "{" * 10_000 + "1" + "}" * 10_000 + "}", "1", set(Verdict) - {Verdict.BAD_GOLD}),
    ("NUL bytes", "\\boxed{4\x00}\x00", "4", set(Verdict) - {Verdict.BAD_GOLD}),
    ("invalid surrogate", "\\boxed{\ud800}", "4", {Verdict.INCORRECT, Verdict.NO_ANSWER}),
    ("surrogate in gold", "\\boxed{4}", "\udfff", {Verdict.BAD_GOLD, Verdict.INCORRECT}),
    ("empty prediction", "", "4", {Verdict.NO_ANSWER}),
    ("empty gold", "\\boxed{4}", "", {Verdict.BAD_GOLD}),
    # bare answers are parsed as LaTeX: the same limits hold without delimiters
    ("bare power tower", "9^{9^{9^{9}}}", "1", {Verdict.TIMEOUT, Verdict.INCORRECT}),
    ("bare factorial", "(10^7)!", "5", {Verdict.TIMEOUT, Verdict.INCORRECT}),
    ("bare long sum", "+".join(["x"] * 600), "x", {Verdict.TIMEOUT, Verdict.INCORRECT}),
    ("bare nested parentheses", "(" * 900 + "1" + ")" * 900, "1", set(Verdict) - {Verdict.BAD_GOLD, Verdict.ERROR}),
    ("bare hedge list", ", ".join(str(i) for i in range(400)), "7", {Verdict.TIMEOUT, Verdict.INCORRECT}),
    ("bare pm tuple", "(" + ", ".join(["\\pm 1"] * 40) + ")", "1", {Verdict.TIMEOUT, Verdict.INCORRECT}),
]


def _healthy() -> None:
    """A normal item, forced through a worker (no fast path), still verifies."""
    (result,) = verify_items([("\\boxed{\\frac{1}{2}}", "0.5", "math", {})], timeout=5.0, fast_path=False)
    assert result.verdict is Verdict.CORRECT, result


@pytest.fixture(scope="module", autouse=True)
def warm_pool():
    get_pool().warm()  # the clock below must not include the workers' first imports
    yield


@pytest.mark.parametrize("prediction,gold,allowed", [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_math_kind_survives(prediction, gold, allowed):
    start = time.monotonic()
    result = verify(prediction, gold, kind="math", timeout=TIMEOUT)
    took = time.monotonic() - start
    assert took < TIMEOUT + 1.0, f"{took:.2f}s"
    assert result.verdict in allowed, result
    _healthy()


@pytest.mark.parametrize("kind", ["numeric", "string", "choice", "regex"])
def test_other_kinds_survive_the_whole_list_in_one_batch(kind):
    preds = [h[1] for h in HOSTILE]
    golds = [h[2] if kind != "choice" else "B" for h in HOSTILE]
    start = time.monotonic()
    results = verify_batch(preds, golds, kind=kind, timeout=TIMEOUT)
    assert time.monotonic() - start < len(HOSTILE) * (TIMEOUT + 1.0)
    assert all(isinstance(r.verdict, Verdict) and r.elapsed <= TIMEOUT + 1.0 for r in results)
    assert results[HOSTILE.index(next(h for h in HOSTILE if h[0] == "empty prediction"))].verdict is Verdict.NO_ANSWER
    _healthy()


@pytest.mark.parametrize("bad,name", [(None, "prediction"), (12, "prediction"), (["4"], "prediction")])
def test_non_string_prediction_is_a_type_error(bad, name):
    with pytest.raises(TypeError, match=f"{name} must be a string"):
        verify(bad, "4")


def test_none_gold_in_a_batch_names_the_index():
    with pytest.raises(TypeError, match=r"golds\[2\] must be a string, got NoneType"):
        verify_batch(["1", "2", "3"], ["1", "2", None])
