"""One reward for mixed data: the verifier kind is picked per row from a column such as
`data_source`, like verl's `default_compute_score(data_source, solution_str, ground_truth)`.

A row's source is matched, case-insensitively, first against `mapping` (the spec's SOURCE=KIND
pairs, then `KNOWN_SOURCES`: verl's names), then by its name's words (split on anything but letters
and digits) against `WORD_KINDS` (a word that starts with `gsm8k`, `math`, `aime`, ... is math;
`mbpp`, `humaneval`, `apps`, `codeforces`, ... is code; `mmlu`, `gpqa`, `arc`, ... is choice).
A source that matches nothing is an error naming it (as verl raises), unless `default` names a
kind, or `none` (such rows get None, counted as `unmatched`). Each kind's rows go to one
`VerifierReward` call (batched); code rows use the code shapes (`test_list`, `entry_point`, ...).

>>> fn = DispatchReward()
>>> fn(["q", "q"], ["The answer is 4", "(B)"], answer=["4", "B"], data_source=["openai/gsm8k", "cais/mmlu"])
[1.0, 1.0]
>>> fn.last_metrics["rows/math"], fn.last_metrics["rows/choice"]
(1.0, 1.0)
>>> kind_of("DigitalLearningGmbH/MATH-lighteval", {}), kind_of("google-research/mbpp_sanitized", {})
('math', 'code')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from rewards.base import NamedReward, Text, check_batch, inner_columns, publish, require_column

# verl's data_source names (verl.utils.reward_score.default_compute_score) -> our verifier kinds
KNOWN_SOURCES: dict[str, str] = {
    "openai/gsm8k": "math", "lighteval/math": "math", "digitallearninggmbh/math-lighteval": "math",
    "huggingfaceh4/math-500": "math", "math_dapo": "math", "math": "math", "math_dapo_reasoning": "math",
    "hiyouga/geometry3k": "math", "codecontests": "code", "apps": "code", "codeforces": "code", "taco": "code",
}
# a word of the source name that starts with one of these -> kind (checked in this order)
WORD_KINDS: tuple[tuple[str, str], ...] = (
    ("humaneval", "code"), ("mbpp", "code"), ("livecodebench", "code"), ("codecontests", "code"), ("codeforces", "code"),
    ("apps", "code"), ("taco", "code"), ("leetcode", "code"), ("code", "code"),
    ("gsm8k", "math"), ("gsm", "math"), ("math", "math"), ("aime", "math"), ("amc", "math"), ("numina", "math"),
    ("olympiad", "math"), ("deepscaler", "math"), ("geometry", "math"), ("svamp", "math"), ("asdiv", "math"),
    ("mmlu", "choice"), ("gpqa", "choice"), ("arc", "choice"), ("commonsense", "choice"), ("hellaswag", "choice"),
    ("truthfulqa", "choice"), ("choice", "choice"),
)
NONE = "none"


def kind_of(source: Any, mapping: Mapping[str, str]) -> str | None:
    """The verifier kind for a data source (see the module docstring); None when nothing matches."""
    name = str(source).strip().lower()
    for table in (mapping, KNOWN_SOURCES):
        for key, kind in table.items():
            if key.lower() == name:
                return kind
    words = [w for w in re.split(r"[^a-z0-9]+", name) if w]
    for prefix, kind in WORD_KINDS:
        if any(w.startswith(prefix) for w in words):
            return kind
    return None


@dataclass(frozen=True)
class DispatchReward(NamedReward):
    """A verifier reward whose kind is chosen per row from `source_column` (see the module docstring)."""

    mapping: Mapping[str, str] = field(default_factory=dict)  # source -> kind, checked before the known names
    default: str | None = None  # kind for unmatched sources; "none": None for them; None: an error
    source_column: str = "data_source"
    answer_column: str = "answer"
    rewards: Mapping[str, float | None] | None = None  # verdict -> reward (default: the verifier's)
    timeout: float | None = None
    name: str = "dispatch"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)
    _verifiers: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from rewards.verifier import check_kind

        for source, kind in self.mapping.items():
            check_kind(kind, f"dispatch: source {source!r}")
        if self.default not in (None, NONE):
            check_kind(self.default, "dispatch: default")

    @property
    def required_columns(self) -> tuple[str, ...]:
        return (self.source_column,)

    def _verifier(self, kind: str) -> Any:
        from rewards.verifier import VerifierReward, verdict_rewards

        if kind not in self._verifiers:
            self._verifiers[kind] = VerifierReward(kind=kind, answer_column=self.answer_column, timeout=self.timeout,
                                                   rewards=dict(self.rewards or verdict_rewards()), name=f"verifier_{kind}")
        return self._verifiers[kind]

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        sources = require_column(columns, self.source_column, len(completions), f"reward {self.name!r}")
        groups: dict[str, list[int]] = {}
        unmatched = []
        for i, source in enumerate(sources):
            kind = kind_of(source, self.mapping) or self.default
            if kind is None:
                known = sorted({*self.mapping, *KNOWN_SOURCES})
                raise ValueError(f"reward {self.name!r}: no verifier for {self.source_column} {source!r} (item {i + 1}); "
                                 f"map it in the spec (dispatch:{source}=math) or give default=KIND or default=none; "
                                 f"known sources: {', '.join(known)}")
            if kind == NONE:
                unmatched.append(i)
                continue
            groups.setdefault(kind, []).append(i)
        out: list[float | None] = [None] * len(completions)
        metrics: dict[str, float] = {"unmatched": float(len(unmatched))}
        inner = inner_columns(columns)
        for kind, idx in groups.items():
            fn = self._verifier(kind)
            sub = {k: [v[i] for i in idx] for k, v in inner.items() if isinstance(v, (list, tuple)) and len(v) == len(completions)}
            values = fn([prompts[i] for i in idx], [completions[i] for i in idx], **sub)
            for i, v in zip(idx, values):
                out[i] = v
            metrics[f"rows/{kind}"] = float(len(idx))
            metrics.update({f"{kind}/{k}": v for k, v in fn.last_metrics.items() if k.startswith(("verdict/", "accuracy"))})
        n = max(len(out), 1)
        metrics["accuracy"] = sum(self._correct(v) for v in out) / n
        metrics["none_frac"] = sum(v is None for v in out) / n
        publish(self, metrics, columns)
        return out

    def _correct(self, value: float | None) -> bool:
        top = (self.rewards or {}).get("correct", 1.0)
        return value is not None and value >= (top if top is not None else 1.0)
