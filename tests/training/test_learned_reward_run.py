"""The learned-reward loop end to end, shortened (docs/training.md#learned-rewards-that-teach has the
full-size run): a warm start on 2-digit addition, its own samples labelled by the verifier
(`rm-data`), a Bradley-Terry RM on the policy's own backbone (`train-rm`), then `rl` with that RM
as the ONLY reward must raise held-out greedy accuracy (the verifier only measures it)."""

import json

import pytest

import training.policy
from rewardlab.cli import main as rewardlab
from training.policy import DefaultPolicySpec, default_policy_path

TASK = ["--data", "arithmetic:digits=2", "--max-new-tokens", "4"]


@pytest.mark.slow
def test_rl_against_a_bt_rm_on_the_policy_backbone_raises_heldout_accuracy(tmp_path, monkeypatch):
    # the same warm start as the shortened default run (cached once per test session)
    monkeypatch.setattr(training.policy, "DEFAULT_POLICY", DefaultPolicySpec(digits=2, lr=3e-3, target_accuracy=0.5, eval_every=50))
    policy = str(default_policy_path())
    data, rm, rl = tmp_path / "data", tmp_path / "rm", tmp_path / "rl"
    assert rewardlab(["rm-data", "--model", policy, *TASK, "--n-prompts", "4000", "--eval-prompts", "300",
                      "--output-dir", str(data)]) == 0
    assert rewardlab(["train-rm", "--kind", "bt", "--backbone", policy, "--data", str(data / "train" / "preference.jsonl"),
                      "--eval-data", str(data / "test" / "samples.jsonl"), "--steps", "1500", "--batch-size", "128",
                      "--lr", "2e-3", "--warmup-steps", "50", "--eval-every", "250", "--save-every", "1500",
                      "--stop-at", "pairwise_accuracy=0.97", "--cpu-threads", "1", "--output", str(rm)]) == 0
    evals = [json.loads(x) for x in (rm / "metrics.jsonl").read_text().splitlines() if '"eval"' in x]
    judged = evals[-1]  # on the policy's own held-out samples
    assert judged["pairwise_accuracy"] >= 0.9 and judged["best_of_n"] >= judged["random_pick"] + 0.25, judged
    assert rewardlab(["rl", "--model", policy, *TASK, "--reward", f"rm:{rm / 'final'}", "--steps", "100",
                      "--prompts-per-step", "32", "--eval-every", "0", "--checkpoint-every", "0", "--report", "false",
                      "--output-dir", str(rl)]) == 0
    summary = json.loads((rl / "summary.json").read_text())
    config = json.loads((rl / "config.json").read_text())
    assert config["kl_coef"] > 0  # the learned reward brought KL to the reference by default
    before, after = summary["accuracy_before"], summary["accuracy_after"]
    assert after >= before + 0.08, f"held-out accuracy {before:.1%} -> {after:.1%}"
    rows = [json.loads(x) for x in (rl / "metrics.jsonl").read_text().splitlines()]
    assert all("ood/rm_frac" in r and "samples" in r for r in rows)  # the monitors ran every step
