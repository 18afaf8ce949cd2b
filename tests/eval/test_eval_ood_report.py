"""Mahalanobis detector, OOD monitor, reports and plots, and the audit's comparison logic."""

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from eval import plots
from eval.audit import audit, build_auditor, confusion, label_verdict
from reward_models.ood import Gaussian, OODMonitor, rows_to_texts
from eval.report import Report, Table, format_table


def test_mahalanobis_hand_computed():
    g = Gaussian(mean=np.zeros(2), precision=np.diag([1.0, 4.0]))
    # (1, 1): 1*1 + 4*1 = 5 ; (2, 0): 4 ; the mean: 0
    np.testing.assert_allclose(g.distance(np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 0.0]])), [5.0, 4.0, 0.0])


def test_gaussian_fit_matches_sklearn():
    from sklearn.covariance import LedoitWolf

    x = np.random.default_rng(0).normal(size=(300, 5))
    y = np.random.default_rng(1).normal(size=(10, 5)) * 2
    np.testing.assert_allclose(Gaussian.fit(x).distance(y), LedoitWolf().fit(x).mahalanobis(y), rtol=1e-8)


def test_monitor_calibrated_fpr_and_detection(tmp_path):
    rng = np.random.default_rng(0)
    monitor = OODMonitor.fit_embeddings(rng.normal(size=(2000, 6)), target_fpr=0.05, seed=0)
    fresh = monitor.check_embeddings(rng.normal(size=(2000, 6)))
    # fresh in-distribution data: flagged at about the target rate, batch not alarmed
    assert 0.03 <= fresh.flagged_fraction <= 0.07 and not fresh.batch_is_ood
    shifted = monitor.check_embeddings(rng.normal(size=(200, 6)) + 1.5)
    assert shifted.flagged_fraction > 0.5 and shifted.batch_is_ood
    # saved and loaded: same threshold and decisions
    monitor.save(tmp_path / "monitor")
    again = OODMonitor.load(tmp_path / "monitor")
    assert again.threshold == monitor.threshold
    assert again.check_embeddings(rng.normal(size=(50, 6)) + 1.5).n == 50
    with pytest.raises(ValueError, match="no reward model"):
        again.check(["p"], ["r"])


def test_rows_to_texts():
    rows = [{"prompt": "p1", "chosen": "a", "rejected": "b"}, {"prompt": "p2", "completions": ["s1", "s2"]}]
    assert rows_to_texts(rows) == (["p1", "p1", "p2"], ["a", "b", "s1\ns2"])
    with pytest.raises(ValueError, match="row 1 has no response"):
        rows_to_texts([{"prompt": "x"}])


def test_report_files_and_plots(tmp_path):
    cal = {"ece": 0.1, "temperature": 1.0, "bins": [{"lo": 0.5, "hi": 0.6, "count": 3, "confidence": 0.55, "accuracy": 0.6}]}
    pngs = [
        plots.reliability_diagram({"before": cal}, tmp_path / "rel.png"),
        plots.shift_plot([{"shift": "insert", "field": "response", "p": 0.1, "accuracy": 0.9, "ece": 0.05}], tmp_path / "shift.png"),
        plots.roc_plot({"energy": ([0, 0.5, 1], [0, 0.8, 1], 0.7)}, tmp_path / "roc.png"),
        plots.passk_plot([1, 4], {"pass@k": [0.2, 0.5]}, tmp_path / "passk.png"),
    ]
    rep = Report("demo", results={"x": float("nan"), "y": np.float64(2.0)},
                 tables=[Table("t", [{"a": 1, "b": 0.25}])], plots=pngs)
    paths = rep.write(tmp_path)
    data = json.loads(paths["json"].read_text())
    assert data["results"] == {"x": None, "y": 2.0}  # NaN -> null, numpy -> float
    assert "![rel](rel.png)" in paths["md"].read_text() and "| 1 | 0.250 |" in paths["md"].read_text()
    assert '<img src="roc.png"' in paths["html"].read_text()
    assert all(p.stat().st_size > 5000 for p in pngs)  # real images, not empty files
    assert "0.250" in rep.terminal_summary()
    assert format_table([{"a": "xx", "b": 1}]).splitlines() == ["a   b", "--  -", "xx  1"]


def test_label_verdicts():
    assert [label_verdict(v, "w") for v in (True, "yes", 0, "no_answer", "Correct")] == [
        "correct", "correct", "incorrect", "no_answer", "correct"]
    with pytest.raises(ValueError, match="cannot read label"):
        label_verdict("maybe", "row 3")
    with pytest.raises(ValueError, match="unknown verifier"):
        build_auditor("sympy-only")


def test_audit_agreement_confusion_and_kappa():
    rows = [{"la": a, "lb": b} for a, b in [("correct", "correct"), ("correct", "incorrect"), ("incorrect", "incorrect"),
                                             ("no_answer", "incorrect"), ("incorrect", "incorrect")]]
    a, b = build_auditor("label:la"), build_auditor("label:lb")
    res = audit(a, b, ["p"] * 5, ["g"] * 5, rows)
    # same verdict on items 0, 2, 4 -> 3/5 ; correct-vs-not agrees on 0, 2, 3, 4 -> 4/5
    assert res["agreement"] == 0.6 and res["correct_agreement"] == 0.8
    assert res["kappa"] == pytest.approx(cohen_kappa_score([r["la"] for r in rows], [r["lb"] for r in rows]))
    assert [d["index"] for d in res["disagreements"]] == [1, 3]
    table = {r["A \\ B"]: r for r in confusion(res["verdicts_a"], res["verdicts_b"])}
    # rows: A's verdicts; columns: B's
    assert table["correct"]["correct"] == 1 and table["correct"]["incorrect"] == 1
    assert table["no_answer"]["incorrect"] == 1 and table["incorrect"]["incorrect"] == 2
