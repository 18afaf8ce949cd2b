"""Scoring rollouts with a reward: validation, honest failures, and placing rewards on tokens.

A reward that raises stops the run with a `RewardError` naming the reward and the offending
sample (never a silent zero). `None` means "not applicable": that completion is left out of the
loss and counted. Dense rewards (`RewardOutput` with step values) put each step's value on the
token where the step ends; the rest of the total (e.g. a verifier's success reward) sits on the
last token, so a completion's token rewards always sum to its total.

>>> s = score(lambda prompts, completions, **c: [1.0, None], ["q", "q"], ["a", "b"], {})
>>> s.totals, s.applicable
([1.0, None], [True, False])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from rewardlab.config import check_fields, opt
from rewards.base import RewardOutput, reward_metrics, reward_name
from rewards.concurrent import call_reward


class RewardError(RuntimeError):
    """The reward failed on a sample; the message names the reward and the sample."""


@dataclass
class Scores:
    totals: list[float | None]
    applicable: list[bool]
    step_rewards: list[list[float]] | None = None
    step_ends: list[list[int]] | None = None
    metrics: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:  # one entry per completion in every list, or values land on other rows
        n = len(self.totals or ())
        for name in ("applicable", "step_rewards", "step_ends"):
            values = getattr(self, name)
            if values is not None and len(values) != n:
                raise ValueError(f"Scores.{name} has {len(values)} entries for {n} completions")


def _sample_text(prompts, completions, columns, indices) -> str:
    i = indices[0]
    cols = {k: v[i] for k, v in columns.items()}
    shown = [repr(completions[j])[:80] for j in indices[:4]]
    return f"prompt={repr(prompts[i])[:120]}, completions={shown}, columns={repr(cols)[:200]}"


def _locate(fn: Any, prompts, completions, columns, group_size: int) -> list[int]:
    """Indices of the first group (of `group_size` rows) on which the reward raises alone."""
    for start in range(0, len(prompts), group_size):
        idx = list(range(start, min(start + group_size, len(prompts))))
        try:
            call_reward(fn, [prompts[i] for i in idx], [completions[i] for i in idx], **{k: [v[i] for i in idx] for k, v in columns.items()})
        except Exception:  # noqa: BLE001 - we are only locating the sample to report
            return idx
    return list(range(min(group_size, len(prompts))))


def score(fn: Any, prompts: Sequence[Any], completions: Sequence[str], columns: dict[str, list], group_size: int = 1) -> Scores:
    """Call the reward once on the batch and check what it returned."""
    name = reward_name(fn)
    try:
        out = call_reward(fn, list(prompts), list(completions), **columns)
    except Exception as err:
        idx = _locate(fn, prompts, completions, columns, group_size)
        raise RewardError(
            f"reward {name!r} raised {err.__class__.__name__}: {err} -- on the sample {_sample_text(prompts, completions, columns, idx)}"
        ) from err
    if len(out) != len(completions):
        raise RewardError(f"reward {name!r} returned {len(out)} values for {len(completions)} completions")
    totals: list[float | None] = []
    for i, value in enumerate(out):
        if value is None:
            totals.append(None)
            continue
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise RewardError(f"reward {name!r} returned {value!r} (not a number or None) for sample {_sample_text(prompts, completions, columns, [i])}") from None
        if not math.isfinite(value):
            raise RewardError(f"reward {name!r} returned {value} for sample {_sample_text(prompts, completions, columns, [i])}")
        totals.append(value)
    metrics = dict(out.metrics) if isinstance(out, RewardOutput) else {}
    metrics.update(reward_metrics(fn))
    dense = isinstance(out, RewardOutput) and out.is_dense
    return Scores(
        totals=totals,
        applicable=[t is not None for t in totals],
        step_rewards=out.step_rewards if dense else None,
        step_ends=out.step_ends if dense else None,
        metrics=metrics,
    )


def token_char_ends(tokenizer: Any, completion_ids: Sequence[int]) -> list[int]:
    """Character offset (exclusive) where each completion token ends in the decoded text."""
    return [len(tokenizer.decode(list(completion_ids[: k + 1]), skip_special_tokens=True)) for k in range(len(completion_ids))]


def token_rewards(
    scores: Scores, completion_mask: torch.Tensor, completion_ids: torch.Tensor, tokenizer: Any, group_size: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rewards on tokens `[N, C]` and the loss mask `[N, C]` (rows whose reward is None are zeroed).
    Dense step rewards sit on each step's last token, the final step's on the completion's last token.
    A None total is replaced by the mean of its group's other totals so the baseline of the others
    is unchanged."""
    n, c = completion_mask.shape
    totals = list(scores.totals)
    for start in range(0, n, group_size):
        group = [t for t in totals[start : start + group_size] if t is not None]
        fill = sum(group) / len(group) if group else 0.0
        for i in range(start, min(start + group_size, n)):
            totals[i] = fill if totals[i] is None else totals[i]
    rewards = torch.zeros(n, c, dtype=torch.float32)
    lengths = completion_mask.sum(-1).tolist()
    if scores.step_rewards is None:  # one total per completion, on its last token
        last = torch.tensor([max(int(x) - 1, 0) for x in lengths], dtype=torch.long)
        rewards[torch.arange(n), last] = torch.tensor([float(t) for t in totals], dtype=torch.float32)
    else:  # dense: each step's value on the token where the step ends, the rest of the total on the last
        for i in range(n):
            last = max(int(lengths[i]) - 1, 0)
            rest = float(totals[i])
            if scores.applicable[i]:
                ends = token_char_ends(tokenizer, completion_ids[i, : int(lengths[i])].tolist())
                text_end = ends[-1] if ends else 0
                for value, char_end in zip(scores.step_rewards[i], scores.step_ends[i]):
                    # the final step's reward goes on the last token - the EOS that chose to stop there, where a
                    # PRM reads the last step - not on the step's last character: there, a penalty for stopping
                    # early would fall on the tokens before the stop, and the EOS, with no reward after it, would
                    # be reinforced (measured: Clip-Delta taught one-step answers, 69% -> 0% held-out)
                    tok = last if char_end >= text_end else next((k for k, e in enumerate(ends) if e >= char_end), last)
                    rewards[i, tok] += float(value)
                    rest -= float(value)
            rewards[i, last] += rest
    applicable = torch.tensor(scores.applicable, dtype=completion_mask.dtype)
    return rewards.to(completion_mask.device), completion_mask * applicable.to(completion_mask.device)[:, None]


