"""Learned-RM rewards: a scalar (Bradley-Terry) RM, and a quantile RM read through a utility.

The model is anything following the `reward_models` contract (`rm.kind`, `rm.score(prompts,
responses)`); `rm:PATH` / `qrm:PATH` load one with `reward_models.load_reward_model`. Optional
standardisation divides by running statistics over every batch seen so far (Welford), so the scale
of an RM does not leak into the reward weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Callable, Sequence

from rewards.base import NamedReward, Text, check_batch, completion_text, model_prompts, publish, suggestion


@dataclass
class RunningStats:
    """Running mean / variance (Welford), updated batch by batch.

    >>> s = RunningStats(); s.update([1.0, 3.0]); (s.count, s.mean, s.std)
    (2, 2.0, 1.0)
    """

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def update(self, values: Sequence[float]) -> None:
        for x in values:
            self.count += 1
            delta = x - self.mean
            self.mean += delta / self.count
            self.m2 += delta * (x - self.mean)

    @property
    def std(self) -> float:
        return math.sqrt(self.m2 / self.count) if self.count else 0.0

    def standardize(self, values: Sequence[float], eps: float = 1e-6) -> list[float]:
        return [(x - self.mean) / (self.std + eps) for x in values]


# utility name -> (quantile score, parameter) -> float. `param` is alpha or lambda.
UTILITIES: dict[str, Callable[[Any, float], float]] = {
    "mean": lambda q, param: float(q.mean),  # mean of the quantiles
    "lower": lambda q, param: float(q.lower(param)),  # the alpha-quantile (risk-averse)
    "cvar": lambda q, param: float(q.cvar(param)),  # mean of the quantiles with tau <= alpha
    "risk": lambda q, param: float(q.mean) - param * float(q.spread),  # mean - lambda * spread
}
UTILITY_DEFAULTS = {"mean": 0.0, "lower": 0.1, "cvar": 0.1, "risk": 0.5}


def load_reward_model_for(path: str, kind: str, spec_name: str, **options: Any) -> Any:
    """The reward model at `path`: the project's own, or a hub-format one (`reward_models.hub`;
    `options` such as label=, tag=, trust_remote_code= go to it)."""
    from reward_models import load_reward_model

    options = {k: v for k, v in options.items() if v is not None}
    try:
        rm = load_reward_model(path, kind=kind, **options)
    except (OSError, ValueError) as exc:
        raise ValueError(f"spec {spec_name!r}: cannot load a reward model from {path!r}: {exc}") from None
    if rm.kind != kind:
        other = {"bt": "rm", "quantile": "qrm", "prm": "prm"}.get(rm.kind, rm.kind)
        raise ValueError(f"{path!r} is a {rm.kind!r} reward model, but the spec {spec_name!r} needs a {kind!r} one; use {other}:{path}")
    return rm


def utility_param(utility: str, param: float | None) -> float:
    """The parameter of a quantile utility: its default when None; alpha of lower / cvar checked
    to lie in (0, 1) (`reward_models.scores.check_level`), so a bad level fails before a model loads."""
    if utility not in UTILITIES:
        raise ValueError(f"QuantileRMReward.utility must be one of {', '.join(UTILITIES)}, got {utility!r}")
    param = UTILITY_DEFAULTS[utility] if param is None else param
    if utility in ("lower", "cvar"):
        from reward_models.scores import check_level

        try:
            check_level(param)
        except ValueError:
            raise ValueError(f"qrm: alpha for {utility!r} must be in (0, 1) (exclusive), got {param}") from None
    return param


def _standardized(values: list[float], stats: RunningStats | None, metrics: dict[str, float]) -> list[float]:
    if stats is None:
        return values
    stats.update(values)
    metrics.update(running_mean=stats.mean, running_std=stats.std)
    return stats.standardize(values)


@dataclass(frozen=True)
class ScalarRMReward(NamedReward):
    """Reward = the scalar RM's score of (prompt, completion), optionally standardised.

    >>> class Fake:  # any object with .score(prompts, responses) -> list[float]
    ...     kind = "bt"
    ...     def score(self, prompts, responses, batch_size=32): return [float(len(r)) for r in responses]
    >>> ScalarRMReward(Fake())(["q", "q"], ["ab", "abcd"])
    [2.0, 4.0]
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    model: Any  # reward model with .score(prompts, responses) -> list[float]
    standardize: bool = False  # divide by running statistics (mean 0, std 1 over all batches so far)
    batch_size: int = 32  # RM scoring batch size
    name: str = "rm"
    stats: RunningStats | None = field(default=None, repr=False, compare=False)
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.standardize and self.stats is None:
            object.__setattr__(self, "stats", RunningStats())

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        raw = [float(s) for s in self.model.score(model_prompts(prompts, columns), [completion_text(c) for c in completions],
                                                  batch_size=self.batch_size)]
        metrics = {"score_mean": sum(raw) / max(len(raw), 1), "score_min": min(raw, default=math.nan), "score_max": max(raw, default=math.nan)}
        out = _standardized(raw, self.stats if self.standardize else None, metrics)
        publish(self, metrics, columns)
        return out


