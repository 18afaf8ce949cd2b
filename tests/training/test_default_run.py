"""The embedded default run, shortened: no --model, so the default policy is warm-started by SFT
and cached (here on 2-digit addition, to a 50% held-out target, to keep the test short), then
GRPO with `verifier:math` must raise held-out greedy accuracy, and the report must be written."""

import json

import pytest

import training.policy
from rewardlab.cli import main as rewardlab
from training.policy import DefaultPolicySpec, default_policy_path


@pytest.mark.slow
def test_shortened_default_run_raises_heldout_accuracy(tmp_path, monkeypatch, capsys):
    spec = DefaultPolicySpec(digits=2, lr=3e-3, target_accuracy=0.5, eval_every=50)
    monkeypatch.setattr(training.policy, "DEFAULT_POLICY", spec)
    out = tmp_path / "run"
    code = rewardlab(["rl", "--reward", "verifier:math", "--data", "arithmetic:digits=2", "--steps", "30",
                      "--prompts-per-step", "32", "--max-new-tokens", "4", "--eval-size", "500", "--eval-every", "10",
                      "--checkpoint-every", "0", "--output-dir", str(out)])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    before, after = summary["accuracy_before"], summary["accuracy_after"]
    assert before >= 0.3  # the warm start reached its target (measured on 200 prompts, here 500)
    assert after >= before + 0.05, f"held-out accuracy {before:.1%} -> {after:.1%}"
    stdout = capsys.readouterr().out
    assert "held-out greedy accuracy" in stdout and "points" in stdout
    for name in ("report.md", "report.html", "reward.png", "accuracy.png", "length.png", "metrics.jsonl", "config.json"):
        assert (out / name).exists(), name
    # the warm start is cached: asking again does not retrain
    path = default_policy_path()
    assert path.exists() and json.loads((path / "rewardlab.json").read_text())["sft"]["accuracy"] >= 0.5
