"""Plots for the eval reports (matplotlib, Agg backend, PNG). Each function writes one file and
returns its path; inputs are the plain dicts/lists the metric functions return."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _save(fig: Any, path: str | Path, tight: bool = True) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def reliability_diagram(calibrations: dict[str, dict[str, Any]], path: str | Path, title: str = "Reliability diagram") -> Path:
    """calibrations: label -> `metrics.pairwise_calibration` output (e.g. before / after temperature scaling)."""
    fig, (ax, ax_n) = plt.subplots(2, 1, figsize=(5.5, 6.5), gridspec_kw={"height_ratios": [3, 1]}, sharex=True)
    ax.plot([0, 1], [0, 1], "k--", lw=1, label="perfect calibration")
    for label, cal in calibrations.items():
        bins = [b for b in cal["bins"] if b["count"]]
        xs = [b["confidence"] for b in bins]
        ys = [b["accuracy"] for b in bins]
        ax.plot(xs, ys, "o-", label=f"{label} (ECE {cal['ece']:.3f}, T={cal['temperature']:.2f})")
        centers = [(b["lo"] + b["hi"]) / 2 for b in bins]
        ax_n.bar(centers, [b["count"] for b in bins], width=(bins[0]["hi"] - bins[0]["lo"]) * 0.8 if bins else 0.1,
                 alpha=0.5, label=label)
    ax.set_ylabel("accuracy (chosen scored above rejected)")
    ax.set_title(title)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.legend(loc="upper left", fontsize=8)
    ax_n.set_xlabel("confidence = sigmoid(|r_chosen - r_rejected| / T)")
    ax_n.set_ylabel("pairs")
    ax_n.legend(fontsize=8)
    return _save(fig, path)


def shift_plot(rows: Sequence[dict[str, Any]], path: str | Path, title: str = "Accuracy and ECE under shift",
               baseline: dict[str, Any] | None = None) -> Path:
    """rows: {shift, field, p, accuracy, ece}; colour = shift, line style = shifted field;
    `baseline` ({accuracy, ece} of the unshifted set) starts every line at p = 0."""
    fig, (ax_a, ax_e) = plt.subplots(1, 2, figsize=(10, 4.6))
    shifts = sorted({r["shift"] for r in rows})
    styles = {"response": "-", "prompt": "--", "both": ":"}
    for ci, shift in enumerate(shifts):
        for fld in sorted({r["field"] for r in rows if r["shift"] == shift}):
            sel = sorted((r for r in rows if r["shift"] == shift and r["field"] == fld), key=lambda r: r["p"])
            sel = ([{**baseline, "p": 0.0}] if baseline else []) + sel
            ps = [r["p"] for r in sel]
            kw = {"color": f"C{ci}", "ls": styles.get(fld, "-"), "marker": "o", "label": f"{shift} ({fld})"}
            ax_a.plot(ps, [r["accuracy"] for r in sel], **kw)
            ax_e.plot(ps, [r["ece"] for r in sel], **kw)
    ax_a.axhline(0.5, color="grey", ls="-.", lw=1, label="chance")
    ax_a.set(xlabel="shift rate p (fraction of words)", ylabel="pairwise accuracy", title="accuracy vs shift", ylim=(0, 1.02))
    ax_e.set(xlabel="shift rate p (fraction of words)", ylabel="ECE (10 bins)", title="calibration error vs shift")
    handles, labels = ax_a.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(5, len(labels)), fontsize=8, frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return _save(fig, path, tight=False)


def roc_plot(curves: dict[str, tuple[Sequence[float], Sequence[float], float]], path: str | Path, title: str = "OOD detection ROC") -> Path:
    """curves: label -> (fpr, tpr, auroc)."""
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot([0, 1], [0, 1], "k--", lw=1, label="chance (AUROC 0.5)")
    for label, (fpr, tpr, auc) in curves.items():
        ax.plot(fpr, tpr, label=f"{label} (AUROC {auc:.3f})")
    ax.axhline(0.95, color="grey", ls=":", lw=1)
    ax.set(xlabel="false-positive rate (in-distribution flagged)", ylabel="true-positive rate (shifted flagged)",
           title=title, xlim=(0, 1), ylim=(0, 1.02))
    ax.legend(loc="lower right", fontsize=8)
    return _save(fig, path)


def passk_plot(ks: Sequence[int], series: dict[str, Sequence[float]], path: str | Path, title: str = "pass@k") -> Path:
    """series: label -> values at each k (e.g. pass@k and maj@k)."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for label, values in series.items():
        ax.plot(list(ks), list(values), "o-", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(ks))
    ax.set_xticklabels([str(k) for k in ks])
    ax.set(xlabel="k (samples per prompt)", ylabel="fraction of prompts solved", title=title, ylim=(0, 1.02))
    ax.legend(fontsize=8)
    return _save(fig, path)
