"""Reading data tables, the same way in every command: a local JSONL / JSON / Parquet / CSV file,
or a hub dataset name.

- A source that looks like a local path (it exists, starts with `.`, `/` or `~`, has a data-file
  extension, or has more than one `/`) is only ever read from disk: a missing file is a clear
  "no such file", never a hub lookup with minutes of retries.
- An empty file (or split) is a clear error naming the source, never a `StopIteration`.
- Rows are numbered from 1 in every message: row 1 is the first data row (in a JSONL file without
  blank lines, its line number). `row_label(i)` turns a 0-based index into that label.
- Columns are named by flags (`--prompt-column`, `--answer-column`, ...); `use_columns` copies
  the named columns to the names the code reads (`prompt`, `answer`), trying documented
  fallbacks (GSM8K's `question`, MATH's `problem`) when the default name is absent.

>>> looks_local("data/x.jsonl"), looks_local("openai/gsm8k"), looks_local("./gsm8k")
(True, False, True)
>>> rows = [{"question": "1+1?", "answer": "2"}]
>>> use_columns(rows, {"prompt": ("prompt", PROMPT_FALLBACKS, "--prompt-column")}, "toy.jsonl")
'prompt <- question'
>>> rows[0]["prompt"]
'1+1?'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

FILE_BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
# where a prompt is found when the data has no `prompt` column: GSM8K `question`, MATH `problem`
PROMPT_FALLBACKS = ("question", "problem")


class DataError(ValueError):
    """Bad or missing data; the message names the source, the row (from 1) and the column."""


def row_label(index: int) -> str:
    """The label of the row at 0-based `index` (rows are numbered from 1 everywhere).

    >>> row_label(0)
    'row 1'
    """
    return f"row {index + 1}"


def looks_local(source: str) -> bool:
    """Whether `source` names a local file (never looked up on the hub)."""
    text = str(source)
    path = Path(text).expanduser()
    return (path.exists() or text.startswith((".", "/", "~")) or path.suffix.lower() in FILE_BUILDERS
            or text.count("/") > 1 or "\\" in text)


def read_table(source: str | Path, split: str = "train", flag: str = "--data", name: str | None = None) -> list[dict[str, Any]]:
    """Rows (plain dicts) of a local file or of split `split` of a hub dataset (`name` picks a
    hub configuration). Raises `DataError` for a missing or unreadable file, an unknown
    dataset and empty data."""
    text = str(source)
    where = f"{flag} {text!r}" if flag else repr(text)
    path = Path(text).expanduser()
    if looks_local(text):
        if not path.exists():
            raise DataError(f"{where}: no such file")
        if path.is_dir():
            raise DataError(f"{where}: is a directory; pass a {', '.join(FILE_BUILDERS)} file")
        builder = FILE_BUILDERS.get(path.suffix.lower())
        if builder is None:
            raise DataError(f"{where}: unsupported file type {path.suffix!r}; use one of {', '.join(FILE_BUILDERS)}")
        size = path.stat().st_size
        if size == 0 or (builder == "json" and size < 65536 and not path.read_bytes().strip()):
            raise DataError(f"{where}: the file is empty (no rows)")
        rows = _load(builder, data_files=str(path), split="train", where=where, what=f"as {builder}")
    else:
        rows = _load(text, name=name, split=split, where=where, what=f"as a hub dataset (split {split!r})")
    if not rows:
        raise DataError(f"{where}: no rows" + ("" if looks_local(text) else f" in split {split!r}"))
    return rows


def _load(path: str, where: str, what: str, **kwargs: Any) -> list[dict[str, Any]]:
    import datasets

    try:
        ds = datasets.load_dataset(path, **{k: v for k, v in kwargs.items() if v is not None})
    except Exception as exc:  # noqa: BLE001 - datasets raises many types; all become one clear message
        first = str(exc).splitlines()[0] if str(exc) else ""
        hint = "" if "hub" not in what else " (not a local file; is the name right and the hub reachable?)"
        raise DataError(f"{where}: cannot be read {what}{hint}: {type(exc).__name__}: {first}") from None
    return [dict(r) for r in ds]


def pick_column(rows: Sequence[dict[str, Any]], wanted: str, fallbacks: Sequence[str], flag: str, source: str) -> str:
    """The first of `wanted`, then `fallbacks` (only when `wanted` is the default), that row 1 has."""
    have = set(rows[0]) if rows else set()
    for column in (wanted, *fallbacks):
        if column in have:
            return column
    tried = f" (also tried {list(fallbacks)})" if fallbacks else ""
    raise DataError(f"{source}: {flag}: column {wanted!r} is not in the data{tried}; the rows have {sorted(have)}; "
                    f"name the right one with {flag} COLUMN")


def use_columns(rows: list[dict[str, Any]], columns: dict[str, tuple[str, Sequence[str], str]], source: str,
                required: Sequence[str] | None = None) -> str:
    """Copy each named column to its canonical name, in place: `columns` maps canonical name ->
    (column given by the flag, fallbacks tried when the flag is the default, flag). A canonical
    name not in `required` (default: all) is skipped when absent. Returns a note of what was
    used (e.g. "prompt <- question"), empty when nothing moved."""
    notes = []
    for canonical, (wanted, fallbacks, flag) in columns.items():
        fallbacks = fallbacks if wanted == canonical else ()
        try:
            column = pick_column(rows, wanted, fallbacks, flag, source)
        except DataError:
            if required is not None and canonical not in required:
                continue
            raise
        if column != canonical:
            notes.append(f"{canonical} <- {column}")
            for row in rows:
                row[canonical] = row.get(column)
    return ", ".join(notes)
