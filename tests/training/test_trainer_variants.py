"""CPU runs of the loop's variants on a tiny random policy: every run must learn (the reward of its
last steps above that of its first), log finite losses and the metrics it promises, and change
the weights it trains and only those."""

import json
import math

import pytest
import torch
from safetensors.torch import load_file

from training.config import RLConfig
from training.trainer import train

BASE = dict(data="arithmetic:digits=1", reward="length:target=2,coef=1", steps=2, prompts_per_step=4, group_size=4,
            max_new_tokens=3, eval_size=8, eval_every=0, checkpoint_every=0, lr=1e-3, report=False)

VARIANTS = [
    # (id, options): one run per loop feature
    ("grpo-default", {}),
    ("dr_grpo-sum-norm-dual-clip", {"estimator": "dr_grpo", "loss_agg": "seq_mean_token_sum_norm", "dual_clip": 3.0}),
    ("rl_zvp-entropy-bonus", {"estimator": "rl_zvp", "entropy_coef": 0.01, "num_iterations": 2}),
    ("ppo-gae-value-head", {"estimator": "gae", "group_size": 1, "num_iterations": 2}),
    ("kl-in-loss-k3", {"kl_coef": 0.1, "kl_estimator": "k3"}),
    ("kl-in-reward-k1-reinforce_pp", {"estimator": "reinforce_pp", "kl_coef": 0.1, "kl_estimator": "k1", "kl_in": "reward"}),
    ("dynamic-sampling-curriculum", {"dynamic_sampling": True, "curriculum": "variance", "curriculum_kappa": 0.1}),
    ("micro-batches-mask-truncated", {"micro_batch_size": 3, "mask_truncated": True, "stop": ("+", "1", "2", "3"), "max_new_tokens": 6}),
    ("lora-grad-checkpointing", {"lora": True, "lora_r": 4, "gradient_checkpointing": True}),
    # scoring overlapped with generation (one step off-policy): with the round structure of dynamic
    # sampling and the curriculum, and with an estimator that needs the sampling policy's entropy / values
    ("overlap-dynamic-sampling-rl_zvp", {"overlap": True, "steps": 3, "dynamic_sampling": True, "curriculum": "variance",
                                         "curriculum_kappa": 0.1, "estimator": "rl_zvp"}),
    ("overlap-ppo-gae", {"overlap": True, "steps": 3, "estimator": "gae", "group_size": 1, "num_iterations": 2}),
]


# long enough to learn: the length reward (0 for at most 2 characters, -0.5 for 3) teaches the random
# policy to stop early; 64 completions per step (64 prompts x 1 for the value-head variants)
LEARN = dict(steps=14, lr=3e-3, prompts_per_step=8, group_size=8, max_constant_steps=0)
WINDOW = 5  # steps averaged at each end
MIN_GAIN = 0.01  # reward gain, last WINDOW steps over the first; seeds 0-2 gave +0.025 (lora) to +0.34


def learning_config(options: dict, **kw) -> dict:
    config = {**BASE, **LEARN, **{k: v for k, v in options.items() if k != "steps"}, **kw}
    if options.get("group_size") == 1:
        config["prompts_per_step"] = LEARN["prompts_per_step"] * LEARN["group_size"]
    return config


@pytest.mark.slow
@pytest.mark.parametrize("name,options", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_variant_runs_and_learns(name, options, tiny_dir, tmp_path):
    out = tmp_path / "run"
    summary = train(RLConfig(model=str(tiny_dir), output_dir=out, **learning_config(options)))
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    trained = [r for r in rows if "loss" in r]
    assert trained and all(math.isfinite(r["loss"]) and math.isfinite(r["entropy"]) for r in trained)
    rewards = [r["reward/mean"] for r in trained]
    early, late = sum(rewards[:WINDOW]) / WINDOW, sum(rewards[-WINDOW:]) / WINDOW
    assert late > early + MIN_GAIN, f"reward {early:.3f} -> {late:.3f}: {rewards}"
    for key in ("reward/mean", "reward/std", "clip_frac", "approx_kl", "kl", "length/mean", "zero_variance_frac",
                "tokens_per_s", "time/generate", "time/score", "time/train"):
        assert key in trained[0], key
    if options.get("kl_coef"):
        assert any(r["kl"] != 0 for r in trained)  # the reference model is loaded and used
    start = load_file(str(tiny_dir / "model.safetensors"))
    if options.get("lora"):
        adapters = load_file(str(out / "policy" / "adapter_model.safetensors"))
        assert any(v.abs().sum() > 0 for k, v in adapters.items() if "lora_B" in k)  # B starts at 0: the adapters moved
        # the last checkpoint holds the whole model: every base weight is still the initial one
        last = torch.load(next((out / "checkpoints").glob("step-*")) / "pytorch_model.bin", weights_only=True)
        base = {k.removeprefix("base_model.model.").replace(".base_layer", ""): v for k, v in last.items() if "lora_" not in k}
        assert start.keys() <= base.keys() and all(torch.equal(base[k], start[k]) for k in start)
    else:
        end = load_file(str(out / "policy" / "model.safetensors"))
        assert any(not torch.equal(start[k], end[k]) for k in start)
    assert summary["steps"] == LEARN["steps"]
    assert (out / "config.json").exists()


def test_no_reference_model_is_loaded_when_the_kl_weight_is_zero(tiny_dir, tmp_path, monkeypatch):
    import training.policy

    calls = []
    real = training.policy.load_policy
    monkeypatch.setattr(training.policy, "load_policy", lambda *a, **k: calls.append(a) or real(*a, **k))
    train(RLConfig(model=str(tiny_dir), output_dir=tmp_path / "r", **{**BASE, "steps": 1}))
    assert len(calls) == 1  # the policy only


DENSE_REWARD = '''
from rewards.base import RewardOutput

def stepwise(prompts, completions, **columns):
    """+0.5 at the end of each character of the completion that is a digit: a dense reward."""
    steps = [[0.5 for ch in c if ch.isdigit()] for c in completions]
    ends = [[i + 1 for i, ch in enumerate(c) if ch.isdigit()] for c in completions]
    return RewardOutput(totals=[sum(s) for s in steps], step_rewards=steps, step_ends=ends)
'''


@pytest.mark.slow
@pytest.mark.parametrize("estimator", ["reinforce_pp", "gae"])
def test_dense_rewards_drive_token_level_estimators(estimator, tiny_dir, tmp_path, monkeypatch):
    (tmp_path / "dense_reward_mod.py").write_text(DENSE_REWARD)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    train(RLConfig(model=str(tiny_dir), output_dir=out, **{**BASE, "reward": "dense_reward_mod:stepwise",
                                                            "estimator": estimator, "group_size": 1 if estimator == "gae" else 4}))
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert all(math.isfinite(r["loss"]) for r in rows) and rows[0]["reward/mean"] >= 0
    start = load_file(str(tiny_dir / "model.safetensors"))
    end = load_file(str(out / "policy" / "model.safetensors"))
    assert any(not torch.equal(start[k], end[k]) for k in start)
