"""Rollout collection, the first phases of an RL step: sample prompts -> generate G completions
each -> score them with the reward (and the gold accuracy reward where the data has answers).

`collect_batch` runs one or more sampling rounds: one without dynamic sampling; with it (DAPO)
further rounds until `prompts_per_step` groups whose rewards vary are kept. Each round's kept
groups are a `KeptGroups` record; the step's `Batch` merges them. Under `--overlap`
(training/pipeline.py) the first round was generated one step earlier and scored on a background
thread (`overlap_rounds`), and keeps the sampling policy's per-token outputs (`behaviour`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch

from rewards.base import RAW_PROMPT_COLUMN
from training.advantages import ESTIMATORS, negligible_spread
from training.config import RLConfig
from training.curriculum import group_variance_score
from training.episodes import episode_scores, final_answers, sample_episodes
from training.pipeline import BackgroundScorer, Round, ScoredRound, concat_behaviour, select_rows, wait_for
from training.rollout import Rollout, render_prompt, sample
from training.run_state import Run
from training.reward_calls import Scores, score
from training.forward import PolicyPass, no_grad_pass


@dataclass
class Batch:
    """One step's rollouts with their rewards (the groups dynamic sampling kept)."""

    rows: list[dict]
    prompts: list[str]  # one per completion
    rollout: Rollout
    scores: Scores
    gold: list[float | None] | None  # the accuracy reward per completion (None without gold answers)
    metrics: dict[str, float]
    drawn: int
    zero_variance_groups: int
    seconds: dict[str, float]  # generate (this batch's rounds), score (reward time), score_wait (the loop blocked on it)
    behaviour: PolicyPass | None = None  # the sampling policy's per-token outputs (--overlap), else None


@dataclass
class KeptGroups:
    """The groups of one sampling round that are trained on (all of them without dynamic sampling)."""

    rows: list[dict]
    prompts: list[str]  # one per completion
    rollout: Rollout
    scores: Scores
    gold: list[float | None] | None
    behaviour: PolicyPass | None


def generate_rollouts(run: Run, rows: list[dict]) -> tuple[list[str], Rollout]:
    """G completions for each prompt of `rows`: (prompt texts, rollout)."""
    c, G = run.config, run.config.group_size
    prompts = [render_prompt(run.tokenizer, r["prompt"], c.chat_template) for r in rows]
    if c.env:  # multi-turn episodes with the environment (training/episodes.py)
        rollout = sample_episodes(run.accelerator.unwrap_model(run.model), run.tokenizer, prompts, rows, run.reward_fn.factory, G,
                                  c.max_turns, c.max_new_tokens, c.temperature, c.top_p, c.top_k)
    elif run.vllm is not None:
        rollout = run.vllm.sample(prompts, G, c.max_new_tokens, c.temperature, c.top_p, c.top_k, c.stop, run.accelerator.device)
    else:
        rollout = sample(run.accelerator.unwrap_model(run.model), run.tokenizer, prompts, G, c.max_new_tokens,
                         c.temperature, c.top_p, c.top_k, c.stop or None)
    return prompts, rollout


def score_rollouts(run: Run, rows: list[dict], prompts: list[str], rollout: Rollout) -> tuple[Scores, list | None, dict[str, float]]:
    """The training reward of every completion (every component logged), and its gold accuracy
    reward where the data has gold answers: (scores, gold per completion or None, metrics)."""
    G = run.config.group_size
    rep_prompts = [p for p in prompts for _ in range(G)]
    if rollout.episodes is not None:  # the environment scored its episodes; the gold reward reads final answers only
        scores, answers = episode_scores(rollout.episodes), final_answers(rollout.episodes)
    else:
        scores, answers = score(run.reward_fn, rep_prompts, rollout.texts, rollout_columns(rows, G), group_size=G), rollout.texts
    metrics, gold = dict(scores.metrics), None
    if run.same_accuracy:
        gold = scores.totals
    elif run.accuracy_fn is not None:
        gold = score(run.accuracy_fn, rep_prompts, answers, rollout_columns(rows, G), group_size=G).totals
    if gold is not None:
        metrics["accuracy"] = sum(t is not None and t >= 1 for t in gold) / len(gold)
    return scores, gold, metrics


