"""The one reward interface.

A reward is a plain callable with TRL's signature:

    reward(prompts, completions, **columns) -> list[float | None]

`prompts`/`completions` are lists of strings or of chat messages (lists of {"role", "content"}
dicts); extra dataset columns (e.g. `answer`) arrive as keyword arguments, one list each;
`None` means "not applicable to this sample". Dense (per-step) rewards return a
`RewardOutput` instead, which also behaves as the list of per-item totals.

Diagnostics: a reward may keep the metrics of its last call in an attribute `last_metrics`
(a dict name -> float, e.g. verdict counts); `reward_metrics(fn)` reads it. Nothing is swallowed:
a reward that cannot score raises, or returns None for that item and counts it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

Message = dict[str, Any]
Text = str | Sequence[Message]


@runtime_checkable
class RewardFn(Protocol):
    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> Any: ...


class NamedReward:
    """Base of the reward classes: TRL names a reward function by its `__name__` (its logs read
    `rewards/<name>/mean`), which for these is the `name` field."""

    @property
    def __name__(self) -> str:
        return self.name


@dataclass
class RewardOutput(Sequence):
    """Per-item totals plus, for dense rewards, per-step values and where each step ends.

    totals[i]      : float | None       total reward of item i (what a sequence-level trainer uses)
    step_rewards[i]: list[float]        reward of each step of completion i
    step_ends[i]   : list[int]          character offset in completion i where each step ends
                                        (exclusive), so a trainer can put step k's reward on the
                                        token that covers character step_ends[i][k] - 1
    metrics        : dict[str, float]   diagnostics of this call
    """

    totals: list[float | None]
    step_rewards: list[list[float]] | None = None
    step_ends: list[list[int]] | None = None
    metrics: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.totals)
        for name in ("step_rewards", "step_ends"):
            value = getattr(self, name)
            if value is not None and len(value) != n:
                raise ValueError(f"RewardOutput.{name} has {len(value)} items, totals has {n}")
        if self.step_rewards is not None and self.step_ends is not None:
            for i, (r, e) in enumerate(zip(self.step_rewards, self.step_ends)):
                if len(r) != len(e):
                    raise ValueError(f"item {i + 1}: {len(r)} step rewards but {len(e)} step ends")

    def __getitem__(self, i):  # type: ignore[override]
        return self.totals[i]

    def __len__(self) -> int:
        return len(self.totals)

    @property
    def is_dense(self) -> bool:
        return self.step_rewards is not None


def completion_text(completion: Text) -> str:
    """The text of a completion: a string as is, or the content of the last assistant message."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and all(isinstance(m, dict) for m in completion):
        for message in reversed(completion):
            if message.get("role", "assistant") == "assistant":
                content = message.get("content", "")
                if isinstance(content, list):  # multimodal-style [{"type": "text", "text": ...}]
                    return "".join(part.get("text", "") for part in content if isinstance(part, dict))
                return str(content)
        return ""
    raise TypeError(
        f"a completion must be a string or a list of chat messages, got {type(completion).__name__}"
    )


# ---------------------------------------------------------------------------------------------
# Reasoning models: the turn is "<think> reasoning </think> answer"; the chat template may already
# have written "<think>" into the prompt, so the completion starts inside the reasoning.

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
# the `reasoning` option of the verifier and format rewards
REASONING_MODES: dict[str, str] = {
    "auto": "the completion continues a <think> the prompt ends with, or one it closes without opening "
            "(a chat template's prefill); the answer is read after the last </think>",
    "prefilled": "every completion starts inside the reasoning (the template always writes <think>): "
                 "a completion without </think> has no answer",
    "off": "the completion is read as it is: no think tags are looked for",
}


def check_reasoning(mode: Any, who: str) -> None:
    if mode not in REASONING_MODES:
        raise ValueError(f"{who}: reasoning must be one of {', '.join(map(repr, REASONING_MODES))}, got {mode!r}")


