"""Advantage estimators: pure tensor functions, chosen by name from `ESTIMATORS`.

Every estimator has the same signature

    fn(rewards [N, T], mask [N, T], group_size, **params) -> advantages [N, T]

`rewards` is token-level: a sequence reward sits on the completion's last token and a dense (PRM)
reward's step values on the tokens where the steps end, so the sequence reward is `rewards.sum(-1)`.
Rows are grouped in consecutive blocks of `group_size` (the G completions of one prompt).
Group statistics use the unbiased std (as TRL does). Extra inputs arrive as keyword arguments:
`entropy` [N, T] (rl_zvp), `values` [N, T] (gae), and the settings below; each estimator
ignores what it does not use.

>>> r = torch.tensor([[0., 1.], [0., 0.]])            # two completions of one prompt, 2 tokens each
>>> m = torch.ones(2, 2)
>>> grpo(r, m, group_size=2)
tensor([[ 0.7071,  0.7071],
        [-0.7071, -0.7071]])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from rewardlab.config import check_fields, opt


def sequence_rewards(rewards: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """rewards, mask: [N, T] -> [N] total reward of each completion."""
    return (rewards * mask).sum(-1)


def _broadcast(seq_adv: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """seq_adv [N] -> [N, T], the same advantage on every completion token."""
    return seq_adv.unsqueeze(-1) * mask


def _groups(x: torch.Tensor, group_size: int) -> torch.Tensor:
    """[N] -> [N / G, G]"""
    if x.numel() % group_size:
        raise ValueError(f"{x.numel()} completions do not split into groups of {group_size}")
    return x.view(-1, group_size)


def grpo(rewards, mask, group_size, eps: float = 1e-6, **_):
    """A_i = (r_i - mean_group) / (std_group + eps)."""
    g = _groups(sequence_rewards(rewards, mask), group_size)  # [P, G]
    std = g.std(-1, keepdim=True) if group_size > 1 else torch.zeros_like(g)
    return _broadcast(((g - g.mean(-1, keepdim=True)) / (std + eps)).flatten(), mask)


def dr_grpo(rewards, mask, group_size, **_):
    """Dr. GRPO: A_i = r_i - mean_group (no std division; pair with seq_mean_token_sum_norm)."""
    g = _groups(sequence_rewards(rewards, mask), group_size)
    return _broadcast((g - g.mean(-1, keepdim=True)).flatten(), mask)


def lite_ppo(rewards, mask, group_size, eps: float = 1e-6, **_):
    """Lite PPO: group-mean baseline, divided by the std of the whole batch's rewards."""
    r = sequence_rewards(rewards, mask)
    g = _groups(r, group_size)
    centred = (g - g.mean(-1, keepdim=True)).flatten()
    std = r.std() if r.numel() > 1 else torch.zeros(())
    return _broadcast(centred / (std + eps), mask)


def rloo(rewards, mask, group_size, **_):
    """RLOO: A_i = r_i - mean of the other G-1 rewards of the group."""
    g = _groups(sequence_rewards(rewards, mask), group_size)
    others = (g.sum(-1, keepdim=True) - g) / (group_size - 1)
    return _broadcast((g - others).flatten(), mask)


