"""Out-of-distribution detection for reward models: is a (prompt, response) like what the RM was
trained on? Its core lives beside the reward models, so the RL loop's live monitor (`training/`)
and the evaluation reports (`eval/`) share it.

Detectors (higher score = more out-of-distribution):
  energy       E = -T * logsumexp(logits / T), T = 1, on a pair's logits [r_chosen, r_rejected]
  max_softmax  -max softmax(logits) (the baseline)
  mahalanobis  squared Mahalanobis distance of the RM's pooled backbone embedding to a Gaussian
               fitted on the training distribution (Ledoit-Wolf shrunk covariance); for a pair,
               the mean of the chosen and rejected distances

`OODMonitor` fits the detector on in-distribution rows, calibrates a threshold on a held-out part
of them to a target false-positive rate, and `check(prompts, responses)` flags the samples
beyond it and says whether the batch as a whole looks shifted. `rewardlab train-rm` fits one on
the RM's training data and saves it beside the model (`ood.npz`); `load_reward_model` attaches
it as `rm.ood`.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> monitor = OODMonitor.fit_embeddings(rng.normal(size=(400, 8)), target_fpr=0.05, seed=0)
>>> monitor.check_embeddings(rng.normal(size=(200, 8)) + 3.0).batch_is_ood
True
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from sklearn.covariance import LedoitWolf

from rewardlab.config import check_fields, opt

from reward_models.metrics import energy_score, max_softmax


@dataclass(frozen=True)
class OODConfig:
    """The out-of-distribution detector `eval-rm` fits (both modes) and checks samples with: a piece of `EvalRMConfig`."""

    train_data: str | None = opt(None, "in-distribution rows the RM was trained on (fits the Mahalanobis detector); default: the synthetic train split")
    n_train: int = opt(512, "in-distribution training rows for the OOD detector", ge=1)
    ood_p: float = opt(0.5, "shift rate of the out-of-distribution set for OOD detection", ge=0, le=1)
    samples: str | None = opt(None, "check mode: file of policy samples with `prompt` and `response` (or `completion`) columns")
    target_fpr: float = opt(0.05, "check mode: false-positive rate the threshold is calibrated to on held-out in-distribution data", gt=0, lt=1)

    def check_ood(self) -> None:
        check_fields(self, OODConfig)

    __post_init__ = check_ood


def pair_logits(chosen_scores: Sequence[float], rejected_scores: Sequence[float]) -> np.ndarray:
    """[N] and [N] -> logits [N, 2] = [r_chosen, r_rejected]."""
    return np.stack([np.asarray(chosen_scores, dtype=float), np.asarray(rejected_scores, dtype=float)], axis=1)


# name -> fn(logits [N, 2]) -> [N] score, higher = more OOD. Mahalanobis needs embeddings (`Gaussian`).
LOGIT_DETECTORS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "energy": lambda logits: energy_score(logits),
    "max_softmax": lambda logits: -max_softmax(logits),
}


@dataclass(frozen=True)
class Gaussian:
    """A fitted Gaussian: mean [H] and precision (inverse covariance) [H, H]."""

    mean: np.ndarray
    precision: np.ndarray

    @classmethod
    def fit(cls, embeddings: np.ndarray) -> "Gaussian":
        """embeddings [N, H] -> the Gaussian with a Ledoit-Wolf shrunk covariance (stable when N ~ H)."""
        x = np.asarray(embeddings, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] < 2:
            raise ValueError(f"need at least 2 embeddings of shape [N, H] to fit, got {x.shape}")
        lw = LedoitWolf().fit(x)
        return cls(mean=lw.location_, precision=lw.precision_)

    def distance(self, embeddings: np.ndarray) -> np.ndarray:
        """embeddings [N, H] -> [N] squared Mahalanobis distances."""
        d = np.asarray(embeddings, dtype=np.float64) - self.mean  # [N, H]
        return np.einsum("nh,hk,nk->n", d, self.precision, d)


@dataclass
class OODReport:
    """The result of `OODMonitor.check` on one batch."""

    n: int
    flagged_fraction: float  # fraction of samples beyond the threshold
    threshold: float  # distance threshold (the (1 - target_fpr) quantile on held-out in-distribution data)
    target_fpr: float  # expected flagged fraction on in-distribution data
    alert_fraction: float  # the batch is OOD when flagged_fraction exceeds this
    batch_is_ood: bool
    mean_distance: float
    scores: list[float] = field(repr=False, default_factory=list)
    flagged: list[bool] = field(repr=False, default_factory=list)

    def to_dict(self, with_scores: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_scores:
            d.pop("scores"), d.pop("flagged")
        return d


def alert_fraction(target_fpr: float, n: int) -> float:
    """Batch alarm level: the in-distribution flag rate plus 3 binomial standard errors for n samples."""
    return target_fpr + 3.0 * math.sqrt(target_fpr * (1.0 - target_fpr) / max(n, 1))


def rows_to_texts(rows: Sequence[dict[str, Any]], separator: str = "\n") -> tuple[list[Any], list[Any]]:
    """(prompts, responses) from preference rows (both responses), scored rows (`response`) or
    stepwise rows (steps joined by `separator`, as the policy writes them). Prompts and responses
    are strings or chat messages (the reward model's encoder renders both)."""
    from reward_models.encoding import is_messages
    from rewardlab.tables import row_label

    prompts: list[Any] = []
    responses: list[Any] = []
    for i, row in enumerate(rows):
        prompt = row.get("prompt") if is_messages(row.get("prompt")) else str(row.get("prompt") or "")
        found = [row[c] for c in ("chosen", "rejected", "response") if isinstance(row.get(c), str) or is_messages(row.get(c))]
        if isinstance(row.get("completions"), list):
            found.append(separator.join(map(str, row["completions"])))
        if not found:
            raise ValueError(f"{row_label(i)} has no response: expected `chosen`/`rejected`, `response` or `completions` "
                             f"(text or chat messages); it has {sorted(row)}")
        prompts += [prompt] * len(found)
        responses += found
    return prompts, responses


class OODMonitor:
    """Flags policy samples that fall outside a reward model's training distribution."""

    def __init__(self, gaussian: Gaussian, threshold: float, target_fpr: float, embed: Callable | None = None):
        self.gaussian = gaussian
        self.threshold = float(threshold)
        self.target_fpr = float(target_fpr)
        self._embed = embed  # fn(prompts, responses) -> [N, H]

    @classmethod
    def fit(cls, rm: Any, in_dist_rows: Sequence[dict[str, Any]], target_fpr: float = 0.05,
            calibration_fraction: float = 0.3, seed: int = 0, batch_size: int = 32) -> "OODMonitor":
        """Fit on `in_dist_rows` (the RM's training distribution) with `rm.embed`; a random
        `calibration_fraction` of them is held out to set the threshold at `target_fpr`."""
        prompts, responses = rows_to_texts(in_dist_rows, getattr(getattr(rm, "config", None), "step_separator", "\n"))
        embed = _rm_embedder(rm, batch_size)
        monitor = cls.fit_embeddings(embed(prompts, responses), target_fpr, calibration_fraction, seed)
        monitor._embed = embed
        return monitor

    @classmethod
    def fit_embeddings(cls, embeddings: np.ndarray, target_fpr: float = 0.05,
                       calibration_fraction: float = 0.3, seed: int = 0) -> "OODMonitor":
        """Fit from in-distribution embeddings [N, H] directly."""
        if not 0.0 < target_fpr < 1.0:
            raise ValueError(f"target_fpr must be in (0, 1), got {target_fpr}")
        if not 0.0 < calibration_fraction < 1.0:
            raise ValueError(f"calibration_fraction must be in (0, 1), got {calibration_fraction}")
        x = np.asarray(embeddings, dtype=np.float64)
        order = np.random.default_rng(seed).permutation(len(x))
        n_cal = max(1, int(round(calibration_fraction * len(x))))
        if len(x) - n_cal < 2:
            raise ValueError(f"need more in-distribution rows to fit the monitor, got {len(x)} embeddings")
        gaussian = Gaussian.fit(x[order[n_cal:]])
        threshold = float(np.quantile(gaussian.distance(x[order[:n_cal]]), 1.0 - target_fpr))
        return cls(gaussian, threshold, target_fpr)

    def check(self, prompts: Sequence[str], responses: Sequence[str]) -> OODReport:
        """Score a batch of (prompt, response) samples; see `OODReport`."""
        if self._embed is None:
            raise ValueError("this monitor has no reward model to embed text; pass rm= to OODMonitor.load or use check_embeddings")
        if len(prompts) != len(responses):
            raise ValueError(f"{len(prompts)} prompts but {len(responses)} responses")
        return self.check_embeddings(self._embed(list(prompts), list(responses)))

    def check_embeddings(self, embeddings: np.ndarray) -> OODReport:
        scores = self.gaussian.distance(embeddings)
        flagged = scores > self.threshold
        n = int(scores.size)
        level = alert_fraction(self.target_fpr, n)
        return OODReport(
            n=n, flagged_fraction=float(flagged.mean()), threshold=self.threshold, target_fpr=self.target_fpr,
            alert_fraction=level, batch_is_ood=bool(flagged.mean() > level), mean_distance=float(scores.mean()),
            scores=scores.tolist(), flagged=flagged.tolist(),
        )

    def save(self, path: str | Path) -> Path:
        """Write the fitted detector (mean, precision, threshold) as `.npz` plus a JSON summary."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path.with_suffix(".npz"), mean=self.gaussian.mean, precision=self.gaussian.precision,
                 threshold=self.threshold, target_fpr=self.target_fpr)
        path.with_suffix(".json").write_text(json.dumps({"threshold": self.threshold, "target_fpr": self.target_fpr}, indent=2))
        return path.with_suffix(".npz")

    @classmethod
    def load(cls, path: str | Path, rm: Any = None, batch_size: int = 32) -> "OODMonitor":
        data = np.load(Path(path).with_suffix(".npz"))
        return cls(Gaussian(data["mean"], data["precision"]), float(data["threshold"]), float(data["target_fpr"]),
                   _rm_embedder(rm, batch_size) if rm is not None else None)


def _rm_embedder(rm: Any, batch_size: int) -> Callable[[list[str], list[str]], np.ndarray]:
    def embed(prompts: list[str], responses: list[str]) -> np.ndarray:
        out = rm.embed(prompts, responses, batch_size=batch_size)
        return out.detach().float().cpu().numpy() if hasattr(out, "detach") else np.asarray(out, dtype=np.float64)

    return embed
