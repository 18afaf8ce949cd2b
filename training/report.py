"""End-of-run report: PNG plots of reward, accuracy, KL and length over steps, the
over-optimisation picture (gold vs proxy reward vs KL to the reference, Gao et al. 2022), the OOD
share of a learned reward, hack alarms, sample completions, and a Markdown and an HTML page with
the before/after numbers.

>>> import tempfile, json, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "metrics.jsonl").write_text("\\n".join(json.dumps({"step": s, "reward/mean": s / 2}) for s in (1, 2)))
>>> sorted(p.name for p in write_report(d, {"accuracy_before": 0.1, "accuracy_after": 0.5}))
['accuracy.png', 'overoptimization.png', 'report.html', 'report.md', 'reward.png']
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
    "probe/accuracy": "gold probe (held-out, greedy)",
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
GOLD_KEYS = ("probe/accuracy", "eval/accuracy", "accuracy")  # gold signals, best first
SAMPLE_STEPS = 5  # steps whose sample completions the report shows (first, quarters, last)


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


def _smooth(ys: list[float], window: int = 10) -> list[float]:
    """Trailing moving average (noisy per-step values read better smoothed)."""
    return [sum(ys[max(0, i - window + 1) : i + 1]) / len(ys[max(0, i - window + 1) : i + 1]) for i in range(len(ys))]


def _series(records: list[dict], key: str) -> tuple[list[float], list[float]]:
    points = [(r["step"], r[key]) for r in records if isinstance(r.get(key), (int, float))]
    return ([p[0] for p in points], [p[1] for p in points]) if points else ([], [])


def plot_overoptimization(records: list[dict], out: Path) -> bool:
    """Gold vs proxy reward over steps, and against d = sqrt(KL to the reference) per completion
    (Gao et al. 2022: gold rises with d, peaks, then falls while the proxy keeps rising). Steps
    with a hack alarm are marked. False when there is no gold signal to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gold = [(k, *_series(records, k)) for k in GOLD_KEYS if _series(records, k)[0]]
    proxy_x, proxy_y = _series(records, "reward/mean")
    if not gold or not proxy_x:
        return False
    seq_kl = {r["step"]: r["kl"] * r.get("length/mean", 1.0) for r in records if isinstance(r.get("kl"), (int, float))}
    has_kl = any(v > 0 for v in seq_kl.values())
    fig, axes = plt.subplots(1, 2 if has_kl else 1, figsize=(12 if has_kl else 6.5, 3.8), squeeze=False)
    ax = axes[0][0]
    ax.plot(proxy_x, proxy_y, color="tab:red", alpha=0.25)
    ax.plot(proxy_x, _smooth(proxy_y), color="tab:red", label="proxy: training reward (mean, smoothed)")
    ax.set_xlabel("step")
    ax.set_ylabel("proxy reward", color="tab:red")
    twin = ax.twinx()
    for (key, xs, ys), color in zip(gold, ("tab:blue", "tab:green", "tab:cyan")):
        smooth = key == "accuracy"  # the rollouts' accuracy is logged every step: noisy
        twin.plot(xs, _smooth(ys) if smooth else ys, marker=None if smooth else "o", color=color,
                  label=f"gold: {LEGEND.get(key, key)}" + (" (smoothed)" if smooth else ""))
    twin.set_ylabel("gold accuracy", color="tab:blue")
    for r in records:
        if r.get("monitor/alarm"):
            ax.axvline(r["step"], color="black", linestyle="--", alpha=0.6)
    lines = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(lines, [h.get_label() for h in lines], fontsize=8, loc="lower right")
    ax.set_title("gold vs proxy (dashed: hack alarm)")
    ax.grid(alpha=0.3)
    if has_kl:
        ax2 = axes[0][1]
        steps = sorted(seq_kl)
        d_smooth = dict(zip(steps, _smooth([max(seq_kl[s], 0.0) ** 0.5 for s in steps])))
        proxy_smooth = dict(zip(proxy_x, _smooth(proxy_y)))
        px = [(d_smooth[s], proxy_smooth[s]) for s in steps if s in proxy_smooth]
        ax2.plot([p[0] for p in px], [p[1] for p in px], color="tab:red", label="proxy (smoothed)")
        twin2 = ax2.twinx()
        key, xs, ys = gold[0]
        gx = [(d_smooth.get(s, 0.0), y) for s, y in zip(xs, ys) if s in d_smooth or s == 0]
        twin2.plot([p[0] for p in gx], [p[1] for p in gx], marker="o", color="tab:blue", label=f"gold: {LEGEND.get(key, key)}")
        ax2.set_xlabel("d = sqrt(KL to the reference) per completion (smoothed)")
        ax2.set_ylabel("proxy reward", color="tab:red")
        twin2.set_ylabel("gold accuracy", color="tab:blue")
        ax2.set_title("over-optimisation: rewards vs distance from the start")
        lines = ax2.get_legend_handles_labels()[0] + twin2.get_legend_handles_labels()[0]
        ax2.legend(lines, [h.get_label() for h in lines], fontsize=8, loc="lower right")
        ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return True


