"""Loading evaluation rows: a JSONL / JSON / Parquet / CSV file or a hub dataset name (via
`datasets`), or the project's synthetic generators when no file is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}

# data kind -> (required columns, generator name in reward_models.data)
DATA_KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "preference": (("chosen", "rejected"), "make_preference_rows"),
    "stepwise": (("completions", "labels"), "make_stepwise_rows"),
    "scored": (("response",), "make_scored_rows"),
}
RM_KIND_TO_DATA = {"bt": "preference", "prm": "stepwise", "quantile": "scored"}


def load_rows(source: str | Path, split: str = "train", limit: int | None = None) -> list[dict[str, Any]]:
    """Rows of a local file (by extension) or a hub dataset name, as plain dicts."""
    import datasets

    path = Path(source)
    if path.suffix in BUILDERS:
        if not path.exists():
            raise FileNotFoundError(f"data file {str(path)!r} does not exist")
        ds = datasets.load_dataset(BUILDERS[path.suffix], data_files=str(path), split="train")
    elif path.exists():
        raise ValueError(f"cannot read {str(path)!r}: use a .jsonl, .json, .parquet or .csv file")
    else:
        try:
            ds = datasets.load_dataset(str(source), split=split)
        except Exception as exc:  # noqa: BLE001 - any hub/offline failure becomes one clear message
            raise ValueError(f"cannot load {str(source)!r}: not a local .jsonl/.json/.parquet/.csv file, and loading it as a "
                             f"dataset name failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    rows = [dict(r) for r in ds]
    return rows[:limit] if limit else rows


def check_columns(rows: Sequence[dict[str, Any]], data_kind: str, source: str = "data") -> None:
    """A clear error naming the missing columns (and what the kind expects)."""
    required, _ = DATA_KINDS[data_kind]
    if not rows:
        raise ValueError(f"{source}: no rows")
    missing = [c for c in required if c not in rows[0]]
    if missing:
        raise ValueError(f"{source}: {data_kind} data needs columns {list(required)} (plus an optional `prompt`); "
                         f"missing {missing}; found {sorted(rows[0])}")


def default_rows(data_kind: str, n: int, split: str, seed: int = 0) -> list[dict[str, Any]]:
    """Synthetic rows from `reward_models.data` (verifier-labelled, fixed held-out split)."""
    from reward_models import data as rm_data

    _, generator = DATA_KINDS[data_kind]
    return list(getattr(rm_data, generator)(n, seed=seed, split=split))


def rows_or_default(source: str | None, data_kind: str, n: int, split: str, seed: int = 0, what: str = "--data") -> list[dict[str, Any]]:
    rows = load_rows(source, limit=n) if source else default_rows(data_kind, n, split, seed)
    check_columns(rows, data_kind, source=f"{what} {source}" if source else f"default {split} {data_kind} rows")
    return rows
