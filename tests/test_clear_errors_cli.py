"""Every command reads data the same way: an empty file or a missing local path is a one-line
error naming the flag (never a StopIteration, never a hub lookup), and rows are numbered from 1
in every message (verify's line 1 is train-rm's row 1)."""

from __future__ import annotations

import json
import re
import time

import pytest

from rewardlab.cli import main


@pytest.mark.parametrize("command", [
    ["eval-policy", "--data", "{path}", "--out", "{out}"],
    ["train-rm", "--data", "{path}", "--output", "{out}"],
    ["train-rm", "--kind", "bt", "--data", "{ok}", "--eval-data", "{path}", "--output", "{out}"],
    ["audit-verifier", "--input", "{path}", "--out", "{out}"],
    ["rm-data", "--data", "{path}", "--output-dir", "{out}"],
    ["sft", "--data", "{path}", "--output-dir", "{out}"],
])
@pytest.mark.parametrize("which, message", [("empty", "the file is empty"), ("missing", "no such file")])
def test_empty_and_missing_files_are_one_line_errors(tmp_path, capsys, command, which, message):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    ok = tmp_path / "ok.jsonl"
    ok.write_text(json.dumps({"prompt": "1+1=", "chosen": "2", "rejected": "3"}) + "\n")
    path = str(empty) if which == "empty" else "./no/such/file.jsonl"
    args = [a.format(path=path, out=tmp_path / "out", ok=ok) for a in command]
    start = time.perf_counter()
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and path in err
    assert "Traceback" not in err and "StopIteration" not in err
    assert time.perf_counter() - start < 20


def test_rows_are_numbered_from_1_in_every_command(tmp_path, capsys):
    # the same bad second row, seen by verify and by train-rm
    verify_in = tmp_path / "v.jsonl"
    verify_in.write_text(json.dumps({"prediction": "1", "gold": "1"}) + "\n" + json.dumps({"prediction": 2, "gold": "2"}) + "\n")
    assert main(["verify", "--input", str(verify_in), "--output", str(tmp_path / "o.jsonl")]) == 2
    assert "line 2: field 'prediction'" in capsys.readouterr().err
    rm_in = tmp_path / "p.jsonl"
    rm_in.write_text(json.dumps({"prompt": "q", "chosen": "a", "rejected": "b"}) + "\n" + json.dumps({"prompt": "q", "chosen": " ", "rejected": "b"}) + "\n")
    assert main(["train-rm", "--data", str(rm_in), "--output", str(tmp_path / "rm")]) == 2
    assert re.search(r"row 2: column 'chosen' is empty", capsys.readouterr().err)
