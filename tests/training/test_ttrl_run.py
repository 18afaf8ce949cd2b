"""TTRL, shortened: on worked arithmetic (many solution paths, so the majority answer of 32
samples beats the greedy one), a warm start trained by `rewardlab sft`, then `rewardlab rl
--reward ttrl` (majority vote, no gold answers in the reward) must raise held-out greedy accuracy.
Full-length numbers and why the direct-answer default task does not allow this: docs/training.md."""

import json

import pytest

from rewardlab.cli import main as rewardlab

TASK = "arithmetic:digits=2,n_terms=3,worked=1"

# The warm start trains 1,000 steps, past the step in the SFT curve (on this machine: 45% at 500 steps,
# 77% at 750, 88% at 1,000): at 600 steps one machine built 74.8% and another 51.0%, from which TTRL
# lost 3-4 points (seeds 0, 1), so the test failed or passed by the machine.
# Measured from the 1,000-step warm start (weights sha256 700682c9..., one 2-core machine), rl seeds 0 and 1:
#   before RL            90.8%  92.0%   (bound 65%)
#   lift (points)        +4.6   +4.0    (bound +2)
#   first-step label acc 0.94   1.00    (bound 0.7)
# Earlier, from a 600-step warm start of 74.8-79.6% (another machine, seeds 0-4): lifts +4.0 to +8.0.
MIN_BEFORE, MIN_LIFT, MIN_LABEL_ACCURACY = 0.65, 0.02, 0.7


@pytest.mark.slow
def test_shortened_ttrl_run_raises_heldout_accuracy(tmp_path):
    sft = tmp_path / "sft"
    assert rewardlab(["sft", "--data", TASK, "--lr", "1e-3", "--steps", "1000", "--output-dir", str(sft)]) == 0
    out = tmp_path / "rl"
    code = rewardlab(["rl", "--model", str(sft / "model"), "--data", TASK, "--reward", "ttrl", "--group-size", "32",
                      "--prompts-per-step", "16", "--max-new-tokens", "21", "--lr", "2e-5", "--steps", "50",
                      "--eval-every", "0", "--checkpoint-every", "0", "--report", "false", "--output-dir", str(out)])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    before, after = summary["accuracy_before"], summary["accuracy_after"]
    assert before >= MIN_BEFORE
    assert after >= before + MIN_LIFT, f"held-out accuracy {before:.1%} -> {after:.1%}"
    first = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert first["reward/label_accuracy"] >= MIN_LABEL_ACCURACY  # the majority label is mostly right: what TTRL needs
