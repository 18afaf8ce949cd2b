"""Generative-RM rewards: an LLM judge as the reward.

- `GenerativeRMReward(judge, mode="pyes")`: score = P("Yes") to "Is this solution correct?"
  (GenRM / RL^V verifier); `mode="pointwise"`: per prompt, k sampled judgments each give every
  response an integer score 1-10 and the votes are summed (DeepSeek-GRM). The reward is the mean
  vote over the judgments that parsed (= sum / k when all parse, so groups with an unparseable
  judgment stay on the same 1-10 scale; `average=False` gives the raw sum); a prompt whose
  judgments all failed to parse gives None, never 0.
- `FlawedPositiveReward(reward, locate)`: FAPO. For every item the base reward counts as positive,
  a judge names the first wrong step (-1 if none); a flawed positive loses `penalty`
  (penalty 1 sets a 1.0 reward to 0).

`judge` follows `reward_models.local_judge.GenerativeJudge` (`p_yes`, `pointwise`, `generate`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from rewards.base import (NamedReward, Text, check_batch, completion_text, group_indices, inner_columns, model_prompts, prompt_text,
                          publish)
from rewards.judge import judge_delta, judge_stats
from rewards.prm import split_steps

MODES = ("pyes", "pointwise")


@dataclass(frozen=True)
class GenerativeRMReward(NamedReward):
    """Reward from a generative judge: P("Yes") (`pyes`) or voted pointwise scores (`pointwise`).

    >>> from types import SimpleNamespace as NS
    >>> class Judge:
    ...     def p_yes(self, questions, solutions): return [0.9 if s.endswith("2") else 0.1 for s in solutions]
    ...     def pointwise(self, prompt, responses, k=4, seed=0):
    ...         return NS(scores=[7 * k if r.endswith("2") else 2 * k for r in responses], n_judgments=k, n_unparseable=0)
    >>> GenerativeRMReward(Judge())(["1+1="] * 2, ["2", "3"])
    [0.9, 0.1]
    >>> GenerativeRMReward(Judge(), mode="pointwise", k=2)(["1+1="] * 2, ["2", "3"])
    [7.0, 2.0]
    >>> GenerativeRMReward(Judge(), mode="pointwise", k=2, average=False)(["1+1="] * 2, ["2", "3"])
    [14.0, 4.0]
    """

    judge: Any  # GenerativeJudge-like
    mode: str = "pyes"  # pyes | pointwise
    k: int = 4  # pointwise: judgments sampled per prompt (scores are summed: voting)
    seed: int = 0  # pointwise: sampling seed (responses are shuffled per judgment)
    average: bool = True  # pointwise: mean vote over parsed judgments (False: the raw sum)
    max_new_tokens: int | None = None  # pointwise: judgment length limit (None: the judge's default)
    name: str = "genrm"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"GenerativeRMReward.mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.k < 1:
            raise ValueError(f"GenerativeRMReward.k must be >= 1, got {self.k}")

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        texts = [completion_text(c) for c in completions]
        questions = [prompt_text(p) for p in model_prompts(prompts, columns)]
        before = judge_stats(self.judge)
        if self.mode == "pyes":
            out: list[float | None] = [None if x is None else float(x) for x in self.judge.p_yes(questions, texts)]
            kept = [x for x in out if x is not None]
            metrics = {"p_yes_mean": sum(kept) / len(kept) if kept else float("nan"), "failed": float(len(out) - len(kept)),
                       "none_frac": (len(out) - len(kept)) / max(len(out), 1)}
        else:
            out = [None] * len(texts)
            unparseable = judgments = 0.0
            groups = group_indices(prompts)
            extra = {} if self.max_new_tokens is None else {"max_new_tokens": self.max_new_tokens}
            many = getattr(self.judge, "pointwise_many", None)
            if callable(many):  # a remote judge sends every group's judgments at once
                results = many([questions[g[0]] for g in groups], [[texts[i] for i in g] for g in groups], k=self.k, seed=self.seed, **extra)
            else:
                results = [self.judge.pointwise(questions[g[0]], [texts[i] for i in g], k=self.k, seed=self.seed, **extra) for g in groups]
            for g, result in zip(groups, results):
                n_judged = int(getattr(result, "n_judgments", self.k))
                parsed = n_judged - int(result.n_unparseable)
                judgments += n_judged
                unparseable += result.n_unparseable
                for i, s in zip(g, result.scores):
                    out[i] = None if s is None or parsed <= 0 else float(s) / (parsed if self.average else 1)
            kept = [x for x in out if x is not None]
            metrics = {"score_mean": sum(kept) / len(kept) if kept else float("nan"), "n_unparseable": unparseable,
                       "unparseable_frac": unparseable / judgments if judgments else 0.0,
                       "none_frac": (len(out) - len(kept)) / max(len(out), 1)}
        metrics.update(judge_delta(before, judge_stats(self.judge)))
        publish(self, metrics, columns)
        return out



FIRST_ERROR_TEMPLATE = (
    "Problem: {question}\nSolution steps:\n{steps}\n"
    "Which is the first incorrect step? Answer with its number, or -1 if every step is correct.\nAnswer:"
)


def parse_step_index(text: str | None, n_steps: int) -> int | None:
    """The step number a judge names (1-based in the text -> 0-based), -1 for "none", None when
    unreadable or when the judge gave no answer (a failed request).

    >>> parse_step_index(" Step 2 is wrong", 3), parse_step_index("-1", 3), parse_step_index("maybe", 3)
    (1, -1, None)
    """
    if text is None:
        return None
    m = re.search(r"-?\d+", text)
    if not m:
        return None
    value = int(m.group())
    if value == -1:
        return -1
    return value - 1 if 1 <= value <= n_steps else None


def judge_first_error(judge: Any, template: str = FIRST_ERROR_TEMPLATE, max_new_tokens: int = 8) -> Callable[..., list[int | None]]:
    """A `locate(questions, steps) -> list[first wrong step | -1 | None]` that asks `judge.generate`
    (greedy decoding: temperature 0)."""

    def locate(questions: Sequence[str], steps: Sequence[Sequence[str]]) -> list[int | None]:
        prompts = [template.format(question=q, steps="\n".join(f"{k + 1}. {s}" for k, s in enumerate(st)))
                   for q, st in zip(questions, steps)]
        answers = judge.generate(prompts, max_new_tokens=max_new_tokens, temperature=0.0)
        return [parse_step_index(a, len(st)) for a, st in zip(answers, steps)]

    return locate


@dataclass(frozen=True)
class FlawedPositiveReward(NamedReward):
    """FAPO: a positive (correct-answer) completion whose working has a wrong step loses `penalty`.

    >>> base = lambda p, c, **k: [1.0, 1.0, 0.0]
    >>> locate = lambda qs, steps: [1 if "bad" in "".join(s) else -1 for s in steps]
    >>> fn = FlawedPositiveReward(base, locate)
    >>> fn(["q"] * 3, ["a\\nbad\\n4", "a\\nb\\n4", "a\\nbad\\n5"]), fn.last_metrics["flawed_positives"]
    ([0.0, 1.0, 0.0], 1.0)
    """

    reward: Any  # the base (outcome) reward, e.g. VerifierReward
    locate: Callable[..., list[int | None]]  # (questions, steps) -> first wrong step index, -1 none, None unreadable
    penalty: float = 1.0  # lambda: subtracted from a flawed positive's reward
    positive_threshold: float = 0.5  # items with base reward >= this are checked
    separator: str = "\n"
    name: str = "fapo"
    last_metrics: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __call__(self, prompts: Sequence[Text], completions: Sequence[Text], **columns: Any) -> list[float | None]:
        check_batch(prompts, completions, self.name)
        inner = inner_columns(columns)
        base = list(self.reward(prompts, completions, **inner))
        positives = [i for i, r in enumerate(base) if r is not None and r >= self.positive_threshold]
        steps = [split_steps(completion_text(completions[i]), self.separator)[0] for i in positives]
        questions = [prompt_text(p) for p in model_prompts(prompts, columns)]
        found = self.locate([questions[i] for i in positives], steps) if positives else []
        out = list(base)
        flawed = unreadable = 0
        for i, where in zip(positives, found):
            if where is None:
                unreadable += 1
            elif where >= 0:
                flawed += 1
                out[i] = base[i] - self.penalty
        publish(self, {"positives": float(len(positives)), "flawed_positives": float(flawed),
                       "judge_unreadable": float(unreadable),
                       "flawed_frac": flawed / len(positives) if positives else 0.0}, columns)
        return out


REMOTE_OPTIONS = ("model", "concurrency", "rate", "retries", "backoff", "timeout", "cache", "api_key_env", "max_tokens")


def is_url(target: str) -> bool:
    return str(target).startswith(("http://", "https://"))


def load_judge(target: str, **remote: Any) -> Any:
    """A judge: `target` an http(s) URL of an OpenAI-compatible endpoint -> `RemoteJudge` with
    `remote` options (model, concurrency, rate, retries, backoff, timeout, cache, api_key_env,
    max_tokens); else a local directory or hub name of a causal LM -> `GenerativeJudge`."""
    remote = {k: v for k, v in remote.items() if v is not None}
    if is_url(target):
        from reward_models.remote import Limits, RemoteJudge

        limit_keys = ("concurrency", "rate", "retries", "backoff", "timeout", "cache")
        limits = Limits(**{k: remote.pop(k) for k in limit_keys if k in remote})
        return RemoteJudge(target, limits=limits, **remote)
    if remote:
        raise ValueError(f"options {sorted(remote)} are for a judge behind an http(s) URL; {target!r} is a local model")
    return _load_judge(target)


def _load_judge(path: str) -> Any:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rewardlab.tables import looks_local

    if looks_local(path) and not __import__("pathlib").Path(path).exists():
        raise ValueError(f"cannot load a causal LM judge from {path!r}: no such directory (a judge server needs an http(s) URL)")

    try:
        model, tokenizer = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot load a causal LM judge from {path!r} ({exc}); pass a local model directory or a hub name") from exc
    from reward_models.local_judge import GenerativeJudge

    return GenerativeJudge(model, tokenizer)


def genrm_from_spec(path: str | None = None, mode: str = "pyes", k: int = 4, seed: int = 0, average: bool = True,
                    max_new_tokens: int | None = None, model: str | None = None, concurrency: int | None = None,
                    rate: float | None = None, retries: int | None = None, backoff: float | None = None, timeout: float | None = None,
                    cache: int | None = None, api_key_env: str | None = None) -> GenerativeRMReward:
    """`genrm:PATH_OR_URL[:pyes|pointwise][:k=4,...]`; with an http(s) URL the judge is remote
    (`model`, `concurrency`, `rate`, `retries`, `backoff`, `timeout`, `cache`, `api_key_env`)."""
    if not path:
        raise ValueError("the spec genrm:PATH needs the path (or hub name) of a causal LM judge, or the URL of a judge server")
    if mode not in MODES:
        raise ValueError(f"genrm spec: mode must be one of {', '.join(MODES)}, got {mode!r}")
    judge = load_judge(path, model=model, concurrency=concurrency, rate=rate, retries=retries, backoff=backoff, timeout=timeout,
                       cache=cache, api_key_env=api_key_env)
    return GenerativeRMReward(judge, mode=mode, k=k, seed=seed, average=average, max_new_tokens=max_new_tokens)


def fapo_from_spec(path: str | None = None, kind: str = "math", penalty: float = 1.0, column: str = "answer", model: str | None = None,
                   concurrency: int | None = None, rate: float | None = None, retries: int | None = None,
                   backoff: float | None = None, timeout: float | None = None, cache: int | None = None,
                   api_key_env: str | None = None) -> FlawedPositiveReward:
    if not path:
        raise ValueError("the spec fapo:PATH needs the path (or hub name) of a causal LM judge, or the URL of a judge server")
    from rewards.verifier import VerifierReward

    judge = load_judge(path, model=model, concurrency=concurrency, rate=rate, retries=retries, backoff=backoff, timeout=timeout,
                       cache=cache, api_key_env=api_key_env)
    return FlawedPositiveReward(VerifierReward(kind=kind, answer_column=column), judge_first_error(judge), penalty=penalty)
