"""A panel of simulated raters who disagree: the task where a risk-aware quantile reward matters.

One deterministic checker gives every response one score, so a quantile reward model trained on it
only learns its own doubt (measured: CVaR no better than the mean). Real preference labels come
from raters who disagree on some kinds of response. This panel rates answers to the arithmetic
task (`966+857=`) on a 0-1 scale, 0 being the floor ("extremely negative"):

    response                      raters 1-4 (lenient)        rater 5 (strict)
    `1823` (bare, right)          0.6 (right, but terse)      1.0
    `1823 (966+857)` (right,      1.0 (shows its work)        0 (the floor: the user asked
      with a check)                                              for the number only)
    bare, wrong                   0.4 x closeness             0.4 x closeness
    with a check, wrong           0.3 + 0.4 x closeness       0
    anything else (no leading     0                           0
      number, other text after it)

`closeness` is 1 at the gold number, falling to 0 at 10% off (`verifiers.closeness`): a badly wrong
answer is at the floor for every rater. A check is a sum in brackets after the number (`(a+b)`,
any numbers: the lenient raters skim it, they do not redo it; the tiny warm start copies the
prompt's second term badly). The mean rating prefers answers with a check (0.80 against 0.68 when
right; 0.24 + 0.32 x closeness against 0.4 x closeness when wrong), though every one of them is at
the strict rater's floor; the lowest rating (CVaR at 1/5) prefers bare answers (0.6 against 0).
Which a policy learns to write depends on the utility it maximises over the distribution of
ratings: the quantile reward model's risk claim (Dorka 2024), testable here.

`raters:STAT` is the reward: `mean` (mean rating), `min` (the lowest), `correct` (1 when the
stated number, the leading integer, is right: gold accuracy), `floor` (1 when any rater gives the
floor: the extremely negative share), `rater=K` (rater K's rating, 1-5). `rater_rows` turns
`rewardlab rm-data` samples into quantile-RM training rows, one per (response, rater).

>>> panel = RaterPanel()
>>> panel.ratings("966+857=", "1823", "1823"), panel.ratings("966+857=", "1823 (857+966)", "1823")
([0.6, 0.6, 0.6, 0.6, 1.0], [1.0, 1.0, 1.0, 1.0, 0.0])
>>> panel.ratings("966+857=", "1100", "1823"), panel.ratings("966+857=", "1823 (1823)", "1823")
([0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0])
>>> fn = build_rater_reward("floor")
>>> fn(["966+857="] * 3, ["1823", "1823 (966+857)", "1822"], answer=["1823"] * 3)
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from rewards.base import NamedReward, Text, check_batch, completion_text, gold_texts, prompt_text, publish, require_column

STATS = ("mean", "min", "correct", "floor")
LENIENT, STRICT = 4, 1  # raters 1-4 lenient, rater 5 strict
FLOOR = 0.0
_ANSWER = re.compile(r"\s*(-?\d{1,30})(.*)", re.S)
_CHECK = re.compile(r"\s*\(\s*\d{1,30}\s*\+\s*\d{1,30}\s*\)\s*")  # a sum in brackets


@dataclass(frozen=True)
class RaterPanel:
    """Five simulated raters (module docstring); `ratings(prompt, completion, answer)` -> 5 floats."""

    def ratings(self, prompt: str, completion: str, answer: str) -> list[float]:
        from verifiers.closeness import closeness

        match = _ANSWER.fullmatch(completion)
        if match is None:
            return [FLOOR] * (LENIENT + STRICT)
        stated, rest = match.group(1), match.group(2)
        right = stated.lstrip("+") == str(answer).strip()
        near = 1.0 if right else closeness(stated, answer)
        if not rest.strip():
            lenient, strict = (0.6, 1.0) if right else (0.4 * near, 0.4 * near)
        elif _CHECK.fullmatch(rest):
            lenient, strict = (1.0 if right else 0.3 + 0.4 * near), FLOOR
        else:
            lenient, strict = FLOOR, FLOOR
        return [round(lenient, 6)] * LENIENT + [round(strict, 6)] * STRICT

    def stat(self, ratings: Sequence[float], stat: str, completion: str, answer: str) -> float:
        if stat == "mean":
            return sum(ratings) / len(ratings)
        if stat == "min":
            return min(ratings)
        if stat == "floor":
            return float(min(ratings) <= FLOOR)
        if stat == "correct":
            match = _ANSWER.fullmatch(completion)
            return float(match is not None and match.group(1).lstrip("+") == str(answer).strip())
        return ratings[int(stat.split("=")[1]) - 1]  # rater=K


@dataclass(frozen=True)
class RaterReward(NamedReward):
    """`raters:STAT` (module docstring) against the `answer` column."""

    stat: str = "mean"
    answer_column: str = "answer"
    name: str = "raters"
    panel: RaterPanel = field(default_factory=RaterPanel)
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        golds = gold_texts(require_column(columns, self.answer_column, len(completions), self.name), self.answer_column, self.name)
        out: list[float | None] = []
        floors = 0
        for prompt, completion, gold in zip(prompts, completions, golds):
            if gold is None:
                out.append(None)
                continue
            text = completion_text(completion)
            ratings = self.panel.ratings(prompt_text(prompt), text, gold)
            floors += min(ratings) <= FLOOR
            out.append(self.panel.stat(ratings, self.stat, text, gold))
        publish(self, {"floor_share": floors / max(len(out), 1)}, columns)
        return out


def build_rater_reward(stat: str = "mean", column: str = "answer") -> RaterReward:
    valid = STATS + tuple(f"rater={k}" for k in range(1, LENIENT + STRICT + 1))
    if stat not in valid:
        raise ValueError(f"raters: unknown statistic {stat!r}; use one of {', '.join(valid)}")
    return RaterReward(stat=stat, answer_column=column)


def rater_rows(records: Iterable[dict[str, Any]], panel: RaterPanel | None = None) -> list[dict[str, Any]]:
    """Quantile-RM training rows from `rm-data` records ({prompt, answer, samples}): one row
    {prompt, response, rating, rater} per sample and rater, so that quantile regression on
    `rating` learns the distribution of the panel's ratings of each response."""
    panel = panel or RaterPanel()
    rows = []
    for rec in records:
        for sample in rec["samples"]:
            for k, rating in enumerate(panel.ratings(rec["prompt"], sample, rec["answer"]), start=1):
                rows.append({"prompt": rec["prompt"], "response": sample, "rating": rating, "rater": k})
    return rows
