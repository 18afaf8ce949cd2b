"""Prompt data: a procedural task spec or a dataset (JSONL / Parquet / CSV file or hub name), read
as rows `{prompt, ...columns the reward needs}`, and a resumable, seeded prompt stream.

Task specs: `arithmetic` or `arithmetic:digits=3,n_terms=2,ops=+` (the held-out split is the
task's fixed hash split); `worked=1` adds worked `solution`s (what `rewardlab sft` trains on);
`functions[:ops=+-*,n_tests=3,retry=P]` is the procedural code task (`verifiers.tasks.FunctionTask`).
For a task, `pool` picks one of its disjoint training pools (`rl`: RL's prompts, `rm` and
`rm_eval`: reward-model data and its validation; see `verifiers.tasks`), so that a reward model
is never trained on the prompts RL trains or is evaluated on; a dataset has no pools (`rl`
reports the overlap with what its reward model saw instead).

>>> rows = load_prompt_rows("arithmetic:digits=2", split="test", limit=3)
>>> sorted(rows[0])[:3], len(rows)
(['answer', 'expression', 'ops'], 3)
>>> stream = PromptStream(list(range(5)), seed=0)
>>> a = stream.take(3); state = stream.state(); b = stream.take(4)
>>> stream.load_state(state); stream.take(4) == b
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Sequence

from rewardlab.config import check_fields, opt

TASK_POOL = 20_000  # training prompts drawn from a procedural task (sampled with replacement)


TASK_OPTIONS = {  # task name -> its options (`ops` is text, the rest whole numbers)
    "arithmetic": ("digits", "n_terms", "ops", "heldout_every", "worked", "tool_calls"),
    "functions": ("ops", "n_tests", "heldout_every", "retry"),
}


def parse_task(spec: str) -> Any | None:
    """An `ArithmeticTask` for `arithmetic[:k=v,...]`, a `FunctionTask` for `functions[:k=v,...]`,
    else None (the spec is a dataset)."""
    from verifiers.tasks import ArithmeticTask, FunctionTask

    name, _, args = spec.partition(":")
    if name not in TASK_OPTIONS:
        return None
    keys = TASK_OPTIONS[name]
    kwargs: dict[str, Any] = {}
    for item in filter(None, args.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key not in keys:
            raise ValueError(f"--data {spec!r}: bad task option {item!r}; use key=value with keys {', '.join(keys)}")
        if key == "worked" and value not in ("0", "1"):
            raise ValueError(f"--data {spec!r}: worked must be 0 or 1, got {value!r}")
        if key != "ops" and not value.isdigit():
            raise ValueError(f"--data {spec!r}: {key} must be a whole number, got {value!r}")
        kwargs[key] = value if key == "ops" else bool(int(value)) if key == "worked" else int(value)
    try:
        return (ArithmeticTask if name == "arithmetic" else FunctionTask)(**kwargs)
    except ValueError as err:
        raise ValueError(f"--data {spec!r}: {err}") from None


def load_prompt_rows(spec: str, split: str = "train", limit: int | None = None, seed: int = 0, prompt_column: str = "prompt",
                     answer_column: str = "answer", flag: str = "--data", pool: str | None = None) -> list[dict[str, Any]]:
    """Rows of a task split or of a dataset file / hub dataset (`split` names the hub split).
    Dataset rows get `prompt` (and `answer`) from `prompt_column` / `answer_column`; with the
    defaults a GSM8K `question` or MATH `problem` column is used when there is no `prompt`
    (`rewardlab.tables.use_columns`). An `answer_column` other than the default must exist."""
    from rewardlab.tables import PROMPT_FALLBACKS, read_table, use_columns

    task = parse_task(spec)
    if task is not None:
        split = pool or split
        return task.sample(limit or (500 if split in ("test", "rm_eval") else TASK_POOL), seed=seed, split=split)
    rows = read_table(spec, split, flag=flag)
    required = ["prompt"] + (["answer"] if answer_column != "answer" else [])
    use_columns(rows, {"prompt": (prompt_column, PROMPT_FALLBACKS, "--prompt-column"),
                       "answer": (answer_column, (), "--answer-column")}, f"{flag} {spec!r}", required=required)
    return rows[:limit] if limit else rows


def check_columns(rows: Sequence[dict[str, Any]], needed: Sequence[str], source: str) -> None:
    """Fail early, naming the missing columns, when a row lacks what the reward needs."""
    have = set(rows[0]) if rows else set()
    missing = [c for c in needed if c not in have]
    if missing:
        raise ValueError(
            f"--data {source!r}: missing column(s) {missing} needed by the reward; the rows have {sorted(have)}"
        )


class PromptStream:
    """An endless, seeded stream over `rows`: epoch e visits a permutation seeded by (seed, e).
    Its whole state is one counter, saved in checkpoints so a resumed run sees the same prompts."""

    def __init__(self, rows: Sequence[Any], seed: int = 0) -> None:
        if not rows:
            raise ValueError("no prompts to train on")
        self.rows, self.seed, self.position = list(rows), seed, 0
        self._epoch, self._order = -1, []

    def _index(self, k: int) -> int:
        epoch, offset = divmod(k, len(self.rows))
        if epoch != self._epoch:
            self._epoch, self._order = epoch, list(range(len(self.rows)))
            random.Random(f"{self.seed}-{epoch}").shuffle(self._order)
        return self._order[offset]

    def take(self, n: int) -> list[Any]:
        out = [self.rows[self._index(self.position + i)] for i in range(n)]
        self.position += n
        return out

    def state(self) -> dict[str, int]:
        return {"position": self.position}

    def load_state(self, state: dict[str, int]) -> None:
        self.position = int(state["position"])


# ---------------------------------------------------------------- configuration
DEFAULT_DATA = "arithmetic:digits=3,n_terms=2,ops=+"


@dataclass(frozen=True)
class DataConfig:
    """Where the prompts come from: a piece of `rl`'s and `rm-data`'s configs."""

    data: str = opt(DEFAULT_DATA, "prompts: a task spec (arithmetic[:digits=3,n_terms=2,ops=+], functions[:ops=+-*]) or a JSONL/Parquet/CSV file or hub dataset")
    eval_data: str | None = opt(None, "held-out prompts (file or hub name); default: the task's own held-out split, or none for files")
    prompt_column: str = opt("prompt", "column holding the prompt (a string or chat messages); default: `prompt`, else `question` or `problem`")
    answer_column: str = opt("answer", "column holding the gold answer, given to the rewards as `answer`")

    def check_data(self) -> None:
        check_fields(self, DataConfig)

    __post_init__ = check_data
