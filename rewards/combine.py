"""Composition: several rewards -> one total, every component logged under its own name.

`Combine` takes (name, reward, weight) components. A weight of 0 logs the component without
training on it. Normalisation (`normalize`: none / batch / group z-scores) is applied either to each
component before the weighted sum (`order="normalize_then_sum"`) or to the total
(`order="sum_then_normalize"`). `gates` make a component count only where another component
passes (e.g. the RM reward only when the format is right). `none` says what a None component does
to the total: `skip` it, count it as `zero`, or `propagate` None. The total is clipped to `clip`.

Components run at once (`concurrent=True`, the default): async components (`async def`) are
awaited together on an event loop, blocking ones run on threads (a verifier's worker pool, an RM's
forward pass and a remote judge overlap), and each still reports its own metrics. A reward object
that appears in several components is called one component at a time (its `last_metrics` are
read right after its own call). `acall` is the same for asyncio code.

For TRL, `Combine.as_trl()` gives `reward_funcs` and `reward_weights` (gates applied by wrapping).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from rewards.base import (NamedReward, RewardOutput, Text, check_batch, group_indices, inner_columns, is_itemwise, publish, reward_metrics,
                          reward_name)
from rewards.concurrent import acall_reward, as_async, call_reward, gather_blocking, is_async_reward, run_sync

Values = list[float | None]


def _zscore(values: Values, eps: float = 1e-6) -> Values:
    kept = [v for v in values if v is not None]
    if not kept:
        return list(values)
    mean = sum(kept) / len(kept)
    std = math.sqrt(sum((v - mean) ** 2 for v in kept) / len(kept))
    return [None if v is None else (v - mean) / (std + eps) for v in values]


def normalize_none(values: Values, groups: list[list[int]]) -> Values:
    """No normalisation."""
    return list(values)


def normalize_batch(values: Values, groups: list[list[int]]) -> Values:
    """z-score over the batch (None values ignored and kept).

    >>> [None if v is None else round(v, 3) for v in normalize_batch([1.0, 3.0, None], [[0, 1, 2]])]
    [-1.0, 1.0, None]
    """
    return _zscore(values)


def normalize_group(values: Values, groups: list[list[int]]) -> Values:
    """z-score within each prompt group (completions sharing a prompt).

    >>> [round(v, 3) for v in normalize_group([1.0, 3.0, 5.0, 5.0], [[0, 1], [2, 3]])]
    [-1.0, 1.0, 0.0, 0.0]
    """
    out: Values = list(values)
    for g in groups:
        for i, v in zip(g, _zscore([values[i] for i in g])):
            out[i] = v
    return out


NORMALIZERS: dict[str, Callable[[Values, list[list[int]]], Values]] = {
    "none": normalize_none,
    "batch": normalize_batch,
    "group": normalize_group,
}
ORDERS = ("normalize_then_sum", "sum_then_normalize")
NONE_POLICIES = ("skip", "zero", "propagate")


@dataclass(frozen=True)
class Gated(NamedReward):
    """`reward` where `gate`'s value is >= `threshold`, else `closed_value` (None items stay None).

    >>> from rewards.shaping import FormatReward
    >>> fn = Gated(lambda p, c, **k: [0.7, 0.7], FormatReward("integer"))
    >>> fn(["q", "q"], ["12", "twelve"])
    [0.7, 0.0]
    """

    reward: Any
    gate: Any
    threshold: float = 0.5
    closed_value: float = 0.0
    name: str = ""
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", f"{reward_name(self.reward)}_if_{reward_name(self.gate)}")

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> Values:
        inner = inner_columns(columns)
        values, gate = gather_blocking([lambda: call_reward(self.reward, prompts, completions, **inner),
                                        lambda: call_reward(self.gate, prompts, completions, **inner)])
        return self._apply(list(values), list(gate), columns)

    async def acall(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> Values:
        inner = inner_columns(columns)
        values, gate = await asyncio.gather(acall_reward(self.reward, prompts, completions, **inner),
                                            acall_reward(self.gate, prompts, completions, **inner))
        return self._apply(list(values), list(gate), columns)

    def _apply(self, values: list, gate: list, columns: dict[str, Any]) -> Values:
        out = [None if v is None else (v if g is not None and g >= self.threshold else self.closed_value) for v, g in zip(values, gate)]
        publish(self, {"gate_open_frac": sum(g is not None and g >= self.threshold for g in gate) / max(len(gate), 1)}, columns)
        return out

    @property
    def is_async(self) -> bool:
        return is_async_reward(self.reward) or is_async_reward(self.gate)

    @property
    def itemwise(self) -> bool:
        return is_itemwise(self.reward) and is_itemwise(self.gate)


def _renamed(fn: Any, name: str) -> Any:
    """`fn` under the component's name (TRL logs rewards by `__name__`): a copy for our dataclass
    rewards; other callables keep their own name."""
    if dataclasses.is_dataclass(fn) and "name" in {f.name for f in dataclasses.fields(fn)}:
        return dataclasses.replace(fn, name=name)
    return fn


@dataclass(frozen=True)
class Combine(NamedReward):
    """A weighted combination of rewards that reports every component.

    components: sequence of (name, reward, weight); names must be distinct.

    >>> from rewards.shaping import FormatReward, LengthPenalty
    >>> fn = Combine([("format", FormatReward("integer"), 1.0), ("length", LengthPenalty(target=2, coef=1.0), 0.5)])
    >>> fn(["q", "q"], ["12", "1234"])
    [1.0, 0.5]
    >>> fn.last_metrics["length/mean"], fn.last_metrics["format/mean"]
    (-0.5, 1.0)
    """

    components: Sequence[tuple[str, Any, float]]
    normalize: str = "none"  # none | batch | group (z-scores; group = per prompt)
    order: str = "normalize_then_sum"  # normalize_then_sum | sum_then_normalize
    gates: dict[str, str] = field(default_factory=dict)  # component -> component that must pass for it to count
    gate_threshold: float = 0.5  # a gate passes where its value is >= this
    clip: tuple[float | None, float | None] = (None, None)  # bounds of the total
    none: str = "skip"  # what a None component does to the total: skip | zero | propagate
    concurrent: bool = True  # run the components at once (async ones on an event loop, blocking ones on threads)
    name: str = "combined"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)
    # each component's values on the last call (before weights, gates and normalisation), by name
    last_components: dict[str, list] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [c[0] for c in self.components]
        if not names:
            raise ValueError("Combine needs at least one component (name, reward, weight)")
        if len(set(names)) != len(names):
            raise ValueError(f"Combine component names must be distinct, got {names}")
        for label, value, valid in (("normalize", self.normalize, tuple(NORMALIZERS)), ("order", self.order, ORDERS),
                                    ("none", self.none, NONE_POLICIES)):
            if value not in valid:
                raise ValueError(f"Combine.{label} must be one of {', '.join(valid)}, got {value!r}")
        for target, gate in self.gates.items():
            if target not in names or gate not in names:
                raise ValueError(f"Combine.gates {target!r} -> {gate!r}: both must be component names ({', '.join(names)})")
        object.__setattr__(self, "components", tuple((n, f, float(w)) for n, f, w in self.components))

    def as_trl(self) -> dict[str, list[Any]]:
        """`reward_funcs` / `reward_weights` for TRL's GRPOConfig/GRPOTrainer (gates applied by
        wrapping; normalisation, clipping and None policy are this class's own and are not carried)."""
        by_name = {n: f for n, f, _ in self.components}
        funcs = [Gated(f, by_name[self.gates[n]], self.gate_threshold, name=n) if n in self.gates else _renamed(f, n)
                 for n, f, _ in self.components]
        # TRL awaits async rewards itself; a gate around an async reward must be awaitable too
        funcs = [as_async(f) if isinstance(f, Gated) and f.is_async else f for f in funcs]
        return {"reward_funcs": funcs, "reward_weights": [w for _, _, w in self.components]}

    @property
    def itemwise(self) -> bool:
        """Each item's total depends on that item alone: no normalisation over the batch or the
        group, and every component itemwise."""
        return self.normalize == "none" and all(is_itemwise(fn) for _, fn, _ in self.components)

    @property
    def is_async(self) -> bool:
        """Whether any component is async (then the components run on an event loop)."""
        return any(is_async_reward(fn) or getattr(fn, "is_async", False) for _, fn, _ in self.components)

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> Any:
        check_batch(prompts, completions, self.name)
        if self.concurrent and self.is_async:
            return run_sync(self.acall(prompts, completions, **columns))
        inner = inner_columns(columns)
        calls = {}  # one call slot per distinct reward object, its components one after another
        for name, fn, _ in self.components:
            calls.setdefault(id(fn), []).append((name, fn))
        slots = [functools.partial(self._run_slot, slot, prompts, completions, inner) for slot in calls.values()]
        if self.concurrent:
            results = gather_blocking(slots)
        else:
            results = [slot() for slot in slots]
        return self._finish(dict(item for result in results for item in result), prompts, completions, columns)

    async def acall(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> Any:
        """`__call__` for asyncio code: async components awaited together, blocking ones on threads."""
        check_batch(prompts, completions, self.name)
        inner = inner_columns(columns)
        calls = {}
        for name, fn, _ in self.components:
            calls.setdefault(id(fn), []).append((name, fn))

        async def slot(pairs: list) -> list:
            out = []
            for name, fn in pairs:
                values = await acall_reward(fn, prompts, completions, **inner)
                out.append((name, (values, reward_metrics(fn))))
            return out

        results = await asyncio.gather(*(slot(pairs) for pairs in calls.values()))
        return self._finish(dict(item for result in results for item in result), prompts, completions, columns)

    @staticmethod
    def _run_slot(pairs: list, prompts: Sequence[Text], completions: Sequence[Text], inner: dict[str, Any]) -> list:
        """(name, (values, metrics)) of each component of one reward object, called in turn."""
        out = []
        for name, fn in pairs:
            values = call_reward(fn, prompts, completions, **inner)
            out.append((name, (values, reward_metrics(fn))))
        return out

    def _finish(self, called: dict[str, tuple[Any, dict[str, float]]], prompts: Sequence[Text], completions: Sequence[Text],
                columns: dict[str, Any]) -> Any:
        """The total of the components' values (normalised, gated, clipped) and every component's metrics."""
        groups = group_indices(prompts)
        norm = NORMALIZERS[self.normalize]
        raw: dict[str, Any] = {}
        metrics: dict[str, float] = {}
        for name, fn, _ in self.components:
            out, own_metrics = called[name]
            if len(out) != len(completions):
                raise ValueError(f"component {name!r} returned {len(out)} rewards for {len(completions)} completions")
            raw[name] = out
            values = [None if v is None else float(v) for v in out]
            kept = [v for v in values if v is not None]
            metrics[f"{name}/mean"] = sum(kept) / len(kept) if kept else float("nan")
            metrics[f"{name}/std"] = math.sqrt(sum((v - metrics[f"{name}/mean"]) ** 2 for v in kept) / len(kept)) if kept else float("nan")
            metrics[f"{name}/none_frac"] = (len(values) - len(kept)) / max(len(values), 1)
            for key, value in own_metrics.items():
                metrics[f"{name}/{key}"] = value
        values = {name: [None if v is None else float(v) for v in out] for name, out in raw.items()}
        self.last_components.clear()
        self.last_components.update({name: list(v) for name, v in values.items()})
        for target, gate in self.gates.items():
            g = values[gate]
            values[target] = [None if v is None else (v if g[i] is not None and g[i] >= self.gate_threshold else 0.0)
                              for i, v in enumerate(values[target])]
            metrics[f"{target}/gate_open_frac"] = sum(x is not None and x >= self.gate_threshold for x in g) / max(len(g), 1)
        if self.order == "normalize_then_sum":
            values = {name: norm(v, groups) for name, v in values.items()}
        totals = self._sum(values, len(completions))
        if self.order == "sum_then_normalize":
            totals = norm(totals, groups)
        lo, hi = self.clip
        totals = [None if t is None else min(max(t, lo if lo is not None else t), hi if hi is not None else t) for t in totals]
        kept = [t for t in totals if t is not None]
        metrics["total/mean"] = sum(kept) / len(kept) if kept else float("nan")
        metrics["total/none_frac"] = (len(totals) - len(kept)) / max(len(totals), 1)
        publish(self, metrics, columns)
        dense = [(name, w) for name, _, w in self.components if w and isinstance(raw[name], RewardOutput) and raw[name].is_dense]
        if not dense:
            return totals
        return self._dense_output(raw, dense, totals, metrics)

    def _sum(self, values: dict[str, Values], n: int) -> Values:
        totals: Values = []
        for i in range(n):
            parts = [(values[name][i], w) for name, _, w in self.components if w != 0.0]
            if self.none == "propagate" and any(v is None for v, _ in parts):
                totals.append(None)
            elif self.none == "skip" and all(v is None for v, _ in parts):
                totals.append(None)
            else:
                totals.append(sum(w * (v or 0.0) for v, w in parts))
        return totals

    @staticmethod
    def _dense_output(raw: dict[str, Any], dense: list[tuple[str, float]], totals: Values, metrics: dict[str, float]) -> RewardOutput:
        """Per-step rewards of the (single) dense component, scaled by its weight; whatever the
        total has beyond them (other components, normalisation, clipping) goes on the last step,
        so that sum(step_rewards[i]) == totals[i]."""
        if len(dense) > 1:
            raise ValueError(f"Combine can place only one dense component on steps, got {[n for n, _ in dense]}")
        name, w = dense[0]
        out: RewardOutput = raw[name]
        steps, ends = [], []
        for i, total in enumerate(totals):
            r = [w * x for x in out.step_rewards[i]]
            e = list(out.step_ends[i])
            if total is None or not r:
                steps.append([] if total is None else [total])
                ends.append([] if total is None else [e[-1] if e else 0])
                continue
            r[-1] += total - sum(r)
            steps.append(r)
            ends.append(e)
        return RewardOutput(totals=totals, step_rewards=steps, step_ends=ends, metrics=dict(metrics))
