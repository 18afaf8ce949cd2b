"""Losses: hand-computed values and the signs of their gradients."""

from __future__ import annotations

import math

import pytest
import torch

from reward_models.losses import bt_loss, pinball_loss, quantile_bt_loss, step_bce_loss


def _sig(x: float) -> float:
    return 1 / (1 + math.exp(-x))


@pytest.mark.parametrize(
    "chosen, rejected, margin, center, expected",
    [
        ([1.0], [1.0], None, 0.0, math.log(2)),  # equal rewards: -log sigmoid(0) = log 2
        ([2.0], [0.0], None, 0.0, -math.log(_sig(2.0))),  # gap 2
        ([2.0], [0.0], [1.0], 0.0, -math.log(_sig(1.0))),  # margin 1 shrinks the gap to 1
        ([1.0], [0.0], None, 0.5, -math.log(_sig(1.0)) + 0.5 * 1.0),  # centring: 0.5 * (1 + 0)^2
        ([0.0, 3.0], [1.0, 1.0], None, 0.0, (-math.log(_sig(-1.0)) - math.log(_sig(2.0))) / 2),  # mean over pairs
    ],
)
def test_bt_loss_values(chosen, rejected, margin, center, expected):
    loss, stats = bt_loss(torch.tensor(chosen), torch.tensor(rejected), None if margin is None else torch.tensor(margin), center)
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    assert stats["accuracy"] == pytest.approx(sum(c > r for c, r in zip(chosen, rejected)) / len(chosen))


def test_bt_loss_gradient_signs():
    chosen = torch.tensor([0.3], requires_grad=True)
    rejected = torch.tensor([0.5], requires_grad=True)
    bt_loss(chosen, rejected)[0].backward()
    # d/dr_c = -(1 - sigmoid(-0.2)) < 0: raising the chosen reward lowers the loss; the rejected one is the mirror
    assert chosen.grad.item() == pytest.approx(-(1 - _sig(-0.2)), rel=1e-5)
    assert rejected.grad.item() == pytest.approx(1 - _sig(-0.2), rel=1e-5)


def test_centring_gradient_pulls_toward_zero():
    chosen = torch.tensor([5.0], requires_grad=True)
    rejected = torch.tensor([4.0], requires_grad=True)
    loss, _ = bt_loss(chosen, rejected, center_coef=0.01)
    loss.backward()
    # centring adds 0.01 * 2 * (5 + 4) = 0.18 to both gradients: both rewards move down
    assert rejected.grad.item() == pytest.approx(1 - _sig(1.0) + 0.18, rel=1e-5)
    assert chosen.grad.item() == pytest.approx(-(1 - _sig(1.0)) + 0.18, rel=1e-5)


@pytest.mark.parametrize(
    "q, y, taus, expected",
    [
        ([[[0.0, 1.0]]], [[2.0]], [0.25, 0.75], (0.25 * 2 + 0.75 * 1) / 2),  # y above both: tau * u
        ([[[0.0, 1.0]]], [[-1.0]], [0.25, 0.75], (0.75 * 1 + 0.25 * 2) / 2),  # y below both: (1 - tau) * |u|
        ([[[0.0, 1.0]]], [[0.5]], [0.25, 0.75], (0.25 * 0.5 + 0.25 * 0.5) / 2),  # y between: both sides
        ([[[1.0]]], [[1.0]], [0.5], 0.0),  # exact hit costs nothing
    ],
)
def test_pinball_values(q, y, taus, expected):
    loss, _ = pinball_loss(torch.tensor(q), torch.tensor(y), torch.tensor(taus))
    assert loss.item() == pytest.approx(expected, rel=1e-6)


def test_pinball_gradient_signs_and_mask():
    q = torch.tensor([[[0.0, 0.0]], [[9.0, 9.0]]], requires_grad=True)  # [N=2, A=1, K=2]
    y = torch.tensor([[1.0], [100.0]])
    mask = torch.tensor([[1.0], [0.0]])  # second item unobserved: no loss, no gradient
    loss, _ = pinball_loss(q, y, torch.tensor([0.1, 0.9]), mask)
    loss.backward()
    # quantiles below the target get a negative gradient (gradient descent raises them): -tau / K
    assert q.grad[0, 0].tolist() == pytest.approx([-0.1 / 2, -0.9 / 2])
    assert q.grad[1].abs().sum().item() == 0.0
    assert loss.item() == pytest.approx((0.1 + 0.9) / 2)


def test_pinball_minimiser_is_the_quantile():
    # the loss over a sample is smallest at the empirical quantile: compare q = 3 with q = 2 and 4
    ys = torch.tensor([[1.0], [2.0], [3.0], [4.0], [5.0]])
    def total(v: float) -> float:
        return pinball_loss(torch.full((5, 1, 1), v), ys, torch.tensor([0.5]))[0].item()
    assert total(3.0) < total(2.0) and total(3.0) < total(4.0)


def test_quantile_bt_uses_the_means():
    c = torch.tensor([[0.0, 2.0]])  # mean 1
    r = torch.tensor([[0.0, 0.0]])  # mean 0
    loss, _ = quantile_bt_loss(c, r)
    assert loss.item() == pytest.approx(-math.log(_sig(1.0)), rel=1e-6)


def test_step_bce_ignores_unlabelled_tokens():
    logits = torch.tensor([[0.0, 5.0, -5.0, 0.0]], requires_grad=True)
    labels = torch.tensor([[-100.0, 1.0, 0.0, -100.0]])
    loss, stats = step_bce_loss(logits, labels)
    assert loss.item() == pytest.approx(-math.log(_sig(5.0)), rel=1e-5)  # both labelled tokens are right at margin 5
    assert stats["step_accuracy"] == 1.0
    loss.backward()
    assert logits.grad[0, 0] == 0 and logits.grad[0, 3] == 0  # no gradient off the step ends
    assert logits.grad[0, 1] < 0 < logits.grad[0, 2]  # push the correct step up, the wrong one down


def test_step_bce_with_no_label_explains():
    with pytest.raises(ValueError, match="max-length"):
        step_bce_loss(torch.zeros(1, 3), torch.full((1, 3), -100.0))
