"""pass@k (unbiased estimator) and maj@k (majority vote) from per-prompt samples.

pass@k for one prompt with n samples of which c are correct:
    1 - C(n - c, k) / C(n, k) = 1 - prod_{i = n-c+1 .. n} (1 - k / i),   and 1 when n - c < k.
maj@k: the most common extracted answer among k samples is correct. With n >= k samples it is
averaged over the n // k disjoint groups of k consecutive samples (deterministic). Answers are
grouped by equivalence through a caller-given `same(a, b)` (the verifier), not string equality.

>>> pass_at_k(n=4, c=1, k=2)
0.5
>>> majority_answer(["4", "5", "4.0"], same=lambda a, b: float(a) == float(b))
'4'
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one prompt (Chen et al. 2021), computed as a stable product."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n (samples per prompt), got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def mean_pass_at_k(correct: Sequence[Sequence[bool]], k: int) -> float:
    """Mean pass@k over prompts; correct[i] is the list of sample verdicts (True = correct) of prompt i."""
    return float(np.mean([pass_at_k(len(c), int(sum(map(bool, c))), k) for c in correct]))


def majority_answer(answers: Sequence[str | None], same: Callable[[str, str], bool]) -> str | None:
    """The most common answer, grouping answers that `same` says are equivalent; None answers are
    dropped; ties go to the answer seen first. None when no answer was extracted at all."""
    groups: list[list[str]] = []  # each group: [representative, members...]
    for a in answers:
        if a is None:
            continue
        for g in groups:
            if a == g[0] or same(a, g[0]):
                g.append(a)
                break
        else:
            groups.append([a])
    if not groups:
        return None
    return max(groups, key=len)[0]  # max keeps the first of equal-length groups


def maj_at_k_groups(n: int, k: int) -> list[range]:
    """The disjoint groups of k consecutive sample indices used for maj@k (n // k of them)."""
    if not 1 <= k <= n:
        raise ValueError(f"maj@k needs 1 <= k <= n (samples per prompt), got k={k}, n={n}")
    return [range(j * k, (j + 1) * k) for j in range(n // k)]
