"""Synthetic data: seeded, leakage-free, verifier-consistent, every error type present."""

from __future__ import annotations

from collections import Counter

import pytest

from reward_models.data import ERROR_TYPES, make_preference_rows, make_scored_rows, make_stepwise_rows
from verifiers import verify_batch


def test_preference_rows_are_seeded_and_labelled_by_the_verifier():
    rows = make_preference_rows(40, seed=3, split="test")
    assert rows == make_preference_rows(40, seed=3, split="test")  # same seed, same rows
    assert rows != make_preference_rows(40, seed=4, split="test")
    assert set(Counter(r["error_type"] for r in rows)) == set(ERROR_TYPES)  # every error type appears
    chosen = verify_batch([r["chosen"] for r in rows], [r["answer"] for r in rows], kind="math")
    rejected = verify_batch([r["rejected"] for r in rows], [r["answer"] for r in rows], kind="math")
    assert all(c.correct for c in chosen) and not any(w.correct for w in rejected)


def test_train_and_test_prompts_never_overlap():
    train = {r["prompt"] for r in make_preference_rows(300, seed=0, split="train")}
    test = {r["prompt"] for r in make_preference_rows(100, seed=0, split="test")}
    assert train and test and not train & test


def test_stepwise_labels_follow_the_first_error():
    rows = make_stepwise_rows(60, seed=0, split="test")
    assert Counter(r["error_type"] for r in rows)["none"] == 20  # a third are correct solutions
    for r in rows:
        assert len(r["labels"]) == len(r["completions"])
        first_wrong = r["labels"].index(False) if False in r["labels"] else len(r["labels"])
        assert not any(r["labels"][first_wrong:])  # once wrong, always wrong
        assert all(r["labels"]) == (r["error_type"] == "none")


@pytest.mark.parametrize(
    "error_type, expected_labels",
    [
        # 2 steps + final line; a slip in step 1 or 2 makes that step and everything after wrong
        ("wrong_final", [True, True, False]),  # working right, stated answer wrong
    ],
)
def test_stepwise_example_labels(error_type, expected_labels):
    rows = [r for r in make_stepwise_rows(120, seed=0, split="test") if r["error_type"] == error_type and len(r["labels"]) == 3]
    assert rows and all(r["labels"] == expected_labels for r in rows)


def test_scored_rows_pair_a_correct_and_a_flawed_solution():
    rows = make_scored_rows(20, seed=0, split="test")
    assert len(rows) == 20
    for good, bad in zip(rows[::2], rows[1::2]):
        assert good["prompt"] == bad["prompt"]
        assert good["correctness"] == 1.0 and bad["correctness"] == 0.0
        assert 0.0 <= bad["quality"] <= 1.0 and good["error_type"] == "none"