def required_columns(fn: Any) -> set[str]:
    """Dataset columns a reward (or any component of a composite) needs, read from its
    `answer_column` / `required_columns` attributes."""
    need: set[str] = set(getattr(fn, "required_columns", ()) or ())
    if isinstance(getattr(fn, "answer_column", None), str):
        need.add(fn.answer_column)
    for comp in getattr(fn, "components", ()) or ():
        inner = comp[1] if isinstance(comp, tuple) else comp
        need |= required_columns(inner)
    for attr in ("fn", "reward", "target"):
        inner = getattr(fn, attr, None)
        if callable(inner) and inner is not fn:
            need |= required_columns(inner)
    return need


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class RewardConfig:
    """The reward and the gold accuracy: a piece of `rl`'s config. Unset specs resolve here
    (`env` with --env, else verifier:math), so config.json records the ones used."""

    reward: str | None = opt(None, "reward spec, e.g. verifier:math, ttrl, verifier:math*1.0+format*0.1, prm:PATH:clip-delta, module:function (default: verifier:math; env with --env)")
    env: str | None = opt(None, "multi-turn episodes with an environment that owns the reward: calculator[:cost=C,max_calls=K], code[:max_attempts=2], module:attribute")
    max_turns: int = opt(4, "--env: policy turns per episode at most (each up to --max-new-tokens)", gt=0)
    accuracy_reward: str | None = opt(None, "reward whose correct rate is logged as `accuracy` ('none' to skip; default: verifier:math, or the environment's)")

    def check_reward(self) -> None:
        check_fields(self, RewardConfig)
        if self.reward is None:
            object.__setattr__(self, "reward", "env" if self.env else "verifier:math")
        if self.accuracy_reward is None:
            from rewards.environments import accuracy_reward_of

            object.__setattr__(self, "accuracy_reward", accuracy_reward_of(self.env) if self.env else "verifier:math")
        if self.env and self.reward != "env":
            raise ValueError(f"--env {self.env}: the reward is the environment's own (set its options in the spec, e.g. "
                             f"calculator:cost=0.05); leave --reward unset or pass --reward env, got {self.reward!r}")
        if self.reward == "env" and not self.env:
            raise ValueError("--reward env is the reward of an environment; pass --env SPEC (e.g. --env calculator)")

    __post_init__ = check_reward