@dataclass(frozen=True)
class QuantileRMReward(NamedReward):
    """Reward = a utility of the quantile RM's predicted distribution (mean, lower quantile,
    CVaR, or mean - lambda * spread), optionally standardised.

    >>> from types import SimpleNamespace as NS
    >>> class Fake:
    ...     kind = "quantile"
    ...     def score(self, prompts, responses, batch_size=32):
    ...         return [NS(mean=1.0, spread=2.0, lower=lambda a: -1.0, cvar=lambda a: -2.0) for _ in responses]
    >>> QuantileRMReward(Fake(), utility="risk", param=0.5)(["q"], ["a"]), QuantileRMReward(Fake(), "cvar", 0.1)(["q"], ["a"])
    ([0.0], [-2.0])
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    model: Any  # quantile RM with .score(prompts, responses) -> list[QuantileScore]
    utility: str = "mean"  # mean | lower | cvar | risk
    param: float | None = None  # alpha for lower/cvar, lambda for risk (defaults in UTILITY_DEFAULTS)
    standardize: bool = False
    batch_size: int = 32
    name: str = "qrm"
    stats: RunningStats | None = field(default=None, repr=False, compare=False)
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "param", utility_param(self.utility, self.param))
        if self.standardize and self.stats is None:
            object.__setattr__(self, "stats", RunningStats())

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        scores = self.model.score(model_prompts(prompts, columns), [completion_text(c) for c in completions], batch_size=self.batch_size)
        utility = UTILITIES[self.utility]
        raw = [utility(q, self.param) for q in scores]
        n = max(len(raw), 1)
        metrics = {"utility_mean": sum(raw) / n, "quantile_mean": sum(float(q.mean) for q in scores) / n,
                   "spread_mean": sum(float(q.spread) for q in scores) / n}
        out = _standardized(raw, self.stats if self.standardize else None, metrics)
        publish(self, metrics, columns)
        return out


def scalar_rm_from_spec(path: str | None = None, *flags: str, standardize: bool = False, batch_size: int = 32, label: int | None = None,
                        max_length: int | None = None, trust_remote_code: bool | None = None) -> ScalarRMReward:
    """`rm:PATH[:standardize][:label=0,max_length=N,trust_remote_code=true]`: the project's RM, or a
    hub sequence-classification RM (`label`, `max_length`, `trust_remote_code` are for those)."""
    if not path:
        raise ValueError("the spec rm:PATH needs the path (or hub name) of a reward model")
    unknown = [f for f in flags if f != "standardize"]
    if unknown:
        raise ValueError(f"rm spec: unknown option {unknown[0]!r}; valid: standardize, label=N, max_length=N, trust_remote_code=true"
                         + suggestion(unknown[0], ["standardize"]))
    standardize = standardize or "standardize" in flags
    model = load_reward_model_for(path, "bt", f"rm:{path}", label=label, max_length=max_length, trust_remote_code=trust_remote_code)
    return ScalarRMReward(model, standardize=standardize, batch_size=batch_size)


def quantile_rm_from_spec(path: str | None = None, *flags: str, standardize: bool = False, batch_size: int = 32, **utility: float) -> QuantileRMReward:
    if not path:
        raise ValueError("the spec qrm:PATH needs the path (or hub name) of a quantile reward model")
    names = [f for f in flags if f in UTILITIES] + list(utility)
    unknown = [f for f in flags if f not in UTILITIES and f != "standardize"] + [u for u in utility if u not in UTILITIES]
    if unknown or len(names) > 1:
        raise ValueError(f"qrm spec: give at most one utility ({', '.join(UTILITIES)}), got {names + unknown}"
                         + (suggestion(unknown[0], [*UTILITIES, "standardize", "batch_size"]) if unknown else ""))
    name = names[0] if names else "mean"
    utility_param(name, utility.get(name))  # before the model loads
    return QuantileRMReward(load_reward_model_for(path, "quantile", f"qrm:{path}"), utility=name, param=utility.get(name),
                            standardize=standardize or "standardize" in flags, batch_size=batch_size)
