"""The answer-form dev set (`data/math_forms_dev.jsonl`): right answers written in other forms are
accepted, near misses never are. Each item's gold comes from a public source named in the item;
`bench/math_forms.py` prints the same figures beside math-verify's.

Targets: recall of the right answers >= 95% in \\boxed{} and >= 90% bare; no false positive.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifiers import verify_batch

DEV_SET = Path(__file__).parent / "data" / "math_forms_dev.jsonl"
WAYS = {"boxed": lambda a: f"\\boxed{{{a}}}", "bare": lambda a: a}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [json.loads(line) for line in DEV_SET.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def verdicts(rows) -> dict[tuple[str, str, str], str]:
    """{(item id, 'right' / 'wrong', way): verdict} for every answer written every way."""
    keys = [(row["id"], which, way) for row in rows for which in ("right", "wrong") for way in WAYS]
    by_id = {row["id"]: row for row in rows}
    preds = [WAYS[way](by_id[i][which]) for i, which, way in keys]
    results = verify_batch(preds, [by_id[i]["gold"] for i, _, _ in keys], kind="math", timeout=10.0)
    return {key: r.verdict.value for key, r in zip(keys, results)}


def test_dev_set_is_diverse_and_sourced(rows):
    assert len(rows) >= 200
    assert len({row["form"] for row in rows}) >= 12
    assert all(row["source"] and row["right"] != row["wrong"] for row in rows)
    assert len({row["id"] for row in rows}) == len(rows)


@pytest.mark.parametrize("way, target", [("boxed", 0.95), ("bare", 0.90)])
def test_recall_of_right_answers(rows, verdicts, way, target):
    missed = [(row["id"], row["right"], verdicts[row["id"], "right", way]) for row in rows
              if verdicts[row["id"], "right", way] != "correct"]
    recall = 1 - len(missed) / len(rows)
    assert recall >= target, f"{way} recall {recall:.1%} < {target:.0%}; missed {missed[:10]}"


def test_no_false_positive(rows, verdicts):
    accepted = [(row["id"], way, row["wrong"], row["gold"]) for row in rows for way in WAYS
                if verdicts[row["id"], "wrong", way] == "correct"]
    assert not accepted, f"{len(accepted)} wrong answers called correct: {accepted[:10]}"


def test_no_errors_or_timeouts(verdicts):
    bad = {k: v for k, v in verdicts.items() if v in ("error", "timeout")}
    assert not bad, bad
