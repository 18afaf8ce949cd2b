"""Verifier reward: a rule verifier's verdict turned into a float, in exactly one visible place.

The mapping verdict -> reward is a plain dict you can read and change; the default never turns a
failure into a silent 0: BAD_GOLD, TIMEOUT and ERROR give None ("not applicable") and are counted.

Reasoning models (`reasoning`, see `rewards.base.REASONING_MODES`): the answer is read after the
last </think> of the whole assistant turn (the prompt's "<think>" prefill included), so a \\boxed{}
inside the reasoning is not the answer, and a turn whose reasoning is never closed has no answer
(NO_ANSWER, counted as `unclosed_reasoning`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Callable, Mapping, Sequence

from rewards.base import (NamedReward, Text, assistant_turn, check_batch, check_reasoning, gold_texts, publish,
                          reasoning_answer, require_column)

# verdict name -> reward (None = not applicable; the trainer skips the sample for this reward)
DEFAULT_VERDICT_REWARDS: dict[str, float | None] = {
    "correct": 1.0,
    "incorrect": 0.0,
    "no_answer": 0.0,  # set a negative value to penalise answers that cannot be read
    "bad_gold": None,  # the reference is broken: not the policy's fault
    "timeout": None,  # the check could not decide in time
    "error": None,  # the check crashed
}
VERDICTS = tuple(DEFAULT_VERDICT_REWARDS)
# optional columns of code data (HumanEval, MBPP): the function the tests call, and code run before the tests
ENTRY_POINT_COLUMN, SETUP_COLUMN = "entry_point", "test_setup_code"


def verdict_rewards(**overrides: float | None) -> dict[str, float | None]:
    """The default verdict -> reward mapping with `overrides` applied (names checked).

    >>> verdict_rewards(no_answer=-0.5)["no_answer"]
    -0.5
    """
    unknown = set(overrides) - set(VERDICTS)
    if unknown:
        raise ValueError(f"unknown verdict(s) {sorted(unknown)} in the reward mapping; valid verdicts: {', '.join(VERDICTS)}")
    return {**DEFAULT_VERDICT_REWARDS, **overrides}


def check_kind(kind: str, who: str) -> None:
    """A clear error for an unknown verifier kind, listing the valid ones."""
    from verifiers.registry import KINDS

    if kind not in KINDS:
        from rewards.base import suggestion

        raise ValueError(f"{who}: unknown verifier kind {kind!r}{suggestion(kind, sorted(KINDS))}; valid kinds: {', '.join(sorted(KINDS))}")


def _default_backend() -> Callable[..., list[Any]]:
    from verifiers import verify_batch

    return verify_batch


@dataclass(frozen=True)
class VerifierReward(NamedReward):
    """Reward from a verifier kind of `verifiers/`, batched through its worker pool.

    The gold answer comes from the column `answer_column`; `rewards` maps each verdict to a float
    (or None). `last_metrics` holds the verdict counts (`verdict/<name>`), `accuracy` (fraction
    CORRECT) and `none_frac`.

    >>> fn = VerifierReward(kind="math")
    >>> fn(["1+1=", "1+1="], ["2", "3"], answer=["2", "2"])
    [1.0, 0.0]
    >>> fn.last_metrics["verdict/correct"], fn.last_metrics["accuracy"]
    (1.0, 0.5)
    >>> fn(["2+2=<think>"] * 3, ["maybe \\\\boxed{5}</think> 4", "4 is \\\\boxed{4}</think> 5", "\\\\boxed{4}"], answer=["4"] * 3)
    [1.0, 0.0, 0.0]
    >>> fn.last_metrics["unclosed_reasoning"]  # the third never closes the reasoning the prompt opened
    1.0
    """

    itemwise: ClassVar[bool] = True  # each item's value depends on that item alone (rewards.base.is_itemwise)

    kind: str = "math"  # verifier kind, one of verifiers.registry.KINDS
    answer_column: str = "answer"  # dataset column holding the gold answers
    rewards: Mapping[str, float | None] = field(default_factory=lambda: dict(DEFAULT_VERDICT_REWARDS))
    timeout: float | None = None  # per-item wall-clock limit in seconds (None: the verifier's default)
    options: Mapping[str, Any] = field(default_factory=dict)  # extra options for the verifier kind
    backend: Callable[..., list[Any]] | None = None  # verify_batch-like function (default: verifiers.verify_batch)
    name: str = ""  # display name (default "verifier_<kind>")
    reasoning: str = "auto"  # "auto" | "prefilled" | "off": where a reasoning model's answer is read (rewards.base.REASONING_MODES)
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)
    # the verdict name of each item of the last call (None: no gold), for rewards built on this one
    last_verdicts: list[str | None] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        missing = set(VERDICTS) - set(self.rewards)
        unknown = set(self.rewards) - set(VERDICTS)
        if missing or unknown:
            raise ValueError(
                f"VerifierReward.rewards must map every verdict {list(VERDICTS)} to a float or None; "
                f"missing {sorted(missing)}, unknown {sorted(unknown)} (use verdict_rewards(...))"
            )
        check_reasoning(self.reasoning, "VerifierReward")
        if self.backend is None:
            check_kind(self.kind, "VerifierReward")
        if not self.name:
            object.__setattr__(self, "name", f"verifier_{self.kind}")

    def answer_text(self, prompt: Text, completion: Text) -> str | None:
        """What the verifier reads: the answer part of the assistant turn (None: the reasoning is
        never closed, so there is no answer)."""
        turn = assistant_turn(prompt, completion, self.reasoning)
        return turn if self.reasoning == "off" else reasoning_answer(turn)

    def verify(self, predictions: Sequence[str], golds: Sequence[str]) -> list[Any]:
        """The raw `VerifyResult`s for a batch (order preserved)."""
        backend = self.backend or _default_backend()
        kwargs: dict[str, Any] = dict(self.options)
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return list(backend(list(predictions), [str(g) for g in golds], kind=self.kind, **kwargs))

    def golds(self, prompts: Sequence[Text], columns: dict[str, Any], n: int) -> list[str | None]:
        """The gold text of each item. Code golds may be the hub's test shapes (MBPP's list of
        asserts, stdin/stdout case lists, HumanEval's `test` with an `entry_point` column)."""
        who = f"reward {self.name!r}"
        values = require_column(columns, self.answer_column, n, who)
        if self.kind != "code":
            return gold_texts(values, self.answer_column, who)
        from verifiers.code_kind import code_gold

        entry = columns.get(ENTRY_POINT_COLUMN) or [None] * n
        setup = columns.get(SETUP_COLUMN) or [None] * n
        code_prompts: Sequence[Any] = [None] * n
        if columns.get(ENTRY_POINT_COLUMN):  # HumanEval: the prompt's helpers belong to the tests
            from rewards.base import model_prompts

            code_prompts = model_prompts(prompts, columns)
        out: list[str | None] = []
        for i, value in enumerate(values):
            prompt = code_prompts[i] if isinstance(code_prompts[i], str) else None
            try:
                out.append(None if value is None else code_gold(value, entry[i], setup[i], prompt))
            except ValueError as exc:
                raise ValueError(f"{who}: column {self.answer_column!r} item {i + 1}: {exc}") from None
        return out

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        golds = self.golds(prompts, columns, len(completions))
        # rows without a gold (None) are not applicable: not sent to the verifier, counted
        have = [i for i, g in enumerate(golds) if g is not None]
        answers = {i: self.answer_text(prompts[i], completions[i]) for i in have}
        if self.kind == "code" and columns.get(ENTRY_POINT_COLUMN):
            from rewards.base import model_prompts

            data_prompts = model_prompts(prompts, columns)  # HumanEval's signature, without a chat template
            answers = {i: with_prompt_code(data_prompts[i], a, columns[ENTRY_POINT_COLUMN][i]) for i, a in answers.items()}
        sent = [i for i in have if answers[i] is not None]
        checked = dict(zip(sent, self.verify([answers[i] for i in sent], [golds[i] for i in sent])))
        results = [checked[i] if i in checked else _unclosed(self.kind) for i in have]
        out: list[float | None] = [None] * len(completions)
        verdicts: list[str | None] = [None] * len(completions)
        for i, r in zip(have, results):
            verdicts[i] = str(getattr(r.verdict, "value", r.verdict))
            out[i] = self.rewards[verdicts[i]]
        self.last_verdicts[:] = verdicts
        metrics = verdict_metrics(results, [out[i] for i in have])
        metrics["missing_gold"] = float(len(completions) - len(have))
        metrics["unclosed_reasoning"] = float(len(have) - len(sent))
        metrics["none_frac"] = sum(x is None for x in out) / max(len(out), 1)
        publish(self, metrics, columns)
        return out


