"""Procedural, verifiable task families: unlimited, leakage-free, exactly checkable.

`ArithmeticTask` draws integer expressions like `123+456=` (answer `579`); difficulty is set by
operand size (`digits`) and number of steps (`n_terms - 1` operations). The held-out split is
fixed by a stable hash of the prompt, not by a seed, so a test problem can never appear in any
training sample, whatever seeds the caller uses.

>>> task = ArithmeticTask(digits=2, n_terms=2, ops="+")
>>> rows = task.sample(3, seed=0, split="test")
>>> all(int(r["answer"]) == eval(r["expression"]) for r in rows)
True
>>> task.steps(rows[0])[-1][1] == int(rows[0]["answer"])
True
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from typing import Any

SPLITS = ("train", "test")


@dataclass(frozen=True)
class ArithmeticTask:
    digits: int = 3  # operands are uniform in [0, 10**digits)
    n_terms: int = 2  # number of operands (so n_terms - 1 steps)
    ops: str = "+"  # operators to draw from, a subset of "+-*"
    heldout_every: int = 10  # one prompt in `heldout_every` belongs to the test split (by hash)
    template: str = "{expression}="  # prompt format; `{expression}` is e.g. "12+7"

    def __post_init__(self) -> None:
        if self.digits < 1 or self.n_terms < 2:
            raise ValueError(f"need digits >= 1 and n_terms >= 2, got digits={self.digits}, n_terms={self.n_terms}")
        if not self.ops or set(self.ops) - set("+-*"):
            raise ValueError(f"ops must be a non-empty subset of '+-*', got {self.ops!r}")
        if self.heldout_every < 2:
            raise ValueError("heldout_every must be >= 2")

    def split_of(self, expression: str) -> str:
        return "test" if zlib.crc32(expression.encode()) % self.heldout_every == 0 else "train"

    def _draw(self, rng: random.Random) -> dict[str, Any]:
        hi = 10**self.digits - 1
        terms = [rng.randint(0, hi) for _ in range(self.n_terms)]
        ops = [rng.choice(self.ops) for _ in range(self.n_terms - 1)]
        expression = str(terms[0])
        for i, (op, t) in enumerate(zip(ops, terms[1:])):
            # evaluation is left to right; bracket the left side where precedence would differ
            if op == "*" and i > 0 and set(ops[:i]) & set("+-"):
                expression = f"({expression})"
            expression += f"{op}{t}"
        return {"terms": terms, "ops": ops, "expression": expression}

    def sample(self, n: int, seed: int = 0, split: str = "train") -> list[dict[str, Any]]:
        """`n` problems of `split` as rows {prompt, answer, expression, terms, ops}.
        Test rows are distinct; train rows may repeat (the space is sampled with replacement)."""
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        rng = random.Random(f"{seed}-{split}-{self}")
        rows: list[dict[str, Any]] = []
        seen: set[str] = set()
        attempts = 0
        while len(rows) < n:
            attempts += 1
            if attempts > 1000 * (n + 10):
                raise ValueError(f"cannot draw {n} distinct {split} problems from {self}; make the task larger")
            row = self._draw(rng)
            if self.split_of(row["expression"]) != split or (split == "test" and row["expression"] in seen):
                continue
            seen.add(row["expression"])
            row["answer"] = str(self.evaluate(row))
            row["prompt"] = self.template.format(expression=row["expression"])
            rows.append(row)
        return rows

    @staticmethod
    def evaluate(row: dict[str, Any]) -> int:
        return ArithmeticTask.steps(row)[-1][1] if len(row["terms"]) > 1 else row["terms"][0]

    @staticmethod
    def steps(row: dict[str, Any]) -> list[tuple[str, int]]:
        """Left-to-right worked steps [("123+456", 579), ("579*2", 1158), ...]; the expression
        carries brackets wherever left-to-right order differs from operator precedence."""
        value = row["terms"][0]
        out = []
        for op, t in zip(row["ops"], row["terms"][1:]):
            new = value + t if op == "+" else value - t if op == "-" else value * t
            out.append((f"{value}{op}{t}", new))
            value = new
        return out
