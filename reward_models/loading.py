"""Loading and checking reward-model training data.

Formats (the ecosystem's, see docs/reward_models.md): preference {prompt?, chosen, rejected,
margin?}, stepwise {prompt, completions, labels}, scored {prompt, response, <numeric score
columns>}; text fields are strings or chat messages. Files are read with `datasets`
(JSONL/JSON, Parquet, CSV) and anything else is taken as a hub dataset name
(`rewardlab.tables.read_table`).

`normalize_rows` brings the hub's other shapes to these formats, as TRL does:
- preference pairs whose `chosen` / `rejected` repeat the prompt (UltraFeedback-binarized holds the
  user turn in both; TRL's "implicit prompt" pairs have no `prompt` at all): the shared leading
  messages (or words) become the prompt and are removed from both responses (`extract_prompt`);
- Math-Shepherd rows {input, label} (steps ending with the tag "ки", which `label` replaces with
  "+" or "-") and ProcessBench rows {problem, steps, label = first wrong step or -1} become stepwise
  rows (`from_math_shepherd`, `from_processbench`).

`check_rows` stops a run before training with an error naming the source, the row and the
column: a missing required column, an empty preferred (`chosen`) response, a label list whose
length differs from the steps, a non-numeric score. A `rejected` or scored `response` may be the
empty string: a policy that answers nothing is a real sample (and the negative a reward model
must learn), but it may not be missing.

>>> check_rows([{"prompt": "1+1=", "chosen": " ", "rejected": "3"}], "preference", "toy.jsonl")
Traceback (most recent call last):
...
rewardlab.tables.DataError: toy.jsonl: row 1: column 'chosen' is empty; a preferred response needs text
"""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

from rewardlab.config import check_fields, opt
from rewardlab.tables import FILE_BUILDERS, DataError, read_table, row_label

# format -> (required columns, optional columns)
FORMATS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "preference": (("chosen", "rejected"), ("prompt", "margin")),
    "stepwise": (("prompt", "completions", "labels"), ()),
    "scored": (("prompt", "response"), ()),
}
# the formats each kind trains on, the first being the one the generator produces by default
KIND_FORMATS: dict[str, tuple[str, ...]] = {"bt": ("preference",), "quantile": ("scored", "preference"), "prm": ("stepwise",)}
STEP_TAG = "ки"  # Math-Shepherd's step tag
NOT_SCORES = {"prompt", "response", "chosen", "rejected", "completions", "labels", "answer", "error_type", "margin", "id"}


def load_rm_rows(source: str, split: str = "train", flag: str = "--data", prompt_column: str = "prompt") -> list[dict[str, Any]]:
    """Rows of a local JSONL/JSON/Parquet/CSV file, or of split `split` of a hub dataset, in the
    formats above (`normalize_rows`); `prompt_column` names the prompt (a GSM8K `question` or
    MATH `problem` column is used when there is no `prompt`)."""
    from rewardlab.tables import PROMPT_FALLBACKS, use_columns

    rows = read_table(source, split, flag=flag)
    use_columns(rows, {"prompt": (prompt_column, PROMPT_FALLBACKS, "--prompt-column")}, f"{flag} {source!r}",
                required=["prompt"] if prompt_column != "prompt" else [])
    return normalize_rows(rows, f"{flag} {source!r}")


# ---------------------------------------------------------------------------------------------
# the hub's shapes -> the formats above

def _is_messages(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(m, dict) and "content" in m for m in value)


def extract_prompt(prompt: Any, chosen: Any, rejected: Any) -> tuple[Any, Any, Any]:
    """(prompt, chosen, rejected) with the part `chosen` and `rejected` share at the start moved
    to the prompt (TRL's `maybe_extract_prompt`): whole messages for chat pairs, whole words for
    text pairs. A prompt of the same type as the responses is kept as it is; a text prompt of a
    chat pair that shares nothing becomes a user message.

    >>> user = {"role": "user", "content": "2+2?"}
    >>> extract_prompt("2+2?", [user, {"role": "assistant", "content": "4"}], [user, {"role": "assistant", "content": "5"}])
    ([{'role': 'user', 'content': '2+2?'}], [{'role': 'assistant', 'content': '4'}], [{'role': 'assistant', 'content': '5'}])
    >>> extract_prompt(None, "Q: 2+2? A: 4", "Q: 2+2? A: 45")
    ('Q: 2+2? A:', ' 4', ' 45')
    """
    chat = _is_messages(chosen) and _is_messages(rejected)
    if prompt is not None and prompt != "" and _is_messages(prompt) == chat:
        return prompt, chosen, rejected
    if chat:
        k = 0
        while k < min(len(chosen), len(rejected)) - 1 and chosen[k] == rejected[k]:
            k += 1
        if k == 0:
            shared = [{"role": "user", "content": str(prompt)}] if prompt else []
            return shared, list(chosen), list(rejected)
        return list(chosen[:k]), list(chosen[k:]), list(rejected[k:])
    if not isinstance(chosen, str) or not isinstance(rejected, str):
        return prompt, chosen, rejected
    k = 0
    while k < min(len(chosen), len(rejected)) and chosen[k] == rejected[k]:
        k += 1
    cut = max(chosen.rfind(" ", 0, k), chosen.rfind("\n", 0, k))  # the last word boundary both share
    if cut <= 0:
        return prompt or "", chosen, rejected
    return chosen[:cut], chosen[cut:], rejected[cut:]


