"""Held-out evaluation used during training: pairwise accuracy (bt, quantile), pinball loss
(quantile), step accuracy / AUROC (prm), overall and per error type when rows carry one.

Every function takes a `LoadedRewardModel`-like object (`score`, `kind`) and rows in the
training formats, and returns a flat dict of floats (names are what the metrics log shows).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable, Sequence

import torch

from reward_models.losses import pinball_loss


def _reward_of(item: Any) -> float:
    return item.mean if hasattr(item, "mean") else float(item)


def pairwise_accuracy(rm: Any, rows: Sequence[dict[str, Any]], batch_size: int = 64) -> dict[str, float]:
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
    """(better, worse) index pairs of rows sharing a prompt whose `column` values differ."""
    by_prompt: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_prompt[str(r["prompt"])].append(i)
    pairs = []
    for idx in by_prompt.values():
        for a in idx:
            for b in idx:
                if rows[a][column] > rows[b][column]:
                    pairs.append((a, b))
    return pairs


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


# (kind, data format) -> evaluation function(rm, rows, score_columns, batch_size)
EVALUATORS: dict[tuple[str, str], Callable[..., dict[str, float]]] = {
    ("bt", "preference"): lambda rm, rows, cols, bs: pairwise_accuracy(rm, rows, bs),
    ("quantile", "preference"): lambda rm, rows, cols, bs: pairwise_accuracy(rm, rows, bs),
    ("quantile", "scored"): quantile_metrics,
    ("prm", "stepwise"): lambda rm, rows, cols, bs: step_metrics(rm, rows, bs),
}
