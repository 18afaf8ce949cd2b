"""`rewardlab verify`: single items, files, bad arguments and bad rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewardlab.cli import main
from verifiers.cli import summary_table

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "verify_sample.jsonl"


def test_single_item(light_pool, capsys):
    assert main(["verify", "--gold", "a", "--pred", " a ", "--kind", "exact"]) == 0
    out = capsys.readouterr().out
    assert "verdict:   correct" in out and "extracted: a" in out


def test_single_item_json_with_options(light_pool, capsys):
    # the option reaches the kind: `sleep` with seconds=0 returns at once
    assert main(["verify", "--gold", "a", "--pred", "b", "--kind", "sleep", "--option", "seconds=0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "incorrect"


# (arguments, text the error must contain)
BAD_ARGS = [
    (["--pred", "1"], "missing --gold"),  # half of single-item mode
    (["--gold", "1"], "missing --pred"),
    ([], "nothing to verify"),
    (["--input", "x.jsonl"], "missing --output"),
    (["--gold", "1", "--pred", "1", "--input", "x.jsonl"], "not both"),
    (["--gold", "1", "--pred", "1", "--timeout", "0"], "--timeout must be a positive number of seconds, got 0"),
    (["--gold", "1", "--pred", "1", "--option", "novalue"], "key=value"),
    (["--input", "/nonexistent/x.jsonl", "--output", "o.jsonl"], "no such file"),
]


@pytest.mark.parametrize("args,text", BAD_ARGS)
def test_bad_arguments_exit_2_with_a_message(args, text, capsys):
    assert main(["verify", *args]) == 2
    assert text in capsys.readouterr().err


def test_unknown_kind_lists_the_valid_ones(capsys):
    assert main(["verify", "--gold", "1", "--pred", "1", "--kind", "maths"]) == 2
    assert "unknown kind 'maths' for --kind; valid kinds: choice, code, math" in capsys.readouterr().err


# (file content, text the error must contain: file, line and field)
BAD_ROWS = [
    ('{"prediction": "1", "gold": "1"}\n{"prediction": "1"}\n', "line 2: missing field 'gold'"),
    ('{"prediction": 1, "gold": "1"}\n', "line 1: field 'prediction' must be a string, got int"),
    ('\n{"prediction": "1", "gold": "1", "kind": "maths"}\n', "line 2: field 'kind': unknown kind 'maths'"),
    ('{"prediction": "1", "gold": "1", "options": [1]}\n', "line 1: field 'options' must be an object"),
    ('{"prediction": "1", "gold": \n', "line 1: not valid JSON"),
    ('["1", "1"]\n', "line 1: expected a JSON object"),
    ("\n\n", "no rows"),
    # nesting past what the JSON parser can recurse into: exit 2 naming the row, not a RecursionError
    ('{"prediction": "1", "gold": "1"}\n{"prediction": "1", "gold": "1", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
     "line 2: JSON nested too deeply"),
    # parseable but deeper than any real row: refused before it reaches a verifier or the output writer
    ('{"prediction": "1", "gold": "1", "options": {"x": ' + "[" * 200 + "]" * 200 + "}}\n",
     "line 1: field 'options' is nested more than 64 levels deep"),
]


@pytest.mark.parametrize("content,text", BAD_ROWS, ids=[text.split(":")[-1].strip()[:40] for _, text in BAD_ROWS])
def test_bad_rows_name_file_line_and_field(tmp_path, content, text, capsys):
    items = tmp_path / "items.jsonl"
    items.write_text(content)
    output = tmp_path / "out.jsonl"
    output.write_text("previous results\n")
    assert main(["verify", "--input", str(items), "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert str(items) in err and text in err
    assert output.read_text() == "previous results\n"  # nothing already written is lost


def test_file_mode_writes_rows_and_a_summary(light_pool, tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    rows = [
        {"id": 1, "prediction": "a", "gold": "a"},  # correct
        {"id": 2, "prediction": "b", "gold": "a"},  # incorrect
        {"id": 3, "prediction": "a", "gold": "a", "kind": "sleep"},  # timeout (0.5 s)
        {"id": 4, "prediction": "", "gold": "a"},  # no answer
    ]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    output = tmp_path / "sub" / "out.jsonl"
    assert main(["verify", "--input", str(items), "--output", str(output), "--kind", "exact", "--timeout", "0.5",
                 "--batch-size", "3"]) == 0
    out_rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["id"] for r in out_rows] == [1, 2, 3, 4]
    assert [r["verdict"] for r in out_rows] == ["correct", "incorrect", "timeout", "no_answer"]
    assert [r["score"] for r in out_rows] == [1.0, 0.0, 0.0, 0.0]
    summary = capsys.readouterr().out
    assert "correct          1   25.0%" in summary and "total            4  100.0%" in summary
    assert "items/s" in summary
    assert [p.name for p in output.parent.iterdir()] == ["out.jsonl"]  # no temp file left behind


def test_summary_table_percentages():
    table = summary_table(["incorrect", "correct", "incorrect", "error"], 2.0)
    assert table.splitlines()[1] == "incorrect        2   50.0%"  # most frequent first
    assert "4 items in 2.00 s (2.0 items/s)" in table


@pytest.mark.slow
def test_the_readme_demo_runs_on_the_sample(tmp_path):
    output = tmp_path / "verified.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "rewardlab.cli", "verify", "--input", str(SAMPLE), "--output", str(output), "--timeout", "2"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(rows) >= 35
    verdicts = {r["verdict"] for r in rows}
    assert {"correct", "incorrect", "no_answer", "bad_gold", "timeout"} <= verdicts
    by_id = {r["id"]: r["verdict"] for r in rows}
    assert by_id["m01"] == "correct" and by_id["m11"] == "incorrect" and by_id["k01"] == "correct"
    assert by_id["m19"] == "timeout" and by_id["k04"] == "timeout"
    assert "items/s" in proc.stdout
