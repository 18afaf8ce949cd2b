"""`rewardlab eval-rm`: reward-model accuracy, calibration, shift and OOD checks, and an OOD `check` mode.

    rewardlab eval-rm --rm PATH [--data FILE] [--out DIR]                  # full evaluation
    rewardlab eval-rm --mode check --rm PATH --samples FILE [--out DIR]    # are these samples in-distribution?

Writes report.json / report.md / report.html with plots into --out and prints a compact table.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardlab.config import add_config_args, config_from_args, opt, save_config

from eval.shifts import FIELDS, SHIFTS

MODES = ("eval", "check")


@dataclass(frozen=True)
class EvalRMConfig:
    rm: str = opt("", "reward model: a directory or hub name (the project's own, or a hub sequence-classification RM / PRM)")
    rm_kind: str = opt("auto", "auto: what the checkpoint is; prm: also a causal LM as a step-tag PRM (Math-Shepherd)",
                       choices=("auto", "bt", "prm", "quantile"))
    rm_option: tuple[str, ...] = opt((), "key=value options for a hub-format model (label=, tag=, good=, bad=, system=, "
                                         "max_length=, trust_remote_code=), repeatable")
    mode: str = opt("eval", "eval: accuracy/calibration/shift/OOD report; check: flag --samples as out of distribution",
                    choices=MODES)
    data: str | None = opt(None, "evaluation file (JSONL/Parquet/CSV) or hub dataset; default: held-out synthetic rows "
                                 "from reward_models.data matching the RM kind")
    benchmark: str = opt("auto", "score --data as a benchmark: rewardbench (v1: accuracy per subset, section scores weighted by "
                                 "example counts), rewardbench2 (best-of-4, Ties), processbench (first-error F1); auto: by the "
                                 "hub name or the file's columns; none: an ordinary evaluation",
                         choices=("auto", "none", "rewardbench", "rewardbench2", "processbench"))
    split: str | None = opt(None, "hub split of --data (default: the benchmark's own: filtered, test, gsm8k; else train)")
    prompt_column: str = opt("prompt", "column of --data holding the prompt (default: `prompt`, else `question` / `problem`)")
    train_data: str | None = opt(None, "in-distribution rows the RM was trained on (fits the Mahalanobis detector); "
                                       "default: the synthetic train split")
    samples: str | None = opt(None, "check mode: file of policy samples with `prompt` and `response` (or `completion`) columns")
    out: str = opt("outputs/eval-rm", "output directory for report.json/.md/.html and plots")
    n: int = opt(256, "evaluation rows to use (first n of --data, or n generated)")
    n_train: int = opt(512, "in-distribution training rows for the OOD detector")
    batch_size: int = opt(32, "scoring batch size")
    n_bins: int = opt(10, "calibration bins (ECE / MCE / reliability diagram)")
    n_boot: int = opt(1000, "bootstrap resamples for accuracy confidence intervals")
    val_fraction: float = opt(0.3, "fraction of the eval rows used to fit the temperature (the rest is the test split)")
    shifts: tuple[str, ...] = opt(("substitute", "insert", "delete"), f"word-level shifts to apply ({', '.join(SHIFTS)})")
    shift_fields: tuple[str, ...] = opt(("response", "prompt", "both"), f"what to shift ({', '.join(FIELDS)})")
    shift_levels: tuple[float, ...] = opt((0.1, 0.25, 0.5), "shift rates p (fraction of words) for the accuracy/ECE sweep")
    ood_p: float = opt(0.5, "shift rate of the out-of-distribution set for OOD detection")
    target_fpr: float = opt(0.05, "check mode: false-positive rate the threshold is calibrated to on held-out in-distribution data")
    prm_threshold: float = opt(0.5, "PRM: a step counts as predicted correct when its probability >= this")
    score_column: str = opt("auto", "quantile RM: column with the true score, compared with the mixed quantiles; "
                                    "auto: each model attribute that is a column, against its own quantiles")
    subset_column: str = opt("auto", "column naming each pair's subset for per-subset accuracy; auto: `subset`, else `error_type`")
    seed: int = opt(0, "seed for splits, shifts and bootstrap")
    cpu_threads: int = opt(0, "torch CPU threads on CPU (0: 1 on a machine with <= 2 cores, else half of them; rewardlab/runtime.py)")
    progress: bool = opt(True, "show progress bars")

    def __post_init__(self) -> None:
        if not self.rm:
            raise ValueError("--rm is required: a reward-model directory saved by `rewardlab train-rm`")
        if self.mode == "check" and not self.samples:
            raise ValueError("--mode check needs --samples FILE (policy samples with `prompt` and `response` columns)")
        bad = [s for s in self.shifts if s not in SHIFTS]
        if bad:
            raise ValueError(f"--shifts: unknown {bad}; valid: {', '.join(SHIFTS)}")
        bad = [f for f in self.shift_fields if f not in FIELDS]
        if bad:
            raise ValueError(f"--shift-fields: unknown {bad}; valid: {', '.join(FIELDS)}")
        if not self.shifts or not self.shift_fields:
            raise ValueError("--shifts and --shift-fields need at least one value each")
        for name in ("n", "n_train", "batch_size", "n_bins", "n_boot"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if any(not 0.0 <= p <= 1.0 for p in (*self.shift_levels, self.ood_p)):
            raise ValueError("--shift-levels and --ood-p must be in [0, 1]")
        if not 0.0 < self.val_fraction < 1.0:
            raise ValueError(f"--val-fraction must be in (0, 1), got {self.val_fraction}")
        if not 0.0 < self.target_fpr < 1.0:
            raise ValueError(f"--target-fpr must be in (0, 1), got {self.target_fpr}")


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, EvalRMConfig)


def run_check(rm: Any, cfg: EvalRMConfig, out: Path):
    """Fit the OOD monitor on in-distribution rows and check the samples file."""
    from eval.data import RM_KIND_TO_DATA, rows_or_default
    from rewardlab.tables import read_table
    from reward_models.ood import OODMonitor
    from eval.report import Report, Table

    train_rows = rows_or_default(cfg.train_data, RM_KIND_TO_DATA[rm.kind], cfg.n_train, "train", cfg.seed, "--train-data")
    monitor = OODMonitor.fit(rm, train_rows, target_fpr=cfg.target_fpr, seed=cfg.seed, batch_size=cfg.batch_size)
    samples = read_table(str(cfg.samples), "train", flag="--data")
    col = next((c for c in ("response", "completion") if samples and c in samples[0]), None)
    if col is None:
        raise ValueError(f"--samples {cfg.samples}: needs a `response` (or `completion`) column; found {sorted(samples[0]) if samples else []}")
    report = monitor.check([str(r.get("prompt") or "") for r in samples], [str(r[col]) for r in samples])
    monitor.save(out / "monitor.npz")
    rep = Report(title=f"OOD check of {cfg.samples} against {cfg.rm}", results=report.to_dict(with_scores=True))
    rep.tables.append(Table("OOD check", [report.to_dict()]))
    rep.notes.append(f"batch is {'OUT OF' if report.batch_is_ood else 'within'} the reward model's training distribution")
    return rep


def run(args: argparse.Namespace) -> int:
    """Run the command; bad input is reported as one line on stderr with exit code 2."""
    try:
        return _run(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"rewardlab eval-rm: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    cfg = config_from_args(EvalRMConfig, args)
    from rewardlab.runtime import setup_cpu_threads

    setup_cpu_threads(cfg.cpu_threads, "eval-rm")
    from reward_models import load_reward_model

    from eval.rm_eval import evaluate_rm

    out = Path(cfg.out)
    save_config(cfg, out)
    options = {}
    for item in cfg.rm_option:
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"--rm-option must look like key=value, got {item!r}")
        from rewards.spec import spec_value

        options[key.strip()] = spec_value(value.strip())
    rm = load_reward_model(cfg.rm, flag="--rm", kind=None if cfg.rm_kind == "auto" else cfg.rm_kind, **options)
    rep = run_check(rm, cfg, out) if cfg.mode == "check" else evaluate_rm(rm, cfg, out)
    paths = rep.write(out)
    print(rep.terminal_summary())
    print(f"\nreport: {paths['md']}  (also {paths['json'].name}, {paths['html'].name})")
    return 0
