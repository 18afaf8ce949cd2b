"""`rewardlab verify`: verify one prediction, or a JSONL file of them.

    rewardlab verify --gold '\\frac{1}{2}' --pred 'so the answer is $0.5$'
    rewardlab verify --input data/samples/verify_sample.jsonl --output outputs/verified.jsonl

Input rows: `prediction` (or --prediction-column; `completion` / `response` when there is no
`prediction`), `gold` (or --gold-column; `answer` when there is no `gold`), optional `kind` (else
--kind) and `options` (an object passed to the kind). For kind `code` the gold may also be a list
(MBPP's assert strings, or stdin/stdout case objects) and an `entry_point` / `test_setup_code`
field is used as HumanEval / MBPP do. Lines are numbered from 1. Every other field is copied to
the output row, which adds `verdict`, `score`,
`extracted`, `gold_parsed`, `detail`, `elapsed` and `kind`. The output file is written to a
temporary file and renamed at the end, so an interrupted run never leaves half a file.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardlab.config import add_config_args, check_fields, config_from_args, opt
from rewardlab.runs import write_file_atomically
from verifiers._common import MAX_DEPTH, depth
from verifiers.api import ItemsConfig
from verifiers.registry import KINDS, kind_names


# the pieces, listed last to first: a dataclass puts the fields of its last base first (--help's order)
@dataclass(frozen=True)
class VerifyConfig(ItemsConfig):
    """verify: one pair or a file (its columns, time limit and workers: `ItemsConfig`)."""

    gold: str | None = opt(None, "gold answer (single-item mode, with --pred)")
    pred: str | None = opt(None, "prediction to verify (single-item mode, with --gold)")
    kind: str = opt("math", "verifier kind, the default for rows without `kind` (math, numeric, choice, string, regex, code)")
    input: str | None = opt(None, "JSONL file with rows {prediction, gold, kind?, options?} (file mode)")
    output: str | None = opt(None, "JSONL file to write the verified rows to (file mode)")
    option: list[str] = opt([], "kind option as key=value (value read as JSON when it parses), repeatable")
    batch_size: int = opt(256, "items per call to verify_batch in file mode (progress is updated per batch)", ge=1)
    json: bool = opt(False, "single-item mode: print the result as JSON")

    def check_verify(self) -> None:
        check_fields(self, VerifyConfig)
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r} for --kind; valid kinds: {', '.join(kind_names())}")
        single = self.gold is not None or self.pred is not None
        if single and self.input:
            raise ValueError("give either --gold/--pred (one item) or --input FILE (a file), not both")
        if single and (self.gold is None or self.pred is None):
            missing = "--gold" if self.gold is None else "--pred"
            raise ValueError(f"missing {missing}: single-item mode needs both --gold and --pred")
        if not single and not self.input:
            raise ValueError("nothing to verify: pass --gold G --pred P, or --input items.jsonl --output out.jsonl")
        if self.input and not self.output:
            raise ValueError("missing --output: file mode writes the verified rows to --output out.jsonl")
        for item in self.option:
            if "=" not in item or not item.split("=", 1)[0]:
                raise ValueError(f"--option must look like key=value, got {item!r}")

    def __post_init__(self) -> None:
        self.check_items()
        self.check_verify()

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for item in self.option:
            key, value = item.split("=", 1)
            try:
                out[key] = json.loads(value)
            except json.JSONDecodeError:
                out[key] = value
        return out


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, VerifyConfig)


class InputError(ValueError):
    """A bad input row: the message names the file, the line and the field."""


PREDICTION_FALLBACKS, GOLD_FALLBACKS = ("completion", "response"), ("answer",)


def _field(row: dict, wanted: str, default: str, fallbacks: tuple[str, ...]) -> str:
    """The row's field for `wanted`: itself, or (when `wanted` is the default) the first fallback present."""
    if wanted in row or wanted != default:
        return wanted
    return next((f for f in fallbacks if f in row), wanted)


def _gold(value: Any, kind: str, row: dict, field: str, where: str) -> str:
    """The gold text; for kind code, the hub's test shapes too (`verifiers.code_kind.code_gold`)."""
    if kind == "code" and (not isinstance(value, str) or row.get("entry_point") or row.get("test_setup_code")):
        from verifiers.code_kind import code_gold

        try:
            prompt = row.get("prompt") if isinstance(row.get("prompt"), str) else None
            return code_gold(value, row.get("entry_point"), row.get("test_setup_code"), prompt)
        except ValueError as exc:
            raise InputError(f"{where}: field {field!r}: {exc}") from None
    if not isinstance(value, str):
        extra = " (a list of tests is accepted with kind code)" if isinstance(value, list) else ""
        raise InputError(f"{where}: field {field!r} must be a string, got {type(value).__name__}{extra}")
    return value


