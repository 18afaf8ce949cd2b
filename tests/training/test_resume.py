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
def test_sigkill_mid_step_then_resume_matches_an_uninterrupted_run(tiny_dir, tmp_path):
    full = tmp_path / "full"
    subprocess.run(rl_cmd(tiny_dir, full), check=True, env=env(), cwd=ROOT, capture_output=True, timeout=300)

    killed = tmp_path / "killed"
    proc = subprocess.Popen(rl_cmd(tiny_dir, killed), env=env(), cwd=ROOT,
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

    subprocess.run(rl_cmd(tiny_dir, killed, extra=["--resume"]), check=True, env=env(), cwd=ROOT,
                   capture_output=True, timeout=300)
    a = load_file(str(full / "policy" / "model.safetensors"))
    b = load_file(str(killed / "policy" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    start = load_file(str(tiny_dir / "model.safetensors"))
    assert not all(torch.equal(a[k], start[k]) for k in a)  # the run did learn something
    assert metrics_without_times(full / "metrics.jsonl") == metrics_without_times(killed / "metrics.jsonl")
    assert [r["step"] for r in metrics_without_times(killed / "metrics.jsonl")] == [1, 2, 3, 4]
