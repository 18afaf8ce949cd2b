"""PRM reward: per-step scores of a process reward model, refined against reward hacking.

With r_k the PRM score of the prefix ending at step k (k = 1..K):
  raw         r~_k = r_k
  clip        r~_k = min(r_k - eta, 0)                    (sum bounded above by 0)
  delta       r~_k = r_k - r_{k+1} (k < K), r~_K = r_K     (sum from step t telescopes to r_t)
  clip-delta  delta applied to the clipped scores
Dense form: step k gets alpha * r~_k, and the success (verifier) reward is added at the last step.
Outcome form (`aggregate` = min / last / product / mean): one value alpha * agg(r) + success at
the last step. Padding a solution with repeated correct steps cannot raise the clip, delta or
clip-delta totals (tests/rewards/test_prm.py checks it); the raw total grows with every step.

eta: the Clip threshold is not published. The default is 0.5 - a step the PRM thinks more likely
right than wrong costs nothing, a doubtful one costs its shortfall. It must sit inside the PRM's
score range on real policy steps, or Clip gives a constant 0 and no signal: choose it from the
PRM's scores on correct steps: `rewardlab train-rm --kind prm` stores the 10th percentile of its
scores on the held-out correct steps as `clip_eta` in the model's config, and that is the default
here (`reward_models.evaluation.eta_from_scores`); 0.5 for a PRM without one.

Steps are split by the separator the PRM was trained with (its config's `step_separator`, the
task's: a space for worked arithmetic) unless the spec says otherwise (`sep=space`, `sep=newline`,
`sep=tab`, or the text). When most completions come out as a single step, the reward warns
(`PRMWarning`): the separator probably does not match what the policy writes.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Callable, Sequence

from rewards.base import NamedReward, RewardOutput, Text, check_batch, completion_text, inner_columns, model_prompts, publish, suggestion

Scores = list[float]  # [K] prefix scores r_1..r_K of one completion
SEPARATORS = {"space": " ", "newline": "\n", "nl": "\n", "tab": "\t"}  # names usable in a spec (`sep=space`)
SINGLE_STEP_WARN = 0.5  # warn when more than this share of a batch's completions are one step


class PRMWarning(UserWarning):
    """The PRM reward sees something that makes its signal doubtful (e.g. one step per completion)."""


def refine_raw(r: Scores, eta: float) -> Scores:
    """r~_k = r_k.  r: [K] -> [K]

    >>> refine_raw([0.9, 0.2], 0.5)
    [0.9, 0.2]
    """
    return list(r)


def refine_clip(r: Scores, eta: float) -> Scores:
    """r~_k = min(r_k - eta, 0).  r: [K] -> [K]

    >>> refine_clip([0.9, 0.2], 0.5)
    [0.0, -0.3]
    """
    return [round(min(x - eta, 0.0), 12) + 0.0 for x in r]


def refine_delta(r: Scores, eta: float) -> Scores:
    """r~_k = r_k - r_{k+1} for k < K, r~_K = r_K.  r: [K] -> [K]

    >>> refine_delta([0.9, 0.5, 0.8], 0.5)
    [0.4, -0.3, 0.8]
    """
    return [round(r[k] - r[k + 1], 12) for k in range(len(r) - 1)] + list(r[-1:])


def refine_clip_delta(r: Scores, eta: float) -> Scores:
    """Delta of the clipped scores.  r: [K] -> [K]

    >>> refine_clip_delta([0.9, 0.2, 0.4], 0.5)  # clipped: [0, -0.3, -0.1]
    [0.3, -0.2, -0.1]
    """
    return refine_delta(refine_clip(r, eta), eta)


REFINEMENTS: dict[str, Callable[[Scores, float], Scores]] = {
    "raw": refine_raw,
    "clip": refine_clip,
    "delta": refine_delta,
    "clip-delta": refine_clip_delta,
}

AGGREGATIONS: dict[str, Callable[[Scores], float]] = {
    "min": lambda r: min(r),
    "last": lambda r: r[-1],
    "product": lambda r: math.prod(r),
    "mean": lambda r: sum(r) / len(r),
}


def fill_truncated(r: list[float]) -> tuple[Scores, int]:
    """Steps the PRM could not see (NaN: truncated away) keep the last visible prefix score, so
    they add nothing under Delta; returns (scores, number filled). All NaN -> ([], K).

    >>> fill_truncated([0.9, float("nan")])
    ([0.9, 0.9], 1)
    """
    if not r or all(math.isnan(x) for x in r):
        return [], len(r)
    out, last, filled = [], next(x for x in r if not math.isnan(x)), 0
    for x in r:
        if math.isnan(x):
            filled += 1
        else:
            last = x
        out.append(last)
    return out, filled


def split_steps(text: str, separator: str = "\n") -> tuple[list[str], list[int]]:
    """Non-empty steps of `text` and the character offset where each ends (exclusive).

    >>> split_steps("a=1\\n\\nb=2\\n")
    (['a=1', 'b=2'], [3, 8])
    """
    steps, ends, start = [], [], 0
    while start <= len(text):
        stop = text.find(separator, start) if separator else -1
        stop = len(text) if stop < 0 else stop
        piece = text[start:stop]
        if piece.strip():
            steps.append(piece)
            ends.append(stop)
        start = stop + max(len(separator), 1)
    return steps, ends


@dataclass(frozen=True)
class PRMReward(NamedReward):
    """Dense (or outcome) reward from a PRM, with Clip / Delta refinements and an optional success reward.

    >>> from types import SimpleNamespace as NS
    >>> class Fake:  # prefix scores: 0.9 for steps that contain "=", else 0.2
    ...     kind = "prm"
    ...     def score(self, prompts, steps, batch_size=32):
    ...         return [NS(step_probs=[0.9 if "=" in s else 0.2 for s in item]) for item in steps]
    >>> out = PRMReward(Fake(), refine="clip")(["q"], ["1+1=2\\nso"])
    >>> out.totals, out.step_rewards, out.step_ends
    ([-0.3], [[0.0, -0.3]], [[5, 8]])
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    model: Any  # PRM with .score(prompts, steps) -> list[StepScores] (step_probs: prefix scores)
    refine: str = "clip-delta"  # raw | clip | delta | clip-delta (dense form)
    aggregate: str | None = None  # min | last | product | mean: outcome form instead of dense
    eta: float | None = None  # Clip threshold; None: the PRM's own `clip_eta` (set by train-rm), else 0.5
    alpha: float = 1.0  # weight of the PRM part (alpha * dense + success)
    success: Any = None  # reward added at the last step (e.g. VerifierReward); None: PRM only
    separator: str | None = None  # steps are split from the completion by this; None: the PRM's own (config.step_separator)
    batch_size: int = 32
    name: str = "prm"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.refine not in REFINEMENTS:
            raise ValueError(f"PRMReward.refine must be one of {', '.join(REFINEMENTS)}, got {self.refine!r}")
        if self.aggregate is not None and self.aggregate not in AGGREGATIONS:
            raise ValueError(f"PRMReward.aggregate must be one of {', '.join(AGGREGATIONS)} or None, got {self.aggregate!r}")
        config = getattr(self.model, "config", None)
        if self.eta is None:
            stored = getattr(config, "clip_eta", None)
            object.__setattr__(self, "eta", 0.5 if stored is None else float(stored))
        if self.separator is None:
            object.__setattr__(self, "separator", getattr(config, "step_separator", None) or "\n")
        if not self.separator:
            raise ValueError("PRMReward.separator is empty; use e.g. ' ' (sep=space in a spec) or '\\n'")

    def shape(self, probs: Scores) -> Scores:
        """Per-step PRM part (before success) for one completion's prefix scores.  [K] -> [K]"""
        if self.aggregate is not None:
            return [0.0] * (len(probs) - 1) + [self.alpha * AGGREGATIONS[self.aggregate](probs)]
        return [self.alpha * x for x in REFINEMENTS[self.refine](probs, self.eta)]

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> RewardOutput:
        check_batch(prompts, completions, self.name)
        texts = [completion_text(c) for c in completions]
        split = [split_steps(t, self.separator) for t in texts]
        single = sum(len(steps) == 1 for steps, _ in split) / max(len(split), 1)
        if len(split) > 1 and single > SINGLE_STEP_WARN:
            warnings.warn(f"prm: {single:.0%} of the completions are a single step when split on {self.separator!r}; "
                          "the PRM then scores whole answers, not steps. Set the separator the policy writes "
                          "(sep=space / sep=newline / the text in the spec)", PRMWarning, stacklevel=2)
        scored = [i for i, (steps, _) in enumerate(split) if steps]
        shown = model_prompts(prompts, columns)
        scores = self.model.score([shown[i] for i in scored], [split[i][0] for i in scored], batch_size=self.batch_size)
        probs: dict[int, Scores] = {}
        truncated = 0
        for i, s in zip(scored, scores):
            filled, n_filled = fill_truncated([float(x) for x in s.step_probs])
            truncated += n_filled
            if filled:
                probs[i] = filled
        inner = inner_columns(columns)
        success = list(self.success(prompts, completions, **inner)) if self.success is not None else [0.0] * len(texts)
        totals, steps_out, ends_out = [], [], []
        for i, (steps, ends) in enumerate(split):
            if i not in probs or success[i] is None:
                totals.append(None), steps_out.append([]), ends_out.append([])
                continue
            if len(probs[i]) != len(steps):
                raise ValueError(f"the PRM returned {len(probs[i])} step scores for {len(steps)} steps (item {i + 1})")
            r = self.shape(probs[i])
            r[-1] += float(success[i])
            totals.append(sum(r)), steps_out.append(r), ends_out.append(ends)
        n = max(len(texts), 1)
        metrics = {"empty": float(len(texts) - len(scored)), "truncated_steps": float(truncated), "none_frac": sum(t is None for t in totals) / n,
                   "steps_mean": sum(len(s) for s, _ in split) / n, "single_step_frac": single,
                   "prm_min_mean": sum(min(p) for p in probs.values()) / len(probs) if probs else math.nan,
                   "success_mean": sum(float(s or 0.0) for s in success) / n}
        publish(self, metrics, columns)
        return RewardOutput(totals=totals, step_rewards=steps_out, step_ends=ends_out, metrics=dict(metrics))


