"""What a reward model's `score` returns, beside the plain float of a bt model: a quantile RM's
`QuantileScore` and a PRM's `StepScores`; and `check_pairs`, the argument check every kind's
`score` starts with (models this project trained, `reward_models.scoring`, and hub-format ones,
`reward_models.hub`).

>>> import math
>>> q = QuantileScore(taus=[0.25, 0.5, 0.75], quantiles=[1.0, 2.0, 4.0])
>>> q.mean, q.lower(0.5), q.cvar(0.5), q.spread
(2.3333333333333335, 2.0, 1.5, 3.0)
>>> s = StepScores(step_probs=[0.9, 0.5, 0.8])
>>> s.min, s.last, round(s.product, 2), round(s.mean, 4)
(0.5, 0.8, 0.36, 0.7333)
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any, Sequence


def _interpolate(taus: Sequence[float], values: Sequence[float], level: float) -> float:
    """Piecewise-linear quantile function through (taus, values), flat beyond the end levels."""
    if level <= taus[0]:
        return float(values[0])
    if level >= taus[-1]:
        return float(values[-1])
    j = bisect.bisect_right(taus, level)
    t0, t1, v0, v1 = taus[j - 1], taus[j], values[j - 1], values[j]
    return float(v0 + (v1 - v0) * (level - t0) / (t1 - t0))


def check_level(alpha: float) -> float:
    """A quantile level for `QuantileScore.lower` / `cvar`: in (0, 1) (the end levels are not
    predicted quantiles); else a ValueError naming the range."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return alpha


@dataclass(frozen=True)
class QuantileScore:
    """The predicted reward distribution of one response (ascending `quantiles` at levels `taus`)."""

    taus: list[float]
    quantiles: list[float]
    attribute_quantiles: dict[str, list[float]] = field(default_factory=dict)  # per attribute
    gate: dict[str, float] = field(default_factory=dict)  # mixing weight per attribute

    @property
    def mean(self) -> float:
        """The mean of the quantiles: the scalar score (and what preference training ranks)."""
        return sum(self.quantiles) / len(self.quantiles)

    def lower(self, alpha: float) -> float:
        """The quantile at level `alpha` (interpolated between levels): a pessimistic score."""
        check_level(alpha)
        return _interpolate(self.taus, self.quantiles, alpha)

    def cvar(self, alpha: float) -> float:
        """CVaR_alpha: the mean of the quantiles with tau <= alpha (the lowest one if none is)."""
        check_level(alpha)
        tail = [q for t, q in zip(self.taus, self.quantiles) if t <= alpha + 1e-9]
        return sum(tail) / len(tail) if tail else float(self.quantiles[0])

    @property
    def spread(self) -> float:
        """Interquartile range q(0.75) - q(0.25): the model's uncertainty about this reward."""
        return _interpolate(self.taus, self.quantiles, 0.75) - _interpolate(self.taus, self.quantiles, 0.25)


@dataclass(frozen=True)
class StepScores:
    """Per-step probabilities that each step is correct; NaN for a step truncated away."""

    step_probs: list[float]

    @property
    def _kept(self) -> list[float]:
        kept = [p for p in self.step_probs if not math.isnan(p)]
        if not kept:
            raise ValueError("every step was truncated away; score with a larger max_seq_length")
        return kept

    @property
    def n_truncated(self) -> int:
        return sum(math.isnan(p) for p in self.step_probs)

    @property
    def min(self) -> float:
        return min(self._kept)

    @property
    def last(self) -> float:
        return self._kept[-1]

    @property
    def product(self) -> float:
        return math.prod(self._kept)

    @property
    def mean(self) -> float:
        return sum(self._kept) / len(self._kept)


def check_pairs(prompts: Sequence[Any], others: Sequence[Any], name: str) -> None:
    if isinstance(prompts, str) or isinstance(others, str):
        raise TypeError(f"prompts and {name} must be lists (one item each), not a single string")
    if len(prompts) != len(others):
        raise ValueError(f"got {len(prompts)} prompts but {len(others)} {name}; pass one per prompt")
