"""Synthetic reward-model data from verifiable arithmetic problems, labelled by the verifiers.

Problems come from `verifiers.tasks.ArithmeticTask` (2-digit operands, 3 or 4 terms, + and -),
whose held-out split is fixed by a hash of the expression: test problems never appear in train.
Each problem gets a worked solution ("Step 1: 12+7 = 19" ... "The answer is 16.") and flawed
versions with realistic error types (`ERROR_TYPES`):

- `arithmetic_slip` : one step's result is off by a little (+-1, +-2, +-10); later steps carry it on.
                      A near-miss: hard to see from text alone (reported separately in evaluation).
- `wrong_final`     : the working is right but the stated answer contradicts it.
- `skipped_step`    : one operation of the prompt is never applied.
- `repeated_step`   : one operation is applied twice.
- `missing_answer`  : the solution stops before its last step and states no answer.

Labels come from the project's verifiers (`verifiers.verify_batch(..., kind="math")`): a
solution is correct iff its final answer verifies against the gold; a step is correct iff its
result verifies against the true value of that prefix, and once a step is wrong every later
step is wrong (the usual process-supervision convention). A flawed solution that happens to
verify as correct is not used as a negative.

Formats (the ecosystem's): preference {prompt, chosen, rejected}, stepwise {prompt, completions,
labels}, scored {prompt, response, <score columns>}; every row also has `answer` and
`error_type` (for per-error-type accuracy).

>>> rows = make_preference_rows(4, seed=0, split="test")
>>> sorted(rows[0])
['answer', 'chosen', 'error_type', 'prompt', 'rejected']
>>> print(rows[0]["chosen"])
Step 1: 3+27 = 30
Step 2: 30+23 = 53
Therefore, the answer is 53.
>>> rows[0]["error_type"], rows[0]["rejected"].splitlines()[-1]
('arithmetic_slip', 'Therefore, the answer is 51.')
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

from verifiers.tasks import ArithmeticTask

ERROR_TYPES = ("arithmetic_slip", "wrong_final", "skipped_step", "repeated_step", "missing_answer")
TASKS = (ArithmeticTask(digits=2, n_terms=3, ops="+-"), ArithmeticTask(digits=2, n_terms=4, ops="+-"))
STEP_STYLES = ("Step {k}: {a}{op}{b} = {c}", "{a} {op} {b} = {c}")
FINAL_STYLES = ("The answer is {v}.", "So the final answer is \\boxed{{{v}}}.", "Therefore, the answer is {v}.")
NO_ANSWER_LINES = ("I am not sure what the final answer is.", "Let me stop here.", "")
SCORE_COLUMNS = ("correctness", "quality")


@dataclass
class Solution:
    """A worked solution: operations shown (a, op, b, shown result), the stated final answer."""

    ops: list[tuple[int, str, int, int]]
    final: int | None
    error_type: str = "none"

    def render(self, rng: random.Random) -> tuple[list[str], str]:
        style = rng.choice(STEP_STYLES)
        steps = [style.format(k=k + 1, a=a, op=op, b=b, c=c) for k, (a, op, b, c) in enumerate(self.ops)]
        final = rng.choice(FINAL_STYLES).format(v=self.final) if self.final is not None else rng.choice(NO_ANSWER_LINES)
        return steps, final


def _apply(a: int, op: str, b: int) -> int:
    return a + b if op == "+" else a - b


def _chain(start: int, moves: list[tuple[str, int]], slip_at: int = -1, slip: int = 0) -> list[tuple[int, str, int, int]]:
    out, value = [], start
    for k, (op, b) in enumerate(moves):
        c = _apply(value, op, b) + (slip if k == slip_at else 0)
        out.append((value, op, b, c))
        value = c
    return out


def correct_solution(row: dict[str, Any]) -> Solution:
    ops = _chain(row["terms"][0], list(zip(row["ops"], row["terms"][1:])))
    return Solution(ops, ops[-1][3])


def _slip(row, rng):
    moves = list(zip(row["ops"], row["terms"][1:]))
    ops = _chain(row["terms"][0], moves, slip_at=rng.randrange(len(moves)), slip=rng.choice([-10, -2, -1, 1, 2, 10]))
    return Solution(ops, ops[-1][3])


def _wrong_final(row, rng):
    sol = correct_solution(row)
    sol.final = sol.final + rng.choice([-1, 1]) * rng.randint(1, 30)
    return sol


def _skipped(row, rng):
    moves = list(zip(row["ops"], row["terms"][1:]))
    del moves[rng.randrange(len(moves))]
    ops = _chain(row["terms"][0], moves)
    return Solution(ops, ops[-1][3])


def _repeated(row, rng):
    moves = list(zip(row["ops"], row["terms"][1:]))
    j = rng.randrange(len(moves))
    moves.insert(j, moves[j])
    ops = _chain(row["terms"][0], moves)
    return Solution(ops, ops[-1][3])


def _missing(row, rng):
    sol = correct_solution(row)  # the solution stops before its last step, with no answer
    sol.ops, sol.final = sol.ops[:-1], None
    return sol


CORRUPTIONS: dict[str, Callable[[dict[str, Any], random.Random], Solution]] = {
    "arithmetic_slip": _slip,
    "wrong_final": _wrong_final,
    "skipped_step": _skipped,
    "repeated_step": _repeated,
    "missing_answer": _missing,
}


def _verified(predictions: list[str], golds: list[str]) -> list[bool]:
    """True where the verifier says CORRECT (kind "math"); any TIMEOUT/ERROR stops the build."""
    from verifiers import Verdict, verify_batch

    results = verify_batch(predictions, golds, kind="math")
    broken = [(i, r) for i, r in enumerate(results) if r.verdict in (Verdict.ERROR, Verdict.TIMEOUT, Verdict.BAD_GOLD)]
    if broken:
        i, r = broken[0]
        raise RuntimeError(
            f"the math verifier failed on {len(broken)} synthetic items (first: prediction {predictions[i]!r}, "
            f"gold {golds[i]!r}: {r.verdict.value} {r.detail}); the labels would be wrong, so the data is not built"
        )
    return [r.verdict is Verdict.CORRECT for r in results]


def _problems(n: int, seed: int, split: str) -> list[dict[str, Any]]:
    """`n` problems of `split`, half with 3 terms and half with 4, in a seeded order."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    rows = TASKS[0].sample((n + 1) // 2, seed=seed, split=split) + TASKS[1].sample(n // 2, seed=seed, split=split)
    random.Random(f"order-{seed}-{split}").shuffle(rows)
    return rows