def generate_round(run: Run, need: int) -> Round:
    """Draw `need` prompts (replayed ones first) and generate their groups. Under --overlap the
    round is trained one step later, so it also keeps the sampling policy's token log-probabilities
    (and entropy / values when the estimator uses them) for the importance ratio."""
    c = run.config
    t = time.time()
    replay = run.curriculum.take(need) if run.curriculum is not None else []
    rows = replay + run.stream.take(need - len(replay))
    prompts, rollout = generate_rollouts(run, rows)
    behaviour = None
    if c.overlap:
        estimator = ESTIMATORS[c.estimator]
        behaviour = no_grad_pass(run.model, run.value_head, rollout, c.temperature, c.micro_batch_size, estimator.needs_entropy)
    return Round(rows, prompts, rollout, behaviour, time.time() - t)


def score_round(run: Run, round_: Round) -> ScoredRound:
    """Score a round (on the scorer thread under --overlap)."""
    t = time.time()
    scores, gold, metrics = score_rollouts(run, round_.rows, round_.prompts, round_.rollout)
    return ScoredRound(round_, scores, gold, metrics, time.time() - t)


def collect_batch(run: Run, first: Any = None) -> Batch | None:
    """Sample prompts, generate and score (more rounds under dynamic sampling, which keeps only
    groups whose rewards vary); None when no group kept any signal. `first`: the future of the
    first round, generated one step earlier and scored in the background (--overlap)."""
    c = run.config
    kept: list[KeptGroups] = []
    metrics: dict[str, float] = {}
    drawn = zero_var = 0
    seconds = {"generate": 0.0, "score": 0.0, "score_wait": 0.0}
    for round_no in range(c.max_sampling_rounds if c.dynamic_sampling else 1):
        need = c.prompts_per_step - sum(len(k.rows) for k in kept)
        if need <= 0:
            break
        if round_no == 0 and first is not None:
            scored, waited = wait_for(first)
        else:
            scored = score_round(run, generate_round(run, need))
            waited = scored.score_seconds
        seconds["generate"] += scored.round.generate_seconds
        seconds["score"] += scored.score_seconds
        seconds["score_wait"] += waited
        metrics = scored.metrics
        drawn += len(scored.round.rows)
        groups, n_flat = keep_groups(run, scored)
        zero_var += n_flat
        if groups is not None:
            kept.append(groups)
    run.counters.prompts_seen += drawn
    if not kept:
        return None
    rollout = _concat([k.rollout for k in kept], run.tokenizer.pad_token_id)
    return Batch(rows=[r for k in kept for r in k.rows], prompts=[p for k in kept for p in k.prompts],
                 rollout=rollout, scores=merge_scores([k.scores for k in kept]),
                 gold=[g for k in kept for g in k.gold] if kept[0].gold is not None else None, metrics=metrics,
                 drawn=drawn, zero_variance_groups=zero_var, seconds=seconds,
                 behaviour=concat_behaviour([k.behaviour for k in kept], rollout.completion_ids.shape[1]))