def discounted_returns(rewards: torch.Tensor, mask: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
    """rewards, mask [N, T] -> returns [N, T], G_t = sum_{k>=t} gamma^(k-t) r_k over masked tokens."""
    out = torch.zeros_like(rewards)
    running = torch.zeros(rewards.shape[0], dtype=rewards.dtype, device=rewards.device)
    for t in reversed(range(rewards.shape[1])):  # a masked token (an environment's, in a multi-turn episode) passes the return on
        running = torch.where(mask[:, t] > 0, rewards[:, t] + gamma * running, running)
        out[:, t] = running
    return out * mask


def whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """(x - mean) / (std + eps) over the masked entries of a [N, T] tensor."""
    n = mask.sum().clamp(min=1)
    mean = (x * mask).sum() / n
    var = (((x - mean) * mask) ** 2).sum() / (n - 1).clamp(min=1)
    return (x - mean) / (var.sqrt() + eps) * mask


def reinforce_pp(rewards, mask, group_size, gamma: float = 1.0, eps: float = 1e-6, **_):
    """REINFORCE++: token returns (dense and in-reward KL terms included), whitened over the batch."""
    return whiten(discounted_returns(rewards, mask, gamma), mask, eps)


def qae(rewards, mask, group_size, qae_k: float = 0.4, **_):
    """QAE: A_i = r_i - (K-quantile of the group's rewards), 'lower' interpolation so binary
    rewards keep a 0/1 baseline: on hard prompts only successes move, on easy ones only failures."""
    g = _groups(sequence_rewards(rewards, mask), group_size)
    baseline = torch.quantile(g, qae_k, dim=-1, keepdim=True, interpolation="lower")
    return _broadcast((g - baseline).flatten(), mask)


def w_reinforce(rewards, mask, group_size, w_lambda: float = 0.1, success_threshold: float = 0.5, **_):
    """W-REINFORCE: +lambda for a success (reward > threshold), -1 for a failure; no baseline."""
    r = sequence_rewards(rewards, mask)
    return _broadcast(torch.where(r > success_threshold, w_lambda, -1.0).to(rewards.dtype), mask)


def rl_zvp(rewards, mask, group_size, entropy=None, zvp_alpha: float = 0.1, success_threshold: float = 0.5,
           eps: float = 1e-6, **_):
    """RL-ZVP: GRPO where the group's rewards vary; in zero-variance groups a token-level advantage
    from the detached entropy H_t: +alpha*H_t if the group all succeeded, -alpha*(max H - H_t) if it
    all failed (max over the group's completion tokens)."""
    if entropy is None:
        raise ValueError("rl_zvp needs the per-token entropy (entropy=[N, T])")
    base = grpo(rewards, mask, group_size, eps)
    g = _groups(sequence_rewards(rewards, mask), group_size)  # [P, G]
    zero_var = (g.max(-1).values - g.min(-1).values) == 0  # [P]
    success = g[:, 0] > success_threshold  # [P], the whole group agrees
    h = entropy.detach().view(-1, group_size, entropy.shape[-1])  # [P, G, T]
    m = mask.view_as(h)
    h_max = (h * m).flatten(1).max(-1).values[:, None, None]  # [P, 1, 1]
    pos = zvp_alpha * h
    neg = -zvp_alpha * (h_max - h)
    shaped = torch.where(success[:, None, None], pos, neg) * m  # [P, G, T]
    use = zero_var[:, None, None].expand_as(h)
    return torch.where(use, shaped, base.view_as(h)).view_as(mask)


def gae(rewards, mask, group_size, values=None, gamma: float = 1.0, lam: float = 0.95, **_):
    """GAE for PPO with a value head (not whitened; the loop whitens):
    delta_t = r_t + gamma V_{t+1} - V_t, A_t = delta_t + gamma lam A_{t+1}, V after the last token = 0."""
    if values is None:
        raise ValueError("gae needs value estimates (values=[N, T]); use it with the PPO value head")
    values = values * mask
    adv = torch.zeros_like(rewards)
    last = torch.zeros(rewards.shape[0], dtype=rewards.dtype, device=rewards.device)
    next_v = torch.zeros_like(last)  # the value of the next unmasked token (masked ones - padding, an environment's - are skipped)
    for t in reversed(range(rewards.shape[1])):
        on = mask[:, t] > 0
        delta = rewards[:, t] + gamma * next_v - values[:, t]
        last = torch.where(on, delta + gamma * lam * last, last)
        next_v = torch.where(on, values[:, t], next_v)
        adv[:, t] = last * mask[:, t]
    return adv


@dataclass(frozen=True)
class Estimator:
    fn: Callable[..., torch.Tensor]
    grouped: bool  # needs G >= 2 completions per prompt
    needs_values: bool = False  # needs a value head (PPO)
    needs_entropy: bool = False


ESTIMATORS: dict[str, Estimator] = {
    "grpo": Estimator(grpo, grouped=True),
    "dr_grpo": Estimator(dr_grpo, grouped=True),
    "lite_ppo": Estimator(lite_ppo, grouped=True),
    "rloo": Estimator(rloo, grouped=True),
    "reinforce_pp": Estimator(reinforce_pp, grouped=False),
    "qae": Estimator(qae, grouped=True),
    "w_reinforce": Estimator(w_reinforce, grouped=False),
    "rl_zvp": Estimator(rl_zvp, grouped=True, needs_entropy=True),
    "gae": Estimator(gae, grouped=False, needs_values=True),
}


# ---------------------------------------------------------------- groups without signal
def negligible_spread(seq_rewards: torch.Tensor, group_size: int, tol: float) -> torch.Tensor:
    """[N] -> [P] bool: groups whose reward spread (max - min) is at most `tol` x the batch's
    reward scale (the larger of its std and its mean |r|) plus 1e-8 (float noise). Normalising
    such a group by its std would turn noise into full-size advantages.

    >>> negligible_spread(torch.tensor([1.0, 1.0 + 1e-5, 0.0, 1.0]), 2, 1e-3).tolist()
    [True, False]
    """
    g = seq_rewards.view(-1, group_size)
    scale = max(float(seq_rewards.std()) if seq_rewards.numel() > 1 else 0.0, float(seq_rewards.abs().mean()))
    return (g.max(-1).values - g.min(-1).values) <= tol * scale + 1e-8


def flatten_negligible_groups(rewards_t: torch.Tensor, completion_mask: torch.Tensor, group_size: int, tol: float) -> torch.Tensor:
    """Token rewards [N, C] whose groups of negligible spread get their group-mean total (the
    difference is taken off each completion's last token), so group estimators give them zero."""
    seq = sequence_rewards(rewards_t, completion_mask.float())  # [N]
    flat = negligible_spread(seq, group_size, tol).repeat_interleave(group_size)  # [N]
    if not flat.any():
        return rewards_t
    mean = seq.view(-1, group_size).mean(-1).repeat_interleave(group_size)
    last = (completion_mask.sum(-1).long() - 1).clamp(min=0)
    out = rewards_t.clone()
    rows = flat.nonzero().flatten()
    out[rows, last[rows]] -= (seq - mean)[rows]
    return out


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class EstimatorConfig:
    """The advantage estimator and its settings: a piece of `rl`'s config."""

    estimator: str = opt("grpo", "advantage estimator", choices=tuple(ESTIMATORS))
    eps: float = opt(1e-6, "std epsilon of the estimators")
    qae_k: float = opt(0.4, "qae: quantile K of the baseline")
    w_lambda: float = opt(0.1, "w_reinforce: advantage of a success (failures get -1)")
    zvp_alpha: float = opt(0.1, "rl_zvp: entropy scale for zero-variance groups")
    success_threshold: float = opt(0.5, "w_reinforce / rl_zvp: a reward above this is a success")
    gamma: float = opt(1.0, "discount for token returns (reinforce_pp, gae)")
    lam: float = opt(0.95, "GAE lambda")

    def check_estimator(self) -> None:
        check_fields(self, EstimatorConfig)
        if not 0 < self.qae_k < 1:
            raise ValueError(f"--qae-k must be in (0, 1), got {self.qae_k}")

    __post_init__ = check_estimator
