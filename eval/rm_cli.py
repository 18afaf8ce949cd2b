"""`rewardlab eval-rm`: reward-model accuracy, calibration, shift and OOD checks, and an OOD `check` mode.

    rewardlab eval-rm --rm PATH [--data FILE] [--out DIR]                  # full evaluation
    rewardlab eval-rm --mode check --rm PATH --samples FILE [--out DIR]    # are these samples in-distribution?

Writes report.json / report.md / report.html with plots into --out and prints a compact table.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rewardlab.config import add_config_args, check_fields, config_from_args, opt, save_config
from rewardlab.runtime import EvalRuntimeConfig

from eval.shifts import ShiftConfig
from reward_models.ood import OODConfig
from reward_models.scoring import RMSourceConfig

MODES = ("eval", "check")


# the pieces, listed last to first: a dataclass puts the fields of its last base first (--help's order)
@dataclass(frozen=True)
class EvalRMConfig(EvalRuntimeConfig, OODConfig, ShiftConfig, RMSourceConfig):
    """eval-rm: the model (`RMSourceConfig`), the shifts (`ShiftConfig`), the OOD detector (`OODConfig`),
    seed, threads and precision (`RuntimeConfig`), and the evaluation's own settings."""

    mode: str = opt("eval", "eval: accuracy/calibration/shift/OOD report; check: flag --samples as out of distribution", choices=MODES)
    data: str | None = opt(None, "evaluation file (JSONL/Parquet/CSV) or hub dataset; default: held-out synthetic rows matching the RM kind")
    benchmark: str = opt("auto", "score --data as a benchmark (rewardbench, rewardbench2, processbench; docs/eval.md); auto: by name or columns; none: off",
                         choices=("auto", "none", "rewardbench", "rewardbench2", "processbench"))
    split: str | None = opt(None, "hub split of --data (default: the benchmark's own: filtered, test, gsm8k; else train)")
    prompt_column: str = opt("prompt", "column of --data holding the prompt (default: `prompt`, else `question` / `problem`)")
    out: str = opt("outputs/eval-rm", "output directory for report.json/.md/.html and plots")
    n: int = opt(256, "evaluation rows to use (first n of --data, or n generated)", ge=1)
    batch_size: int = opt(32, "scoring batch size", ge=1)
    n_bins: int = opt(10, "calibration bins (ECE / MCE / reliability diagram)", ge=1)
    n_boot: int = opt(1000, "bootstrap resamples for accuracy confidence intervals", ge=1)
    val_fraction: float = opt(0.3, "fraction of the eval rows used to fit the temperature (the rest is the test split)", gt=0, lt=1)
    prm_threshold: float = opt(0.5, "PRM: a step counts as predicted correct when its probability >= this")
    score_column: str = opt("auto", "quantile RM: column with the true score (auto: each model attribute that is a column)")
    subset_column: str = opt("auto", "column naming each pair's subset for per-subset accuracy; auto: `subset`, else `error_type`")
    progress: bool = opt(True, "show progress bars")

    def __post_init__(self) -> None:
        for check in (self.check_rm_source, self.check_shifts, self.check_ood, self.check_runtime):
            check()
        check_fields(self, EvalRMConfig)
        if self.mode == "check" and not self.samples:
            raise ValueError("--mode check needs --samples FILE (policy samples with `prompt` and `response` columns)")


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
    import torch

    from reward_models import load_reward_model

    from eval.rm_eval import evaluate_rm

    from rewards.spec import spec_value
    from rewardlab.runtime import autocast

    options = {key.strip(): spec_value(value.strip()) for key, _, value in (item.partition("=") for item in cfg.rm_option)}
    rm = load_reward_model(cfg.rm, flag="--rm", kind=None if cfg.rm_kind == "auto" else cfg.rm_kind, **options)
    device = torch.device(rm.device).type
    cfg = replace(cfg, mixed_precision=cfg.precision(device))  # config.json: what auto chose
    out = Path(cfg.out)
    save_config(cfg, out)
    with autocast(cfg.mixed_precision, device):  # the scores are read back as fp32 numbers (.float() / .tolist())
        rep = run_check(rm, cfg, out) if cfg.mode == "check" else evaluate_rm(rm, cfg, out)
    paths = rep.write(out)
    print(rep.terminal_summary())
    print(f"\nreport: {paths['md']}  (also {paths['json'].name}, {paths['html'].name})")
    return 0
