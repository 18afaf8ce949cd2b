"""Reward-model evaluation rows: a file or hub dataset in the formats of `reward_models.loading`,
or the project's synthetic generators when no file is given. (Plain tables are read with
`rewardlab.tables.read_table`.)"""

from __future__ import annotations

from typing import Any, Sequence


# data kind -> (required columns, generator name in reward_models.data)
DATA_KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "preference": (("chosen", "rejected"), "make_preference_rows"),
    "stepwise": (("completions", "labels"), "make_stepwise_rows"),
    "scored": (("response",), "make_scored_rows"),
}
RM_KIND_TO_DATA = {"bt": "preference", "prm": "stepwise", "quantile": "scored"}


def check_rm_columns(rows: Sequence[dict[str, Any]], data_kind: str, source: str = "data") -> None:
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


def rows_or_default(source: str | None, data_kind: str, n: int, split: str, seed: int = 0, what: str = "--data",
                    prompt_column: str = "prompt") -> list[dict[str, Any]]:
    """Reward-model rows of `source` in the formats of `reward_models.loading` (chat pairs with the
    prompt extracted, Math-Shepherd / ProcessBench rows as stepwise rows), or generated rows."""
    if source:
        from reward_models.loading import check_rows
        from reward_models.loading import load_rm_rows

        rows = load_rm_rows(source, flag=what, prompt_column=prompt_column)[:n]
        check_rm_columns(rows, data_kind, source=f"{what} {source}")
        if data_kind != "scored":  # every row checked before any model work (scored columns are the model's)
            check_rows(rows, data_kind, f"{what} {source}")
    else:
        rows = default_rows(data_kind, n, split, seed)
    check_rm_columns(rows, data_kind, source=f"{what} {source}" if source else f"default {split} {data_kind} rows")
    return rows