def keep_groups(run: Run, scored: ScoredRound) -> tuple[KeptGroups | None, int]:
    """(the round's groups to train on, the number of groups whose rewards do not vary). Dynamic
    sampling keeps only the groups that vary; the curriculum remembers each group's variance."""
    c, G = run.config, run.config.group_size
    rows, prompts, rollout, scores, gold = (scored.round.rows, scored.round.prompts, scored.round.rollout,
                                            scored.scores, scored.gold)
    seq = torch.tensor([v if v is not None else 0.0 for v in scores.totals])
    varied = ~negligible_spread(seq, G, c.zero_variance_tol) if G > 1 else torch.ones(len(rows), dtype=torch.bool)
    if run.curriculum is not None:
        run.curriculum.record(rows, group_variance_score(seq, G))
    keep = varied if c.dynamic_sampling else torch.ones_like(varied)
    if not keep.any():
        return None, int((~varied).sum())
    sel = keep.repeat_interleave(G)
    idx = sel.nonzero().flatten().tolist()
    groups = KeptGroups(rows=[r for r, k in zip(rows, keep.tolist()) if k], prompts=[prompts[i // G] for i in idx],
                        rollout=_select(rollout, sel), scores=_subset(scores, idx),
                        gold=[gold[i] for i in idx] if gold is not None else None,
                        behaviour=select_rows(scored.round.behaviour, idx))
    return groups, int((~varied).sum())


def merge_scores(parts: list[Scores]) -> Scores:
    """One `Scores` for the kept groups of several rounds; when some rounds have per-step rewards and
    others not, the rows of the others get no steps (their total sits on the last token)."""
    dense = any(s.step_rewards is not None for s in parts)

    def rows(s: Scores, values: list[list] | None) -> list[list]:
        return values if values is not None else [[] for _ in s.totals]

    return Scores(totals=[t for s in parts for t in s.totals], applicable=[a for s in parts for a in s.applicable],
                  step_rewards=[x for s in parts for x in rows(s, s.step_rewards)] if dense else None,
                  step_ends=[x for s in parts for x in rows(s, s.step_ends)] if dense else None)


def overlap_rounds(run: Run, scorer: BackgroundScorer | None, ahead: Any, step: int) -> tuple[Any, Any]:
    """--overlap: (the future scores of this step's batch, those of the next step's batch). This
    step's batch was generated during the previous step (or is generated now, on the first step and
    after a checkpoint); the next one is generated now, with the current weights, and queued behind
    it on the scorer thread. (None, None) without --overlap."""
    if scorer is None:
        return None, None
    if ahead is None:
        ahead = scorer.submit(generate_round(run, run.config.prompts_per_step))
    following = scorer.submit(generate_round(run, run.config.prompts_per_step)) if generates_ahead(run.config, step) else None
    return ahead, following


def generates_ahead(config: RLConfig, step: int) -> bool:
    """Whether step `step` generates the next step's batch while it trains (--overlap): not on
    checkpoint steps nor the last step, so that a checkpoint never holds a half-used batch."""
    checkpoint = bool(config.checkpoint_every) and step % config.checkpoint_every == 0
    return config.overlap and step < config.steps and not checkpoint


# ---------------------------------------------------------------- rollout records
def _concat(rollouts: list[Rollout], pad_id: int) -> Rollout:
    """Stack rollouts of different widths (prompts left-padded, completions right-padded)."""
    if len(rollouts) == 1:
        return rollouts[0]
    p = max(r.prompt_ids.shape[1] for r in rollouts)
    c = max(r.completion_ids.shape[1] for r in rollouts)

    def left(x, w, v):
        return torch.nn.functional.pad(x, (w - x.shape[1], 0), value=v)

    def right(x, w, v):
        return torch.nn.functional.pad(x, (0, w - x.shape[1]), value=v)

    multi_turn = rollouts[0].action_mask is not None
    return Rollout(
        torch.cat([left(r.prompt_ids, p, pad_id) for r in rollouts]),
        torch.cat([left(r.prompt_mask, p, 0) for r in rollouts]),
        torch.cat([right(r.completion_ids, c, pad_id) for r in rollouts]),
        torch.cat([right(r.completion_mask, c, 0) for r in rollouts]),
        torch.cat([r.truncated for r in rollouts]),
        [t for r in rollouts for t in r.texts],
        torch.cat([right(r.action_mask, c, 0) for r in rollouts]) if multi_turn else None,
        [e for r in rollouts for e in r.episodes] if multi_turn else None,
    )


def _select(r: Rollout, keep: torch.Tensor) -> Rollout:
    idx = keep.nonzero().flatten().tolist()
    return Rollout(r.prompt_ids[idx], r.prompt_mask[idx], r.completion_ids[idx], r.completion_mask[idx],
                   r.truncated[idx], [r.texts[i] for i in idx], r.action_mask[idx] if r.action_mask is not None else None,
                   [r.episodes[i] for i in idx] if r.episodes is not None else None)


def _subset(scores: Scores, idx: list[int]) -> Scores:
    pick = lambda xs: [xs[i] for i in idx] if xs else None  # noqa: E731
    return Scores(totals=pick(scores.totals), applicable=pick(scores.applicable), step_rewards=pick(scores.step_rewards),
                  step_ends=pick(scores.step_ends), metrics=scores.metrics)


def rollout_columns(rows: list[dict], group_size: int) -> dict[str, list]:
    """Dataset columns (everything but the prompt), repeated once per completion, and the prompt as
    the data holds it (`raw_prompt`: reward models and judges apply their own chat template to it)."""
    keys = [k for k in rows[0] if k != "prompt"]
    columns = {k: [row.get(k) for row in rows for _ in range(group_size)] for k in keys}
    columns[RAW_PROMPT_COLUMN] = [row["prompt"] for row in rows for _ in range(group_size)]
    return columns
