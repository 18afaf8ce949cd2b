"""End-of-run report: PNG plots of reward, accuracy, KL and length over steps, and a Markdown
and an HTML page with the before/after numbers.

>>> import tempfile, json, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "metrics.jsonl").write_text("\\n".join(json.dumps({"step": s, "reward/mean": s / 2}) for s in (1, 2)))
>>> sorted(p.name for p in write_report(d, {"accuracy_before": 0.1, "accuracy_after": 0.5}))
['accuracy.png', 'report.html', 'report.md', 'reward.png']
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

# what a metric key is called in a plot's legend (keys not listed keep their name)
LEGEND = {
    "accuracy": "sampled rollouts (training prompts)",
    "eval/accuracy": "held-out, greedy",
    "kl": "KL to the reference",
    "approx_kl": "approx-KL to the rollout policy",
}

# plot file -> (title, metric keys drawn on it)
PLOTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "reward.png": ("reward (mean over rollouts)", ("reward/mean",)),
    "accuracy.png": ("accuracy (verifier)", ("accuracy", "eval/accuracy")),
    "kl.png": ("KL to the reference / approx-KL to the rollout policy", ("kl", "approx_kl")),
    "length.png": ("completion length (tokens)", ("length/mean",)),
}


def read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _plot(records: list[dict], keys: tuple[str, ...], title: str, out: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {k: [(r["step"], r[k]) for r in records if isinstance(r.get(k), (int, float))] for k in keys}
    series = {k: v for k, v in series.items() if v}
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for k, points in series.items():
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o" if len(xs) < 20 else None, label=LEGEND.get(k, k))
    ax.set_xlabel("step")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return True


def write_report(run_dir: Path, summary: dict[str, Any]) -> list[Path]:
    """Write the plots and report.md / report.html into `run_dir`; returns the written files."""
    run_dir = Path(run_dir)
    records = read_metrics(run_dir / "metrics.jsonl")
    plotted = list(records)  # held-out accuracy before (step 0) and after (last step) join the eval curve
    if isinstance(summary.get("accuracy_before"), float):
        plotted.insert(0, {"step": 0, "eval/accuracy": summary["accuracy_before"]})
    if isinstance(summary.get("accuracy_after"), float) and records:
        plotted.append({"step": records[-1]["step"], "eval/accuracy": summary["accuracy_after"]})
    written = [run_dir / name for name, (title, keys) in PLOTS.items() if _plot(plotted, keys, title, run_dir / name)]
    rows = [(k, f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in summary.items()]
    last = records[-1] if records else {}
    md = ["# RL run report", "", "| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    md += ["", f"Steps logged: {len(records)}. Last step's metrics:", "", "| metric | value |", "|---|---|"]
    md += [f"| {k} | {v:.4g} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in sorted(last.items())]
    md += [""] + [f"![{p.stem}]({p.name})" for p in written]
    (run_dir / "report.md").write_text("\n".join(md) + "\n")
    body = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    imgs = "".join(f'<img src="{p.name}" alt="{p.stem}">' for p in written)
    (run_dir / "report.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>RL run report</title></head><body>"
        f"<h1>RL run report</h1><table border='1' cellpadding='4'>{body}</table>{imgs}</body></html>\n"
    )
    return written + [run_dir / "report.md", run_dir / "report.html"]