def with_prompt_code(prompt: Text, answer: str | None, entry_point: str | None) -> str | None:
    r"""HumanEval's protocol for a completion that continues the prompt: when the completion does
    not define `entry_point` itself but the prompt does (signature and docstring), the program is
    prompt + completion.

    >>> with_prompt_code("def f(x):\n", "    return x + 1\n", "f")
    'def f(x):\n    return x + 1\n'
    >>> with_prompt_code("def f(x):\n", "def f(x):\n    return x\n", "f")
    'def f(x):\n    return x\n'
    """
    if answer is None or not entry_point or not isinstance(prompt, str):
        return answer
    if _defines(answer, entry_point) or "```" in answer or not _defines(prompt, entry_point):
        return answer
    return prompt + answer


def _defines(text: str, name: str) -> bool:
    """Whether a line of `text` starts (after whitespace) with `def name(`. Linear in the text and
    the name, both client data: `^\\s*def NAME\\(` with re.M was quadratic on many newlines."""
    head = f"def {name}("
    return head in text and any(line.lstrip().startswith(head) for line in text.split("\n"))


def _unclosed(kind: str) -> Any:
    """The verdict for a turn whose reasoning never ends: nothing was answered."""
    from verifiers.types import Verdict, VerifyResult

    return VerifyResult(Verdict.NO_ANSWER, detail="reasoning not closed: no </think> after <think>", kind=kind)


def verdict_metrics(results: Sequence[Any], rewards: Sequence[float | None]) -> dict[str, float]:
    """Counts per verdict, accuracy, none fraction and mean verifier time of a batch."""
    n = max(len(results), 1)
    counts = {f"verdict/{v}": 0.0 for v in VERDICTS}
    for r in results:
        counts[f"verdict/{getattr(r.verdict, 'value', r.verdict)}"] += 1
    return {
        **counts,
        "accuracy": counts["verdict/correct"] / n,
        "none_frac": sum(x is None for x in rewards) / n,
        "verify_seconds_mean": sum(float(getattr(r, "elapsed", 0.0)) for r in results) / n,
    }
