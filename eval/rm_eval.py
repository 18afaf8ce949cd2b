"""Reward-model evaluation: accuracy, calibration, behaviour under shift and OOD detection.

`evaluate_rm(rm, config, out_dir)` reads `rm.kind` and runs the matching evaluation:
  bt        pairwise accuracy (+ per subset, bootstrap CIs), calibration with temperature scaling,
            accuracy/ECE per shift level, OOD detection (energy, max-softmax, Mahalanobis)
  prm       step accuracy, step AUROC, first-error-step accuracy, Mahalanobis OOD
  quantile  interval coverage of the 10-90% band, pinball loss, Mahalanobis OOD
and returns a `Report` (see eval/report.py). The configuration is `eval.rm_cli.EvalRMConfig`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from eval import plots
from eval.data import RM_KIND_TO_DATA, rows_or_default
from eval.report import Report, Table
from eval.shifts import shift_rows
from reward_models import metrics
from reward_models.ood import LOGIT_DETECTORS, Gaussian, pair_logits, rows_to_texts
from rewardlab.progress import progress_bar


def _prompts(rows: Sequence[dict[str, Any]]) -> list[Any]:
    """Each row's prompt: chat messages as they are, anything else as text ("" when absent)."""
    from reward_models.encoding import is_messages

    return [r["prompt"] if is_messages(r.get("prompt")) else str(r.get("prompt") or "") for r in rows]