def read_items(path: str | Path, default_kind: str, default_options: dict[str, Any], prediction_column: str = "prediction",
               gold_column: str = "gold") -> tuple[list[dict], list[tuple]]:
    """(rows, items) from a JSONL file; raises InputError naming file, line (from 1) and field."""
    rows, items = [], []
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--input {path}: no such file")
    with path.open(encoding="utf-8", errors="surrogateescape") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
            except RecursionError:
                raise InputError(f"{where}: JSON nested too deeply (more than {MAX_DEPTH} levels are refused)") from None
            if not isinstance(row, dict):
                raise InputError(f"{where}: expected a JSON object with fields prediction and gold")
            deep = next((key for key, value in row.items() if depth(value) > MAX_DEPTH), None)
            if deep is not None:
                raise InputError(f"{where}: field {deep!r} is nested more than {MAX_DEPTH} levels deep")
            pred_field = _field(row, prediction_column, "prediction", PREDICTION_FALLBACKS)
            gold_field = _field(row, gold_column, "gold", GOLD_FALLBACKS)
            for field, fallbacks in ((pred_field, PREDICTION_FALLBACKS), (gold_field, GOLD_FALLBACKS)):
                if field not in row:
                    also = f" (nor {' / '.join(map(repr, fallbacks))})" if field in ("prediction", "gold") else ""
                    raise InputError(f"{where}: missing field {field!r}{also}; the row has {sorted(row)}")
            if not isinstance(row[pred_field], str):
                raise InputError(f"{where}: field {pred_field!r} must be a string, got {type(row[pred_field]).__name__}")
            kind = row.get("kind", default_kind)
            if kind not in KINDS:
                raise InputError(f"{where}: field 'kind': unknown kind {kind!r}; valid kinds: {', '.join(kind_names())}")
            gold = _gold(row[gold_field], kind, row, gold_field, where)
            options = row.get("options", {})
            if not isinstance(options, dict):
                raise InputError(f"{where}: field 'options' must be an object, got {type(options).__name__}")
            rows.append(row)
            items.append((row[pred_field], gold, kind, {**default_options, **options}))
    if not rows:
        raise InputError(f"{path}: no rows (expected one JSON object per line)")
    return rows, items


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    write_file_atomically(path, write)


def summary_table(verdicts: list[str], seconds: float) -> str:
    """A verdict count table, e.g. for 3 items:

    >>> print(summary_table(["correct", "correct", "timeout"], 1.5))
    verdict      count       %
    correct          2   66.7%
    timeout          1   33.3%
    total            3  100.0%
    3 items in 1.50 s (2.0 items/s)
    """
    counts = collections.Counter(verdicts)
    n = len(verdicts)
    lines = [f"{'verdict':<10} {'count':>7} {'%':>7}"]
    for verdict, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"{verdict:<10} {count:>7} {100 * count / n:>6.1f}%")
    lines.append(f"{'total':<10} {n:>7} {100.0:>6.1f}%")
    rate = n / seconds if seconds > 0 else float("inf")
    lines.append(f"{n} items in {seconds:.2f} s ({rate:.1f} items/s)")
    return "\n".join(lines)


def _run_file(config: VerifyConfig) -> int:
    from rewardlab.progress import progress_bar
    from verifiers.api import verify_items

    rows, items = read_items(config.input, config.kind, config.options(), config.prediction_column, config.gold_column)
    start = time.perf_counter()
    results = []
    with progress_bar(total=len(items), desc="verify", unit="items", file=sys.stderr) as bar:
        for lo in range(0, len(items), config.batch_size):
            batch = items[lo : lo + config.batch_size]
            results += verify_items(batch, timeout=config.timeout, workers=config.workers)
            bar.update(len(batch))
    seconds = time.perf_counter() - start
    out_rows = []
    for row, result in zip(rows, results):
        d = result.to_dict()
        out_rows.append({**row, **{k: d[k] for k in ("verdict", "score", "extracted", "gold_parsed", "detail", "elapsed", "kind")}})
    _write_jsonl(Path(config.output), out_rows)
    print(summary_table([r.verdict.value for r in results], seconds))
    print(f"wrote {len(out_rows)} rows to {config.output}")
    return 0


def _run_single(config: VerifyConfig) -> int:
    from verifiers.api import verify_items

    (result,) = verify_items([(config.pred, config.gold, config.kind, config.options())], timeout=config.timeout, workers=1)
    if config.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return 0
    print(f"verdict:   {result.verdict.value}")
    print(f"extracted: {result.extracted}")
    print(f"gold:      {result.gold_parsed}")
    print(f"detail:    {result.detail}")
    print(f"kind:      {result.kind}  ({result.elapsed * 1000:.1f} ms)")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(VerifyConfig, args)
        return _run_file(config) if config.input else _run_single(config)
    except (ValueError, TypeError) as exc:
        print(f"rewardlab verify: {exc}", file=sys.stderr)
        return 2
