"""`rl` fails early and clearly instead of training on nothing (issue 14's measured items):
all-None and constant rewards stop the run naming the reward and a sample; empty files and missing
local paths are one-line errors; an existing run folder is refused unless --resume / --overwrite,
and a failed run leaves the previous run's config.json alone; the default character-level policy
refuses prompts it cannot read."""

from __future__ import annotations

import json
import time

import pytest

from rewardlab.cli import main
from training.config import RLConfig
from training.monitors import ConstantReward, StepView
from training.guards import TrainingStopped
from training.trainer import train

TINY = ["--prompts-per-step", "2", "--group-size", "2", "--max-new-tokens", "2", "--eval-size", "2",
        "--eval-every", "0", "--checkpoint-every", "0", "--report", "false", "--probe-size", "0"]


def _rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


# ---------------------------------------------------------------- all-None / constant rewards stop the run
def _view(totals, step, metrics=None):
    return StepView(step=step, prompts=["1+1="] * len(totals), completions=["2"] * len(totals), totals=totals, gold=None,
                    metrics=metrics or {}, group_size=2)


@pytest.mark.parametrize("totals, none_steps, const_steps, stops_at", [
    ([None] * 4, 2, 0, 2),  # nothing applicable: stops after 2 steps in a row
    ([0.0] * 4, 0, 3, 3),  # one value everywhere: stops after 3
    ([None, 1.0, 0.0, None], 2, 3, None),  # a few None: training goes on
    ([0.0, 1.0, 0.0, 0.0], 2, 3, None),  # a spread: training goes on
    ([None] * 4, 0, 0, None),  # both checks off
])
def test_constant_reward_monitor_says_when_to_stop(totals, none_steps, const_steps, stops_at):
    mon = ConstantReward("verifier_code", max_none_steps=none_steps, max_constant_steps=const_steps)
    stopped = None
    for step in range(1, 6):
        mon(_view(totals, step, {"verdict/bad_gold": 4.0}))
        if mon.stop_reason and stopped is None:
            stopped = step
    assert stopped == stops_at
    if stops_at:
        assert "reward 'verifier_code'" in mon.stop_reason and "prompt='1+1='" in mon.stop_reason
        assert "verdict/bad_gold=4" in mon.stop_reason  # its metrics say why


def test_rl_stops_when_every_reward_is_none(tiny_dir, tmp_path, capsys):
    """Before: every item BAD_GOLD, every reward None, `rl` printed "done" with reward/mean 0.0."""
    data = _rows(tmp_path / "bad_gold.jsonl", [{"prompt": f"{i}+1=", "answer": "\\frac{"} for i in range(8)])
    out = tmp_path / "run"
    code = main(["rl", "--model", str(tiny_dir), "--data", data, "--output-dir", str(out), "--accuracy-reward", "none", "--steps", "4", *TINY])
    err = capsys.readouterr().err
    assert code == 1 and "done" not in capsys.readouterr().out
    assert "reward 'verifier_math' was None (not applicable) for all 4 completions in 2 steps in a row" in err
    assert "verdict/bad_gold=4" in err and "A sample: prompt=" in err
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["monitor/none_frac"] for r in rows] == [1.0, 1.0]  # logged as what it is, not as a reward of 0


def test_rl_stops_after_too_many_constant_steps(tiny_dir, tmp_path):
    cfg = RLConfig(model=str(tiny_dir), data="arithmetic:digits=1", reward="length:target=100,coef=0", max_constant_steps=2,
                   steps=5, prompts_per_step=2, group_size=2, max_new_tokens=2, eval_size=2, eval_every=0, checkpoint_every=0,
                   report=False, probe_size=0, output_dir=tmp_path / "run")
    with pytest.raises(TrainingStopped, match=r"reward 'length' was 0 for all 4 completions in 2 steps in a row \(steps 1-2\)"):
        train(cfg)


# ---------------------------------------------------------------- empty files, missing paths
@pytest.mark.parametrize("flag", ["--data", "--eval-data"])
def test_empty_and_missing_files_are_one_line_errors(tiny_dir, tmp_path, capsys, flag):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    other = [] if flag == "--data" else ["--data", _rows(tmp_path / "ok.jsonl", [{"prompt": "1+1=", "answer": "2"}])]
    for path, message in ((str(empty), "the file is empty"), ("./no/such/prompts.jsonl", "no such file"),
                          ("runs/data/x.jsonl", "no such file")):
        start = time.perf_counter()
        code = main(["rl", "--model", str(tiny_dir), flag, path, *other, "--output-dir", str(tmp_path / "r"), "--steps", "1", *TINY])
        err = capsys.readouterr().err
        assert code == 2 and f"{flag} {path!r}: {message}" in err, err
        assert "Traceback" not in err and "StopIteration" not in err
        assert time.perf_counter() - start < 10  # no hub retries for a local path


# ---------------------------------------------------------------- the run folder
def test_an_existing_run_folder_is_refused_and_its_config_kept(tiny_dir, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["rl", "--model", str(tiny_dir), "--data", "arithmetic:digits=1", "--reward", "length:target=2,coef=1",
            "--output-dir", str(out), "--steps", "1", *TINY]
    assert main(args) == 0
    config = (out / "config.json").read_text()
    metrics = (out / "metrics.jsonl").read_text()
    code = main([*args, "--lr", "0.5"])  # a second run into the same folder
    assert code == 2 and "already holds a run (config.json, metrics.jsonl, summary.json, checkpoints, policy)" in capsys.readouterr().err
    assert (out / "config.json").read_text() == config and (out / "metrics.jsonl").read_text() == metrics
    # a run that fails (a reward that raises) with --overwrite still never leaves a stale mix: the old run is gone
    bad = ["rl", "--model", str(tiny_dir), "--data", "arithmetic:digits=1", "--reward", "tests.rewards.user_reward:raises",
           "--output-dir", str(out), "--overwrite", "--steps", "1", *TINY]
    assert main(bad) == 1
    assert json.loads((out / "config.json").read_text())["reward"] == "tests.rewards.user_reward:raises"
    assert not (out / "policy").exists() and not (out / "summary.json").exists()
    # --overwrite replaces it
    assert main([*args, "--overwrite", "--lr", "0.001"]) == 0
    assert json.loads((out / "config.json").read_text())["lr"] == 0.001


def test_resume_keeps_the_config_of_the_run_it_continues(tiny_dir, tmp_path):
    out = tmp_path / "run"
    def args(steps):
        return ["rl", "--model", str(tiny_dir), "--data", "arithmetic:digits=1", "--reward", "length:target=2,coef=1",
                "--output-dir", str(out), *TINY, "--steps", str(steps), "--checkpoint-every", "1"]

    assert main(args(2)) == 0
    before = (out / "config.json").read_text()
    assert main([*args(3), "--resume"]) == 0
    assert (out / "config.json").read_text() == before  # the config of the run that made metrics 1-2
    assert json.loads((out / "config.resume-step-000002.json").read_text())["steps"] == 3
    with pytest.raises(ValueError, match="pass one of them"):
        RLConfig(resume=True, overwrite=True)


# ---------------------------------------------------------------- the default policy's vocabulary
def test_the_default_policy_refuses_prompts_it_cannot_read(tmp_path, capsys):
    data = _rows(tmp_path / "english.jsonl", [{"question": "How many clips did Natalia sell?", "answer": "72"}])
    code = main(["rl", "--data", data, "--output-dir", str(tmp_path / "r"), *TINY])
    err = capsys.readouterr().err
    assert code == 2 and "the default policy is a tiny character-level model for arithmetic" in err
    assert "would become <unk>" in err and "Pass --model" in err
