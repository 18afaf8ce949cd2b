"""Seeded word-level distribution shifts of an evaluation set.

Three perturbations, chosen by name from `SHIFTS`, each applied word by word at rate p:
  insert     after each word, with probability p, insert a random filler word
  delete     each word is dropped with probability p (at least one word is kept)
  substitute each word is replaced by a random filler word with probability p

`shift_rows` applies one to the prompts, the responses (`chosen`/`rejected`/`response`), or both.
Every item gets its own generator seeded from (seed, shift, p, row index, field), so a shifted set
is reproducible and does not depend on the order in which items are processed.

>>> shift_text("the sum of 12 and 7 is 19", "delete", 0.5, seed=1) == shift_text("the sum of 12 and 7 is 19", "delete", 0.5, seed=1)
True
>>> shift_text("a b c", "substitute", 0.0, seed=0)
'a b c'
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

from rewardlab.config import check_fields, opt

# Filler words: common English words unlikely to carry the answer of a math/arithmetic item.
FILLER_WORDS: tuple[str, ...] = tuple(
    """time person year way day thing man world life hand part child eye woman place work week case
    point government company number group problem fact be have do say get make go know take see come
    think look want give use find tell ask seem feel try leave call good new first last long great
    little own other old right big high different small large next early young important few public
    bad same able to of in for on with at by from up about into over after beneath under above the
    and a that I it not he as you this but his they her she or an will my one all would there their
    river window garden yellow quietly banana orange purple castle guitar pillow rocket silver tiger
    umbrella velvet whisper marble candle forest harbor lantern meadow puzzle ribbon saddle thunder""".split()
)

FIELDS = ("prompt", "response", "both")
RESPONSE_COLUMNS = ("chosen", "rejected", "response", "completions")


def _insert(words: list[str], p: float, rng: random.Random) -> list[str]:
    out: list[str] = []
    for w in words:
        out.append(w)
        if rng.random() < p:
            out.append(rng.choice(FILLER_WORDS))
    return out


def _delete(words: list[str], p: float, rng: random.Random) -> list[str]:
    kept = [w for w in words if rng.random() >= p]
    return kept if kept or not words else [rng.choice(words)]


def _substitute(words: list[str], p: float, rng: random.Random) -> list[str]:
    return [rng.choice(FILLER_WORDS) if rng.random() < p else w for w in words]


SHIFTS: dict[str, Callable[[list[str], float, random.Random], list[str]]] = {
    "insert": _insert,
    "delete": _delete,
    "substitute": _substitute,
}


def shift_text(text: str, shift: str, p: float, seed: int | str = 0) -> str:
    """`text` with shift `shift` applied at rate `p` (words are split on whitespace, joined by spaces)."""
    if shift not in SHIFTS:
        raise ValueError(f"unknown shift {shift!r}; valid shifts: {', '.join(SHIFTS)}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"shift rate p must be in [0, 1], got {p}")
    if p == 0.0:
        return text
    rng = random.Random(f"{seed}|{shift}|{p}")
    return " ".join(SHIFTS[shift](text.split(), p, rng))


def shift_rows(rows: list[dict[str, Any]], shift: str, p: float, field: str = "response", seed: int = 0) -> list[dict[str, Any]]:
    """Shifted copies of `rows` (the input is not modified).

    field: "prompt" shifts the `prompt` column; "response" shifts every response column present
    (`chosen`, `rejected`, `response`, and each step of `completions`); "both" shifts all of them.
    Chat messages have each message's content shifted.
    """
    if field not in FIELDS:
        raise ValueError(f"shift field must be one of {FIELDS}, got {field!r}")
    columns = (["prompt"] if field in ("prompt", "both") else []) + (list(RESPONSE_COLUMNS) if field != "prompt" else [])
    out = []
    for i, row in enumerate(rows):
        new = dict(row)
        for col in columns:
            value = row.get(col)
            if isinstance(value, str):
                new[col] = shift_text(value, shift, p, seed=f"{seed}|{i}|{col}")
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                new[col] = [shift_text(v, shift, p, seed=f"{seed}|{i}|{col}|{j}") for j, v in enumerate(value)]
            elif isinstance(value, list) and all(isinstance(v, dict) and isinstance(v.get("content"), str) for v in value):
                new[col] = [{**m, "content": shift_text(m["content"], shift, p, seed=f"{seed}|{i}|{col}|{j}")} for j, m in enumerate(value)]
        out.append(new)
    return out


@dataclass(frozen=True)
class ShiftConfig:
    """Which word-level shifts `eval-rm` sweeps, on what and how hard: a piece of `EvalRMConfig`."""

    shifts: tuple[str, ...] = opt(("substitute", "insert", "delete"), "word-level shifts to apply", choices=tuple(SHIFTS))
    shift_fields: tuple[str, ...] = opt(("response", "prompt", "both"), "what to shift", choices=FIELDS)
    shift_levels: tuple[float, ...] = opt((0.1, 0.25, 0.5), "shift rates p (fraction of words) for the accuracy/ECE sweep", ge=0, le=1)

    def check_shifts(self) -> None:
        check_fields(self, ShiftConfig)
        if not self.shifts or not self.shift_fields:
            raise ValueError("--shifts and --shift-fields need at least one value each")

    __post_init__ = check_shifts
