"""Step labels for process reward models, from a policy's own worked solutions.

Two ways, as the PRM literature labels steps without people:

- **check** (`check_steps`): where each step is an equation the task can verify (`97+5=102` of
  worked arithmetic), a step is correct iff its arithmetic is right, its operands are numbers it
  may use (the prompt's terms and earlier results, each once), every earlier step is correct, and -
  for the last step - its result is the gold answer. A step the checker cannot read is wrong.
- **Monte-Carlo** (`mc_prefixes` + `mc_labels`; Math-Shepherd, Wang et al. 2024): from the prefix
  ending at each step, the policy completes the solution N times; the soft label is the fraction
  of completions whose final answer the gold verifier accepts, the hard label is "any does". The
  last step's label is the solution's own correctness. Works for any task with a verifier.

Steps are split by the task's separator (`split_steps`, shared with the PRM reward so both see
the same steps).

>>> check_steps("12+34+56=", ["56+12=68", "68+34=102"], "102")
[True, True]
>>> check_steps("12+34+56=", ["56+12=68", "68+35=103"], "102")   # 35 is no term of the prompt
[True, False]
>>> check_steps("12+34+56=", ["12+34=46"], "102")                 # right, but stops before the end
[False]
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from typing import Sequence

from rewards.prm import split_steps

__all__ = ["check_steps", "mc_labels", "mc_prefixes", "split_steps", "checkable"]

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_EQUATION = re.compile(r"\s*(-?\d+)\s*([+\-*])\s*(-?\d+)\s*=\s*(-?\d+)\s*")
_NUMBER = re.compile(r"\d+")


def checkable(steps: Sequence[str]) -> bool:
    """Whether every step is an equation `a op b = c` that `check_steps` can verify."""
    return bool(steps) and all(_EQUATION.fullmatch(s) for s in steps)


def check_steps(prompt: str, steps: Sequence[str], answer: str) -> list[bool]:
    """Per-step correctness of an arithmetic worked solution (see the module docstring)."""
    question = prompt.rsplit("=", 1)[0] if "=" in prompt else prompt
    available = Counter(int(x) for x in _NUMBER.findall(question))
    labels, ok = [], True
    for k, step in enumerate(steps):
        m = _EQUATION.fullmatch(step)
        if ok and m:
            a, op, b, c = int(m[1]), m[2], int(m[3]), int(m[4])
            need = Counter([a, b])
            ok = _OPS[op](a, b) == c and all(available[x] >= n for x, n in need.items())
            if ok:
                available -= need
                available[c] += 1
            if ok and k == len(steps) - 1:
                ok = str(c) == str(answer).strip()
        else:
            ok = False
        labels.append(ok)
    return labels


def mc_prefixes(steps: Sequence[str], separator: str) -> list[str]:
    """The text of the solution up to and including step k, for k = 1 .. K-1, each followed by
    the separator (the policy continues from there); the last step needs no rollouts."""
    return [separator.join(steps[: k + 1]) + separator for k in range(len(steps) - 1)]


def mc_labels(prefix_success: Sequence[Sequence[bool]], final_correct: bool) -> tuple[list[bool], list[float]]:
    """(hard labels, soft labels) of a solution's K steps from the rollouts of its K-1 prefixes
    (`prefix_success[k]`: whether each rollout from prefix k reached the gold answer) and the
    solution's own correctness (the last step).

    >>> mc_labels([[True, False], [False, False]], False)
    ([True, False, False], [0.5, 0.0, 0.0])
    """
    soft = [sum(r) / len(r) if r else 0.0 for r in prefix_success] + [1.0 if final_correct else 0.0]
    return [s > 0 for s in soft], soft