def from_math_shepherd(row: dict[str, Any], where: str) -> dict[str, Any]:
    r"""A stepwise row from Math-Shepherd's {input, label}: each step of `input` ends with the tag
    "ки", which `label` replaces with "+" (a right step) or "-" (a wrong one); the question is the
    text before "Step 1:".

    >>> r = from_math_shepherd({"input": "Q? Step 1: 1+1=2 ки\nStep 2: 2+2=5 ки", "label": "Q? Step 1: 1+1=2 +\nStep 2: 2+2=5 -"}, "x")
    >>> r["prompt"], r["completions"], r["labels"]
    ('Q?', ['Step 1: 1+1=2', 'Step 2: 2+2=5'], [True, False])
    """
    text, marks = str(row["input"]), str(row["label"])
    pieces = text.split(STEP_TAG)[:-1]
    if not pieces:
        raise DataError(f"{where}: column 'input' has no step tag {STEP_TAG!r}")
    labels, offset = [], 0
    for piece in pieces:
        offset += len(piece)
        mark = marks[offset : offset + 1]
        if mark not in ("+", "-"):
            raise DataError(f"{where}: column 'label' has {mark!r} where 'input' has a step tag; expected '+' or '-'")
        labels.append(mark == "+")
        offset += 1
    first = re.search(r"Step 1\s*:", pieces[0])
    prompt = pieces[0][: first.start()].strip() if first else ""
    steps = [pieces[0][first.start() if first else 0 :].strip()] + [p.strip() for p in pieces[1:]]
    return {**{k: v for k, v in row.items() if k not in ("input", "label")}, "prompt": prompt, "completions": steps, "labels": labels}


def from_processbench(row: dict[str, Any], where: str) -> dict[str, Any]:
    """A stepwise row from ProcessBench's {problem, steps, label}: `label` is the index (from 0) of
    the first wrong step, -1 when all are right; steps from the first wrong one on are labelled wrong.

    >>> from_processbench({"problem": "Q", "steps": ["a", "b", "c"], "label": 1}, "x")["labels"]
    [True, False, False]
    """
    steps, first = list(row["steps"]), row["label"]
    if isinstance(first, bool) or not isinstance(first, int) or not -1 <= first < len(steps):
        raise DataError(f"{where}: column 'label' is {first!r}; ProcessBench's label is the index of the first wrong step "
                        f"(0..{len(steps) - 1}) or -1")
    labels = [first == -1 or k < first for k in range(len(steps))]
    return {**row, "prompt": row.get("prompt", row.get("problem", "")), "completions": steps, "labels": labels}


def normalize_rows(rows: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """The rows in this module's formats (see the module docstring); other rows are returned as they are."""
    if not rows:
        return rows
    first = rows[0]
    out = []
    for i, row in enumerate(rows):
        where = f"{source}: {row_label(i)}"
        if "input" in first and "label" in first and "completions" not in first and STEP_TAG in str(first["input"]):
            row = from_math_shepherd(row, where)
        elif "steps" in first and "label" in first and "completions" not in first:
            row = from_processbench(row, where)
        elif "chosen" in row and "rejected" in row:
            prompt, chosen, rejected = extract_prompt(row.get("prompt"), row["chosen"], row["rejected"])
            if prompt is not None or "prompt" in row:
                row = {**row, "prompt": prompt, "chosen": chosen, "rejected": rejected}
        out.append(row)
    return out


def detect_format(rows: Sequence[dict[str, Any]], kind: str, source: str) -> str:
    """The first format of `kind` whose required columns the first row has."""
    if not rows:
        raise DataError(f"{source}: no rows")
    for fmt in KIND_FORMATS[kind]:
        if all(col in rows[0] for col in FORMATS[fmt][0]):
            return fmt
    need = " or ".join(f"{fmt} ({', '.join(FORMATS[fmt][0])})" for fmt in KIND_FORMATS[kind])
    raise DataError(f"{source}: row 1: kind {kind!r} needs {need} columns; the data has {', '.join(rows[0]) or 'none'}")


def score_columns_of(rows: Sequence[dict[str, Any]], requested: Sequence[str], source: str) -> list[str]:
    """The score columns: `requested`, or every column of row 1 that holds a number."""
    if requested:
        return list(requested)
    cols = [k for k, v in rows[0].items() if k not in NOT_SCORES and isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not cols:
        raise DataError(f"{source}: row 1: scored data needs at least one numeric score column (besides prompt/response); pass --score-columns")
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
        where = f"{source}: {row_label(i)}"
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


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class RMRowsConfig:
    """Where train-rm's rows come from (a file, or generated) and its held-out split: a piece of its config."""

    data: str | None = opt(None, "training data: a JSONL/Parquet/CSV file or a hub dataset name; default: generated from arithmetic problems")
    prompt_column: str = opt("prompt", "column holding the prompt; default: `prompt`, else `question` or `problem` (docs/reward_models.md)")
    eval_data: str | None = opt(None, "held-out data (same format, or rm-data's samples); default: the generator's test split, or --eval-fraction of --data")
    n_train: int = opt(2000, "generated data: training rows", ge=1)
    n_eval: int = opt(400, "generated data: held-out rows (the task's fixed test split)", ge=1)
    eval_fraction: float = opt(0.1, "with --data and no --eval-data: share of prompts held out")

    def check_rm_rows(self) -> None:
        check_fields(self, RMRowsConfig)
        if not 0 < self.eval_fraction < 1:
            raise ValueError(f"--eval-fraction must be in (0, 1), got {self.eval_fraction}")

    __post_init__ = check_rm_rows
