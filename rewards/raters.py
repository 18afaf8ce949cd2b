"""A panel of simulated raters who disagree: the task where a risk-aware quantile reward matters.

One deterministic checker gives every response one score, so a quantile reward model trained on it
only learns its own doubt (measured: CVaR no better than the mean). Real preference labels come
from raters who disagree on some kinds of response. This panel rates answers to the arithmetic
task (`966+857=`) on a 0-1 scale, 0 being the floor ("extremely negative"). An answer is a number,
optionally followed by the unchecked remark ` (checked)` (nobody checked it: the policy writes it):

    response                    exact (raters 1, 2)   approximate (3, 4)           terse (5)
    right, bare                 1.0                   0.7                          1.0
    right + remark              1.0                   1.0 (reassured)              0.6 (verbose)
    wrong, bare                 0.2                   0.6 x closeness              0.3 x closeness
    wrong + remark              0 (a false claim)     0.3 + 0.6 x closeness; 0     0
                                                      when they re-check (p 0.25)
    anything else               0                     0                            0

`closeness` is 1 at the gold number, falling to 0 at 10% off (`verifiers.closeness`). Why this
panel (fixed before any run with it): the raters disagree on *wrong* answers, each in its own way -
the exact raters floor a false "checked" but give a bare near miss 0.2, the approximate raters
floor a badly wrong number (and a false remark they happen to re-check) but rate a near miss
highly, the terse rater floors every wrong remark and every badly wrong number - and on a style
only through its risk: the remark adds to the mean rating when the answer is right (0.92 against
0.88) and costs when it is wrong (a near miss: 0.26 against 0.37), so a mean-maximiser adds it when
it is more than ~72% sure, while the lowest rating (CVaR at 1/5) is never higher with it (0.6
against 0.7 right, 0 against 0.2 wrong). Extremely negative (a rating at the floor) is then a
wrong answer with a remark or a badly wrong one, not a style as such.

Ratings are draws: every rating above the floor gets Gaussian noise (sd 0.05, clipped to
[0.01, 1]), and the approximate raters' re-check is random; both are seeded by the panel's `draw`
and a hash of (prompt, completion, rater), so one draw is reproducible on any machine and another
draw is independent. Training ratings use draw 0, evaluation ratings draw 1.

`raters:STAT` is the reward: `mean` (mean rating), `min` (the lowest), `correct` (1 when the
stated number, the leading integer, is right: a rule check of the number), `floor` (1 when any
rater gives the floor: the extremely negative share), `rater=K` (rater K's rating, 1-5).
`rater_rows` turns `rewardlab rm-data` samples into quantile-RM training rows, one per
(response, rater).

>>> panel = RaterPanel()
>>> [round(x, 2) for x in panel.ratings("966+857=", "1823", "1823")]   # right, bare
[0.95, 0.9, 0.64, 0.7, 0.96]
>>> [round(x, 2) for x in panel.ratings("966+857=", "1813 (checked)", "1823")]   # a near miss that says it was checked
[0.0, 0.0, 0.85, 0.78, 0.0]
>>> panel.ratings("966+857=", "1100", "1823")[2:], panel.ratings("966+857=", "1823 (1823)", "1823")  # badly wrong; other text
([0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0])
>>> fn = build_rater_reward("floor")
>>> fn(["966+857="] * 3, ["1823", "1813 (checked)", "1813"], answer=["1823"] * 3)
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from rewards.base import NamedReward, Text, check_batch, completion_text, gold_texts, prompt_text, publish, require_column

STATS = ("mean", "min", "correct", "floor")
ROLES = ("exact", "exact", "approximate", "approximate", "terse")  # rater K is ROLES[K - 1]
FLOOR = 0.0
REMARK = "(checked)"
NOISE_SD = 0.05
RECHECK = 0.25  # the chance an approximate rater re-checks an answer that says it was checked
TRAIN_DRAW, EVAL_DRAW = 0, 1
_ANSWER = re.compile(r"\s*(-?\d{1,30})(.*)", re.S)


def _base_rating(role: str, right: bool, remark: bool, near: float, rechecks: bool) -> float:
    """The rating before noise (the table in the module docstring)."""
    if role == "exact":
        return 1.0 if right else (FLOOR if remark else 0.2)
    if role == "approximate":
        if right:
            return 1.0 if remark else 0.7
        return (FLOOR if rechecks else 0.3 + 0.6 * near) if remark else 0.6 * near
    if right:  # terse
        return 0.6 if remark else 1.0
    return FLOOR if remark else 0.3 * near


@dataclass(frozen=True)
class RaterPanel:
    """Five simulated raters (module docstring); `ratings(prompt, completion, answer)` -> 5 floats,
    one draw of them (`draw`: 0 trains, 1 evaluates)."""

    draw: int = TRAIN_DRAW

    def _rng(self, prompt: str, completion: str, rater: int) -> random.Random:
        key = f"{self.draw}\x00{prompt}\x00{completion}\x00{rater}".encode()
        return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))

    def ratings(self, prompt: str, completion: str, answer: str) -> list[float]:
        from verifiers.closeness import closeness

        match = _ANSWER.fullmatch(completion)
        if match is None:
            return [FLOOR] * len(ROLES)
        stated, rest = match.group(1), match.group(2).strip()
        if rest not in ("", REMARK):
            return [FLOOR] * len(ROLES)
        right = stated.lstrip("+") == str(answer).strip()
        near = 1.0 if right else closeness(stated, answer)
        out = []
        for k, role in enumerate(ROLES, start=1):
            rng = self._rng(prompt, completion, k)
            rating = _base_rating(role, right, bool(rest), near, rng.random() < RECHECK)
            if rating > FLOOR:
                rating = min(1.0, max(0.01, rating + rng.gauss(0.0, NOISE_SD)))
            out.append(round(rating, 6))
        return out

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
    """`raters:STAT` (module docstring) against the `answer` column, the training draw of the panel."""

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
    valid = STATS + tuple(f"rater={k}" for k in range(1, len(ROLES) + 1))
    if stat not in valid:
        raise ValueError(f"raters: unknown statistic {stat!r}; use one of {', '.join(valid)}")
    return RaterReward(stat=stat, answer_column=column)


def rater_rows(records: Iterable[dict[str, Any]], panel: RaterPanel | None = None, remark_twins: bool = False,
               raters_per_response: int | None = None) -> list[dict[str, Any]]:
    """Quantile-RM training rows from `rm-data` records ({prompt, answer, samples}): one row
    {prompt, response, rating, rater} per distinct sample and rater, so that quantile regression on
    `rating` learns the distribution of the panel's ratings of each response. `remark_twins`
    also rates each bare sample with the remark added (a policy that never writes it still
    gives the RM both forms of every answer). `raters_per_response` keeps that many raters of
    each response, drawn at random (seeded by the panel's draw): still an unbiased draw of the
    rating distribution, with fewer copies of one input per batch (docs/reward_models.md)."""
    panel = panel or RaterPanel()
    keep = range(len(ROLES)) if raters_per_response is None else None
    rows = []
    for rec in records:
        samples = list(dict.fromkeys(rec["samples"]))
        if remark_twins:
            samples += [f"{s.strip()} {REMARK}" for s in samples if _ANSWER.fullmatch(s) and not _ANSWER.fullmatch(s).group(2).strip()]
        for sample in dict.fromkeys(samples):
            ratings = panel.ratings(rec["prompt"], sample, rec["answer"])
            chosen = keep if keep is not None else sorted(panel._rng(rec["prompt"], sample, 0).sample(range(len(ROLES)), raters_per_response))
            rows += [{"prompt": rec["prompt"], "response": sample, "rating": ratings[k], "rater": k + 1} for k in chosen]
    return rows