def _flawed(row: dict[str, Any], error_type: str, rng: random.Random) -> Solution:
    sol = CORRUPTIONS[error_type](row, rng)
    sol.error_type = error_type
    return sol


def _text(sol: Solution, rng: random.Random) -> str:
    steps, final = sol.render(rng)
    return "\n".join(steps + ([final] if final else []))


def make_preference_rows(n: int, seed: int = 0, split: str = "train") -> list[dict[str, Any]]:
    """Rows {prompt, chosen, rejected, answer, error_type} from `n` problems; error types cycle
    through `ERROR_TYPES` in equal shares; chosen verifies as correct, rejected does not. A pair
    whose flawed solution still verifies as correct (a slip that cancels out) is dropped, so
    slightly fewer than `n` rows can come back (1,992 of 2,000 for seed 0)."""
    problems = _problems(n, seed, split)
    rows = []
    for i, prob in enumerate(problems):
        rng = random.Random(f"pref-{seed}-{split}-{i}")
        error_type = ERROR_TYPES[i % len(ERROR_TYPES)]
        style_seed = rng.random()
        chosen = _text(correct_solution(prob), random.Random(style_seed))
        rejected = _text(_flawed(prob, error_type, rng), random.Random(style_seed))  # same styles as chosen
        rows.append({"prompt": prob["prompt"], "chosen": chosen, "rejected": rejected, "answer": prob["answer"], "error_type": error_type})
    ok = _verified([r["chosen"] for r in rows] + [r["rejected"] for r in rows], [r["answer"] for r in rows] * 2)
    return [r for r, c, w in zip(rows, ok[: len(rows)], ok[len(rows) :]) if c and not w]


