"""LLM-judge rewards against a reference answer, and the rule-verifier-then-judge hybrid.

- `JudgeReward(judge)`: 1.0 when the judge says the response's final answer matches the gold
  answer (the `verifiers` library's judge rubric), 0.0 when it says it does not, None when the
  judge could not answer (request failed, reply unreadable) - counted, never a 0.
- `HybridReward(verifier, judge)`: the rule verifier decides; the judge is asked only about the
  items whose verdict is in `ask` (default NO_ANSWER and INCORRECT: answers a rule may misread,
  such as an answer in another language or an unusual notation). A "yes" gives the verifier's reward for CORRECT,
  a "no" keeps the verifier's reward, a failed judgment gives None (counted as `judge_failed`).
  CORRECT verdicts are never sent (a rule match is trusted), nor BAD_GOLD / TIMEOUT / ERROR
  unless listed in `ask`.

The judge is a `reward_models.remote.RemoteJudge` (an OpenAI-compatible endpoint) or a local
`reward_models.local_judge.GenerativeJudge`: anything with `judge_reference(questions,
references, responses) -> list[bool | None]`. The question shown to the judge is the prompt as the
data holds it (`rewards.base.model_prompts`), not the policy's chat-templated text.

>>> class Judge:  # says yes when the response spells the reference out in French
...     def judge_reference(self, questions, references, responses):
...         return [{"2": "deux"}.get(a) in r if r != "?" else None for a, r in zip(references, responses)]
>>> from rewards.verifier import VerifierReward
>>> fn = HybridReward(VerifierReward(kind="math"), Judge())
>>> fn(["1+1="] * 4, ["2", "deux", "3", "?"], answer=["2"] * 4)
[1.0, 1.0, 0.0, None]
>>> {k: fn.last_metrics[k] for k in ("judge_asked", "judge_yes", "judge_no", "judge_failed")}
{'judge_asked': 3.0, 'judge_yes': 1.0, 'judge_no': 1.0, 'judge_failed': 1.0}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from rewards.base import (NamedReward, Text, check_batch, completion_text, gold_texts, inner_columns, model_prompts, prompt_text,
                          publish, require_column)

ASK_DEFAULT = ("no_answer", "incorrect")


def judge_stats(judge: Any) -> dict[str, float]:
    stats = getattr(judge, "stats", None)
    return stats.snapshot() if stats is not None and hasattr(stats, "snapshot") else {}


def judge_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What a judge's counters moved by during one call (`judge/<counter>`)."""
    return {f"judge/{k}": v - before.get(k, 0.0) for k, v in after.items()}


def ask_judge(judge: Any, prompts: Sequence[Text], completions: Sequence[Text], golds: Sequence[str], columns: dict[str, Any],
              idx: Sequence[int]) -> dict[int, bool | None]:
    """The judge's verdict for the items `idx`: {item: True / False / None}."""
    if not idx:
        return {}
    questions = [prompt_text(p) for p in model_prompts(prompts, columns)]
    verdicts = judge.judge_reference([questions[i] for i in idx], [golds[i] for i in idx],
                                     [completion_text(completions[i]) for i in idx])
    if len(verdicts) != len(idx):
        raise ValueError(f"the judge returned {len(verdicts)} verdicts for {len(idx)} items")
    return dict(zip(idx, verdicts))


@dataclass(frozen=True)
class JudgeReward(NamedReward):
    """1.0 / 0.0 from an LLM judge's yes / no against the gold answer; None when it could not judge.

    >>> class Judge:
    ...     def judge_reference(self, questions, references, responses):
    ...         return [True, False, None][: len(responses)]
    >>> JudgeReward(Judge())(["q"] * 3, ["a", "b", "c"], answer=["a"] * 3)
    [1.0, 0.0, None]
    """

    judge: Any  # has judge_reference(questions, references, responses)
    answer_column: str = "answer"
    name: str = "judge"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        who = f"reward {self.name!r}"
        golds = gold_texts(require_column(columns, self.answer_column, len(completions), who), self.answer_column, who)
        before = judge_stats(self.judge)
        have = [i for i, g in enumerate(golds) if g is not None]
        said = ask_judge(self.judge, prompts, completions, golds, columns, have)
        out: list[float | None] = [None if said.get(i) is None else float(said[i]) for i in range(len(completions))]
        n = max(len(out), 1)
        metrics = {"yes": float(sum(v is True for v in said.values())), "no": float(sum(v is False for v in said.values())),
                   "failed": float(sum(v is None for v in said.values())), "missing_gold": float(len(completions) - len(have)),
                   "none_frac": sum(v is None for v in out) / n, **judge_delta(before, judge_stats(self.judge))}
        publish(self, metrics, columns)
        return out


@dataclass(frozen=True)
class HybridReward(NamedReward):
    """The rule verifier decides; the judge is asked about the verdicts in `ask` (see the module docstring)."""

    verifier: Any  # a VerifierReward (its `last_verdicts` name each item's verdict)
    judge: Any  # has judge_reference(questions, references, responses)
    ask: tuple[str, ...] = ASK_DEFAULT
    name: str = "hybrid"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from rewards.verifier import VERDICTS

        bad = [v for v in self.ask if v not in VERDICTS or v == "correct"]
        if bad or not self.ask:
            raise ValueError(f"HybridReward.ask: {bad or 'nothing'}; give verdicts the judge may overturn, from "
                             f"{', '.join(v for v in VERDICTS if v != 'correct')} (separated by '|' in a spec)")

    @property
    def required_columns(self) -> tuple[str, ...]:
        return (self.verifier.answer_column,)

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        out = list(self.verifier(prompts, completions, **inner_columns(columns)))
        verdicts = list(self.verifier.last_verdicts)
        golds = self.verifier.golds(prompts, columns, len(completions))
        before = judge_stats(self.judge)
        idx = [i for i, v in enumerate(verdicts) if v in self.ask and golds[i] is not None]
        said = ask_judge(self.judge, prompts, completions, golds, columns, idx)
        for i, yes in said.items():
            out[i] = None if yes is None else self.verifier.rewards["correct"] if yes else out[i]
        n = max(len(out), 1)
        metrics = {**{f"verifier/{k}": v for k, v in self.verifier.last_metrics.items()},
                   "judge_asked": float(len(idx)), "judge_yes": float(sum(v is True for v in said.values())),
                   "judge_no": float(sum(v is False for v in said.values())), "judge_failed": float(sum(v is None for v in said.values())),
                   "accuracy": sum(v == self.verifier.rewards["correct"] for v in out if v is not None) / n,
                   "none_frac": sum(v is None for v in out) / n, **judge_delta(before, judge_stats(self.judge))}
        publish(self, metrics, columns)
        return out
