"""Shaping rewards: format, DAPO soft overlong penalty, repetition, length, confidence calibration.

Each is a frozen dataclass with `__call__` (the settings are its fields). Lengths are counted in
tokens when the trainer passes `completion_ids` (TRL does), otherwise in characters; the unit used
is reported in `last_metrics["length_in_tokens"]`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

from rewards.base import (THINK_OPEN, NamedReward, Text, assistant_turn, check_batch, check_reasoning, completion_text,
                          inner_columns, publish)

# Named format patterns (re.DOTALL, matched against the stripped completion).
FORMAT_PATTERNS: dict[str, str] = {
    "think-answer": r"<think>.*?</think>\s*<answer>.*?</answer>",  # R1-style tags
    "answer-tag": r".*<answer>.*?</answer>",  # an <answer>...</answer> block at the end
    "boxed": r".*\\boxed\{.+\}.*",  # a LaTeX \boxed{...} answer somewhere
    "integer": r"-?\d+",  # the whole completion is one integer (the arithmetic task)
}


def _think_answer(t: str) -> bool:
    # "<think>" ... "</think>" whitespace "<answer>" ... "</answer>", the tags not overlapping
    middle = t[len("<think>"): len(t) - len("</answer>")]
    return (len(t) >= 32 and t.startswith("<think>") and t.endswith("</answer>")
            and _THINK_THEN_ANSWER.search(middle) is not None)


_THINK_THEN_ANSWER = re.compile(r"</think>\s*<answer>")  # a literal start: each whitespace run is read once
# the named formats, read in linear time (the policy's text is long and hostile: each regular
# expression above, as written, backtracks quadratically on text of many opening tags); each gives
# the same answer as its pattern (tests/rewards/test_shaping.py compares them on generated text)
_FORMAT_CHECKS: dict[str, Any] = {
    "think-answer": _think_answer,
    "answer-tag": lambda t: t.endswith("</answer>") and "<answer>" in t[: len(t) - len("</answer>")],
    "boxed": lambda t: (i := t.find("\\boxed{")) >= 0 and t.find("}", i + len("\\boxed{") + 1) >= 0,
    "integer": re.compile(FORMAT_PATTERNS["integer"]).fullmatch,
}


def _lengths(completions: Sequence[Text], columns: Mapping[str, Any]) -> tuple[list[int], bool]:
    ids = columns.get("completion_ids")
    if ids is not None and len(ids) == len(completions):
        return [len(x) for x in ids], True
    return [len(completion_text(c)) for c in completions], False


@dataclass(frozen=True)
class FormatReward(NamedReward):
    """1.0 when the assistant turn matches the format, else 0.0 (`pattern` is a name of
    `FORMAT_PATTERNS` or a regular expression; the whole stripped turn must match; a bare word that
    is not a name, such as "boxd", is refused as a misspelt name). The turn is the
    completion, with the "<think>" of a chat template's prefill put back in front (`reasoning`,
    see `rewards.base.REASONING_MODES`): a prompt ending with "<think>", or a completion that
    closes the reasoning without opening it.

    >>> FormatReward("think-answer")(["q", "q"], ["<think>1+1</think><answer>2</answer>", "2"])
    [1.0, 0.0]
    >>> FormatReward("think-answer")(["q <think>"], ["1+1</think><answer>2</answer>"])  # prefilled <think>
    [1.0]
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    pattern: str = "think-answer"  # a name in FORMAT_PATTERNS or a regular expression
    name: str = "format"
    reasoning: str = "auto"  # "auto" | "prefilled" | "off": whether the prompt's "<think>" is part of the turn
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_reasoning(self.reasoning, "FormatReward")
        if self.pattern not in FORMAT_PATTERNS and re.fullmatch(r"[A-Za-z][A-Za-z_-]*", self.pattern):
            from rewards.base import suggestion

            raise ValueError(
                f"FormatReward.pattern {self.pattern!r} is not a known format{suggestion(self.pattern, list(FORMAT_PATTERNS))}; "
                f"known formats: {', '.join(FORMAT_PATTERNS)}. A bare word is taken for a misspelt name, not a regular "
                f"expression: to match the literal text write it as one, e.g. '({self.pattern})'")
        try:
            re.compile(FORMAT_PATTERNS.get(self.pattern, self.pattern))
        except re.error as exc:
            raise ValueError(
                f"FormatReward.pattern {self.pattern!r} is neither a known format ({', '.join(FORMAT_PATTERNS)}) "
                f"nor a valid regular expression: {exc}"
            ) from None

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        # a custom pattern is the operator's, and so is its cost; a named one is read in linear time
        matches = _FORMAT_CHECKS.get(self.pattern) or re.compile(self.pattern, re.DOTALL).fullmatch
        turns = [assistant_turn(p, c, self.reasoning) for p, c in zip(prompts, completions)]
        out = [1.0 if matches(t.strip()) else 0.0 for t in turns]
        prefilled = sum(len(t) != len(completion_text(c)) and t.startswith(THINK_OPEN) for t, c in zip(turns, completions))
        n = max(len(out), 1)
        publish(self, {"match_frac": sum(out) / n, "prefilled_frac": prefilled / n}, columns)
        return out


