"""The held-out evaluation `train-rm` runs while it trains (and `--stop-at` reads): pairwise
accuracy (bt, quantile), pinball loss (quantile), step accuracy / AUROC (prm), overall and per
error type when rows carry one. The metrics as pure functions over arrays are in
`reward_models.metrics`; `rewardlab eval-rm` (eval/) builds its reports from those.

Every function takes a `LoadedRewardModel`-like object (`score`, `kind`) and rows in the
training formats, and returns a flat dict of floats (names are what the metrics log shows).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from rewardlab.config import check_fields, opt
from reward_models.losses import pinball_loss
from reward_models.metrics import quantile_calibration


def _reward_of(item: Any) -> float:
    return item.mean if hasattr(item, "mean") else float(item)


def preference_metrics(rm: Any, rows: Sequence[dict[str, Any]], batch_size: int = 64) -> dict[str, float]:
    """Share of preference pairs where score(chosen) > score(rejected) (mean for quantile RMs)."""
    prompts = [r.get("prompt", "") for r in rows]
    chosen = rm.score(prompts, [r["chosen"] for r in rows], batch_size=batch_size)
    rejected = rm.score(prompts, [r["rejected"] for r in rows], batch_size=batch_size)
    wins = [_reward_of(c) > _reward_of(w) for c, w in zip(chosen, rejected)]
    return _with_types({"pairwise_accuracy": wins}, [r.get("error_type") for r in rows])


def _with_types(values: dict[str, list[bool]], types: Sequence[Any]) -> dict[str, float]:
    out = {name: sum(v) / max(1, len(v)) for name, v in values.items()}
    for name, v in values.items():
        groups: dict[str, list[bool]] = defaultdict(list)
        for t, x in zip(types, v):
            if t is not None:
                groups[str(t)].append(x)
        for t, xs in sorted(groups.items()):
            out[f"{name}/{t}"] = sum(xs) / len(xs)
    return out


def scored_pairs(rows: Sequence[dict[str, Any]], column: str) -> list[tuple[int, int]]:
    """(better, worse) index pairs of two responses of one prompt whose mean `column` values
    differ, each response named by its first row. Rows of one response (one per rater) are one
    response: paired row by row, two raters' different ratings of one answer would be a pair no
    model can order (the same input scores the same), counted as a loss.

    >>> rows = [{"prompt": "q", "response": r, "y": y} for r, y in [("a", 1.0), ("a", 0.0), ("b", 0.2), ("c", 0.9)]]
    >>> scored_pairs(rows, "y")
    [(0, 2), (3, 0), (3, 2)]
    """
    responses: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        responses[(str(r["prompt"]), str(r["response"]))].append(i)
    by_prompt: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for (prompt, _), idx in responses.items():
        by_prompt[prompt].append((idx[0], sum(float(rows[i][column]) for i in idx) / len(idx)))
    return [(a, b) for group in by_prompt.values() for a, ya in group for b, yb in group if ya > yb]


def quantile_metrics(rm: Any, rows: Sequence[dict[str, Any]], score_columns: Sequence[str], batch_size: int = 64) -> dict[str, float]:
    """Pinball loss per attribute, coverage of [q_0.05, q_0.95], and pairwise accuracy of the mean
    on same-prompt pairs ordered by the first score column."""
    scores = rm.score([r["prompt"] for r in rows], [r["response"] for r in rows], batch_size=batch_size)
    names = list(rm.config.attributes)
    taus = torch.tensor(scores[0].taus)
    out: dict[str, float] = {}
    for col in score_columns:
        if col not in names:
            continue
        q = torch.tensor([s.attribute_quantiles[col] for s in scores]).unsqueeze(1)  # [N, 1, K]
        y = torch.tensor([[float(r[col])] for r in rows])  # [N, 1]
        loss, stats = pinball_loss(q, y, taus)
        out[f"pinball/{col}"] = loss.item()
        out[f"coverage/{col}"] = stats["coverage"]
        # the largest miss of a level's share of held-out targets below its quantile (metrics.quantile_calibration)
        out[f"calibration_error/{col}"] = quantile_calibration(taus.numpy(), q[:, 0].numpy(), y[:, 0].numpy())["error"]
    out["pinball"] = sum(v for k, v in out.items() if k.startswith("pinball/")) / max(1, len(score_columns))
    pairs = scored_pairs(rows, score_columns[0])
    wins = [scores[a].mean > scores[b].mean for a, b in pairs]
    out.update(_with_types({"pairwise_accuracy": wins}, [rows[b].get("error_type") for _, b in pairs]))
    out["mean_spread"] = sum(s.spread for s in scores) / len(scores)
    return out


def step_metrics(rm: Any, rows: Sequence[dict[str, Any]], batch_size: int = 64) -> dict[str, float]:
    """Step accuracy at threshold 0.5, AUROC over all steps, the majority-class baseline, and
    solution-level accuracy of `min` (a solution is judged correct iff min > 0.5)."""
    from sklearn.metrics import roc_auc_score

    scores = rm.score([r["prompt"] for r in rows], [list(r["completions"]) for r in rows], batch_size=batch_size)
    probs, labels, types, solution_ok = [], [], [], []
    for s, r in zip(scores, rows):
        for p, lab in zip(s.step_probs, r["labels"]):
            if not math.isnan(p):
                probs.append(p)
                labels.append(bool(lab))
                types.append(r.get("error_type"))
        solution_ok.append((s.min > 0.5) == bool(r["labels"][-1]))
    hits = [(p > 0.5) == lab for p, lab in zip(probs, labels)]
    out = _with_types({"step_accuracy": hits}, types)
    out["step_auroc"] = float(roc_auc_score(labels, probs)) if 0 < sum(labels) < len(labels) else float("nan")
    share = sum(labels) / len(labels)
    out["step_majority_baseline"] = max(share, 1 - share)
    out["solution_accuracy_min"] = sum(solution_ok) / len(solution_ok)
    return out


def eta_from_scores(correct_step_scores: Sequence[float], quantile: float = 0.1) -> float:
    """A Clip threshold (rewards.prm) inside the PRM's score range: the `quantile` of its scores on steps known
    to be correct (so ~90% of correct steps cost nothing, doubtful ones cost their shortfall).

    >>> eta_from_scores([0.2, 0.9, 0.95, 0.97, 0.99], 0.25)
    0.9
    """
    ordered = sorted(float(x) for x in correct_step_scores)
    if not ordered:
        raise ValueError("eta_from_scores needs the PRM's scores on at least one correct step")
    return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]


def clip_eta(rm: Any, rows: Sequence[dict[str, Any]], quantile: float = 0.1, batch_size: int = 64) -> float | None:
    """`eta_from_scores` of a PRM on the steps labelled correct in stepwise `rows` (None if none)."""
    scores = rm.score([r["prompt"] for r in rows], [list(r["completions"]) for r in rows], batch_size=batch_size)
    good = [p for s, r in zip(scores, rows) for p, lab in zip(s.step_probs, r["labels"]) if lab and not math.isnan(p)]
    return eta_from_scores(good, quantile) if good else None


def sample_metrics(rm: Any, rows: Sequence[dict[str, Any]], batch_size: int = 64) -> dict[str, float]:
    """How well the RM judges a policy's own samples (rows {prompt, samples, correct}, as
    `rewardlab rm-data` writes them): pairwise accuracy over (correct, wrong) samples of a prompt,
    gold accuracy of the RM's best-of-N pick against a random pick and against the oracle
    (pass@N), and the correlation of the score with correctness over all samples (Pearson) and
    within prompts (scores and labels centred per prompt). Quantile RMs are read by their mean.

    >>> class Len:  # scores a sample by its length
    ...     def score(self, prompts, responses, batch_size=64): return [float(len(r)) for r in responses]
    >>> rows = [{"prompt": "q", "samples": ["aa", "b"], "correct": [True, False]}]
    >>> m = sample_metrics(Len(), rows); m["pairwise_accuracy"], m["best_of_n"], m["random_pick"]
    (1.0, 1.0, 0.5)
    """
    import numpy as np

    prompts = [r["prompt"] for r in rows for _ in r["samples"]]
    flat = rm.score(prompts, [c for r in rows for c in r["samples"]], batch_size=batch_size)
    scores, labels, wins, best, oracle = [], [], [], [], []
    pos = 0
    for r in rows:
        s = np.array([_reward_of(x) for x in flat[pos : pos + len(r["samples"])]], dtype=float)
        y = np.array([bool(c) for c in r["correct"]], dtype=float)
        pos += len(r["samples"])
        wins += [float(a > b) for a, ya in zip(s, y) for b, yb in zip(s, y) if ya > yb]
        best.append(y[int(s.argmax())])
        oracle.append(y.max())
        scores.append(s), labels.append(y)
    s_all, y_all = np.concatenate(scores), np.concatenate(labels)
    sc = np.concatenate([s - s.mean() for s in scores])
    yc = np.concatenate([y - y.mean() for y in labels])

    def corr(a, b):
        d = math.sqrt(float((a * a).sum() * (b * b).sum()))
        return float((a * b).sum() / d) if d > 0 else float("nan")

    return {"pairwise_accuracy": sum(wins) / len(wins) if wins else float("nan"), "best_of_n": float(np.mean(best)),
            "random_pick": float(y_all.mean()), "oracle_pass_at_n": float(np.mean(oracle)),
            "correlation": corr(s_all - s_all.mean(), y_all - y_all.mean()), "within_prompt_correlation": corr(sc, yc),
            "n_prompts": float(len(rows)), "samples_per_prompt": len(y_all) / max(len(rows), 1)}


def is_sample_rows(rows: Sequence[dict[str, Any]]) -> bool:
    """Rows of policy samples with gold labels ({prompt, samples, correct}, from `rewardlab rm-data`)."""
    return bool(rows) and all(k in rows[0] for k in ("prompt", "samples", "correct"))


# (kind, data format) -> evaluation function(rm, rows, score_columns, batch_size)
EVALUATORS: dict[tuple[str, str], Callable[..., dict[str, float]]] = {
    ("bt", "preference"): lambda rm, rows, cols, bs: preference_metrics(rm, rows, bs),
    ("quantile", "preference"): lambda rm, rows, cols, bs: preference_metrics(rm, rows, bs),
    ("quantile", "scored"): quantile_metrics,
    ("prm", "stepwise"): lambda rm, rows, cols, bs: step_metrics(rm, rows, bs),
    ("bt", "samples"): lambda rm, rows, cols, bs: sample_metrics(rm, rows, bs),
    ("quantile", "samples"): lambda rm, rows, cols, bs: sample_metrics(rm, rows, bs),
}


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class RMScheduleConfig:
    """When train-rm evaluates, logs, checkpoints and stops: a piece of its config."""

    eval_every: int = opt(75, "evaluate every N steps (and at the end)", ge=1)
    save_every: int = opt(75, "checkpoint every N steps (and at the end)", ge=1)
    keep_checkpoints: int = opt(2, "checkpoints kept (oldest removed first)", ge=1)
    log_every: int = opt(10, "write training metrics every N steps", ge=1)
    eval_batch_size: int = opt(64, "batch size for evaluation and scoring", ge=1)
    stop_at: str | None = opt(None, "stop once a held-out metric reaches a value at an evaluation, e.g. pairwise_accuracy=0.97 (--steps stays the limit)")

    def check_schedule(self) -> None:
        check_fields(self, RMScheduleConfig)
        if self.stop_at is not None:
            name, eq, value = self.stop_at.partition("=")
            try:
                float(value)
            except ValueError:
                eq = ""
            if not eq or not name:
                raise ValueError(f"invalid --stop-at={self.stop_at!r}; use METRIC=VALUE, e.g. pairwise_accuracy=0.97")

    __post_init__ = check_schedule
