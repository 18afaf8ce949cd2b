"""The quantile RM: its ranking term compares responses (not single ratings), and on a task with a
known spread its quantiles are ordered and calibrated on held-out draws."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from reward_models import load_reward_model
from reward_models.batches import same_prompt_pairs
from reward_models.metrics import quantile_calibration
from reward_models.train import TrainRMConfig, train

RATERS = 5  # draws of the target per response, like a panel's ratings


def _draw(kind: str, rng: random.Random) -> float:
    """The known distribution of each response's target: a wide one, one with a fifth of its
    mass at the floor (a rater who hates it), and a narrow one."""
    if kind == "wide":
        return rng.uniform(0.0, 1.0)
    if kind == "floored":
        return 0.0 if rng.random() < 0.2 else rng.uniform(0.6, 1.0)
    return rng.gauss(0.3, 0.05)


KINDS = ("wide", "floored", "narrow")


def _rows(n_prompts: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [{"prompt": f"q{seed}-{i}=", "response": kind, "y": _draw(kind, rng), "rater": k}
            for i in range(n_prompts) for kind in KINDS for k in range(RATERS)]


def test_ranking_pairs_are_responses_ordered_by_their_mean_and_weighted_by_the_gap():
    # one prompt: response A rated 1.0 and 0.2 by two raters (mean 0.6), B rated 0.5, C rated 0.5; another prompt: D
    rows = [{"prompt_key": "p", "input_ids": ids, "targets": [t]}
            for ids, t in [((1, 5), 1.0), ((1, 5), 0.2), ((1, 6), 0.5), ((1, 7), 0.5), ((1, 8), 0.9)]]
    rows[-1]["prompt_key"] = "other"
    better, worse, gap = same_prompt_pairs(rows)
    pairs = sorted(zip(better.tolist(), worse.tolist(), [round(g, 6) for g in gap.tolist()]))
    # A (row 0) above B and C by 0.1 each; never A against itself (raters 1.0 vs 0.2), never B against C (a tie),
    # never across prompts
    assert pairs == [(0, 2, 0.1), (0, 3, 0.1)]


def _fit(tmp_path, backbone, name, rank_coef, steps):
    train_path, held_path = tmp_path / "train.jsonl", tmp_path / "held.jsonl"
    train_path.write_text("".join(json.dumps(r) + "\n" for r in _rows(60, seed=0)))
    held = _rows(40, seed=1)  # other prompts, other draws
    held_path.write_text("".join(json.dumps(r) + "\n" for r in held))
    cfg = TrainRMConfig(kind="quantile", backbone=backbone, data=str(train_path), eval_data=str(held_path), score_columns=("y",),
                        output=str(tmp_path / name), steps=steps, batch_size=30, lr=5e-3, warmup_steps=10, eval_every=steps,
                        save_every=steps, log_every=50, max_seq_length=16, seed=0, rank_coef=rank_coef)
    result = train(cfg, progress=False)
    scores = load_reward_model(result["final"], device="cpu").score([r["prompt"] for r in held], [r["response"] for r in held])
    q = np.array([s.quantiles for s in scores])  # [N, 19]
    return result, held, np.array(scores[0].taus), q


@pytest.mark.slow
def test_quantiles_are_ordered_and_calibrated_on_a_task_with_known_spread(tmp_path, tiny_backbone):
    """Measured (seed 0) on a Xeon: the default (ranking term on) after 300 steps: calibration error 0.08;
    quantile regression alone after 600 steps: 0.03, each kind's quantiles within 0.05 of the true
    ones away from the floored kind's jump; 150 steps leave 0.13 (not yet fitted). On an AMD EPYC
    (other kernels, other rounding), over seeds 0-4 of data and training: default 0.080-0.147,
    pinball alone 0.047-0.085 (0.050-0.094 with 200 held-out prompts: the spread is the fit's, not
    the held-out draw's); pinball alone, the largest gap of a kind's mean quantiles to the true ones:
    wide 0.060-0.100, narrow 0.010-0.042; the floored kind's q_0.10 0.044-0.214 and q_0.35 0.559-0.660
    (1,200 steps do not do better). The bounds sit above every measured run of both CPUs: calibration
    0.20 and 0.12, quantiles within 0.15, q_0.10 of the floored kind below 0.3 with q_0.35 above 0.5
    (its lower tail far below its bulk, 0.6-1.0)."""
    result, held, taus, q = _fit(tmp_path, tiny_backbone, "default", rank_coef=1.0, steps=300)
    assert (np.diff(q, axis=1) >= 0).all()  # ordered
    calibration = quantile_calibration(taus, q, np.array([r["y"] for r in held]))
    assert calibration["error"] <= 0.20, calibration
    assert result["eval"]["calibration_error/y"] == pytest.approx(calibration["error"], abs=1e-6)

    _, held, taus, q = _fit(tmp_path, tiny_backbone, "pinball", rank_coef=0.0, steps=600)
    assert quantile_calibration(taus, q, np.array([r["y"] for r in held]))["error"] <= 0.12
    normal = torch.distributions.Normal(0.3, 0.05)
    for kind, true in (("wide", taus), ("narrow", normal.icdf(torch.tensor(taus)).numpy())):
        mine = q[[r["response"] == kind for r in held]].mean(0)
        assert np.abs(mine - true).max() < 0.15, (kind, mine.round(2))
    floored = q[[r["response"] == "floored" for r in held]].mean(0)
    assert floored[1] < 0.3 and floored[6] > 0.5  # q_0.10 near the floor, q_0.35 in the bulk: the floor's fifth is the tail
