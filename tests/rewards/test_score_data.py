"""`rewardlab score-data`: a dataset scored with a reward spec, written back with reward columns and
verdicts; resumable by shards; the Ray Data engine gives the same verdicts as the local pool."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rewardlab.cli import main
from rewards.batch import score_dataset

SPEC = "verifier:math*1.0+format:integer*0.1"


def write_rows(path: Path, n: int, boom_at: int | None = None) -> list[dict]:
    """Arithmetic solutions: every third wrong, every 25th without gold, every 10th in LaTeX
    (\\frac: the worker pool's sympy path, not the fast path), one never-closed reasoning."""
    rows = []
    for i in range(n):
        a, b = i % 97, (13 * i) % 89
        value = a + b if i % 3 else a + b + 1
        completion = f"$\\boxed{{\\frac{{{2 * value}}}{{2}}}}$" if i % 10 == 0 else str(value)
        if i == 7:
            completion = "<think>still working"
        if boom_at is not None and i == boom_at:
            completion = "boom"
        rows.append({"prompt": f"{a}+{b}=", "completion": completion, "answer": str(a + b) if i % 25 else None})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def expected_verdict(i: int) -> str | None:
    if i % 25 == 0:
        return None  # no gold: not sent to the verifier
    if i == 7:
        return "no_answer"
    return "correct" if i % 3 else "incorrect"


def read(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def test_scores_and_verdicts_written_back(tmp_path):
    rows = write_rows(tmp_path / "in.jsonl", 300)
    summary = score_dataset(str(tmp_path / "in.jsonl"), SPEC, tmp_path / "out.jsonl", shard_size=128, batch_size=50,
                            progress_bar=False)
    out = read(tmp_path / "out.jsonl")
    assert [r["completion"] for r in out] == [r["completion"] for r in rows]  # every row, in order, columns kept
    assert [r["verdict"] for r in out] == [expected_verdict(i) for i in range(300)]
    for i, r in enumerate(out):
        verifier = {"correct": 1.0, "incorrect": 0.0, "no_answer": 0.0, None: None}[expected_verdict(i)]
        assert r["reward_verifier"] == verifier
        assert r["reward_format"] == (1.0 if rows[i]["completion"].isdigit() else 0.0)
        assert r["reward"] == pytest.approx((verifier or 0.0) + 0.1 * r["reward_format"])
    counts = {v: sum(expected_verdict(i) == v for i in range(300)) for v in ("correct", "incorrect", "no_answer")}
    assert summary["verdict"] == {**counts, "no_gold": 12}
    assert summary["reward_verifier"]["not_applicable"] == 12 and summary["rows"] == 300
    assert json.loads((tmp_path / "out.jsonl.shards" / "summary.json").read_text())["verdict"] == summary["verdict"]


def test_resume_skips_finished_shards(tmp_path):
    write_rows(tmp_path / "in.jsonl", 250)
    out = tmp_path / "out.parquet"
    score_dataset(str(tmp_path / "in.jsonl"), SPEC, out, shard_size=100, progress_bar=False)
    first = read(out)
    shards = out.with_name("out.parquet.shards")
    kept = {k: os.stat(shards / f"shard-{k:05d}.parquet").st_mtime_ns for k in (0, 2)}
    (shards / "shard-00001.parquet").unlink()  # as if the run had been killed during shard 1
    out.unlink()
    summary = score_dataset(str(tmp_path / "in.jsonl"), SPEC, out, shard_size=100, progress_bar=False)
    assert summary["scored_this_run"] == 100  # only the missing shard
    assert {k: os.stat(shards / f"shard-{k:05d}.parquet").st_mtime_ns for k in (0, 2)} == kept
    assert read(out) == first


def test_a_failing_reward_keeps_the_finished_shards(tmp_path):
    write_rows(tmp_path / "in.jsonl", 300, boom_at=250)
    out = tmp_path / "out.parquet"
    with pytest.raises(ValueError, match="boom in the batch"):
        score_dataset(str(tmp_path / "in.jsonl"), "tests.rewards.user_reward:fails_on_boom", out, shard_size=100,
                      progress_bar=False)
    shards = out.with_name("out.parquet.shards")
    assert sorted(p.name for p in shards.glob("shard-*")) == ["shard-00000.parquet", "shard-00001.parquet"]
    assert not out.exists()


def test_cli_errors_name_the_fix(tmp_path, capsys):
    write_rows(tmp_path / "in.jsonl", 20)
    args = ["score-data", "--data", str(tmp_path / "in.jsonl"), "--reward", SPEC, "--output", str(tmp_path / "o.parquet"),
            "--progress", "false"]
    assert main(args + ["--completion-column", "response"]) == 2
    assert "no column 'response'" in capsys.readouterr().err
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 20 and "verdict" in summary
    # the same output with another reward: the shards there are not this command's
    assert main(args[:4] + ["format:integer"] + args[5:]) == 2
    assert "holds shards of another command (different reward)" in capsys.readouterr().err
    assert main(args[:4] + ["format:integer"] + args[5:] + ["--overwrite"]) == 0
    assert main(["score-data", "--data", "x.jsonl", "--reward", SPEC, "--output", "o.csv"]) == 2
    assert "use a .parquet or .jsonl path" in capsys.readouterr().err


@pytest.mark.slow
def test_ray_data_engine_gives_the_local_verdicts_and_resumes(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'rewardlab[ray]')")
    write_rows(tmp_path / "in.jsonl", 1500)
    local = score_dataset(str(tmp_path / "in.jsonl"), SPEC, tmp_path / "local.parquet", shard_size=400, progress_bar=False)
    expected = read(tmp_path / "local.parquet")
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))  # Ray's workers inherit it
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        # tasks (rule rewards: one verifier pool per Ray worker process)
        out = tmp_path / "ray.parquet"
        remote = score_dataset(str(tmp_path / "in.jsonl"), SPEC, out, engine="ray", shard_size=400, batch_size=128,
                               progress_bar=False)
        assert read(out) == expected  # same rows, order, rewards and verdicts
        assert remote["verdict"] == local["verdict"] and remote["engine"] == "ray"
        shards = out.with_name("ray.parquet.shards")
        (shards / "shard-00002.parquet").unlink()
        again = score_dataset(str(tmp_path / "in.jsonl"), SPEC, out, engine="ray", shard_size=400, batch_size=128,
                              progress_bar=False)
        assert again["scored_this_run"] == 400 and read(out) == expected
        # an actor pool (what learned rewards use: a model loaded once per actor)
        pooled = score_dataset(str(tmp_path / "in.jsonl"), SPEC, tmp_path / "actors.parquet", engine="ray", shard_size=400,
                               batch_size=128, actors=2, actor_pool=True, progress_bar=False)
        assert read(tmp_path / "actors.parquet") == expected and pooled["scored_this_run"] == 1500
    finally:
        ray.shutdown()
