"""Multi-turn rollouts: the policy talks with an environment (`rewards.environments`) for up to
`max_turns` turns per episode, and the episode is one row of a `Rollout`.

Per episode (G episodes per prompt, as GRPO's G completions):

    env.reset(row) -> optional opening observation (environment tokens)
    repeat: the policy writes a turn (until EOS, one of env.stop, or max_new_tokens)
            env.step(turn) -> Turn; a per-turn reward goes on the turn's last token
            done (the environment says so, or the turn limit) -> stop
            else the observation is appended as environment tokens and the policy goes on
    env.reward() -> the final reward, on the episode's last token (always a policy token: at the
            turn limit the last observation is not appended)

The row's completion is every turn's tokens and every observation's, in order; `action_mask`
is 1 on the policy's tokens only, so the loss, KL and entropy never see the environment's. The
policy's tokens are kept as sampled (a turn is never re-tokenised from text), and observations are
tokenised on their own, so the ids the loss sees are the ids the policy produced.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from rewards.base import NamedReward
from rewards.environments import Turn, build_env, final_reward, resolve, run_step
from training.reward_calls import Scores
from training.rollout import (Rollout, StopOnStrings, cache_argument, sample_tokens, eos_token_ids, completion_mask_and_texts,
                              encode_prompts)

MAX_OBSERVATION_TOKENS = 512  # an observation longer than this is cut (and counted)
STEP_THREADS = 2 * (os.cpu_count() or 1)  # concurrent environment steps (environments with `concurrent = True`)


@dataclass
class Episode:
    """One episode's record: what the metrics, the report and the gold accuracy read."""

    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    answered: bool = False  # the environment took a message as final (not cut by the turn limit)
    final_message: str = ""  # the policy's last message (what the gold accuracy reward reads when answered)
    reward: float | None = None  # the environment's final reward
    turn_rewards: list[float] = field(default_factory=list)
    turn_end_chars: list[int] = field(default_factory=list)  # where each rewarded turn ends: a character offset (exclusive) in the transcript
    observations_cut: int = 0

    @property
    def total(self) -> float | None:
        """Final reward + the per-turn rewards (None when the environment found it not applicable)."""
        return None if self.reward is None else self.reward + sum(self.turn_rewards)


@dataclass
class EnvironmentReward(NamedReward):
    """The reward of an `rl --env` run: each episode's own, computed by its environment during the
    rollout (`episode_scores`), so it is never called on text."""

    spec: str
    factory: Callable[[], Any]
    name: str = "env"

    @classmethod
    def build(cls, spec: str) -> "EnvironmentReward":
        return cls(spec=spec, factory=build_env(spec), name=f"env_{spec.split(':')[0].rpartition('.')[2]}")

    def check(self, row: dict, data: str) -> None:
        """Reset one environment on a row of the data: a missing column fails here, before any model loads."""
        try:
            resolve(self.factory().reset(dict(row)))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"--env {self.spec} on --data {data}: {exc}") from None

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float | None]:
        raise TypeError(f"{self.name}: an environment's reward comes from its episodes (training.episodes.episode_scores), "
                        "not from text; use a reward spec to score completions")


def episode_scores(episodes: Sequence["Episode"]) -> Scores:
    """The episodes' rewards as the trainer's `Scores`: each total (final + per-turn rewards), with
    the per-turn rewards on the tokens that end their turns (`step_ends` are character offsets)."""
    totals = [e.total for e in episodes]
    dense = any(e.turn_rewards for e in episodes)
    return Scores(totals=totals, applicable=[t is not None for t in totals],
                  step_rewards=[list(e.turn_rewards) for e in episodes] if dense else None,
                  step_ends=[list(e.turn_end_chars) for e in episodes] if dense else None,
                  metrics=episode_metrics(episodes))


