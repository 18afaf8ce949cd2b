"""Loading and checking reward-model training data.

Formats (the ecosystem's, see docs/reward_models.md): preference {prompt?, chosen, rejected,
margin?}, stepwise {prompt, completions, labels}, scored {prompt, response, <numeric score
columns>}; text fields are strings or chat messages. Files are read with `datasets`
(JSONL/JSON, Parquet, CSV) and anything else is taken as a hub dataset name.

`check_rows` stops a run before training with an error naming the source, the row and the
column: a missing required column, an empty preferred (`chosen`) response, a label list whose
length differs from the steps, a non-numeric score. A `rejected` or scored `response` may be the
empty string: a policy that answers nothing is a real sample (and the negative a reward model
must learn), but it may not be missing.

>>> check_rows([{"prompt": "1+1=", "chosen": " ", "rejected": "3"}], "preference", "toy.jsonl")
Traceback (most recent call last):
...
reward_models.loading.DataError: toy.jsonl: row 0: column 'chosen' is empty; a preferred response needs text
"""

from __future__ import annotations

import math
import zlib
from pathlib import Path
from typing import Any, Sequence

# format -> (required columns, optional columns)
FORMATS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "preference": (("chosen", "rejected"), ("prompt", "margin")),
    "stepwise": (("prompt", "completions", "labels"), ()),
    "scored": (("prompt", "response"), ()),
}
# the formats each kind trains on, the first being the one the generator produces by default
KIND_FORMATS: dict[str, tuple[str, ...]] = {"bt": ("preference",), "quantile": ("scored", "preference"), "prm": ("stepwise",)}
FILE_BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
NOT_SCORES = {"prompt", "response", "chosen", "rejected", "completions", "labels", "answer", "error_type", "margin", "id"}


class DataError(ValueError):
    """Bad training data; the message names the file, the row and the column."""


def load_rows(source: str, split: str = "train") -> list[dict[str, Any]]:
    """Rows of a local JSONL/JSON/Parquet/CSV file, or of split `split` of a hub dataset."""
    from datasets import load_dataset

    path = Path(source)
    if path.exists():
        builder = FILE_BUILDERS.get(path.suffix.lower())
        if builder is None:
            raise DataError(f"{source}: unsupported file type {path.suffix!r}; use one of {', '.join(FILE_BUILDERS)}")
        try:
            ds = load_dataset(builder, data_files=str(path), split="train")
        except Exception as exc:  # datasets raises many types for unreadable files
            raise DataError(f"{source}: cannot be read as {builder}: {type(exc).__name__}: {exc}") from exc
    else:
        if any(sep in source for sep in ("/", "\\")) and source.endswith(tuple(FILE_BUILDERS)):
            raise DataError(f"{source}: no such file")
        try:
            ds = load_dataset(source, split=split)
        except Exception as exc:
            raise DataError(f"{source}: not a file and not a loadable hub dataset ({type(exc).__name__}: {exc})") from exc
    return [dict(r) for r in ds]


def detect_format(rows: Sequence[dict[str, Any]], kind: str, source: str) -> str:
    """The first format of `kind` whose required columns the first row has."""
    if not rows:
        raise DataError(f"{source}: no rows")
    for fmt in KIND_FORMATS[kind]:
        if all(col in rows[0] for col in FORMATS[fmt][0]):
            return fmt
    need = " or ".join(f"{fmt} ({', '.join(FORMATS[fmt][0])})" for fmt in KIND_FORMATS[kind])
    raise DataError(f"{source}: row 0: kind {kind!r} needs {need} columns; the data has {', '.join(rows[0]) or 'none'}")


def score_columns_of(rows: Sequence[dict[str, Any]], requested: Sequence[str], source: str) -> list[str]:
    """The score columns: `requested`, or every column of row 0 that holds a number."""
    if requested:
        return list(requested)
    cols = [k for k, v in rows[0].items() if k not in NOT_SCORES and isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not cols:
        raise DataError(f"{source}: row 0: scored data needs at least one numeric score column (besides prompt/response); pass --score-columns")
    return cols


def _is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple)):
        return not value or all(isinstance(m, dict) and not str(m.get("content", "")).strip() for m in value)
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_rows(rows: Sequence[dict[str, Any]], fmt: str, source: str, score_columns: Sequence[str] = ()) -> None:
    """Raise `DataError` at the first bad row (see the module docstring)."""
    required, _ = FORMATS[fmt]
    for i, row in enumerate(rows):
        where = f"{source}: row {i}"
        for col in (*required, *score_columns):
            if col not in row or row[col] is None:
                raise DataError(f"{where}: column {col!r} is missing; {fmt} data needs {', '.join((*required, *score_columns))}")
        if "chosen" in required and _is_empty(row["chosen"]):
            raise DataError(f"{where}: column 'chosen' is empty; a preferred response needs text")
        if "margin" in row and row["margin"] is not None and not _is_number(row["margin"]):
            raise DataError(f"{where}: column 'margin' is {row['margin']!r}, not a number")
        for col in score_columns:
            if not _is_number(row[col]):
                raise DataError(f"{where}: column {col!r} is {row[col]!r}, not a finite number")
        if fmt == "stepwise":
            steps, labels = row["completions"], row["labels"]
            if isinstance(steps, str) or not isinstance(steps, (list, tuple)) or not steps:
                raise DataError(f"{where}: column 'completions' must be a non-empty list of steps, got {type(steps).__name__}")
            if any(_is_empty(s) for s in steps):
                raise DataError(f"{where}: column 'completions' has an empty step")
            if not isinstance(labels, (list, tuple)) or len(labels) != len(steps):
                n = len(labels) if isinstance(labels, (list, tuple)) else type(labels).__name__
                raise DataError(f"{where}: column 'labels' has {n} labels for {len(steps)} steps; give one per step")
            if any(lab not in (True, False, 0, 1) for lab in labels):
                raise DataError(f"{where}: column 'labels' must hold booleans (or 0/1), got {labels!r}")


def heldout_split(rows: Sequence[dict[str, Any]], fraction: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, eval) split by a stable hash of the prompt, so one prompt never lands in both."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"eval fraction must be in (0, 1), got {fraction}")
    buckets = 1000
    train, held = [], []
    for row in rows:
        key = str(row.get("prompt", row.get("chosen", "")))
        (held if zlib.crc32(key.encode()) % buckets < fraction * buckets else train).append(row)
    return train, held
