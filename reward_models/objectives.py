"""The training objective of each (kind, data format) of `train-rm`, chosen from `OBJECTIVES`:
`fn(model, batch, cfg) -> (loss, stats)`, built from the pure losses of `reward_models.losses`, plus
an optional next-token loss on the preferred responses (`--lm-coef`, GRM-style).

>>> sorted(OBJECTIVES)
[('bt', 'preference'), ('prm', 'stepwise'), ('quantile', 'preference'), ('quantile', 'scored')]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from rewardlab.config import check_fields, opt
from reward_models.batches import forward_by_length
from reward_models.losses import bt_loss, pinball_loss, quantile_bt_loss, step_bce_loss


def _forward(model, batch, cfg) -> dict[str, torch.Tensor]:
    return forward_by_length(model, batch["inputs"], batch["chunks"], batch.get("padding_free", False),
                             **({"return_hidden": True} if cfg.lm_coef else {}))


def _with_lm(model, out, batch, cfg, loss, stats):
    """Add lm_coef x the next-token loss on the preferred responses (GRM-style regulariser)."""
    if not cfg.lm_coef:
        return loss, stats
    labels = batch["lm_labels"]  # [N, T]
    picked = labels != -100
    if not picked.any():
        return loss, {**stats, "lm_nll": 0.0}
    logits = getattr(model, "module", model).lm_logits(out["hidden"][picked])  # [M, V]
    nll = torch.nn.functional.cross_entropy(logits.float(), labels[picked])
    return loss + cfg.lm_coef * nll, {**stats, "lm_nll": nll.item()}


def _preference_bt(model, batch, cfg):
    out = _forward(model, batch, cfg)
    rewards = out["rewards"]  # [U] one per distinct response
    margin = batch["margin"] if batch["margin"].abs().sum() > 0 else None
    loss, stats = bt_loss(rewards[batch["chosen"]], rewards[batch["rejected"]], margin, cfg.center_coef)
    return _with_lm(model, out, batch, cfg, loss, stats)


def _preference_quantile(model, batch, cfg):
    out = _forward(model, batch, cfg)
    q = out["quantiles"]  # [U, K]
    margin = batch["margin"] if batch["margin"].abs().sum() > 0 else None
    loss, stats = quantile_bt_loss(q[batch["chosen"]], q[batch["rejected"]], margin, cfg.center_coef)
    return _with_lm(model, out, batch, cfg, loss, stats)


def _scored_quantile(model, batch, cfg):
    out = _forward(model, batch, cfg)
    q = out["attribute_quantiles"]  # [B, A, K]
    if not cfg.pinball_backbone:  # the quantiles' shape is fitted by the head alone, on the backbone's features as they are
        q = getattr(model, "module", model).head(out["pooled"].detach(), None)["attribute_quantiles"]
    taus = torch.tensor(cfg.taus, device=q.device)
    loss, stats = pinball_loss(q, batch["targets"].to(q), taus)
    if cfg.rank_coef and len(batch["better"]):  # responses of one prompt ranked by their first score (BT on the mean)
        # in units of a tenth of the score's range: the means of calibrated quantiles differ by at most the range,
        # and an unscaled BT term would push them apart without bound (measured: q_0.95 = 56 for scores in [0, 1])
        mixed = out["quantiles"] / batch["rank_unit"]  # [B, K]
        # pairs of responses (batches.same_prompt_pairs) with soft labels sigmoid(gap / unit): the loss is least where
        # the means' gap equals the mean scores' gap, as pinball wants it, so ranking does not pull the quantiles apart
        rank, rank_stats = quantile_bt_loss(mixed[batch["better"]], mixed[batch["worse"]], None, 0.0,
                                            torch.sigmoid(batch["gap"] / batch["rank_unit"]))
        loss = loss + cfg.rank_coef * rank
        stats = {**stats, "rank_nll": rank.item(), "rank_accuracy": rank_stats.get("accuracy", float("nan"))}
    return _with_lm(model, out, batch, cfg, loss, stats)


def _stepwise_prm(model, batch, cfg):
    out = _forward(model, batch, cfg)
    logits = out["step_logits"]  # [N, T]
    loss, stats = step_bce_loss(logits, batch["step_labels"])
    good, bad = batch["good_steps"], batch["bad_steps"]
    if cfg.rank_coef and len(good):  # the k-th steps of two solutions of one prompt, one right and one wrong
        rank, rank_stats = bt_loss(logits[good[:, 0], good[:, 1]], logits[bad[:, 0], bad[:, 1]], None, 0.0)
        loss = loss + cfg.rank_coef * rank
        stats = {**stats, "rank_nll": rank.item(), "rank_accuracy": rank_stats["accuracy"]}
    return _with_lm(model, out, batch, cfg, loss, stats)


# (kind, data format) -> objective(model, batch, config) -> (loss, stats)
OBJECTIVES: dict[tuple[str, str], Callable[..., tuple[torch.Tensor, dict[str, float]]]] = {
    ("bt", "preference"): _preference_bt,
    ("quantile", "preference"): _preference_quantile,
    ("quantile", "scored"): _scored_quantile,
    ("prm", "stepwise"): _stepwise_prm,
}


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class ObjectiveConfig:
    """The training objective's terms and the head's shape: a piece of train-rm's config."""

    center_coef: float = opt(0.0, "reward-centring coefficient c in c*mean((r_c + r_r)^2) (bt and quantile-from-preferences)")
    rank_coef: float = opt(1.0, "weight of a Bradley-Terry ranking term between responses of one prompt (quantile, prm; docs/reward_models.md); 0: off", ge=0)
    lm_coef: float | None = opt(None, "weight of a next-token loss on the preferred responses (GRM). Default: 1.0 on a causal-LM backbone, 0 on encoders")
    score_columns: tuple[str, ...] = opt((), "scored data: the numeric columns to model (one QRM attribute each); default: every numeric column")
    pinball_backbone: bool = opt(True, "quantile, scored: the pinball loss trains the backbone too (false: the head alone; the ranking and next-token terms train the backbone)")
    n_quantiles: int = opt(19, "quantile levels, evenly spaced in (0, 1) (19 -> 0.05..0.95)", ge=2)
    gating: bool = opt(True, "quantile: mix attributes with a per-prompt gating network")
    gate_temperature: float = opt(5.0, "quantile: softmax temperature of the gate", gt=0)
    step_separator: str = opt("\n", "prm: text placed after each step (the label sits on the step's last token)")

    def check_objective(self) -> None:
        check_fields(self, ObjectiveConfig)
        if self.lm_coef is not None and not (self.lm_coef >= 0 and math.isfinite(self.lm_coef)):
            raise ValueError(f"invalid --lm-coef={self.lm_coef!r}; use a weight >= 0")
        if "\\" in self.step_separator:  # "\\n" typed on a command line means a newline
            object.__setattr__(self, "step_separator", self.step_separator.encode().decode("unicode_escape"))

    __post_init__ = check_objective