def prm_from_spec(path: str | None = None, *flags: str, eta: float | None = None, alpha: float = 1.0, success: str | None = None,
                  sep: str | None = None, column: str = "answer", batch_size: int = 32, tag: str | None = None,
                  good: str | None = None, bad: str | None = None, system: str | None = None, max_length: int | None = None,
                  trust_remote_code: bool | None = None) -> PRMReward:
    """`prm:PATH[:REFINE|AGGREGATE][:eta=,alpha=,success=KIND,sep=,column=]`; for hub PRMs also
    `tag=` (step tag), `good=` / `bad=` (step-tag PRMs' label tokens; `plus` / `minus` spell
    "+" / "-", which a spec cannot hold), `system=`, `max_length=`, `trust_remote_code=true`."""
    if not path:
        raise ValueError("the spec prm:PATH needs the path (or hub name) of a process reward model")
    refine, aggregate = "clip-delta", None
    for flag in flags:
        if flag in REFINEMENTS:
            refine = flag
        elif flag in AGGREGATIONS:
            aggregate = flag
        else:
            raise ValueError(f"prm spec: unknown option {flag!r}; refinements: {', '.join(REFINEMENTS)}; "
                             f"aggregations: {', '.join(AGGREGATIONS)}" + suggestion(flag, [*REFINEMENTS, *AGGREGATIONS]))
    from rewards.learned import load_reward_model_for
    from rewards.verifier import VerifierReward

    success_fn = VerifierReward(kind=success, answer_column=column) if success else None
    if sep is not None:
        sep = SEPARATORS.get(str(sep), str(sep))
        if not sep:
            raise ValueError("prm spec: sep= is empty; write sep=space, sep=newline, sep=tab or the separator text")
    hub = {"tag": tag, "good": good, "bad": bad, "system": system, "max_length": max_length, "trust_remote_code": trust_remote_code}
    return PRMReward(load_reward_model_for(path, "prm", f"prm:{path}", **hub), refine=refine, aggregate=aggregate, eta=eta, alpha=alpha,
                     success=success_fn, separator=sep, batch_size=batch_size)