def _label(items: list[tuple[dict[str, Any], Solution, random.Random]]) -> list[tuple[list[str], list[bool]]]:
    """For each (problem, solution, rng): (steps incl. the final line, per-step labels), all
    labelled with one verifier call. Step k is right iff its result verifies against the true
    value of the k-th prefix; once a step is wrong, all later ones are; the final line is right
    iff the whole solution verifies against the gold answer (and no step before it was wrong)."""
    rendered, preds, golds = [], [], []
    for prob, sol, rng in items:
        steps, final = sol.render(rng)
        truth = correct_solution(prob).ops
        for k, (_, _, _, c) in enumerate(sol.ops):
            preds.append(str(c))
            golds.append(str(truth[k][3]) if k < len(truth) else "")  # "" = no such step: wrong
        rendered.append((steps, final))
    preds += ["\n".join(steps + ([final] if final else [])) for steps, final in rendered]
    golds += [prob["answer"] for prob, _, _ in items]
    checkable = [i for i, g in enumerate(golds) if g]
    ok = dict(zip(checkable, _verified([preds[i] for i in checkable], [golds[i] for i in checkable])))
    out, cursor, n_steps = [], 0, len(preds) - len(items)
    for j, ((steps, final), (_, sol, _)) in enumerate(zip(rendered, items)):
        labels, still_right = [], True
        for k in range(len(sol.ops)):
            still_right = still_right and ok.get(cursor + k, False)
            labels.append(still_right)
        cursor += len(sol.ops)
        labels.append(still_right and ok[n_steps + j])
        out.append((steps + [final or "I am not sure what the final answer is."], labels))
    return out


def make_stepwise_rows(n: int, seed: int = 0, split: str = "train") -> list[dict[str, Any]]:
    """`n` rows {prompt, completions, labels, answer, error_type}: a third are correct solutions,
    the rest cycle through `ERROR_TYPES`. The last completion is the final-answer line."""
    items, types = [], []
    for i, prob in enumerate(_problems(n, seed, split)):
        rng = random.Random(f"step-{seed}-{split}-{i}")
        error_type = ERROR_TYPES[(i // 3 * 2 + i % 3 - 1) % len(ERROR_TYPES)] if i % 3 else "none"
        sol = correct_solution(prob) if error_type == "none" else _flawed(prob, error_type, rng)
        items.append((prob, sol, rng))
        types.append(error_type)
    return [
        {"prompt": prob["prompt"], "completions": steps, "labels": labels, "answer": prob["answer"], "error_type": et}
        for (prob, _, _), (steps, labels), et in zip(items, _label(items), types)
    ]


def make_scored_rows(n: int, seed: int = 0, split: str = "train", noise: float = 0.1) -> list[dict[str, Any]]:
    """`n` rows {prompt, response, correctness, quality, answer, error_type}, two per problem (a
    correct solution, then a flawed one cycling through `ERROR_TYPES`). `correctness` is the
    verifier's 0/1 on the final answer; `quality` = 0.5 * correctness + 0.5 * (share of correct
    steps) plus Gaussian rater noise (sd `noise`), clipped to [0, 1]: a noisy, graded score whose
    spread a quantile RM can learn."""
    items, types = [], []
    for i, prob in enumerate(_problems((n + 1) // 2, seed, split)):
        rng = random.Random(f"scored-{seed}-{split}-{i}")
        error_type = ERROR_TYPES[i % len(ERROR_TYPES)]
        style = rng.random()
        items += [(prob, correct_solution(prob), random.Random(style)), (prob, _flawed(prob, error_type, rng), random.Random(style))]
        types += ["none", error_type]
    rows = []
    for (prob, _, _), (steps, labels), et in zip(items, _label(items), types):
        rng = random.Random(f"noise-{seed}-{split}-{len(rows)}")
        share = sum(labels[:-1]) / max(1, len(labels) - 1)
        quality = min(1.0, max(0.0, 0.5 * labels[-1] + 0.5 * share + rng.gauss(0.0, noise)))
        response = "\n".join(steps if labels[-1] or et != "missing_answer" else steps[:-1])
        rows.append({"prompt": prob["prompt"], "response": response, "correctness": float(labels[-1]),
                     "quality": round(quality, 4), "answer": prob["answer"], "error_type": et})
    return rows[:n]