def _sample_section(records: list[dict]) -> list[str]:
    with_samples = [r for r in records if r.get("samples")]
    if not with_samples:
        return []
    picks = sorted({round(i * (len(with_samples) - 1) / (SAMPLE_STEPS - 1)) for i in range(SAMPLE_STEPS)})
    md = ["", "## Sample completions", "", "| step | prompt | completion | reward | gold |", "|---|---|---|---|---|"]
    cell = lambda t: str(t).replace("|", "\\|").replace("\n", "⏎")  # noqa: E731
    for i in picks:
        r = with_samples[i]
        for x in r["samples"]:
            reward = f"{x['reward']:.3f}" if isinstance(x.get("reward"), (int, float)) else str(x.get("reward"))
            md.append(f"| {r['step']} | `{cell(x['prompt'])}` | `{cell(x['completion'])}` | {reward} | {x.get('gold', '')} |")
    return md


def write_report(run_dir: Path, summary: dict[str, Any]) -> list[Path]:
    """Write the plots and report.md / report.html into `run_dir`; returns the written files."""
    run_dir = Path(run_dir)
    records = read_metrics(run_dir / "metrics.jsonl")
    plotted = list(records)  # held-out accuracy before (step 0) and after (last step) join the eval curve
    if isinstance(summary.get("accuracy_before"), float):
        plotted.insert(0, {"step": 0, "eval/accuracy": summary["accuracy_before"]})
    if isinstance(summary.get("accuracy_after"), float) and records:
        plotted.append({"step": records[-1]["step"], "eval/accuracy": summary["accuracy_after"]})
    ood_keys = tuple(sorted({k for r in records for k in r if k.startswith("ood/") and k.endswith("_frac")}))
    plots = {**PLOTS, **({"ood.png": ("share of completions outside the reward model's training distribution", ood_keys)} if ood_keys else {})}
    written = [run_dir / name for name, (title, keys) in plots.items() if _plot(plotted, keys, title, run_dir / name)]
    if plot_overoptimization(plotted, run_dir / "overoptimization.png"):
        written.insert(0, run_dir / "overoptimization.png")
    rows = [(k, f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in summary.items()]
    last = records[-1] if records else {}
    md = ["# RL run report", "", "| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    md += ["", f"Steps logged: {len(records)}. Last step's metrics:", "", "| metric | value |", "|---|---|"]
    md += [f"| {k} | {v:.4g} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in sorted(last.items()) if k != "samples"]
    alarms = [(r["step"], r["monitor/alarm_reason"]) for r in records if r.get("monitor/alarm_reason")]
    if alarms:
        md += ["", "## Hack alarms", ""] + [f"- step {s}: {reason}" for s, reason in alarms]
    md += [""] + [f"![{p.stem}]({p.name})" for p in written]
    md += _sample_section(records)
    (run_dir / "report.md").write_text("\n".join(md) + "\n")
    body = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    imgs = "".join(f'<img src="{p.name}" alt="{p.stem}">' for p in written)
    (run_dir / "report.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>RL run report</title></head><body>"
        f"<h1>RL run report</h1><table border='1' cellpadding='4'>{body}</table>{imgs}</body></html>\n"
    )
    return written + [run_dir / "report.md", run_dir / "report.html"]
