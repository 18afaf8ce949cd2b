"""The verifier contract: a verdict, never a bare bool, never a failure hidden as 0."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


class Verdict(str, enum.Enum):
    CORRECT = "correct"
    INCORRECT = "incorrect"
    NO_ANSWER = "no_answer"  # nothing extractable from the prediction
    BAD_GOLD = "bad_gold"  # the reference itself cannot be parsed
    TIMEOUT = "timeout"  # the hard wall-clock limit killed the check
    ERROR = "error"  # the check crashed (worker died, unexpected exception)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class VerifyResult:
    """One verification. `score` is 1.0 for CORRECT and 0.0 otherwise; turning a verdict into a
    training reward (penalties, None for BAD_GOLD, ...) happens in `rewards/`, not here."""

    verdict: Verdict
    extracted: str | None = None  # what was read from the prediction, as text
    gold_parsed: str | None = None  # the parsed gold, as text
    detail: str = ""  # short human-readable reason
    elapsed: float = 0.0  # seconds spent on this item
    kind: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return 1.0 if self.verdict is Verdict.CORRECT else 0.0

    @property
    def correct(self) -> bool:
        return self.verdict is Verdict.CORRECT

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["score"] = self.score
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "VerifyResult":
        d = {k: v for k, v in d.items() if k != "score"}
        d["verdict"] = Verdict(d["verdict"])
        return cls(**d)


class KindFn(Protocol):
    """A verifier kind: check one prediction against one gold, in-process.

    Runs inside a worker process when called through `verify`/`verify_batch`, so it may be
    slow or hang; it must not swallow exceptions into a score (the caller maps a raised
    exception to ERROR with the message)."""

    def __call__(self, prediction: str, gold: str, **options: Any) -> VerifyResult: ...
