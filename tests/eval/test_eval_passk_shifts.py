"""pass@k / maj@k, word-level shifts, and the proxy-vs-gold gap: hand-computed values."""

import math

import pytest

from eval.passk import maj_at_k_groups, majority_answer, mean_pass_at_k, pass_at_k
from eval.policy_eval import proxy_gold_gap, reward_stats
from eval.shifts import FILLER_WORDS, shift_rows, shift_text


@pytest.mark.parametrize(
    "n, c, k, expected",
    [
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (3, 2, 2, 1.0),  # n - c = 1 < k: every pair of samples holds a correct one
        (8, 0, 4, 0.0),  # nothing correct
        (8, 8, 1, 1.0),  # everything correct
        (10, 3, 1, 0.3),  # pass@1 = c / n
    ],
)
def test_pass_at_k(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_equals_binomial_formula():
    # the stable product equals 1 - C(n-c, k) / C(n, k) everywhere on a grid
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)


def test_pass_at_k_errors_and_mean():
    with pytest.raises(ValueError, match="k"):
        pass_at_k(4, 1, 5)
    with pytest.raises(ValueError, match="c <= n"):
        pass_at_k(4, 5, 1)
    # prompts: 1 of 2 correct (pass@1 .5) and 2 of 2 (1.0) -> mean .75
    assert mean_pass_at_k([[True, False], [True, True]], 1) == pytest.approx(0.75)


def test_majority_answer():
    same = lambda a, b: float(a) == float(b)  # noqa: E731 - a stand-in for verifier equivalence
    # "4" and "4.0" are one answer (2 votes) against "5" (1 vote)
    assert majority_answer(["5", "4", "4.0"], same) == "4"
    # tie: the answer seen first wins
    assert majority_answer(["7", "3"], same) == "7"
    # None answers are dropped, not counted as a candidate
    assert majority_answer([None, None, "2"], same) == "2"
    assert majority_answer([None, None], same) is None
    # n // k disjoint groups
    assert [list(g) for g in maj_at_k_groups(5, 2)] == [[0, 1], [2, 3]]


def test_shift_text_rates_and_reproducibility():
    text = "the quick brown fox jumps over the lazy dog today"
    assert shift_text(text, "insert", 0.0) == text  # p = 0 is the identity
    assert shift_text(text, "substitute", 0.5, seed=3) == shift_text(text, "substitute", 0.5, seed=3)  # seeded
    assert shift_text(text, "substitute", 0.5, seed=3) != shift_text(text, "substitute", 0.5, seed=4)
    # p = 1: every word replaced / one filler after each word / all but one word deleted
    assert all(w in FILLER_WORDS for w in shift_text(text, "substitute", 1.0).split())
    assert len(shift_text(text, "insert", 1.0).split()) == 20
    assert len(shift_text(text, "delete", 1.0).split()) == 1
    with pytest.raises(ValueError, match="unknown shift"):
        shift_text(text, "shuffle", 0.5)
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        shift_text(text, "insert", 1.5)


def test_shift_rows_fields():
    rows = [{"prompt": "add two and two", "chosen": "it is four", "rejected": "it is five", "subset": "x"}]
    resp = shift_rows(rows, "substitute", 1.0, field="response")
    assert resp[0]["prompt"] == rows[0]["prompt"] and resp[0]["chosen"] != rows[0]["chosen"]
    assert resp[0]["subset"] == "x"  # other columns untouched
    prm = shift_rows(rows, "substitute", 1.0, field="prompt")
    assert prm[0]["prompt"] != rows[0]["prompt"] and prm[0]["chosen"] == rows[0]["chosen"]
    both = shift_rows(rows, "substitute", 1.0, field="both")
    assert both[0]["prompt"] != rows[0]["prompt"] and both[0]["rejected"] != rows[0]["rejected"]
    assert rows[0]["chosen"] == "it is four"  # input not modified
    steps = shift_rows([{"prompt": "p", "completions": ["a b", "c d"], "labels": [True, True]}], "delete", 1.0)
    assert [len(s.split()) for s in steps[0]["completions"]] == [1, 1]


def test_proxy_gold_gap_hand_computed():
    proxy = [[0.9, 0.1], [0.2, 0.8]]
    gold = [[0.0, 1.0], [0.0, 1.0]]
    gap = proxy_gold_gap(proxy, gold)
    # the proxy picks the wrong sample in prompt 1 (gold 0) and the right one in prompt 2 (gold 1)
    assert gap["bon_gold"] == 0.5 and gap["oracle_gold"] == 1.0 and gap["bon_gap"] == 0.5
    assert gap["proxy_mean"] == 0.5 and gap["gold_mean"] == 0.5 and gap["mean_gap"] == 0.0
    # spearman: proxy ranks (4 1 2 3) against gold's tied ranks (1.5 3.5 1.5 3.5); deviations from the
    # mean rank (1.5 -1.5 -.5 .5) and (-1 1 -1 1): r = -2 / (sqrt(5) * 2) = -1/sqrt(5)
    assert gap["spearman"] == pytest.approx(-1 / 5**0.5)
    # pearson: deviations (.4 -.4 -.3 .3) and (-.5 .5 -.5 .5): r = -.1 / (sqrt(.5) * 1)
    assert gap["pearson"] == pytest.approx(-0.1 / 0.5**0.5)
    # None (not applicable) samples are skipped
    assert proxy_gold_gap([[1.0, None, 0.0]], [[1.0, 1.0, 0.0]])["bon_gold"] == 1.0


def test_reward_stats_counts_none():
    assert reward_stats([1.0, None, 0.0]) == {"mean": 0.5, "std": 0.5, "n": 2, "n_none": 1}
