"""Reward-model losses: pure tensor functions, `(tensors...) -> (loss, stats)`.

Every function is differentiable in its score arguments and returns a scalar loss plus a dict
of detached diagnostics (floats), so a trainer logs them as they are.

>>> import torch
>>> loss, stats = bt_loss(torch.tensor([1.0]), torch.tensor([1.0]))
>>> round(loss.item(), 4)   # -log sigmoid(0) = log 2
0.6931
>>> q = torch.tensor([[[0.0, 1.0]]])            # [N=1, A=1, K=2]
>>> loss, _ = pinball_loss(q, torch.tensor([[2.0]]), torch.tensor([0.25, 0.75]))
>>> round(loss.item(), 4)   # mean(0.25 * 2, 0.75 * 1)
0.625
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def bt_loss(
    chosen: torch.Tensor,  # [N] reward of the chosen response
    rejected: torch.Tensor,  # [N] reward of the rejected response
    margin: torch.Tensor | None = None,  # [N] required gap (0 when None)
    center_coef: float = 0.0,  # weight c of the centring term c * mean((r_c + r_r)^2)
    soft: torch.Tensor | None = None,  # [N] P(chosen is better) to fit instead of 1 (None: 1, hard labels)
) -> tuple[torch.Tensor, dict[str, float]]:
    """Bradley-Terry: mean(-log sigmoid(r_c - r_r - margin)) + c * mean((r_c + r_r)^2).

    The centring term pulls the reward scale to zero mean without changing the ranking. With
    `soft` labels p the nll is the cross-entropy -(p log sigmoid(d) + (1 - p) log sigmoid(-d)),
    whose minimum is at the finite gap d = logit(p), where hard labels push d without bound.
    """
    chosen, rejected = chosen.float(), rejected.float()  # fp32 under autocast: the log-sigmoid and the means
    diff = chosen - rejected  # [N]
    if margin is not None:
        diff = diff - margin
    if soft is None:
        nll = -F.logsigmoid(diff).mean()
    else:
        p = soft.to(diff)
        nll = -(p * F.logsigmoid(diff) + (1 - p) * F.logsigmoid(-diff)).mean()
    center = ((chosen + rejected) ** 2).mean()
    loss = nll + center_coef * center if center_coef else nll
    with torch.no_grad():
        stats = {
            "bt_nll": nll.item(),
            "center": center.item(),
            "accuracy": (chosen > rejected).float().mean().item(),
            "reward_gap": (chosen - rejected).mean().item(),
        }
    return loss, stats


def pinball_loss(
    quantiles: torch.Tensor,  # [N, A, K] predicted quantiles per attribute, ascending in K
    targets: torch.Tensor,  # [N, A] observed score per attribute
    taus: torch.Tensor,  # [K] quantile levels in (0, 1)
    mask: torch.Tensor | None = None,  # [N, A] 1 where the target exists (None = all)
) -> tuple[torch.Tensor, dict[str, float]]:
    """Quantile (pinball) loss rho_tau(u) = u * (tau - 1[u < 0]) with u = y - q_tau, averaged
    over levels and observed (item, attribute) pairs. Its minimiser is the tau-quantile of y."""
    quantiles, targets = quantiles.float(), targets.float()  # fp32 under autocast: the pinball sums
    u = targets.unsqueeze(-1) - quantiles  # [N, A, K]
    rho = u * (taus.to(u) - (u < 0).to(u))  # [N, A, K], >= 0
    per_target = rho.mean(-1)  # [N, A]
    if mask is None:
        mask = torch.ones_like(per_target)
    mask = mask.to(per_target)
    loss = (per_target * mask).sum() / mask.sum().clamp(min=1.0)
    with torch.no_grad():
        inside = ((targets >= quantiles[..., 0]) & (targets <= quantiles[..., -1])).to(mask)
        stats = {
            "pinball": loss.item(),
            "coverage": ((inside * mask).sum() / mask.sum().clamp(min=1.0)).item(),  # share of y in [q_lo, q_hi]
        }
    return loss, stats


def quantile_bt_loss(
    chosen_quantiles: torch.Tensor,  # [N, K] mixed quantiles of the chosen response
    rejected_quantiles: torch.Tensor,  # [N, K] mixed quantiles of the rejected response
    margin: torch.Tensor | None = None,  # [N]
    center_coef: float = 0.0,
    soft: torch.Tensor | None = None,  # [N]
) -> tuple[torch.Tensor, dict[str, float]]:
    """Bradley-Terry on the distributions' means (the mean of the quantiles)."""
    return bt_loss(chosen_quantiles.mean(-1), rejected_quantiles.mean(-1), margin, center_coef, soft)


def step_bce_loss(
    logits: torch.Tensor,  # [N, T] per-token logits of "this step is correct"
    labels: torch.Tensor,  # [N, T] 1.0 / 0.0 on each step's last token, -100 elsewhere
) -> tuple[torch.Tensor, dict[str, float]]:
    """Binary cross-entropy on labelled tokens only (the last token of each step)."""
    keep = labels != -100  # [N, T]
    if not keep.any():
        raise ValueError("no labelled step in the batch: every step was truncated away; raise --max-length")
    z = logits[keep].float()  # [M], fp32 under autocast: the BCE's log-sigmoid and mean
    y = labels[keep].to(z)
    loss = F.binary_cross_entropy_with_logits(z, y)
    with torch.no_grad():
        stats = {"step_bce": loss.item(), "step_accuracy": ((z > 0).to(y) == y).float().mean().item()}
    return loss, stats
