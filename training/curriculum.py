"""A variance-based curriculum (VCRL-style, `rl --curriculum variance`): replay prompts whose
group reward variance was high. (Which groups dynamic sampling keeps is decided by
`training.advantages.negligible_spread`.)

>>> r = torch.tensor([1., 1., 0., 1., 0., 0.])     # three prompts, G = 2
>>> [round(x, 2) for x in group_variance_score(r, 2).tolist()]
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from rewardlab.config import check_fields, opt


def group_variance_score(seq_rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """[N] -> [P], p = 4 * population variance of the group (for 0/1 rewards p = 4(k/G)(1-k/G),
    1 at a 50% success rate, 0 when all agree), clamped to [0, 1]."""
    g = seq_rewards.view(-1, group_size)
    return (4 * g.var(-1, unbiased=False)).clamp(0, 1)


class VarianceCurriculum:
    """Memory of prompts whose group variance score p was >= kappa; each step takes up to
    `fraction` of its prompts from it (highest p first, each replayed once)."""

    def __init__(self, kappa: float, fraction: float, capacity: int = 4096) -> None:
        self.kappa, self.fraction, self.capacity = kappa, fraction, capacity
        self.bank: list[tuple[float, dict[str, Any]]] = []

    def record(self, rows: list[dict[str, Any]], scores: torch.Tensor) -> None:
        self.bank += [(float(p), row) for p, row in zip(scores.tolist(), rows) if p >= self.kappa]
        self.bank.sort(key=lambda item: -item[0])
        del self.bank[self.capacity :]

    def take(self, n: int) -> list[dict[str, Any]]:
        k = min(len(self.bank), int(n * self.fraction))
        taken, self.bank = self.bank[:k], self.bank[k:]
        return [row for _, row in taken]

    def state(self) -> list[tuple[float, dict[str, Any]]]:
        return list(self.bank)

    def load_state(self, bank: list) -> None:
        self.bank = [(float(p), row) for p, row in bank]


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class SelectionConfig:
    """Which groups a step trains on (dynamic sampling) and which prompts come back (curriculum):
    a piece of `rl`'s config."""

    zero_variance_tol: float = opt(1e-3, "a group whose reward spread is at most this x the batch's reward scale counts as zero-variance (docs/training.md)", ge=0)
    dynamic_sampling: bool = opt(False, "DAPO: drop zero-variance groups and draw more prompts (up to --max-sampling-rounds)")
    max_sampling_rounds: int = opt(3, "dynamic sampling: rollout rounds per step at most", gt=0)
    curriculum: str = opt("none", "variance: replay prompts whose group reward variance p=4(k/G)(1-k/G) >= --curriculum-kappa", choices=("none", "variance"))
    curriculum_kappa: float = opt(0.5, "variance curriculum: threshold on p")
    curriculum_fraction: float = opt(0.5, "variance curriculum: at most this fraction of a step's prompts are replayed")

    def check_selection(self) -> None:
        check_fields(self, SelectionConfig)

    __post_init__ = check_selection
