"""Checkpoints: a run killed with SIGKILL in the middle of a step resumes from its last complete
checkpoint and ends exactly where an uninterrupted run ends."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

ROOT = Path(__file__).resolve().parents[2]


def rl_cmd(model_dir, out, steps=4, extra=()):
    return [sys.executable, "-m", "rewardlab", "rl", "--model", str(model_dir), "--data", "arithmetic:digits=1",
            "--steps", str(steps), "--prompts-per-step", "6", "--group-size", "4", "--max-new-tokens", "3",
            "--eval-size", "10", "--eval-every", "0", "--checkpoint-every", "2", "--report", "false",
            "--lr", "1e-3", "--num-iterations", "2", "--reward", "length:target=2,coef=1", "--output-dir", str(out), *extra]


def env():
    e = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(ROOT))
    e.setdefault("HF_HUB_OFFLINE", "1")
    return e


def metrics_without_times(path):
    rows = [json.loads(x) for x in Path(path).read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith("time/") and k != "tokens_per_s" and "seconds" not in k} for r in rows]


@pytest.mark.slow
@pytest.mark.parametrize("mode", [(), ("--overlap", "true")], ids=["plain", "overlap"])
def test_sigkill_mid_step_then_resume_matches_an_uninterrupted_run(tiny_dir, tmp_path, mode):
    # with --overlap a step generates the next batch ahead, except on checkpoint steps: the resumed
    # run must still end exactly where the uninterrupted one does
    full = tmp_path / "full"
    subprocess.run(rl_cmd(tiny_dir, full, extra=mode), check=True, env=env(), cwd=ROOT, capture_output=True, timeout=300)

    killed = tmp_path / "killed"
    proc = subprocess.Popen(rl_cmd(tiny_dir, killed, extra=mode), env=env(), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    latest = killed / "checkpoints" / "latest"
    deadline = time.time() + 240
    while not latest.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert latest.exists(), "the run never wrote its first checkpoint"
    os.kill(proc.pid, signal.SIGKILL)  # step 3 is under way: no chance to clean up
    proc.wait()
    assert latest.read_text().strip() == "step-000002"
    assert not (killed / "policy").exists()

    subprocess.run(rl_cmd(tiny_dir, killed, extra=[*mode, "--resume"]), check=True, env=env(), cwd=ROOT,
                   capture_output=True, timeout=300)
    a = load_file(str(full / "policy" / "model.safetensors"))
    b = load_file(str(killed / "policy" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    start = load_file(str(tiny_dir / "model.safetensors"))
    assert not all(torch.equal(a[k], start[k]) for k in a)  # the run did learn something
    assert metrics_without_times(full / "metrics.jsonl") == metrics_without_times(killed / "metrics.jsonl")
    assert [r["step"] for r in metrics_without_times(killed / "metrics.jsonl")] == [1, 2, 3, 4]


@pytest.fixture(scope="module")
def finished_run(tiny_dir, tmp_path_factory):
    """A 4-step run with checkpoints at steps 2 and 4 (latest -> step-000004), and its final policy."""
    out = tmp_path_factory.mktemp("finished") / "run"
    subprocess.run(rl_cmd(tiny_dir, out), check=True, env=env(), cwd=ROOT, capture_output=True, timeout=300)
    return out


def _broken_copy(finished_run, tmp_path, name, damage):
    import shutil

    out = tmp_path / name
    shutil.copytree(finished_run, out)
    shutil.rmtree(out / "policy")
    damage(out / "checkpoints")
    return out


# (case, damage done to checkpoints/ after a finished 4-step run): `rl --resume` must continue from
# step-000002, the newest complete checkpoint, and end with the same weights as the finished run
BROKEN_LATEST = [
    # `latest` names a folder that is gone (deleted, or a copy that missed it)
    ("latest names a missing folder", lambda c: __import__("shutil").rmtree(c / "step-000004")),
    # the newest checkpoint lost an RNG state file: resuming from it would silently diverge
    ("rng state missing", lambda c: (c / "step-000004" / "random_states_0.pkl").unlink()),
    # a truncated file (e.g. a disk that filled up while copying)
    ("optimizer truncated", lambda c: (c / "step-000004" / "optimizer.bin").write_bytes(b"")),
]


@pytest.mark.slow
@pytest.mark.parametrize("damage", [c[1] for c in BROKEN_LATEST], ids=[c[0] for c in BROKEN_LATEST])
def test_resume_falls_back_to_the_newest_complete_checkpoint(tiny_dir, finished_run, tmp_path, damage):
    out = _broken_copy(finished_run, tmp_path, "broken", damage)
    before = (out / "metrics.jsonl").read_text().splitlines()
    proc = subprocess.run(rl_cmd(tiny_dir, out, extra=["--resume"]), env=env(), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "step-000004" in proc.stdout and "resumed from" in proc.stdout and "step-000002" in proc.stdout, proc.stdout
    assert "starting fresh" not in proc.stdout
    after = (out / "metrics.jsonl").read_text().splitlines()
    assert after[:2] == before[:2]  # steps 1 and 2 kept as logged, not rewritten by a fresh start
    assert [json.loads(x)["step"] for x in after] == [1, 2, 3, 4]
    a = load_file(str(finished_run / "policy" / "model.safetensors"))
    b = load_file(str(out / "policy" / "model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)  # continued exactly


@pytest.mark.slow
def test_resume_stops_when_no_checkpoint_is_complete(tiny_dir, finished_run, tmp_path):
    def damage(checkpoints):
        for name in ("step-000002", "step-000004"):
            (checkpoints / name / "random_states_0.pkl").unlink()

    out = _broken_copy(finished_run, tmp_path, "hopeless", damage)
    before = (out / "metrics.jsonl").read_text()
    proc = subprocess.run(rl_cmd(tiny_dir, out, extra=["--resume"]), env=env(), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "no complete checkpoint" in proc.stderr and "random_states_0.pkl" in proc.stderr, proc.stderr[-2000:]
    assert (out / "metrics.jsonl").read_text() == before  # the run was not started over
    assert not (out / "policy").exists()


def test_counters_round_trip_and_an_older_checkpoints_counters_load():
    from training.run_state import Counters

    c = Counters(bad_steps_total=2, prompts_seen=64)
    restored = Counters()
    restored.load_state(json.loads(json.dumps(c.state())))  # as trainer_state.json stores them
    assert restored == c
    older = Counters()
    older.load_state({"bad_steps_total": 1, "bad_steps_in_a_row": 0, "no_signal_steps": 3})  # before prompts_seen was counted
    assert older == Counters(bad_steps_total=1, no_signal_steps=3)
    with pytest.raises(ValueError, match="unknown counter 'bad_step'"):
        Counters().load_state({"bad_step": 1})