def score_pairs(rm: Any, rows: Sequence[dict[str, Any]], batch_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(r_chosen [N], r_rejected [N]) from a bt RM."""
    prompts = _prompts(rows)
    chosen = rm.score(prompts, [r["chosen"] for r in rows], batch_size=batch_size)
    rejected = rm.score(prompts, [r["rejected"] for r in rows], batch_size=batch_size)
    return np.asarray(chosen, dtype=float), np.asarray(rejected, dtype=float)


def embed_rows(rm: Any, rows: Sequence[dict[str, Any]], batch_size: int) -> np.ndarray:
    """[N_texts, H] embeddings of every response of `rows` (see `ood.rows_to_texts`)."""
    prompts, responses = rows_to_texts(rows)
    out = rm.embed(prompts, responses, batch_size=batch_size)
    return out.detach().float().cpu().numpy() if hasattr(out, "detach") else np.asarray(out, dtype=float)


def pair_distances(gaussian: Gaussian, rm: Any, rows: Sequence[dict[str, Any]], batch_size: int) -> np.ndarray:
    """[N] per-row Mahalanobis score: the mean over the row's responses (chosen and rejected for a pair)."""
    d = gaussian.distance(embed_rows(rm, rows, batch_size))
    per_row = len(d) // len(rows)
    if per_row * len(rows) != len(d):
        raise ValueError("every row needs the same response columns (e.g. both `chosen` and `rejected`)")
    return d.reshape(len(rows), per_row).mean(axis=1)


def subset_column(rows: Sequence[dict[str, Any]], wanted: str) -> str | None:
    """The column that names each row's subset: `wanted`, or with "auto" `subset`, then `error_type`."""
    if wanted != "auto":
        if wanted not in rows[0]:
            raise ValueError(f"--subset-column {wanted!r} is not a column of the data; found {sorted(rows[0])}")
        return wanted
    return next((c for c in ("subset", "error_type") if c in rows[0]), None)


def split_validation(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (validation indices, test indices)."""
    order = np.random.default_rng(seed).permutation(n)
    n_val = int(round(fraction * n))
    if n_val < 2 or n - n_val < 2:
        raise ValueError(f"cannot split {n} rows into validation ({fraction:.0%}) and test: use more rows (--n)")
    return np.sort(order[:n_val]), np.sort(order[n_val:])


# ----------------------------------------------------------------------------- bt


def evaluate_bt(rm: Any, rows: list[dict[str, Any]], train_rows: list[dict[str, Any]], cfg: Any, out: Path) -> Report:
    rep = Report(title=f"Reward-model evaluation (bt): {cfg.rm}")
    bs = cfg.batch_size
    r_c, r_r = score_pairs(rm, rows, bs)
    margins = r_c - r_r
    col = subset_column(rows, cfg.subset_column)
    subsets = [str(r.get(col)) for r in rows] if col else None
    acc_rows = metrics.accuracy_by_subset(margins, subsets, n_boot=cfg.n_boot, seed=cfg.seed)
    rep.tables.append(Table("Pairwise accuracy (95% bootstrap CI)", acc_rows))

    # Calibration: fit T on a validation split, report test before/after.
    val, test = split_validation(len(rows), cfg.val_fraction, cfg.seed)
    temperature = metrics.fit_temperature(margins[val])
    before = metrics.pairwise_calibration(margins[test], 1.0, cfg.n_bins)
    after = metrics.pairwise_calibration(margins[test], temperature, cfg.n_bins)
    cal_rows = [{"": name, "T": c["temperature"], "ECE": c["ece"], "MCE": c["mce"], "Brier": c["brier"], "NLL": c["nll"]}
                for name, c in (("before (T=1)", before), ("after temperature scaling", after))]
    rep.tables.append(Table(f"Calibration on the test split ({len(test)} pairs; T fitted on {len(val)} validation pairs)", cal_rows))
    rep.plots.append(plots.reliability_diagram({"before": before, "after": after}, out / "reliability.png"))

    # Shift sweep (and the shifted sets reused for OOD detection).
    gaussian = Gaussian.fit(embed_rows(rm, train_rows, bs))
    in_logits = pair_logits(r_c, r_r)
    in_scores = {**{name: fn(in_logits) for name, fn in LOGIT_DETECTORS.items()},
                 "mahalanobis": pair_distances(gaussian, rm, rows, bs)}
    shift_table, ood_table, roc_curves = [], [], {}
    def acc_ece(m: np.ndarray) -> dict[str, float]:  # ECE raw (T = 1) and with the validation-fitted T
        return {"accuracy": metrics.pairwise_accuracy(m), "ece": metrics.pairwise_calibration(m, 1.0, cfg.n_bins)["ece"],
                "ece_scaled": metrics.pairwise_calibration(m, temperature, cfg.n_bins)["ece"]}

    base = {"shift": "none", "field": "-", "p": 0.0, **acc_ece(margins)}
    jobs = [(s, f, p) for s in cfg.shifts for f in cfg.shift_fields for p in sorted(set(cfg.shift_levels) | {cfg.ood_p})]
    for shift, fld, p in progress_bar(jobs, desc="shifts", unit="shifts", disable=not cfg.progress):
        shifted = shift_rows(rows, shift, p, field=fld, seed=cfg.seed)
        s_c, s_r = score_pairs(rm, shifted, bs)
        s_margins = s_c - s_r
        if p in cfg.shift_levels:
            shift_table.append({"shift": shift, "field": fld, "p": p, **acc_ece(s_margins)})
        if p == cfg.ood_p:
            out_logits = pair_logits(s_c, s_r)
            out_scores = {**{name: fn(out_logits) for name, fn in LOGIT_DETECTORS.items()},
                          "mahalanobis": pair_distances(gaussian, rm, shifted, bs)}
            for det, scores in out_scores.items():
                auc = metrics.auroc(in_scores[det], scores)
                ood_table.append({"shift": shift, "field": fld, "p": p, "detector": det, "auroc": auc,
                                  "fpr@95tpr": metrics.fpr_at_tpr(in_scores[det], scores)})
                if (shift, fld) == (cfg.shifts[0], cfg.shift_fields[0]):
                    fpr, tpr = metrics.roc_points(in_scores[det], scores)
                    roc_curves[det] = (fpr, tpr, auc)
    shift_table.insert(0, base)
    rep.tables.append(Table(f"Accuracy and ECE per shift level (all {len(rows)} pairs; ece_scaled uses T={temperature:.2f})", shift_table))
    rep.tables.append(Table(f"OOD detection: in-distribution vs shifted at p={cfg.ood_p}", ood_table))
    rep.plots.append(plots.shift_plot(shift_table[1:], out / "shift.png", baseline=base))
    rep.plots.append(plots.roc_plot(roc_curves, out / "roc.png",
                                    title=f"OOD ROC: {cfg.shifts[0]} on {cfg.shift_fields[0]}, p={cfg.ood_p}"))
    rep.results = {"kind": "bt", "n_pairs": len(rows), "accuracy": acc_rows, "temperature": temperature,
                   "calibration": {"before": before, "after": after}, "shift": shift_table, "ood": ood_table}
    return rep


# ----------------------------------------------------------------------------- prm / quantile


def _ood_only(rm: Any, rows: list[dict[str, Any]], train_rows: list[dict[str, Any]], cfg: Any, out: Path, rep: Report) -> list[dict[str, Any]]:
    """Mahalanobis OOD rows for non-pairwise kinds (no 2-class logits there)."""
    gaussian = Gaussian.fit(embed_rows(rm, train_rows, cfg.batch_size))
    in_d = pair_distances(gaussian, rm, rows, cfg.batch_size)
    table, curves = [], {}
    for shift in progress_bar(cfg.shifts, desc="ood", unit="shifts", disable=not cfg.progress):
        for fld in cfg.shift_fields:
            out_d = pair_distances(gaussian, rm, shift_rows(rows, shift, cfg.ood_p, field=fld, seed=cfg.seed), cfg.batch_size)
            auc = metrics.auroc(in_d, out_d)
            table.append({"shift": shift, "field": fld, "p": cfg.ood_p, "detector": "mahalanobis", "auroc": auc,
                          "fpr@95tpr": metrics.fpr_at_tpr(in_d, out_d)})
            fpr, tpr = metrics.roc_points(in_d, out_d)
            curves[f"{shift} ({fld})"] = (fpr, tpr, auc)
    rep.tables.append(Table(f"OOD detection (Mahalanobis) at p={cfg.ood_p}", table))
    rep.plots.append(plots.roc_plot(curves, out / "roc.png", title=f"OOD ROC (Mahalanobis), p={cfg.ood_p}"))
    return table


def evaluate_prm(rm: Any, rows: list[dict[str, Any]], train_rows: list[dict[str, Any]], cfg: Any, out: Path) -> Report:
    rep = Report(title=f"Reward-model evaluation (prm): {cfg.rm}")
    scores = rm.score(_prompts(rows), [list(r["completions"]) for r in rows], batch_size=cfg.batch_size)
    res = metrics.prm_metrics([s.step_probs for s in scores], [r["labels"] for r in rows], cfg.prm_threshold)
    rep.tables.append(Table("Step-level metrics", [res]))
    rep.results = {"kind": "prm", **res, "ood": _ood_only(rm, rows, train_rows, cfg, out, rep)}
    return rep


def evaluate_quantile(rm: Any, rows: list[dict[str, Any]], train_rows: list[dict[str, Any]], cfg: Any, out: Path) -> Report:
    """Coverage of the 10-90% band and pinball loss, per score attribute the data has a column for
    (each attribute against its own quantiles; `--score-column` compares the mixed quantiles instead)."""
    rep = Report(title=f"Reward-model evaluation (quantile): {cfg.rm}")
    scores = rm.score(_prompts(rows), [r["response"] for r in rows], batch_size=cfg.batch_size)
    taus = np.asarray(scores[0].taus, dtype=float)
    if cfg.score_column != "auto":
        if cfg.score_column not in rows[0]:
            raise ValueError(f"--score-column {cfg.score_column!r} is not a column of the data; found {sorted(rows[0])}")
        targets = {cfg.score_column: np.asarray([s.quantiles for s in scores], dtype=float)}  # [N, K] mixed
    else:
        names = [a for a in (scores[0].attribute_quantiles or {}) if a in rows[0]]
        if not names:
            raise ValueError(f"none of the model's score attributes {list(scores[0].attribute_quantiles or {})} is a column "
                             f"of the data (found {sorted(rows[0])}); name the true score with --score-column")
        targets = {a: np.asarray([s.attribute_quantiles[a] for s in scores], dtype=float) for a in names}
    table = []
    for name, q in targets.items():
        y = np.asarray([float(r[name]) for r in rows])
        table.append({"attribute": name, "n": len(rows), "coverage_10_90": metrics.interval_coverage(taus, q, y, 0.1, 0.9),
                      "nominal": 0.8, "pinball": metrics.mean_pinball_loss(taus, q, y),
                      "mae_of_median": float(np.mean(np.abs(metrics.quantiles_at(taus, q, 0.5) - y)))})
    rep.tables.append(Table("Quantile metrics (interval coverage of the 10-90% band, pinball loss)", table))
    rep.results = {"kind": "quantile", "attributes": table, "ood": _ood_only(rm, rows, train_rows, cfg, out, rep)}
    return rep


EVALUATORS = {"bt": evaluate_bt, "prm": evaluate_prm, "quantile": evaluate_quantile}


def ood_reference(cfg: Any, rows: list[dict[str, Any]], data_kind: str) -> tuple[list[dict[str, Any]], str]:
    """The in-distribution rows the OOD detectors are fitted on, and a sentence saying which:
    --train-data; else, for the user's --data, those rows themselves (never generated arithmetic
    standing in for someone else's data); else the generator's train split."""
    if cfg.train_data:
        ref = rows_or_default(cfg.train_data, data_kind, cfg.n_train, "train", cfg.seed, "--train-data", cfg.prompt_column)
        return ref, f"OOD reference (in-distribution): {len(ref)} rows of --train-data {cfg.train_data}"
    if cfg.data:
        return rows, (f"OOD reference (in-distribution): the {len(rows)} evaluated rows of --data {cfg.data} themselves "
                      "(no --train-data given: pass the reward model's training data to test against its own distribution)")
    ref = rows_or_default(None, data_kind, cfg.n_train, "train", cfg.seed)
    return ref, f"OOD reference (in-distribution): {len(ref)} generated {data_kind} rows (the generator's train split)"


def evaluate_rm(rm: Any, cfg: Any, out_dir: str | Path) -> Report:
    """Run the evaluation for `rm.kind` on `cfg.data` (or the default held-out rows); a benchmark
    file or name (RewardBench, RewardBench 2, ProcessBench) is scored as the benchmark."""
    from eval.benchmarks import HUB_NAMES

    out = Path(out_dir)
    if rm.kind not in EVALUATORS:
        raise ValueError(f"reward model kind {rm.kind!r} is not supported; supported: {', '.join(EVALUATORS)}")
    if cfg.data and cfg.benchmark != "none":
        from rewardlab.tables import read_table

        from eval.benchmarks import detect_benchmark

        name, split = HUB_NAMES.get(cfg.data, (None, None))
        raw = read_table(cfg.data, cfg.split or split or "train", flag="--data")
        bench = cfg.benchmark if cfg.benchmark != "auto" else name or detect_benchmark(raw)
        if bench:
            return evaluate_benchmark(rm, bench, raw, cfg)
    data_kind = RM_KIND_TO_DATA[rm.kind]
    rows = rows_or_default(cfg.data, data_kind, cfg.n, "test", cfg.seed, "--data", cfg.prompt_column)
    train_rows, note = ood_reference(cfg, rows, data_kind)
    rep = EVALUATORS[rm.kind](rm, rows, train_rows, cfg, out)
    rep.notes.append(note)
    return rep


BENCHMARK_TITLES = {"rewardbench": "RewardBench", "rewardbench2": "RewardBench 2", "processbench": "ProcessBench"}


def evaluate_benchmark(rm: Any, bench: str, rows: list[dict[str, Any]], cfg: Any) -> Report:
    """Score `rows` as benchmark `bench` (see eval/benchmarks.py) and report it."""
    from eval.benchmarks import RUNNERS

    if bench not in RUNNERS:
        raise ValueError(f"--benchmark {bench!r} is not one of {', '.join(RUNNERS)}")
    source = f"--data {cfg.data}"
    extra = {"threshold": cfg.prm_threshold} if bench == "processbench" else {}
    res = RUNNERS[bench](rm, rows, cfg.batch_size, source, **extra)
    rep = Report(title=f"{BENCHMARK_TITLES[bench]}: {cfg.rm} on {cfg.data}", results={"benchmark": bench, **res})
    if bench == "processbench":
        keys = ("n_erroneous", "n_correct", "error_accuracy", "correct_accuracy", "f1")
        table = [{"split": name, **{k: r[k] for k in keys}} for name, r in res["splits"].items()]
        table.append({"split": "all", **{k: res[k] for k in keys}})
        rep.tables.append(Table(f"ProcessBench (first error = first step scored below {cfg.prm_threshold})", table))
        return rep
    rep.tables.append(Table("Accuracy per subset", [{"subset": s, "accuracy": a} for s, a in sorted(res["subsets"].items())]))
    if bench == "rewardbench":
        rep.tables.append(Table("Sections (subsets weighted by their example counts) and overall",
                                [*({"section": k, "score": v} for k, v in res["sections"].items()), {"section": "overall", "score": res["overall"]}]))
    else:
        rep.tables.append(Table("Overall (mean of the subsets)", [{"overall": res["overall"], **({"ties": res["ties"]["score"]} if res["ties"] else {})}]))
    return rep
