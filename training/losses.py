"""Policy-gradient losses: pure tensor functions with their diagnostics.

Aggregations (`AGGREGATIONS`, chosen by name) turn a per-token loss [N, T] into a scalar. They take
the normaliser of the *whole* rollout batch (`BatchNorm`), so summing the aggregated loss of
micro-batches gives exactly the full-batch loss: gradient accumulation never changes the result.

>>> lp = torch.log(torch.tensor([[0.5, 0.5]])); old = torch.log(torch.tensor([[0.25, 0.5]]))
>>> loss, clipped = clipped_surrogate(lp, old, torch.tensor([[1.0, 1.0]]), 0.2, 0.2)
>>> loss.tolist(), clipped.tolist()      # ratio 2 is clipped to 1.2; ratio 1 is not
([[-1.2000000476837158, -1.0]], [[1.0, 0.0]])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rewardlab.config import check_fields, opt


def clipped_surrogate(
    logprobs: torch.Tensor,  # [N, T] under the current policy
    old_logprobs: torch.Tensor,  # [N, T] under the policy that sampled the rollout
    advantages: torch.Tensor,  # [N, T]
    clip_low: float,
    clip_high: float,
    dual_clip: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO clipped surrogate with separate low/high clip (clip-higher) and optional dual clip
    (for A < 0 the loss is capped at -c*A, c > 1). Returns (loss [N, T], clipped [N, T] in {0, 1})."""
    ratio = torch.exp(logprobs - old_logprobs)
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1.0 - clip_low, 1.0 + clip_high)
    loss = torch.maximum(unclipped, clipped)
    was_clipped = (clipped > unclipped).float()
    if dual_clip is not None:
        capped = torch.minimum(loss, -advantages * dual_clip)
        loss = torch.where(advantages < 0, capped, loss)
    return loss, was_clipped


def clipped_value_loss(
    values: torch.Tensor,  # [N, T] value head now
    old_values: torch.Tensor,  # [N, T] at rollout time
    returns: torch.Tensor,  # [N, T] targets
    clip: float,
) -> torch.Tensor:
    """0.5 * max((V - R)^2, (clip(V, V_old +- clip) - R)^2), per token [N, T]."""
    v_clipped = old_values + (values - old_values).clamp(-clip, clip)
    return 0.5 * torch.maximum((values - returns) ** 2, (v_clipped - returns) ** 2)


@dataclass(frozen=True)
class BatchNorm:
    """Normalisers of the whole rollout batch (not of one micro-batch)."""

    num_tokens: float  # completion tokens in the batch
    num_seqs: float  # completions in the batch
    max_tokens: float  # the constant of Dr. GRPO's sum-norm (max completion length)

    @staticmethod
    def of(mask: torch.Tensor, max_tokens: int | None = None) -> "BatchNorm":
        return BatchNorm(float(mask.sum().clamp(min=1)), float(mask.shape[0]), float(max_tokens or mask.shape[1]))


def token_mean(x: torch.Tensor, mask: torch.Tensor, norm: BatchNorm) -> torch.Tensor:
    """Mean over all completion tokens of the batch (DAPO): x, mask [n, T] -> scalar."""
    return (x * mask).sum() / norm.num_tokens


def seq_mean_token_mean(x: torch.Tensor, mask: torch.Tensor, norm: BatchNorm) -> torch.Tensor:
    """Mean over tokens of each completion, then over completions (original GRPO)."""
    per_seq = (x * mask).sum(-1) / mask.sum(-1).clamp(min=1)
    return per_seq.sum() / norm.num_seqs


def seq_mean_token_sum_norm(x: torch.Tensor, mask: torch.Tensor, norm: BatchNorm) -> torch.Tensor:
    """Sum over tokens divided by a constant (max length), mean over completions (Dr. GRPO)."""
    return (x * mask).sum() / (norm.num_seqs * norm.max_tokens)


AGGREGATIONS = {
    "token_mean": token_mean,
    "seq_mean_token_mean": seq_mean_token_mean,
    "seq_mean_token_sum_norm": seq_mean_token_sum_norm,
}


def approx_kl(logprobs: torch.Tensor, old_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(old || new), the usual PPO early-warning diagnostic: [N, T]."""
    log_r = (logprobs - old_logprobs).clamp(-10.0, 10.0)  # r = pi_new / pi_old on tokens sampled from pi_old
    return torch.exp(log_r) - 1 - log_r


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class LossConfig:
    """The policy loss's terms and their weights: a piece of `rl`'s config."""

    loss_agg: str = opt("token_mean", "loss aggregation", choices=tuple(AGGREGATIONS))
    clip_low: float = opt(0.2, "lower clip epsilon of the ratio")
    clip_high: float = opt(0.28, "upper clip epsilon of the ratio (clip-higher)")
    dual_clip: float | None = opt(None, "dual-clip constant c > 1 for negative advantages (off when unset)")
    entropy_coef: float = opt(0.0, "entropy bonus weight", ge=0)
    value_coef: float = opt(0.5, "value loss weight (gae)")
    value_clip: float = opt(0.2, "value clip range (gae)")

    def check_loss(self) -> None:
        check_fields(self, LossConfig)
        if not (0 <= self.clip_low < 1 and self.clip_high >= 0):
            raise ValueError(f"--clip-low must be in [0, 1) and --clip-high >= 0, got {self.clip_low}, {self.clip_high}")
        if self.dual_clip is not None and self.dual_clip <= 1:
            raise ValueError(f"--dual-clip must be > 1, got {self.dual_clip}")

    __post_init__ = check_loss
