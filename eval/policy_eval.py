"""Policy evaluation from sampled completions: pass@k, maj@k, mean reward, length, proxy-vs-gold gap.

The sampling lives in `eval.policy_cli`; everything here works on plain lists so it can be tested
with hand-made completions:

  correctness(...)    verdicts of every sample against the gold answer (`verifiers.verify_batch`)
  passk_majk(...)     pass@k (unbiased) and maj@k (answers grouped by verifier equivalence)
  reward_stats(...)   mean reward of a reward spec over all samples (None = not applicable, counted)
  proxy_gold_gap(...) how far a proxy reward (a learned RM) strays from a gold reward (a verifier):
      proxy_mean, gold_mean   mean of each reward over all samples
      mean_gap                proxy_mean - gold_mean (meaningful when both share a scale, e.g. 0..1)
      pearson, spearman       correlation of proxy and gold over samples
      bon_gold                mean gold reward of the sample the proxy ranks first in each prompt's group
      oracle_gold             mean over prompts of the best gold reward in the group
      bon_gap                 oracle_gold - bon_gold: gold the proxy leaves on the table; grows when
                              the policy learns to please the proxy without being right (reward hacking)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from scipy.stats import pearsonr, spearmanr

from rewardlab.config import check_fields, opt

from eval.passk import majority_answer, maj_at_k_groups, mean_pass_at_k



@dataclass(frozen=True)
class PolicyRewardsConfig:
    """The rewards `eval-policy` reports: one mean, or a proxy and a gold reward and their gap (a piece of its config)."""

    reward: str | None = opt(None, "reward spec to report the mean of (e.g. 'verifier:math', 'rm:PATH')")
    proxy_reward: str | None = opt(None, "proxy reward spec (e.g. a learned RM 'rm:PATH'); with --gold-reward gives the gap")
    gold_reward: str | None = opt(None, "gold reward spec (e.g. 'verifier:math')")

    def check_rewards(self) -> None:
        check_fields(self, PolicyRewardsConfig)
        if (self.proxy_reward is None) != (self.gold_reward is None):
            raise ValueError("--proxy-reward and --gold-reward go together: give both (or neither)")

    __post_init__ = check_rewards


def correctness(completions: list[list[str]], golds: Sequence[str], kind: str = "math", timeout: float | None = None) -> list[list[str]]:
    """Verdict (value string) of every sample: out[i][j] for completions[i][j] against golds[i]."""
    from verifiers import verify_batch

    flat = [c for group in completions for c in group]
    flat_gold = [str(g) for g, group in zip(golds, completions) for _ in group]
    verdicts = [r.verdict.value for r in verify_batch(flat, flat_gold, kind=kind, timeout=timeout)]
    out, i = [], 0
    for group in completions:
        out.append(verdicts[i : i + len(group)])
        i += len(group)
    return out


def verifier_equivalence(kind: str = "math", timeout: float | None = None) -> Callable[[str, str], bool]:
    """same(a, b): the verifier says answer a matches answer b (cached; symmetric calls share the cache)."""
    from verifiers import verify

    cache: dict[tuple[str, str], bool] = {}

    def same(a: str, b: str) -> bool:
        key = (a, b) if a <= b else (b, a)
        if key not in cache:
            cache[key] = verify(a, b, kind=kind, timeout=timeout).correct
        return cache[key]

    return same


def passk_majk(completions: list[list[str]], golds: Sequence[str], verdicts: list[list[str]], ks: Sequence[int],
               kind: str = "math", extract: Callable[[str], str | None] | None = None,
               same: Callable[[str, str], bool] | None = None) -> list[dict[str, float]]:
    """Rows {k, pass@k, maj@k} for each k (every prompt needs at least max(k) samples)."""
    from verifiers import extract_answer, verify_batch

    extract = extract or (lambda text: extract_answer(text, kind=kind))
    same = same or verifier_equivalence(kind)
    correct = [[v == "correct" for v in group] for group in verdicts]
    answers = [[extract(c) for c in group] for group in completions]
    rows = []
    for k in ks:
        majority, gold_of = [], []
        for group, gold in zip(answers, golds):
            for idx in maj_at_k_groups(len(group), k):
                majority.append(majority_answer([group[j] for j in idx], same))
                gold_of.append(str(gold))
        # no extracted answer at all -> the vote fails (counted wrong)
        scored = [i for i, m in enumerate(majority) if m is not None]
        results = verify_batch([majority[i] for i in scored], [gold_of[i] for i in scored], kind=kind) if scored else []
        wins = sum(r.correct for r in results)
        rows.append({"k": int(k), "pass@k": mean_pass_at_k(correct, k), "maj@k": wins / len(majority)})
    return rows


def reward_stats(values: Sequence[float | None]) -> dict[str, float]:
    """Mean/std over the applicable samples, and how many were not applicable (None)."""
    got = np.asarray([v for v in values if v is not None], dtype=float)
    return {"mean": float(got.mean()) if got.size else float("nan"), "std": float(got.std()) if got.size else float("nan"),
            "n": int(got.size), "n_none": int(len(values) - got.size)}


def proxy_gold_gap(proxy: list[list[float | None]], gold: list[list[float | None]]) -> dict[str, float]:
    """See the module doc. proxy[i][j], gold[i][j]: rewards of sample j of prompt i (None = not applicable)."""
    pairs = [(p, g) for pg, gg in zip(proxy, gold) for p, g in zip(pg, gg) if p is not None and g is not None]
    if len(pairs) < 2:
        raise ValueError("proxy-vs-gold gap needs at least two samples where both rewards apply")
    p_all, g_all = np.asarray(pairs, dtype=float).T
    bon, oracle = [], []
    for pg, gg in zip(proxy, gold):
        ok = [(p, g) for p, g in zip(pg, gg) if p is not None and g is not None]
        if ok:
            bon.append(max(ok, key=lambda t: t[0])[1])  # first of equal proxy scores
            oracle.append(max(g for _, g in ok))
    constant = np.std(p_all) == 0 or np.std(g_all) == 0
    out = {
        "proxy_mean": float(p_all.mean()),
        "gold_mean": float(g_all.mean()),
        "mean_gap": float(p_all.mean() - g_all.mean()),
        "pearson": float("nan") if constant else float(pearsonr(p_all, g_all)[0]),
        "spearman": float("nan") if constant else float(spearmanr(p_all, g_all)[0]),
        "bon_gold": float(np.mean(bon)),
        "oracle_gold": float(np.mean(oracle)),
    }
    out["bon_gap"] = out["oracle_gold"] - out["bon_gold"]
    return out


def score_groups(reward: Any, prompts: Sequence[Any], completions: list[list[str]], columns: dict[str, list[Any]]) -> list[list[float | None]]:
    """Call a reward on every sample (prompt and columns repeated per sample) and regroup per prompt."""
    flat_prompts = [p for p, group in zip(prompts, completions) for _ in group]
    flat = [c for group in completions for c in group]
    flat_cols = {k: [v for v, group in zip(vals, completions) for _ in group] for k, vals in columns.items()}
    from rewards.concurrent import call_reward

    values = list(call_reward(reward, flat_prompts, flat, **flat_cols))
    if len(values) != len(flat):
        raise ValueError(f"reward returned {len(values)} values for {len(flat)} completions")
    out, i = [], 0
    for group in completions:
        out.append([None if v is None else float(v) for v in values[i : i + len(group)]])
        i += len(group)
    return out