def overlong_penalty(length: int, max_length: int, cache: int) -> float:
    """DAPO soft overlong punishment: 0 up to `max_length - cache`, then falling linearly to -1 at
    `max_length`, -1 beyond.

    >>> overlong_penalty(80, 100, 20), overlong_penalty(90, 100, 20), overlong_penalty(120, 100, 20)
    (0.0, -0.5, -1.0)
    """
    return max(min(-(length - (max_length - cache)) / cache, 0.0), -1.0) + 0.0  # + 0.0: no -0.0


@dataclass(frozen=True)
class OverlongPenalty(NamedReward):
    """DAPO soft overlong penalty r = min(-(|y| - (L_max - L_cache)) / L_cache, 0), floored at -1.

    >>> OverlongPenalty(max_length=10, cache=4)(["p"] * 3, ["abcdef", "abcdefgh", "x" * 12])
    [0.0, -0.5, -1.0]
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    max_length: int = 512  # L_max: the generation limit (tokens, or characters without completion_ids)
    cache: int = 128  # L_cache: the soft zone before L_max where the penalty grows linearly
    name: str = "overlong"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 0 < self.cache <= self.max_length:
            raise ValueError(f"OverlongPenalty needs 0 < cache <= max_length, got cache={self.cache}, max_length={self.max_length}")

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        lengths, in_tokens = _lengths(completions, columns)
        out = [overlong_penalty(n, self.max_length, self.cache) for n in lengths]
        n = max(len(out), 1)
        publish(self, {"penalised_frac": sum(x < 0 for x in out) / n, "truncated_frac": sum(x <= -1 for x in out) / n,
                       "length_mean": sum(lengths) / n, "length_in_tokens": float(in_tokens)}, columns)
        return out


def repetition_fraction(text: str, ngram: int) -> float:
    """Fraction of repeated word n-grams: 1 - distinct / total (0 when there are fewer than n words).

    >>> repetition_fraction("a b a b a b", 2)  # 5 bigrams, 2 distinct
    0.6
    """
    words = text.split()
    grams = [tuple(words[i : i + ngram]) for i in range(len(words) - ngram + 1)]
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


@dataclass(frozen=True)
class RepetitionPenalty(NamedReward):
    """Penalty `max_penalty * repetition_fraction(text, ngram)` (max_penalty is negative).

    >>> RepetitionPenalty(ngram=2, max_penalty=-1.0)(["p", "p"], ["a b a b a b", "a b c d"])
    [-0.6, 0.0]
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    ngram: int = 3  # n-gram size, in whitespace-separated words
    max_penalty: float = -1.0  # reward of a completion made of one repeated n-gram (must be <= 0)
    name: str = "repetition"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.ngram < 1 or self.max_penalty > 0:
            raise ValueError(f"RepetitionPenalty needs ngram >= 1 and max_penalty <= 0, got ngram={self.ngram}, max_penalty={self.max_penalty}")

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        out = [round(self.max_penalty * repetition_fraction(completion_text(c), self.ngram), 12) + 0.0 for c in completions]
        publish(self, {"repetition_mean": sum(out) / max(len(out), 1) / (self.max_penalty or 1.0)}, columns)
        return out


