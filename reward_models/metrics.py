"""Reward-model metrics as pure functions over arrays: accuracy, calibration, quantile and PRM scores.

A pairwise RM is read as a 2-class classifier with logits [r_chosen, r_rejected]:
    margin     = r_chosen - r_rejected
    p_chosen   = sigmoid(margin / T)               (T = temperature, 1 unless scaled)
    confidence = max-softmax = sigmoid(|margin| / T)
    outcome    = 1 if margin > 0, 0.5 on a tie, 0 otherwise    (the "correct" indicator)

What scikit-learn already computes (AUROC, Brier, ROC curve, calibration curve) comes from it;
ECE/MCE binning, bootstrap intervals, pinball loss and the PRM step metrics are written here and
tested against hand-computed values.

>>> import numpy as np
>>> pairwise_accuracy(np.array([2.0, 0.0, -1.0]))   # one right, one tie, one wrong
0.5
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.metrics import brier_score_loss, roc_auc_score, roc_curve


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # numerically stable sigmoid


def outcomes(margins: np.ndarray) -> np.ndarray:
    """margins [N] -> [N] in {1, 0.5, 0}: chosen above, tie, chosen below."""
    margins = np.asarray(margins, dtype=float)
    return np.where(margins > 0, 1.0, np.where(margins == 0, 0.5, 0.0))


def pairwise_accuracy(margins: np.ndarray) -> float:
    """Fraction of pairs where the RM scores chosen above rejected (ties count 0.5).

    >>> pairwise_accuracy(np.array([1.0, 1.0, -1.0, 3.0]))
    0.75
    """
    margins = np.asarray(margins, dtype=float)
    if margins.size == 0:
        raise ValueError("pairwise_accuracy: no pairs to score (empty margins)")
    return float(outcomes(margins).mean())


def bootstrap_ci(
    values: np.ndarray,
    statistic: Callable[[np.ndarray], float] = np.mean,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of `statistic` over items (values [N]); seeded.

    >>> lo, hi = bootstrap_ci(np.array([1.0, 1.0, 1.0]))
    >>> (lo, hi)
    (1.0, 1.0)
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise ValueError("bootstrap_ci: no values")
    if not 0 < level < 1:
        raise ValueError(f"bootstrap_ci: level must be in (0, 1), got {level}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, values.size, size=(n_boot, values.size))  # [B, N]
    stats = np.array([statistic(values[row]) for row in idx])
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(stats, alpha)), float(np.quantile(stats, 1.0 - alpha))


def accuracy_by_subset(
    margins: np.ndarray, subsets: Sequence[str] | None, n_boot: int = 1000, seed: int = 0
) -> list[dict[str, Any]]:
    """Rows {subset, n, accuracy, ci_low, ci_high}: "all" first, then each subset (sorted)."""
    margins = np.asarray(margins, dtype=float)
    groups: dict[str, np.ndarray] = {"all": np.ones(margins.size, dtype=bool)}
    if subsets is not None:
        labels = np.asarray([str(s) for s in subsets])
        if labels.size != margins.size:
            raise ValueError(f"subset column has {labels.size} values for {margins.size} pairs")
        for name in sorted(set(labels.tolist())):
            groups[name] = labels == name
    rows = []
    for name, mask in groups.items():
        o = outcomes(margins[mask])
        lo, hi = bootstrap_ci(o, n_boot=n_boot, seed=seed)
        rows.append({"subset": name, "n": int(mask.sum()), "accuracy": float(o.mean()), "ci_low": lo, "ci_high": hi})
    return rows


# ----------------------------------------------------------------------------- calibration


def reliability_bins(confidence: np.ndarray, correct: np.ndarray, n_bins: int = 10) -> list[dict[str, float]]:
    """Equal-width bins on [0, 1] (bin b holds lo < c <= hi; the first also holds 0).

    confidence [N] in [0, 1], correct [N] in [0, 1] -> one row per bin
    {lo, hi, count, confidence (mean), accuracy (mean)}; empty bins have count 0 and NaN means.
    """
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=float)
    if confidence.shape != correct.shape:
        raise ValueError(f"confidence {confidence.shape} and correct {correct.shape} differ in shape")
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, n_bins - 1)  # [N]
    rows = []
    for b in range(n_bins):
        mask = which == b
        n = int(mask.sum())
        rows.append(
            {
                "lo": float(edges[b]),
                "hi": float(edges[b + 1]),
                "count": n,
                "confidence": float(confidence[mask].mean()) if n else float("nan"),
                "accuracy": float(correct[mask].mean()) if n else float("nan"),
            }
        )
    return rows


def ece_mce(confidence: np.ndarray, correct: np.ndarray, n_bins: int = 10) -> tuple[float, float]:
    """Expected (count-weighted mean) and maximum |accuracy - confidence| gap over the bins.

    >>> ece_mce(np.array([0.9, 0.9, 0.6, 0.6]), np.array([1, 1, 1, 0]), n_bins=10)
    (0.1, 0.1)
    """
    bins = [b for b in reliability_bins(confidence, correct, n_bins) if b["count"]]
    total = sum(b["count"] for b in bins)
    gaps = [abs(b["accuracy"] - b["confidence"]) for b in bins]
    ece = sum(b["count"] / total * g for b, g in zip(bins, gaps))
    return round(float(ece), 12), round(float(max(gaps)), 12)


def pairwise_calibration(margins: np.ndarray, temperature: float = 1.0, n_bins: int = 10) -> dict[str, Any]:
    """Calibration of a pairwise RM at a temperature: ECE, MCE, Brier, NLL and the bins.

    Brier is scikit-learn's on the symmetric 2-class view (p_chosen with label 1 and
    1 - p_chosen with label 0), which equals mean (1 - p_chosen)^2.
    """
    margins = np.asarray(margins, dtype=float) / temperature
    p_chosen = _sigmoid(margins)  # [N]
    confidence = _sigmoid(np.abs(margins))  # [N] max-softmax
    correct = outcomes(margins)
    ece, mce = ece_mce(confidence, correct, n_bins)
    y_sym = np.concatenate([np.ones_like(p_chosen), np.zeros_like(p_chosen)])
    p_sym = np.concatenate([p_chosen, 1.0 - p_chosen])
    return {
        "temperature": float(temperature),
        "ece": ece,
        "mce": mce,
        "brier": float(brier_score_loss(y_sym, p_sym, pos_label=1)),
        "nll": pairwise_nll(margins, 1.0),
        "bins": reliability_bins(confidence, correct, n_bins),
    }


def pairwise_nll(margins: np.ndarray, temperature: float = 1.0) -> float:
    """Mean -log sigmoid(margin / T): the Bradley-Terry loss; the quantity temperature scaling fits."""
    z = np.asarray(margins, dtype=float) / temperature
    return float(np.mean(np.logaddexp(0.0, -z)))


def fit_temperature(margins: np.ndarray, bounds: tuple[float, float] = (0.05, 20.0)) -> float:
    """The T in `bounds` minimising the validation NLL of sigmoid(margin / T) (one scalar).

    >>> m = np.array([4.0, 4.0, -4.0, 4.0])   # over-confident: one in four wrong at p = 0.98
    >>> fit_temperature(m) > 1.0
    True
    """
    margins = np.asarray(margins, dtype=float)
    if margins.size == 0:
        raise ValueError("fit_temperature: empty validation split")
    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    res = minimize_scalar(lambda log_t: pairwise_nll(margins, float(np.exp(log_t))), bounds=(lo, hi), method="bounded")
    return float(np.exp(res.x))


# ----------------------------------------------------------------------------- OOD scores


def energy_score(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """logits [N, C] -> [N] energy E = -T * logsumexp(logits / T); higher = more out-of-distribution.

    >>> energy_score(np.array([[0.0, 0.0]])).round(4).tolist()
    [-0.6931]
    """
    logits = np.asarray(logits, dtype=float) / temperature
    m = logits.max(axis=1, keepdims=True)
    return -temperature * (m[:, 0] + np.log(np.exp(logits - m).sum(axis=1)))


def max_softmax(logits: np.ndarray) -> np.ndarray:
    """logits [N, C] -> [N] max softmax probability (the baseline; lower = more OOD)."""
    logits = np.asarray(logits, dtype=float)
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (z / z.sum(axis=1, keepdims=True)).max(axis=1)


def auroc(in_scores: np.ndarray, out_scores: np.ndarray) -> float:
    """AUROC of telling out (label 1) from in (label 0) with higher score = more OOD (scikit-learn)."""
    y, s = _labels_scores(in_scores, out_scores)
    return float(roc_auc_score(y, s))


def fpr_at_tpr(in_scores: np.ndarray, out_scores: np.ndarray, tpr: float = 0.95) -> float:
    """Fraction of in-distribution items flagged at the loosest threshold that catches `tpr` of OOD.

    >>> fpr_at_tpr(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2.5, 4.0]), tpr=0.95)
    0.25
    """
    y, s = _labels_scores(in_scores, out_scores)
    fpr, tprs, _ = roc_curve(y, s, drop_intermediate=False)
    return float(fpr[np.searchsorted(tprs, tpr - 1e-12, side="left")])


def roc_points(in_scores: np.ndarray, out_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fpr, tpr) of the ROC curve (scikit-learn), for plots."""
    y, s = _labels_scores(in_scores, out_scores)
    fpr, tpr, _ = roc_curve(y, s)
    return fpr, tpr


