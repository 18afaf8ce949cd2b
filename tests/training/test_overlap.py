"""`rl --overlap`: scoring on a background thread while the next batch is generated and the current
one trains (one step off-policy, the ratio taken to the sampling policy)."""

import json

import pytest

from training.config import RLConfig
from training.collect import generates_ahead
from training.trainer import train

BASE = dict(data="arithmetic:digits=1", steps=4, prompts_per_step=4, group_size=4, max_new_tokens=3, eval_size=8,
            eval_every=0, checkpoint_every=0, lr=1e-2, report=False, probe_size=0)
SLOW = "tests.rewards.user_reward:slow_length"  # 0.2 s per call: scoring dominates these tiny steps


def metrics(out):
    return [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("step,checkpoint_every,expected", [
    (1, 0, True),   # generates step 2's batch while step 1 trains
    (2, 2, False),  # a checkpoint step: the checkpoint must not hold a batch generated ahead
    (3, 2, True),
    (4, 0, False),  # the last step: there is no next batch
])
def test_which_steps_generate_ahead(step, checkpoint_every, expected):
    config = RLConfig(**{**BASE, "checkpoint_every": checkpoint_every, "overlap": True})
    assert generates_ahead(config, step) is expected
    assert generates_ahead(RLConfig(**{**BASE, "checkpoint_every": checkpoint_every}), step) is False  # off by default


@pytest.mark.slow
def test_scoring_is_hidden_behind_generation_and_training(tiny_dir, tmp_path):
    train(RLConfig(model=str(tiny_dir), output_dir=tmp_path / "plain", reward=SLOW, **BASE))
    train(RLConfig(model=str(tiny_dir), output_dir=tmp_path / "overlap", reward=SLOW, overlap=True, **BASE))
    plain, overlapped = metrics(tmp_path / "plain"), metrics(tmp_path / "overlap")
    for r in plain:  # without overlap the loop waits for all of the scoring
        assert r["time/score_wait"] == pytest.approx(r["time/score"]) and r["time/overlap"] == 0.0
        assert r["approx_kl"] == 0.0  # on-policy, one pass: the ratio is exactly 1
    later = overlapped[1:]  # step 1's batch had nothing to hide behind
    assert all(r["time/score"] >= 0.2 for r in overlapped)
    assert all(r["time/overlap"] > 0.01 and r["time/score_wait"] < r["time/score"] for r in later), later
    # the batch of step t was sampled before update t-1: the ratio to the sampling policy is not 1
    assert all(r["approx_kl"] > 0 for r in later)
    assert overlapped[0]["approx_kl"] == pytest.approx(0.0, abs=1e-6)  # step 1's batch comes from the current policy
    # step 1 is the same in both runs: same prompts, same samples, same update
    for key in ("reward/mean", "loss", "length/mean"):
        assert overlapped[0][key] == pytest.approx(plain[0][key], rel=1e-5), key
