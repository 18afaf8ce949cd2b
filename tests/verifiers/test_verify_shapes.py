"""`rewardlab verify` on the hub's shapes: code tests as lists (MBPP's asserts, stdin/stdout case
lists), HumanEval's `test` with its `entry_point`, and rows that name their fields `completion` /
`answer` (the fallbacks audit-verifier has) or anything else with --prediction-column /
--gold-column."""

from __future__ import annotations

import json

import pytest

from rewardlab.cli import main

ADD = "```python\ndef add(a, b):\n    return a + b\n```"
SUB = "```python\ndef add(a, b):\n    return a - b\n```"


def _run(tmp_path, rows, *flags):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code = main(["verify", "--input", str(src), "--output", str(out), *flags])
    return code, [json.loads(x)["verdict"] for x in out.read_text().splitlines()] if code == 0 else None


def test_code_golds_as_lists_of_asserts_and_of_cases(tmp_path):
    rows = [
        {"prediction": ADD, "gold": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]},  # MBPP's test_list
        {"prediction": SUB, "gold": ["assert add(1, 2) == 3"]},
        {"prediction": "```python\nprint(sum(map(int, input().split())))\n```", "gold": [{"input": "1 2\n", "output": "3\n"}]},  # the docs' case list
    ]
    assert _run(tmp_path, rows, "--kind", "code") == (0, ["correct", "incorrect", "correct"])


def test_humaneval_rows_with_an_entry_point(tmp_path):
    test = "def check(candidate):\n    assert candidate(2) == 4\n"
    rows = [{"prediction": "def double(x):\n    return 2 * x\n", "gold": test, "entry_point": "double"},
            {"prediction": "def double(x):\n    return x\n", "gold": test, "entry_point": "double"}]
    assert _run(tmp_path, rows, "--kind", "code") == (0, ["correct", "incorrect"])


def test_completion_and_answer_fields_are_found_without_flags(tmp_path):
    rows = [{"completion": "The answer is 72", "answer": "72"}, {"completion": "71", "answer": "72"}]
    assert _run(tmp_path, rows) == (0, ["correct", "incorrect"])
    rows = [{"model_output": "so 4", "reference": "4"}]
    assert _run(tmp_path, rows, "--prediction-column", "model_output", "--gold-column", "reference") == (0, ["correct"])


@pytest.mark.parametrize("row, message", [
    ({"prediction": "1", "gold": ["1"]}, r"line 1: field 'gold' must be a string, got list \(a list of tests is accepted with kind code\)"),
    ({"response_text": "1", "gold": "1"}, r"line 1: missing field 'prediction' \(nor 'completion' / 'response'\)"),
])
def test_bad_rows_name_the_line_from_1_and_the_field(tmp_path, capsys, row, message):
    import re

    code, _ = _run(tmp_path, [row])
    assert code == 2 and re.search(message, capsys.readouterr().err)