def assistant_turn(prompt: Text, completion: Text, reasoning: str = "auto") -> str:
    """The whole assistant turn: the completion, with the "<think>" the chat template wrote into the
    prompt put back in front of it (see `REASONING_MODES`).

    >>> assistant_turn("Q: 1+1?\\n<think>\\n", "1+1=2</think> 2")  # the prompt ends inside the reasoning
    '<think>\\n1+1=2</think> 2'
    >>> assistant_turn([{"role": "user", "content": "1+1?"}], "1+1=2</think> 2")  # closed but never opened
    '<think>\\n1+1=2</think> 2'
    >>> assistant_turn("Q: 1+1?", "<think>1+1=2</think> 2")  # the model opened it itself
    '<think>1+1=2</think> 2'
    """
    text = completion_text(completion)
    if reasoning == "off" or text.lstrip().startswith(THINK_OPEN):
        return text
    close = text.find(THINK_CLOSE)
    opened_by_prompt = prompt_text(prompt).rstrip().endswith(THINK_OPEN)
    closes_unopened = close >= 0 and THINK_OPEN not in text[:close]
    if reasoning == "prefilled" or opened_by_prompt or closes_unopened:
        return THINK_OPEN + "\n" + text
    return text


def reasoning_answer(turn: str) -> str | None:
    """What a turn gives as its answer: the text after the last </think> (a \\boxed{} inside the
    reasoning is not the answer); None while a <think> is not closed; the whole turn when it has
    no think tags.

    >>> reasoning_answer("<think>maybe 3</think> So 4")
    ' So 4'
    >>> reasoning_answer("<think>still thinking: 3") is None
    True
    """
    close = turn.rfind(THINK_CLOSE)
    if close < 0:
        return None if THINK_OPEN in turn else turn
    rest = turn[close + len(THINK_CLOSE):]
    return None if THINK_OPEN in rest else rest


def reward_metrics(fn: Any) -> dict[str, float]:
    """The metrics a reward recorded on its last call (empty when it records none)."""
    return dict(getattr(fn, "last_metrics", None) or {})


def is_itemwise(fn: Any) -> bool:
    """Whether a reward gives each item a value that depends on that item alone, not on the other
    items of the batch (read from its `itemwise` attribute; False when it has none). A service may
    then score the items of several requests in one call. Rewards that compare the completions of
    a prompt (majority vote, group normalisation) are not itemwise; mark a function of your own
    with `fn.itemwise = True` when it is.

    >>> from rewards.shaping import FormatReward
    >>> is_itemwise(FormatReward("integer")), is_itemwise(lambda prompts, completions, **columns: [])
    (True, False)
    """
    return getattr(fn, "itemwise", False) is True


def reward_name(fn: Any) -> str:
    return getattr(fn, "name", None) or getattr(fn, "__name__", None) or type(fn).__name__


# ---------------------------------------------------------------------------------------------
# Helpers shared by the built-in rewards.

# The prompt as the data holds it (a string or chat messages), passed by the RL loop next to the
# prompt text the policy saw (which may carry the policy's chat template). Rewards that run a model
# of their own (reward models, judges) read this one and apply their own template.
RAW_PROMPT_COLUMN = "raw_prompt"


def model_prompts(prompts: Sequence[Text], columns: dict[str, Any]) -> list[Text]:
    """The prompts a reward model or judge should see: the `raw_prompt` column when the trainer
    passes one, else the prompts; chat messages stay messages, anything else becomes text.

    >>> model_prompts(["<|user|>2+2?<|assistant|>"], {"raw_prompt": [[{"role": "user", "content": "2+2?"}]]})
    [[{'role': 'user', 'content': '2+2?'}]]
    """
    raw = columns.get(RAW_PROMPT_COLUMN)
    source = list(raw) if raw is not None and len(raw) == len(prompts) else list(prompts)
    return [p if _is_chat(p) else prompt_text(p) if not isinstance(p, str) else p for p in source]


def _is_chat(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str) and bool(value) and all(isinstance(m, dict) for m in value)


