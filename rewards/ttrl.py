"""TTRL majority-vote reward: labels without ground truth.

Per prompt (completions that share a prompt form a group), each completion's final answer is
extracted; answers are grouped into classes of *equivalent* answers (the verifier decides, not
string equality); the largest class is the pseudo-label and a completion earns 1.0 when its answer
belongs to it, 0.0 otherwise. A prompt with no extractable answer at all gives None for all of its
completions, and so does a prompt whose largest class has fewer than `min_votes` votes (default 2):
when every sampled answer differs there is no majority, and rewarding one of them would be noise.

Ties between classes of equal size are broken by a hash of the prompt and the class's answer: the
label does not depend on the order of the completions, and the tie-break favours no kind of
answer. (An earlier rule, "the smallest string wins", systematically rewarded short answers
starting with a low digit; on the default arithmetic task the policy collapsed to one-digit
answers within ten steps.)
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from rewards.base import NamedReward, Text, check_batch, completion_text, data_columns, gold_texts, group_indices, prompt_key, publish


INTEGER = re.compile(r"[+-]?\d{1,50}")  # plain integer literals: equivalence is equality of value


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def equivalence_classes(answers: Sequence[str], equal_pairs: set[tuple[int, int]]) -> list[list[int]]:
    """Union-find classes of distinct answers given the pairs (i, j) judged equivalent.

    >>> equivalence_classes(["1", "1.0", "2"], {(0, 1)})
    [[0, 1], [2]]
    """
    parent = list(range(len(answers)))
    for i, j in equal_pairs:
        parent[_find(parent, i)] = _find(parent, j)
    classes: dict[int, list[int]] = {}
    for i in range(len(answers)):
        classes.setdefault(_find(parent, i), []).append(i)
    return sorted(classes.values())


def tie_key(salt: str, answer: str) -> int:
    """Deterministic, order-free and content-neutral tie-break key for an answer of a prompt."""
    return zlib.crc32(f"{salt}\x00{answer}".encode("utf-8", "surrogatepass"))


def majority_class(classes: list[list[int]], answers: Sequence[str], counts: Sequence[int], salt: str = "") -> list[int]:
    """The class with the most votes; ties go to the class with the smallest `tie_key(salt, answer)`
    of its smallest answer (`salt` is the prompt, so ties fall differently on different prompts).

    >>> majority_class([[0, 1], [2]], ["5", "5.0", "7"], [1, 1, 1])  # 2 votes against 1
    [0, 1]
    >>> a = majority_class([[0], [1]], ["7", "5"], [2, 2], salt="3+4=")  # a 2-2 tie, in either order
    >>> b = majority_class([[0], [1]], ["5", "7"], [2, 2], salt="3+4=")
    >>> ["7", "5"][a[0]] == ["5", "7"][b[0]]
    True
    """
    return min(classes, key=lambda c: (-sum(counts[i] for i in c), tie_key(salt, min(answers[i] for i in c))))


def _default_extract() -> Callable[..., str | None]:
    from verifiers import extract_answer

    return extract_answer


def _default_backend() -> Callable[..., list[Any]]:
    from verifiers import verify_batch

    return verify_batch


@dataclass(frozen=True)
class MajorityVoteReward(NamedReward):
    """TTRL reward: 1.0 for completions whose answer is equivalent to their prompt's majority answer.

    When the gold column (`gold_column`, default `answer`) is passed, `last_metrics` also reports
    `label_accuracy` (pseudo-label equivalent to the gold), `reward_accuracy` (pseudo-reward equals
    the true verifier reward) and always `majority_ratio` (votes of the label / group size).

    >>> fn = MajorityVoteReward()
    >>> fn(["1+1="] * 4, ["2", "2", "3", "no idea"])
    [1.0, 1.0, 0.0, 0.0]
    >>> fn.last_metrics["majority_ratio"]
    0.5
    """

    kind: str = "math"  # verifier kind that decides answer equivalence (and extraction)
    gold_column: str = "answer"  # optional gold column, only used for diagnostics
    extract: Callable[..., str | None] | None = None  # (text, kind=...) -> answer; default verifiers.extract_answer
    backend: Callable[..., list[Any]] | None = None  # verify_batch-like; default verifiers.verify_batch
    timeout: float | None = None  # per-comparison wall-clock limit (None: the verifier's default)
    min_votes: int = 2  # a label needs at least this many equivalent answers; fewer -> None for the group
    name: str = "ttrl"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.min_votes, int) or self.min_votes < 1:
            raise ValueError(f"MajorityVoteReward: min_votes must be an integer >= 1, got {self.min_votes!r}")
        if self.backend is None:
            from rewards.verifier import check_kind

            check_kind(self.kind, "MajorityVoteReward")

    def _equivalent(self, pairs: list[tuple[str, str]]) -> tuple[list[bool], int]:
        """Equivalence of each pair of distinct answers, and how many checks failed (TIMEOUT /
        ERROR: counted, and the pair is treated as different). Two plain integer literals are
        compared by value in-process (what the verifier decides for them, without a call per
        pair); any other pair is checked in both directions (gold parsing is not symmetric) and is
        equivalent when either direction is CORRECT."""
        same: list[bool | None] = [(int(a) == int(b)) if INTEGER.fullmatch(a) and INTEGER.fullmatch(b) else None for a, b in pairs]
        todo = [k for k, v in enumerate(same) if v is None]
        if not todo:
            return [bool(v) for v in same], 0
        backend = self.backend or _default_backend()
        kwargs = {} if self.timeout is None else {"timeout": self.timeout}
        preds = [pairs[k][0] for k in todo] + [pairs[k][1] for k in todo]
        golds = [pairs[k][1] for k in todo] + [pairs[k][0] for k in todo]
        verdicts = [getattr(r.verdict, "value", r.verdict) for r in backend(preds, golds, kind=self.kind, **kwargs)]
        failed = sum(v in ("timeout", "error") for v in verdicts)
        for j, k in enumerate(todo):
            same[k] = verdicts[j] == "correct" or verdicts[j + len(todo)] == "correct"
        return [bool(v) for v in same], failed

    def labels(self, prompts: Sequence[Text], completions: Sequence[Text]) -> tuple[list[Any], list[Any], list[list[int]], list[set[str]], int]:
        """(extracted answer per completion, pseudo-label per completion, groups of completion
        indices, the answers of each group's majority class (empty when nothing was extractable),
        number of equivalence checks that timed out or failed)."""
        extract = self.extract or _default_extract()
        answers = [extract(completion_text(c), kind=self.kind) for c in completions]
        groups = group_indices(prompts)
        # One batched verifier call for every pair of distinct answers within each group.
        distinct_per_group = [sorted({answers[i] for i in g if answers[i] is not None}) for g in groups]
        pairs, owners = [], []
        for gi, distinct in enumerate(distinct_per_group):
            for a in range(len(distinct)):
                for b in range(a + 1, len(distinct)):
                    pairs.append((distinct[a], distinct[b]))
                    owners.append((gi, a, b))
        equal, failed = self._equivalent(pairs)
        equal_pairs: list[set[tuple[int, int]]] = [set() for _ in groups]
        for (gi, a, b), same in zip(owners, equal):
            if same:
                equal_pairs[gi].add((a, b))
        labels: list[str | None] = [None] * len(completions)
        majority: list[set[str]] = []
        for gi, (g, distinct) in enumerate(zip(groups, distinct_per_group)):
            if not distinct:
                majority.append(set())
                continue
            counts = [sum(answers[i] == d for i in g) for d in distinct]
            classes = equivalence_classes(distinct, equal_pairs[gi])
            winner = majority_class(classes, distinct, counts, salt=prompt_key(prompts[g[0]]))
            if sum(counts[i] for i in winner) < self.min_votes:  # no majority: no label
                majority.append(set())
                continue
            # the label is the class's most frequent spelling (ties: the one that sorts first)
            label = min((distinct[i] for i in winner), key=lambda d: (-counts[distinct.index(d)], d))
            majority.append({distinct[i] for i in winner})
            for i in g:
                labels[i] = label
        return answers, labels, groups, majority, failed

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        answers, labels, groups, majority, failed = self.labels(prompts, completions)
        out: list[float | None] = [None] * len(completions)
        for g, members in zip(groups, majority):
            for i in g:
                out[i] = None if not members else float(answers[i] in members)
        metrics = self._metrics(completions, answers, labels, groups, majority, out, data_columns(columns))
        metrics["equivalence_check_failures"] = float(failed)
        publish(self, metrics, columns)
        return out

    def _metrics(self, completions, answers, labels, groups, majority, out, columns) -> dict[str, float]:
        n = max(len(completions), 1)
        labelled = [g for g, m in zip(groups, majority) if m]
        ratios = [sum(out[i] or 0.0 for i in g) / len(g) for g in labelled]
        metrics = {
            "parse_failures": float(sum(a is None for a in answers)),
            "no_label_groups": float(len(groups) - len(labelled)),  # nothing extractable, or no majority
            "no_majority_groups": float(sum(1 for g, m in zip(groups, majority)
                                            if not m and any(answers[i] is not None for i in g))),
            "majority_ratio": sum(ratios) / len(ratios) if ratios else float("nan"),
            "reward_mean": sum(x or 0.0 for x in out) / n,
        }
        golds = columns.get(self.gold_column)
        if golds is None:
            return metrics
        golds = [g or "" for g in gold_texts(golds, self.gold_column, f"reward {self.name!r}")]  # "" -> bad_gold, counted
        if len(golds) != len(completions):
            raise ValueError(f"reward {self.name!r}: column {self.gold_column!r} has {len(golds)} values for {len(completions)} completions")
        # Label accuracy: one comparison per labelled group; reward accuracy: every completion.
        firsts = [g[0] for g in labelled]
        backend = self.backend or _default_backend()
        kwargs = {} if self.timeout is None else {"timeout": self.timeout}
        preds = [labels[i] for i in firsts] + [completion_text(c) for c in completions]
        results = backend(preds, [golds[i] for i in firsts] + golds, kind=self.kind, **kwargs)
        verdicts = [getattr(r.verdict, "value", r.verdict) for r in results]
        correct = [v == "correct" for v in verdicts]
        # gold checks that could not decide (broken gold, timeout, crash) count as not correct: say how many
        metrics["gold_check_failures"] = float(sum(v in ("bad_gold", "timeout", "error") for v in verdicts))
        label_ok, true_ok = correct[: len(firsts)], correct[len(firsts):]
        scored = [i for i in range(len(completions)) if out[i] is not None]
        metrics["label_accuracy"] = sum(label_ok) / len(label_ok) if label_ok else float("nan")
        metrics["reward_accuracy"] = (
            sum(float(true_ok[i]) == out[i] for i in scored) / len(scored) if scored else float("nan")
        )
        metrics["true_accuracy"] = sum(true_ok) / n
        return metrics
