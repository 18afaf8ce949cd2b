"""Metric functions against hand-computed values and scikit-learn."""

import math

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import roc_auc_score

from reward_models import metrics

ln3 = math.log(3.0)


@pytest.mark.parametrize(
    "margins, expected",
    [
        ([2.0, 0.0, -1.0], 0.5),  # right, tie (counts 1/2), wrong -> 1.5 / 3
        ([1.0, 1.0, -1.0, 3.0], 0.75),  # three of four right
        ([-5.0], 0.0),  # single wrong pair
    ],
)
def test_pairwise_accuracy(margins, expected):
    assert metrics.pairwise_accuracy(np.array(margins)) == pytest.approx(expected)


def test_pairwise_accuracy_rejects_empty():
    with pytest.raises(ValueError, match="empty"):
        metrics.pairwise_accuracy(np.array([]))


def test_accuracy_by_subset_and_bootstrap():
    rows = metrics.accuracy_by_subset(np.array([1.0, -1.0, 1.0, 1.0]), ["a", "a", "b", "b"], n_boot=200, seed=0)
    by = {r["subset"]: r for r in rows}
    # all: 3/4; a: 1/2; b: 2/2 (a constant sample has a zero-width interval)
    assert [r["subset"] for r in rows] == ["all", "a", "b"]
    assert by["all"]["accuracy"] == 0.75 and by["a"]["accuracy"] == 0.5 and by["b"]["accuracy"] == 1.0
    assert (by["b"]["ci_low"], by["b"]["ci_high"]) == (1.0, 1.0)
    assert 0.0 <= by["all"]["ci_low"] <= 0.75 <= by["all"]["ci_high"] <= 1.0
    # same seed -> same interval
    assert metrics.bootstrap_ci(np.arange(10.0), seed=3) == metrics.bootstrap_ci(np.arange(10.0), seed=3)


def test_bootstrap_interval_shrinks_with_more_data():
    rng = np.random.default_rng(0)
    small = metrics.bootstrap_ci(rng.integers(0, 2, 20).astype(float))
    large = metrics.bootstrap_ci(rng.integers(0, 2, 2000).astype(float))
    assert large[1] - large[0] < small[1] - small[0]


def test_ece_mce_hand_computed():
    conf = np.array([0.95, 0.95, 0.65, 0.65, 0.55])
    correct = np.array([1, 0, 1, 1, 0])
    # bins (0.9,1]: conf .95 acc .5 gap .45 (2 items); (0.6,0.7]: conf .65 acc 1 gap .35 (2);
    # (0.5,0.6]: conf .55 acc 0 gap .55 (1).  ECE = (2*.45 + 2*.35 + .55) / 5 = 0.43; MCE = .55
    ece, mce = metrics.ece_mce(conf, correct, n_bins=10)
    assert ece == pytest.approx(0.43)
    assert mce == pytest.approx(0.55)
    # 2 bins: (0.5, 1] holds everything: conf mean .75, acc .6 -> ECE = MCE = .15
    assert metrics.ece_mce(conf, correct, n_bins=2) == pytest.approx((0.15, 0.15))


def test_reliability_bins_match_sklearn_calibration_curve():
    rng = np.random.default_rng(1)
    margins = rng.normal(0.5, 2.0, 500)
    cal = metrics.pairwise_calibration(margins, n_bins=10)
    # scikit-learn on the symmetric 2-class view; its bins above 0.5 are our max-prob bins
    p = 1 / (1 + np.exp(-margins))
    y_sym = np.r_[np.ones(500), np.zeros(500)]
    p_sym = np.r_[p, 1 - p]
    prob_true, prob_pred = calibration_curve(y_sym, p_sym, n_bins=10)
    upper = prob_pred > 0.5
    ours = [b for b in cal["bins"] if b["count"]]
    np.testing.assert_allclose([b["confidence"] for b in ours], prob_pred[upper], atol=1e-9)
    np.testing.assert_allclose([b["accuracy"] for b in ours], prob_true[upper], atol=1e-9)


