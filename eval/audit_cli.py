"""`rewardlab audit-verifier`: run two verifiers over the same items and compare their verdicts.

    rewardlab audit-verifier --input items.jsonl --a ours:math --b math-verify
    rewardlab audit-verifier --input labelled.jsonl --a ours:math --b label

Writes report.json/.md/.html and disagreements.jsonl (one line per item where the verdicts differ)
into --out, and prints agreement and the confusion table.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from rewardlab.config import add_config_args, check_fields, config_from_args, opt, save_config
from verifiers.api import ItemsConfig


@dataclass(frozen=True)
class AuditConfig(ItemsConfig):
    """audit-verifier: the two verifiers and the items (their columns, time limit and workers: `ItemsConfig`)."""

    input: str = opt("", "items to verify: JSONL/Parquet/CSV with a prediction and a gold column",
                     required="a JSONL/Parquet/CSV file of items (prediction + gold columns)")
    a: str = opt("ours:math", "verifier A: ours:KIND[:key=value,...], math-verify, or label[:COLUMN]")
    b: str = opt("math-verify", "verifier B (same forms as --a)")
    out: str = opt("outputs/audit-verifier", "output directory")
    limit: int = opt(0, "audit only the first N items (0 = all)", ge=0)

    def check_audit(self) -> None:
        check_fields(self, AuditConfig)
        if self.a == self.b:
            raise ValueError(f"--a and --b are the same verifier ({self.a!r}); choose two different ones")

    def __post_init__(self) -> None:
        self.check_items()
        self.check_audit()


def _column(rows: list[dict], wanted: str, fallbacks: tuple[str, ...], flag: str) -> str:
    for c in (wanted, *fallbacks):
        if c in rows[0]:
            return c
    raise ValueError(f"{flag}: column {wanted!r} not in the input (also tried {list(fallbacks)}); found {sorted(rows[0])}")


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, AuditConfig)


def run(args: argparse.Namespace) -> int:
    """Run the command; bad input is reported as one line on stderr with exit code 2."""
    try:
        return _run(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"rewardlab audit-verifier: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    cfg = config_from_args(AuditConfig, args)
    from eval.audit import audit, build_auditor
    from rewardlab.tables import read_table
    from eval.report import Report, Table

    out = Path(cfg.out)
    rows = read_table(str(cfg.input), "train", flag="--data")[: cfg.limit or None]
    if not rows:
        raise ValueError(f"--input {cfg.input}: no rows")
    pcol = _column(rows, cfg.prediction_column, ("completion", "response"), "--prediction-column")
    gcol = _column(rows, cfg.gold_column, ("answer",), "--gold-column")
    a, b = (build_auditor(s, timeout=cfg.timeout, workers=cfg.workers) for s in (cfg.a, cfg.b))
    res = audit(a, b, [str(r[pcol]) for r in rows], [str(r[gcol]) for r in rows], rows)

    save_config(cfg, out)
    dump = out / "disagreements.jsonl"
    with dump.open("w") as f:
        for d in res["disagreements"]:
            f.write(json.dumps(d) + "\n")
    summary = {k: res[k] for k in ("n", "agreement", "correct_agreement", "kappa", "correct_rate_a", "correct_rate_b")}
    summary["disagreements"] = len(res["disagreements"])
    rep = Report(title=f"Verifier audit: A = {cfg.a}, B = {cfg.b} on {cfg.input}",
                 results={**summary, "confusion": res["confusion"], "disagreements_file": dump.name})
    rep.tables.append(Table("Agreement", [summary]))
    rep.tables.append(Table("Verdict confusion (rows: A, columns: B)", res["confusion"]))
    rep.tables.append(Table("First disagreements", [{k: d[k] for k in ("index", "prediction", "gold", "verdict_a", "verdict_b")}
                                                    for d in res["disagreements"][:20]], terminal=False))
    paths = rep.write(out)
    print(rep.terminal_summary())
    print(f"\n{len(res['disagreements'])} disagreements -> {dump}\nreport: {paths['md']}")
    return 0
