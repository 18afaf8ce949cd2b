"""Out-of-distribution detection for reward models: the logit detectors of a pairwise RM here; the
Mahalanobis detector and `OODMonitor` live in `reward_models.ood` (shared with the RL loop's
live monitor) and are re-exported.

Detectors (higher score = more out-of-distribution):
  energy       E = -T * logsumexp(logits / T), T = 1, on a pair's logits [r_chosen, r_rejected]
  max_softmax  -max softmax(logits) (the baseline)
  mahalanobis  squared Mahalanobis distance of the RM's pooled backbone embedding to a Gaussian
               fitted on the training distribution (Ledoit-Wolf shrunk covariance); for a pair,
               the mean of the chosen and rejected distances

`OODMonitor` fits the Mahalanobis detector on in-distribution rows, calibrates a threshold on a
held-out part of them to a target false-positive rate, and `check(prompts, responses)` flags the
samples beyond it and says whether the batch as a whole looks shifted:

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> monitor = OODMonitor.fit_embeddings(rng.normal(size=(400, 8)), target_fpr=0.05, seed=0)
>>> monitor.check_embeddings(rng.normal(size=(200, 8)) + 3.0).batch_is_ood
True
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from eval.metrics import energy_score, max_softmax
from reward_models.ood import Gaussian, OODMonitor, OODReport, alert_fraction, rows_to_texts  # noqa: F401  (the core, re-exported)


def pair_logits(chosen_scores: Sequence[float], rejected_scores: Sequence[float]) -> np.ndarray:
    """[N] and [N] -> logits [N, 2] = [r_chosen, r_rejected]."""
    return np.stack([np.asarray(chosen_scores, dtype=float), np.asarray(rejected_scores, dtype=float)], axis=1)


# name -> fn(logits [N, 2]) -> [N] score, higher = more OOD. Mahalanobis needs embeddings (reward_models.ood).
LOGIT_DETECTORS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "energy": lambda logits: energy_score(logits),
    "max_softmax": lambda logits: -max_softmax(logits),
}