def _labels_scores(in_scores: np.ndarray, out_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(in_scores, dtype=float).ravel(), np.asarray(out_scores, dtype=float).ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError(f"need both in-distribution ({a.size}) and out-of-distribution ({b.size}) scores")
    return np.concatenate([np.zeros(a.size), np.ones(b.size)]), np.concatenate([a, b])


# ----------------------------------------------------------------------------- quantile RMs


def quantiles_at(taus: np.ndarray, quantiles: np.ndarray, level: float) -> np.ndarray:
    """taus [K] ascending, quantiles [N, K] -> [N] the quantile at `level` (linear interpolation)."""
    taus = np.asarray(taus, dtype=float)
    quantiles = np.asarray(quantiles, dtype=float)
    if not taus[0] <= level <= taus[-1]:
        raise ValueError(f"level {level} is outside the model's quantile levels [{taus[0]}, {taus[-1]}]")
    return np.array([np.interp(level, taus, q) for q in quantiles])


def interval_coverage(taus: np.ndarray, quantiles: np.ndarray, y: np.ndarray, lo: float = 0.1, hi: float = 0.9) -> float:
    """Fraction of targets y [N] inside the predicted [q_lo, q_hi] band (nominal: hi - lo).

    >>> interval_coverage(np.array([0.1, 0.5, 0.9]), np.array([[0, 1, 2], [0, 1, 2]]), np.array([1.5, 3.0]))
    0.5
    """
    y = np.asarray(y, dtype=float)
    q_lo, q_hi = quantiles_at(taus, quantiles, lo), quantiles_at(taus, quantiles, hi)
    return float(np.mean((y >= q_lo) & (y <= q_hi)))


def mean_pinball_loss(taus: np.ndarray, quantiles: np.ndarray, y: np.ndarray) -> float:
    """Mean over items and levels of rho_tau(u) = u * (tau - 1[u < 0]), u = y - q_tau.

    taus [K], quantiles [N, K], y [N].
    >>> mean_pinball_loss(np.array([0.1, 0.9]), np.array([[0.0, 2.0]]), np.array([1.0]))
    0.1
    """
    taus = np.asarray(taus, dtype=float)[None, :]  # [1, K]
    u = np.asarray(y, dtype=float)[:, None] - np.asarray(quantiles, dtype=float)  # [N, K]
    return round(float(np.mean(u * (taus - (u < 0)))), 12)


def quantile_calibration(taus: np.ndarray, quantiles: np.ndarray, y: np.ndarray, tie: float = 0.0) -> dict[str, Any]:
    """How calibrated predicted quantiles are on held-out targets: for each level tau, the share
    of targets y [N] below the predicted q_tau [N, K] (`below`) and at or below it (`at_or_below`).
    Calibrated quantiles have below <= tau <= at_or_below (the two are equal for continuous
    targets; a discrete target, e.g. a rating at the floor, sits exactly on many quantiles).
    `error` is the largest distance of a level from its [below, at_or_below] interval. `tie`: a
    target within it of the quantile counts as at it (a point mass such as a floor rating of 0,
    which a quantile of -0.003 models as well as floats allow).

    >>> c = quantile_calibration(np.array([0.25, 0.75]), np.array([[1.0, 3.0]] * 4), np.array([0.0, 2.0, 2.5, 4.0]))
    >>> c["below"], c["at_or_below"], c["error"]
    ([0.25, 0.75], [0.25, 0.75], 0.0)
    >>> quantile_calibration(np.array([0.5]), np.array([[0.0]] * 4), np.array([0.0, 0.0, 1.0, 1.0]))["error"]  # ties: 0.5 in [0, 0.5]
    0.0
    """
    taus = np.asarray(taus, dtype=float)
    q = np.asarray(quantiles, dtype=float)  # [N, K]
    y = np.asarray(y, dtype=float)[:, None]  # [N, 1]
    below, at_or_below = np.mean(y < q - tie, axis=0), np.mean(y <= q + tie, axis=0)  # [K]
    distance = np.maximum(below - taus, 0.0) + np.maximum(taus - at_or_below, 0.0)
    return {"taus": [round(float(t), 6) for t in taus], "below": [round(float(b), 6) for b in below],
            "at_or_below": [round(float(a), 6) for a in at_or_below], "error": round(float(distance.max()), 6)}


# ----------------------------------------------------------------------------- PRMs


def first_error_step(labels: Sequence[bool]) -> int:
    """Index of the first False step, -1 when every step is correct."""
    for i, ok in enumerate(labels):
        if not ok:
            return i
    return -1


def prm_metrics(step_probs: Sequence[Sequence[float]], labels: Sequence[Sequence[bool]], threshold: float = 0.5) -> dict[str, float]:
    """Step-level accuracy and AUROC over all steps, and first-error-step accuracy per solution
    (the predicted first error is the first step with prob < threshold; -1 if none). Steps scored
    NaN (truncated away by the model's max length) are left out and counted.

    >>> prm_metrics([[0.9, 0.2], [0.8, 0.7]], [[True, False], [True, False]])["first_error_accuracy"]
    0.5
    """
    if len(step_probs) != len(labels):
        raise ValueError(f"{len(step_probs)} scored solutions but {len(labels)} label lists")
    flat_p, flat_y, first_ok, n_truncated = [], [], [], 0
    for i, (p, y) in enumerate(zip(step_probs, labels)):
        if len(p) != len(y):
            raise ValueError(f"solution {i}: {len(p)} step scores but {len(y)} labels")
        kept = [(float(pv), bool(yv)) for pv, yv in zip(p, y) if not math.isnan(pv)]  # NaN = truncated step
        n_truncated += len(p) - len(kept)
        flat_p += [pv for pv, _ in kept]
        flat_y += [yv for _, yv in kept]
        first_ok.append(first_error_step([pv >= threshold for pv, _ in kept]) == first_error_step([yv for _, yv in kept]))
    p_arr, y_arr = np.asarray(flat_p, dtype=float), np.asarray(flat_y, dtype=bool)
    out = {
        "n_solutions": float(len(labels)),
        "n_steps": float(y_arr.size),
        "n_truncated_steps": float(n_truncated),
        "step_accuracy": float(np.mean((p_arr >= threshold) == y_arr)),
        "first_error_accuracy": float(np.mean(first_ok)),
        "step_auroc": float("nan"),
    }
    if 0 < y_arr.sum() < y_arr.size:
        out["step_auroc"] = float(roc_auc_score(y_arr, p_arr))
    return out