@torch.no_grad()
def sample_episodes(model: Any, tokenizer: Any, prompts: Sequence[str], rows: Sequence[dict], factory: Callable[[], Any],
                    num_samples: int, max_turns: int, max_new_tokens: int, temperature: float = 1.0, top_p: float = 1.0,
                    top_k: int = 0) -> Rollout:
    """`num_samples` episodes per prompt (text prompts, already chat-templated) -> a Rollout whose
    rows are episodes (`action_mask` and `episodes` set)."""
    unwrapped = getattr(model, "module", model)
    cache_arg = cache_argument(unwrapped)
    if cache_arg is None:
        raise ValueError(f"multi-turn rollouts drive the model with a KV cache and need its forward to take position_ids, "
                         f"use_cache and logits_to_keep; {type(unwrapped).__name__} does not")
    device = next(unwrapped.parameters()).device
    eos_ids, pad = eos_token_ids(unwrapped, tokenizer), tokenizer.pad_token_id
    n = len(prompts) * num_samples
    envs = [factory() for _ in range(n)]
    stop = tuple(getattr(envs[0], "stop", ()) or ()) if envs else ()
    episodes = [Episode() for _ in range(n)]
    prompt_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    ids: list[list[int]] = [[] for _ in range(n)]  # the completion so far: policy and environment tokens
    act: list[list[int]] = [[] for _ in range(n)]  # 1 on the policy's tokens
    for i, env in enumerate(envs):
        opening = resolve(env.reset(dict(rows[i // num_samples])))
        if opening:
            _append_observation(tokenizer, episodes[i], ids[i], act[i], opening)
    was_training = unwrapped.training
    unwrapped.eval()
    active, truncated = list(range(n)), [False] * n
    try:
        for turn_no in range(max_turns):
            if not active:
                break
            if turn_no == 0 and not any(ids):  # every episode of a prompt starts from the same context
                turns = _sample_turn(unwrapped, cache_arg, tokenizer, prompt_ids, num_samples, max_new_tokens, temperature,
                                     top_p, top_k, stop, eos_ids, pad, device)
            else:
                turns = _sample_turn(unwrapped, cache_arg, tokenizer, [prompt_ids[i // num_samples] + ids[i] for i in active], 1,
                                     max_new_tokens, temperature, top_p, top_k, stop, eos_ids, pad, device)
            messages = [tokenizer.decode(tokens, skip_special_tokens=True) for tokens, _ in turns]
            answers = _step_all([envs[i] for i in active], messages)
            still = []
            for i, (tokens, ended), message, answer in zip(active, turns, messages, answers):
                ep = episodes[i]
                ids[i] += tokens
                act[i] += [1] * len(tokens)
                ep.turns += 1
                ep.tool_calls += int(answer.tool_call)
                ep.tool_errors += int(answer.tool_error)
                ep.final_message = message
                if answer.reward is not None:
                    ep.turn_rewards.append(float(answer.reward))
                    ep.turn_end_chars.append(len(tokenizer.decode(ids[i], skip_special_tokens=True)))
                if answer.done or turn_no == max_turns - 1:  # the environment's answer, or cut at the turn limit
                    ep.answered = answer.done  # (at the limit the last observation is not appended)
                    truncated[i] = ended == "length"
                    continue
                if answer.observation:  # the turn ended (EOS, a stop string or max_new_tokens): the environment answers
                    _append_observation(tokenizer, ep, ids[i], act[i], answer.observation)
                still.append(i)
            active = still
    finally:
        unwrapped.train(was_training)
    for i, env in enumerate(envs):
        episodes[i].reward = final_reward(env)
    return _as_rollout(tokenizer, prompts, num_samples, ids, act, truncated, episodes, pad, device)


def _step_all(envs: list[Any], messages: list[str]) -> list[Turn]:
    """`run_step` on each (environment, message); at once in threads when the environments say they
    share nothing (`concurrent = True`), as the code environment's sandbox runs do."""
    if len(envs) < 2 or not getattr(envs[0], "concurrent", False):
        return [run_step(env, m) for env, m in zip(envs, messages)]
    with ThreadPoolExecutor(max_workers=min(len(envs), STEP_THREADS)) as pool:
        return list(pool.map(run_step, envs, messages))


def _sample_turn(model: Any, cache_arg: str, tokenizer: Any, contexts: list[list[int]], num_samples: int, max_new_tokens: int,
                 temperature: float, top_p: float, top_k: int, stop: tuple[str, ...], eos_ids: set[int], pad: int,
                 device: Any) -> list[tuple[list[int], str]]:
    """One policy turn for each context (`num_samples` each): [(tokens through EOS / the stop
    string, how it ended: "eos" | "stop" | "length")]."""
    width = max(len(c) for c in contexts)
    context_ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts], device=device)
    context_mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts], device=device)
    stopper = StopOnStrings(tokenizer, stop, 0) if stop else None
    out = sample_tokens(model, cache_arg, context_ids, context_mask, num_samples, max_new_tokens, temperature, top_p, top_k,
                  eos_ids, pad, stopper)
    if out.shape[1] == 0:
        return [([], "length") for _ in range(len(contexts) * num_samples)]
    mask, truncated, _ = completion_mask_and_texts(tokenizer, out, list(stop) or None, eos_ids)
    turns = []
    for row, m, cut in zip(out.tolist(), mask.sum(-1).tolist(), truncated.tolist()):
        tokens = row[: int(m)]
        turns.append((tokens, "length" if cut else "eos" if tokens and tokens[-1] in eos_ids else "stop"))
    return turns


def _append_observation(tokenizer: Any, episode: Episode, ids: list[int], act: list[int], text: str) -> None:
    tokens = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(tokens) > MAX_OBSERVATION_TOKENS:
        tokens, episode.observations_cut = tokens[:MAX_OBSERVATION_TOKENS], episode.observations_cut + 1
    ids += tokens
    act += [0] * len(tokens)


def _as_rollout(tokenizer: Any, prompts: Sequence[str], num_samples: int, ids: list[list[int]], act: list[list[int]],
                truncated: list[bool], episodes: list[Episode], pad: int, device: Any) -> Rollout:
    prompt_ids, prompt_mask = encode_prompts(tokenizer, prompts, device)
    width = max(1, max(len(x) for x in ids))
    completion = torch.tensor([x + [pad] * (width - len(x)) for x in ids], device=device)
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids], device=device)
    action = torch.tensor([a + [0] * (width - len(a)) for a in act], device=device)
    texts = [tokenizer.decode(x, skip_special_tokens=True) for x in ids]
    return Rollout(prompt_ids.repeat_interleave(num_samples, dim=0), prompt_mask.repeat_interleave(num_samples, dim=0),
                   completion, mask, torch.tensor(truncated, dtype=torch.bool, device=device), texts, action, episodes)


def final_answers(episodes: Sequence[Episode]) -> list[str]:
    """What a gold-accuracy reward reads of each episode: the policy's final message when the
    environment took it as the answer, else "" (cut by the turn limit: no answer). Never the
    transcript, whose observations could hold the right number (a tool's result).

    >>> final_answers([Episode(answered=True, final_message="1023"), Episode(answered=False, final_message="<calc>1+2</calc>")])
    ['1023', '']
    """
    return [e.final_message if e.answered else "" for e in episodes]


def episode_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
    """Per-step metrics of a batch of episodes (`episodes/...`)."""
    n = max(len(episodes), 1)
    calls = sum(e.tool_calls for e in episodes)
    return {"episodes/turns_mean": sum(e.turns for e in episodes) / n,
            "episodes/tool_calls_mean": calls / n,
            "episodes/tool_use_rate": sum(e.tool_calls > 0 for e in episodes) / n,
            "episodes/tool_error_rate": sum(e.tool_errors for e in episodes) / max(calls, 1),
            "episodes/answered_rate": sum(e.answered for e in episodes) / n,
            "episodes/observations_cut": float(sum(e.observations_cut for e in episodes))}