@dataclass(frozen=True)
class LengthPenalty(NamedReward):
    """Linear penalty for length above a target: -coef * max(0, |y| - target) / target.

    >>> LengthPenalty(target=4, coef=1.0)(["p", "p"], ["abc", "abcdef"])
    [0.0, -0.5]
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    target: int = 256  # lengths up to this are free (tokens, or characters without completion_ids)
    coef: float = 0.1  # penalty per `target` units over the target
    name: str = "length"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.target < 1 or self.coef < 0:
            raise ValueError(f"LengthPenalty needs target >= 1 and coef >= 0, got target={self.target}, coef={self.coef}")

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        lengths, in_tokens = _lengths(completions, columns)
        out = [-self.coef * max(0, n - self.target) / self.target + 0.0 for n in lengths]
        n = max(len(out), 1)
        publish(self, {"over_target_frac": sum(x < 0 for x in out) / n, "length_mean": sum(lengths) / n,
                       "length_in_tokens": float(in_tokens)}, columns)
        return out


CONFIDENCE_RE = re.compile(r"<confidence>\s*([0-9]*\.?[0-9]+)\s*</confidence>|confidence\s*[:=]\s*([0-9]*\.?[0-9]+)", re.I)


def stated_confidence(text: str) -> float | None:
    """The confidence a completion states (`<confidence>0.8</confidence>` or `confidence: 0.8`), or
    None when there is none or it is outside [0, 1]. The last statement counts.

    >>> stated_confidence("<answer>4</answer><confidence>0.75</confidence>"), stated_confidence("no")
    (0.75, None)
    """
    found = CONFIDENCE_RE.findall(text)
    if not found:
        return None
    value = float(next(v for v in found[-1] if v))
    return value if 0.0 <= value <= 1.0 else None


@dataclass(frozen=True)
class ConfidenceCalibratedReward(NamedReward):
    """RLCR: correctness plus a Brier term on the stated confidence q,
    reward = c + (1 - (c - q)^2) with c = 1 if correct else 0 (the RLCR paper's c - (c - q)^2 plus
    a constant 1). Format-gated: no valid stated confidence -> 0 (counted as `format_failures`);
    items whose correctness is None (bad gold, timeout, error) stay None.
    `correctness` is any reward giving 1/0 (default: the math verifier reward).

    >>> from rewards.verifier import VerifierReward
    >>> fn = ConfidenceCalibratedReward(VerifierReward("math"))
    >>> fn(["1+1="] * 3, ["2 <confidence>0.8</confidence>", "3 <confidence>0.8</confidence>", "2"], answer=["2"] * 3)
    [1.96, 0.36, 0.0]
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    correctness: Any = None  # reward giving 1.0 / 0.0 (None items pass through); default VerifierReward("math")
    name: str = "calibrated"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        from rewards.verifier import VerifierReward

        inner = self.correctness if self.correctness is not None else VerifierReward("math")
        # the confidence statement is removed before checking, so its number is never read as the answer
        stripped = [CONFIDENCE_RE.sub(" ", completion_text(c)).strip() for c in completions]
        correct = list(inner(prompts, stripped, **inner_columns(columns)))
        out: list[float | None] = []
        briers, failures = [], 0
        for c, comp in zip(correct, completions):
            q = stated_confidence(completion_text(comp))
            if c is None:
                out.append(None)
            elif q is None:
                failures += 1
                out.append(0.0)
            else:
                brier = (float(c) - q) ** 2
                briers.append(brier)
                out.append(round(float(c) + 1.0 - brier, 12))
        n = max(len(out), 1)
        publish(self, {"format_failures": float(failures), "brier_mean": sum(briers) / len(briers) if briers else math.nan,
                       "accuracy": sum(float(c or 0.0) for c in correct) / n, "none_frac": sum(x is None for x in out) / n}, columns)
        return out