def test_brier_and_nll_hand_computed():
    margins = np.array([0.0, ln3])  # p_chosen = .5 and .75
    cal = metrics.pairwise_calibration(margins)
    assert cal["brier"] == pytest.approx((0.25 + 0.0625) / 2)  # mean (1 - p)^2
    assert cal["nll"] == pytest.approx((math.log(2) + math.log(4 / 3)) / 2)  # -log .5, -log .75


def test_fit_temperature_recovers_optimum():
    # 3 of 4 right at |margin| 4: NLL is minimal when sigmoid(4 / T) = 3/4  ->  T = 4 / ln 3
    margins = np.array([4.0, 4.0, 4.0, -4.0])
    assert metrics.fit_temperature(margins) == pytest.approx(4 / ln3, rel=1e-3)
    # after scaling, the confidence equals the accuracy: ECE ~ 0
    t = metrics.fit_temperature(margins)
    assert metrics.pairwise_calibration(margins, t)["ece"] == pytest.approx(0.0, abs=1e-3)


@pytest.mark.parametrize(
    "logits, energy, msp",
    [
        ([[0.0, 0.0]], -math.log(2), 0.5),  # equal logits
        ([[0.0, ln3]], -math.log(4), 0.75),  # logsumexp(0, ln3) = ln 4; softmax = (1/4, 3/4)
        ([[1.0, 2.0]], -(2 + math.log(1 + math.exp(-1))), 1 / (1 + math.exp(-1))),
    ],
)
def test_energy_and_max_softmax(logits, energy, msp):
    assert metrics.energy_score(np.array(logits))[0] == pytest.approx(energy)
    assert metrics.max_softmax(np.array(logits))[0] == pytest.approx(msp)


def test_auroc_and_fpr_at_tpr_hand_computed():
    ins, outs = np.array([0.1, 0.4]), np.array([0.35, 0.8])
    # out > in for 3 of the 4 (out, in) pairs
    assert metrics.auroc(ins, outs) == pytest.approx(0.75)
    assert metrics.auroc(ins, outs) == pytest.approx(roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]))
    # catching both OOD items needs threshold 0.35, which also flags 0.4 -> FPR 1/2
    assert metrics.fpr_at_tpr(ins, outs) == pytest.approx(0.5)
    # perfectly separated -> FPR 0
    assert metrics.fpr_at_tpr(np.array([0.0, 0.1]), np.array([1.0, 2.0])) == 0.0


def test_quantile_metrics_hand_computed():
    taus = np.array([0.1, 0.5, 0.9])
    q = np.array([[0.0, 1.0, 3.0], [0.0, 1.0, 3.0]])
    np.testing.assert_allclose(metrics.quantiles_at(taus, q, 0.7), [2.0, 2.0])  # halfway between 1 and 3
    # y = 2.5 inside [0, 3]; y = 4 outside
    assert metrics.interval_coverage(taus, q, np.array([2.5, 4.0])) == 0.5
    # y = 1: u = (1, 0, -2): .1*1 + 0 + (-2)*(.9 - 1) = .3 ; per item mean over 3 levels = .1
    assert metrics.mean_pinball_loss(taus, q[:1], np.array([1.0])) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="outside"):
        metrics.quantiles_at(taus, q, 0.05)


def test_prm_metrics_hand_computed():
    probs = [[0.9, 0.2, 0.7], [0.8, 0.6]]
    labels = [[True, False, False], [True, True]]
    res = metrics.prm_metrics(probs, labels)
    # thresholded predictions [T, F, T], [T, T] -> 4 of 5 steps right
    assert res["step_accuracy"] == pytest.approx(0.8)
    # first error: predicted (1, -1), true (1, -1)
    assert res["first_error_accuracy"] == 1.0
    # positives .9 .8 .6 vs negatives .2 .7: 5 of 6 pairs ordered
    assert res["step_auroc"] == pytest.approx(5 / 6)


def test_prm_metrics_skips_truncated_steps_and_checks_lengths():
    res = metrics.prm_metrics([[0.9, float("nan")]], [[True, False]])
    assert res["n_truncated_steps"] == 1 and res["step_accuracy"] == 1.0
    assert math.isnan(res["step_auroc"])  # one class only
    with pytest.raises(ValueError, match="solution 0"):
        metrics.prm_metrics([[0.9]], [[True, False]])
