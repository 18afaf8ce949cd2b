"""Policy loss, aggregations, value loss and KL estimators against hand-computed values."""

import math

import pytest
import torch

from training.kl import KL
from training.losses import AGGREGATIONS, BatchNorm, approx_kl, clipped_surrogate, clipped_value_loss

LOSS_CASES = [
    # (ratio, advantage, clip_low, clip_high, dual_clip, expected loss, clipped?)
    (2.0, 1.0, 0.2, 0.28, None, -1.28, 1.0),  # positive A, ratio above 1+eps_high: clipped at 1.28
    (1.1, 1.0, 0.2, 0.28, None, -1.1, 0.0),  # inside the band: plain -A*ratio
    (0.5, 1.0, 0.2, 0.28, None, -0.5, 0.0),  # positive A, low ratio: the pessimistic (unclipped) term wins
    (0.5, -1.0, 0.2, 0.28, None, 0.8, 1.0),  # negative A, ratio below 1-eps_low: clipped at 0.8
    (5.0, -1.0, 0.2, 0.28, None, 5.0, 0.0),  # negative A, huge ratio: unbounded without dual clip
    (5.0, -1.0, 0.2, 0.28, 3.0, 3.0, 0.0),  # dual clip caps it at c * |A| = 3
    (5.0, 1.0, 0.2, 0.28, 3.0, -1.28, 1.0),  # dual clip does not touch positive advantages
]


@pytest.mark.parametrize("ratio,adv,lo,hi,dual,expected,clipped", LOSS_CASES)
def test_clipped_surrogate(ratio, adv, lo, hi, dual, expected, clipped):
    old = torch.tensor([[math.log(0.1)]])
    new = old + math.log(ratio)
    loss, was_clipped = clipped_surrogate(new, old, torch.tensor([[adv]]), lo, hi, dual)
    assert loss.item() == pytest.approx(expected, abs=1e-5)
    assert was_clipped.item() == clipped


X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 9.0, 9.0]])
MASK = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])  # the 9s are padding
AGG_CASES = [
    ("token_mean", 10 / 4),  # (1+2+3+4) / 4 tokens
    ("seq_mean_token_mean", (2 + 4) / 2),  # per-sequence means 2 and 4
    ("seq_mean_token_sum_norm", 10 / (2 * 3)),  # sum / (2 sequences * max length 3)
]


@pytest.mark.parametrize("name,expected", AGG_CASES)
def test_aggregations(name, expected):
    assert AGGREGATIONS[name](X, MASK, BatchNorm.of(MASK)).item() == pytest.approx(expected)


@pytest.mark.parametrize("name", sorted(AGGREGATIONS))
def test_micro_batches_sum_to_the_full_batch_loss(name):
    # gradient accumulation must not change the loss: normalisers come from the whole batch
    norm = BatchNorm.of(MASK)
    full = AGGREGATIONS[name](X, MASK, norm)
    parts = AGGREGATIONS[name](X[:1], MASK[:1], norm) + AGGREGATIONS[name](X[1:], MASK[1:], norm)
    assert parts.item() == pytest.approx(full.item())


def test_clipped_value_loss():
    # V=1, V_old=0, R=2, clip .2: unclipped (1-2)^2 = 1, clipped V=.2 -> (1.8)^2 = 3.24; 0.5 * max = 1.62
    out = clipped_value_loss(torch.tensor([[1.0]]), torch.tensor([[0.0]]), torch.tensor([[2.0]]), 0.2)
    assert out.item() == pytest.approx(1.62)


KL_CASES = [
    # (logprob, ref_logprob, estimator, expected): log r = ref - logprob
    (0.0, -1.0, "k1", 1.0),
    (0.0, -1.0, "k2", 0.5),
    (0.0, -1.0, "k3", math.exp(-1) - 1 + 1),  # r = e^-1: r - 1 - log r
    (-1.0, 0.0, "k1", -1.0),  # k1 can be negative per token
    (-1.0, 0.0, "k3", math.e - 1 - 1),
    (-0.3, -0.3, "k3", 0.0),  # identical policies
    (0.0, -100.0, "k3", math.exp(-10) - 1 + 10),  # log-ratio clamped to [-10, 10]
]


@pytest.mark.parametrize("lp,ref,name,expected", KL_CASES)
def test_kl_estimators(lp, ref, name, expected):
    assert KL[name](torch.tensor([[lp]]), torch.tensor([[ref]])).item() == pytest.approx(expected, rel=1e-5)


def test_approx_kl_is_zero_on_policy_and_positive_off_policy():
    lp = torch.tensor([[-1.0, -2.0]])
    assert approx_kl(lp, lp).abs().max().item() == 0.0
    assert (approx_kl(lp + 0.1, lp) > 0).all()