def suggestion(word: str, valid: Sequence[str]) -> str:
    """" (did you mean 'x'?)" for the closest valid name, or "" when none is close.

    >>> suggestion("colum", ["column", "timeout", "reasoning"])
    " (did you mean 'column'?)"
    """
    import difflib

    close = difflib.get_close_matches(str(word), [str(v) for v in valid], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# Keyword arguments that trainers pass next to the dataset columns; they are never data.
TRAINER_KWARGS = ("completion_ids", "trainer_state", "log_extra", "log_metric", "environments")
LOG_KWARGS = ("log_metric", "log_extra")


def prompt_text(prompt: Text) -> str:
    """The text of a prompt: a string as is, or its chat messages joined one per line.

    >>> prompt_text([{"role": "user", "content": "1+1="}])
    '1+1='
    """
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and all(isinstance(m, dict) for m in prompt):
        return "\n".join(str(m.get("content", "")) for m in prompt)
    raise TypeError(f"a prompt must be a string or a list of chat messages, got {type(prompt).__name__}")


def data_columns(columns: dict[str, Any]) -> dict[str, Any]:
    """The dataset columns among a reward's keyword arguments (trainer extras removed)."""
    return {k: v for k, v in columns.items() if k not in TRAINER_KWARGS}


def inner_columns(columns: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments a composite passes on to the rewards inside it: everything but the
    trainer's logging callbacks (the composite publishes its components' metrics itself)."""
    return {k: v for k, v in columns.items() if k not in LOG_KWARGS}


def require_column(columns: dict[str, Any], name: str, n: int, who: str) -> list[Any]:
    """Column `name` as a list of `n` values; a clear error names the column and what was passed.

    >>> require_column({"answer": ["2"]}, "answer", 1, "verifier reward")
    ['2']
    """
    if name not in columns or columns[name] is None:
        passed = sorted(data_columns(columns))
        raise ValueError(
            f"{who} needs the column {name!r} (one value per completion), but the columns passed were "
            f"{passed}; add {name!r} to the dataset or point the reward at another column"
        )
    values = list(columns[name])
    if len(values) != n:
        raise ValueError(f"{who}: column {name!r} has {len(values)} values for {n} completions")
    return values


def gold_texts(values: Sequence[Any], column: str, who: str) -> list[str | None]:
    """Gold answers as the text a verifier compares: strings as they are, integers and finite
    floats written out, None for "no gold" (not applicable). Anything else (a list, an object,
    a boolean, NaN) is a ValueError naming the column and row: turning it into a string could
    let a completion that spells that string out earn the reward.

    >>> gold_texts(["7", 3, 0.5, None], "answer", "reward 'verifier_math'")
    ['7', '3', '0.5', None]
    >>> gold_texts([{"a": [1, {"b": 2}]}], "answer", "reward 'verifier_math'")
    Traceback (most recent call last):
    ...
    ValueError: reward 'verifier_math': column 'answer' item 1 is a dict; a gold answer must be a string or a number (or null for none)
    """
    out: list[str | None] = []
    for i, value in enumerate(values):
        if value is None or isinstance(value, str):
            out.append(value)
        elif type(value) in (int, float) and math.isfinite(value):
            out.append(str(value))
        else:
            what = f"{value!r}" if isinstance(value, float) else f"a {type(value).__name__}"
            raise ValueError(f"{who}: column {column!r} item {i + 1} is {what}; a gold answer must be a string or a number (or null for none)")
    return out


def check_batch(prompts: Sequence[Text], completions: Sequence[Text], who: str) -> None:
    if len(prompts) != len(completions):
        raise ValueError(f"{who}: got {len(prompts)} prompts but {len(completions)} completions; pass one prompt per completion")


def publish(fn: Any, metrics: dict[str, float], columns: dict[str, Any]) -> dict[str, float]:
    """Record `metrics` as `fn.last_metrics`, and hand them to a trainer's `log_metric` callback
    (TRL passes one) under `<reward name>/<metric>`. Returns the metrics."""
    store = getattr(fn, "last_metrics", None)
    if isinstance(store, dict):
        store.clear()
        store.update(metrics)
    else:
        try:
            fn.last_metrics = dict(metrics)
        except AttributeError:  # pragma: no cover - objects that refuse attributes
            pass
    log_metric = columns.get("log_metric")
    if callable(log_metric):
        name = reward_name(fn)
        for key, value in metrics.items():
            log_metric(f"{name}/{key}", float(value))
    return metrics


def group_indices(prompts: Sequence[Text]) -> list[list[int]]:
    """Indices of the completions of each prompt, in order of first appearance.

    >>> group_indices(["a", "b", "a"])
    [[0, 2], [1]]
    """
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(prompts):
        groups.setdefault(prompt_key(p), []).append(i)
    return list(groups.values())


def prompt_key(prompt: Text) -> str:
    """A string that identifies a prompt (a chat prompt by its JSON)."""
    return prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True, default=str)
