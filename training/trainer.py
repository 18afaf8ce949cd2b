"""The RL loop (GRPO / PPO family), readable top to bottom:

    setup -> [ collect_batch (sample prompts -> generate_rollouts -> score_rollouts)
               -> compute_advantages -> update_policy (num_iterations x clipped loss + KL + entropy -> step)
               -> step_record -> monitors -> log -> checkpoint ]

Each phase is a named function over a `Run` (the shared state) and a `Batch` (one step's
rollouts and rewards). Monitors (training/monitors.py) see every step: sample completions, a
constant-reward warning, the learned reward models' OOD share, a held-out gold probe and the hack
alarm (proxy up while gold falls, or length / step-count drift), which can stop the run.

With `--overlap` (training/pipeline.py; off by default: it is one step off-policy) each step
generates the next step's batch first and a background thread scores it while this step's batch
trains, so a slow reward no longer adds its whole time to every step.

Everything that varies by name (advantage estimator, loss aggregation, KL estimator) is a pure
function picked from a dict in its own module. `accelerate` handles devices, mixed precision and
multi-GPU / multi-node (`accelerate launch -m training.cli ...`).
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from training.advantages import ESTIMATORS, _whiten, sequence_rewards
from training.checkpoint import load_checkpoint, resume_checkpoint, save_checkpoint
from training.config import LEARNED_KL, RLConfig
from training.data import PromptStream, check_columns, load_rows, parse_task
from training.kl import KL
from training.losses import AGGREGATIONS, BatchNorm, approx_kl, clipped_surrogate, clipped_value_loss
from training.monitors import ConstantReward, GoldProbe, HackMonitor, OODShare, SampleLog, StepView, learned_models
from training.rollout import Rollout, prompt_text, sample, token_logprobs
from training.pipeline import BackgroundScorer, Round, ScoredRound, concat_behaviour, select_rows, wait_for
from training.run_dir import start_run_dir
from training.sampling import VarianceCurriculum, group_variance_score
from training.scoring import Scores, required_columns, score, token_rewards
from rewards.base import RAW_PROMPT_COLUMN, reward_name


class TrainingStopped(RuntimeError):
    """The run cannot continue (e.g. repeated non-finite losses); the message says why."""


# ---------------------------------------------------------------- setup (no model loaded yet)
def prepare_run(config: RLConfig) -> dict[str, Any]:
    """Everything that can be checked without a model: reward, data, columns, backend.
    Bad configuration fails here, naming the option."""
    from rewards import build_reward
    from rewards.spec import is_learned

    from training.guards import check_policy_vocabulary
    from training.run_dir import check_run_dir

    check_run_dir(config.output_dir, config.resume, config.overwrite)
    reward_fn = build_reward(config.reward)
    acc_spec = config.accuracy_reward if (config.accuracy_reward or "none").lower() != "none" else None
    columns = {"prompt_column": config.prompt_column, "answer_column": config.answer_column}
    rows = load_rows(config.data, split="train", seed=config.seed, **columns)
    check_columns(rows, sorted(required_columns(reward_fn)), config.data)
    check_policy_vocabulary(config.model, rows)
    held_out: list[dict] = []  # the first eval_size rows are the evaluation set, the next probe_size the gold probe
    if parse_task(config.data) is not None and config.eval_data is None:
        try:
            held_out = load_rows(config.data, split="test", limit=config.eval_size + config.probe_size, seed=config.seed)
        except ValueError:  # a small task's test split has too few problems for both: the probe uses training prompts
            held_out = load_rows(config.data, split="test", limit=config.eval_size, seed=config.seed)
    elif config.eval_data:
        held_out = load_rows(config.eval_data, split="test", seed=config.seed, flag="--eval-data", **columns)
    eval_rows = held_out[: config.eval_size]
    probe_rows = held_out[config.eval_size : config.eval_size + config.probe_size] or rows[: config.probe_size]
    has_gold = "answer" in rows[0]
    accuracy_fn = build_reward(acc_spec) if acc_spec and has_gold else None
    warnings = []
    if is_learned(config.reward) and config.kl_coef == 0:
        warnings.append(f"--kl-coef 0 with a learned reward ({config.reward}): nothing keeps the policy where the reward "
                        f"model was trained, and it will find the RM's blind spots; the default is {LEARNED_KL}")
    if config.backend == "vllm":
        from training.vllm_backend import check_vllm_backend

        check_vllm_backend()
    if config.lora:
        try:
            import peft  # noqa: F401
        except ImportError:
            raise ValueError("--lora needs peft: `pip install \"rewardlab[lora]\"`") from None
    if config.tensorboard:
        try:
            from torch.utils.tensorboard import SummaryWriter  # noqa: F401
        except ImportError:
            raise ValueError("--tensorboard needs the tensorboard package: `pip install tensorboard`") from None
    return {"reward_fn": reward_fn, "accuracy_fn": accuracy_fn, "rows": rows, "eval_rows": eval_rows,
            "probe_rows": probe_rows if config.probe_size and accuracy_fn is not None else [], "warnings": warnings}


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _load_models(config: RLConfig, accelerator: Any) -> dict[str, Any]:
    from training.policy import default_policy_path, load_policy

    policy_path = config.model or str(default_policy_path())
    model, tokenizer = load_policy(policy_path)
    if config.gradient_checkpointing:
        enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
        enable()
        model.config.use_cache = False
    if config.lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, target_modules="all-linear", task_type="CAUSAL_LM"))
    value_head = None
    if ESTIMATORS[config.estimator].needs_values:
        value_head = torch.nn.Linear(model.config.hidden_size, 1)
        torch.nn.init.zeros_(value_head.weight), torch.nn.init.zeros_(value_head.bias)
    ref_model = None
    if config.needs_reference:  # no reference model at all when the KL weight is 0
        ref_path = config.ref_model or policy_path
        ref_model, _ = load_policy(ref_path)
        ref_model.requires_grad_(False).eval()
        ref_model = ref_model.to(accelerator.device)
    return {"model": model, "tokenizer": tokenizer, "value_head": value_head, "ref_model": ref_model, "policy_path": policy_path}


def _mixed_precision(config: RLConfig) -> str:
    if config.mixed_precision != "auto":
        return config.mixed_precision
    return "bf16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "no"


# ---------------------------------------------------------------- one rollout batch
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

    return Rollout(
        torch.cat([left(r.prompt_ids, p, pad_id) for r in rollouts]),
        torch.cat([left(r.prompt_mask, p, 0) for r in rollouts]),
        torch.cat([right(r.completion_ids, c, pad_id) for r in rollouts]),
        torch.cat([right(r.completion_mask, c, 0) for r in rollouts]),
        torch.cat([r.truncated for r in rollouts]),
        [t for r in rollouts for t in r.texts],
    )


def _select(r: Rollout, keep: torch.Tensor) -> Rollout:
    idx = keep.nonzero().flatten().tolist()
    return Rollout(r.prompt_ids[idx], r.prompt_mask[idx], r.completion_ids[idx], r.completion_mask[idx],
                   r.truncated[idx], [r.texts[i] for i in idx])


def _subset(scores: Scores, idx: list[int]) -> Scores:
    pick = lambda xs: [xs[i] for i in idx] if xs else None  # noqa: E731
    return Scores(totals=pick(scores.totals), applicable=pick(scores.applicable), step_rewards=pick(scores.step_rewards),
                  step_ends=pick(scores.step_ends), metrics=scores.metrics)


def _columns(rows: list[dict], group_size: int) -> dict[str, list]:
    """Dataset columns (everything but the prompt), repeated once per completion, and the prompt as
    the data holds it (`raw_prompt`: reward models and judges apply their own chat template to it)."""
    keys = [k for k in rows[0] if k != "prompt"]
    columns = {k: [row.get(k) for row in rows for _ in range(group_size)] for k in keys}
    columns[RAW_PROMPT_COLUMN] = [row["prompt"] for row in rows for _ in range(group_size)]
    return columns


def _forward(model, value_head, rollout: Rollout, idx, temperature: float, with_entropy: bool, entropy_grad: bool = False):
    """logprobs, entropy, values [n, C] of the rows `idx` of the rollout."""
    ids, attn = rollout.input_ids[idx], rollout.attention_mask[idx]
    c = rollout.completion_ids.shape[1]
    if value_head is None:
        logprobs, entropy = token_logprobs(model, ids, attn, c, temperature, with_entropy, entropy_grad=entropy_grad)
        return logprobs, entropy, None
    logprobs, entropy, hidden = token_logprobs(model, ids, attn, c, temperature, with_entropy, return_hidden=True,
                                               entropy_grad=entropy_grad)
    values = value_head(hidden.to(next(value_head.parameters()).dtype)).squeeze(-1).float()
    return logprobs, entropy, values


@torch.no_grad()
def _no_grad_pass(model, value_head, rollout, temperature, micro: int, with_entropy: bool):
    outs = [_forward(model, value_head, rollout, slice(s, s + micro), temperature, with_entropy)
            for s in range(0, len(rollout.texts), micro)]
    cat = lambda i: torch.cat([o[i] for o in outs]) if outs[0][i] is not None else None  # noqa: E731
    return cat(0), cat(1), cat(2)


# ---------------------------------------------------------------- the run's shared state
@dataclass
class Run:
    """What the loop's phases share: the configuration, the models and optimizer, the reward, the
    prompt stream and the counters that checkpoints carry."""

    config: RLConfig
    accelerator: Any
    model: Any
    tokenizer: Any
    value_head: Any
    ref_model: Any
    optimizer: Any
    scheduler: Any
    params: list
    vllm: Any
    reward_fn: Any
    accuracy_fn: Any
    stream: PromptStream
    curriculum: VarianceCurriculum | None
    counters: dict[str, int]

    @property
    def same_accuracy(self) -> bool:
        return self.accuracy_fn is not None and self.config.accuracy_reward == self.config.reward


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
    behaviour: tuple | None = None  # (logprobs, entropy, values) [N, C] of the sampling policy (--overlap), else None


def _setup(config: RLConfig, prepared: dict[str, Any]) -> Run:
    from accelerate import Accelerator

    accelerator = Accelerator(mixed_precision=_mixed_precision(config))
    _seed_everything(config.seed + accelerator.process_index)
    models = _load_models(config, accelerator)
    model, value_head = models["model"], models["value_head"]
    params = [p for p in model.parameters() if p.requires_grad] + (list(value_head.parameters()) if value_head else [])
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / (config.warmup_steps + 1)))
    if value_head is not None:
        model, value_head, optimizer, scheduler = accelerator.prepare(model, value_head, optimizer, scheduler)
    else:
        model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    vllm = None
    if config.backend == "vllm":
        from training.vllm_backend import VLLMSampler

        vllm = VLLMSampler(models["policy_path"], models["tokenizer"], config.vllm_gpu_memory,
                           max_model_len=getattr(accelerator.unwrap_model(model).config, "max_position_embeddings", 4096), seed=config.seed,
                           accelerator=accelerator)
    curriculum = VarianceCurriculum(config.curriculum_kappa, config.curriculum_fraction) if config.curriculum == "variance" else None
    return Run(config=config, accelerator=accelerator, model=model, tokenizer=models["tokenizer"], value_head=value_head,
               ref_model=models["ref_model"], optimizer=optimizer, scheduler=scheduler, params=params, vllm=vllm,
               reward_fn=prepared["reward_fn"], accuracy_fn=prepared["accuracy_fn"],
               stream=PromptStream(prepared["rows"], seed=config.seed + 1000 * accelerator.process_index),
               curriculum=curriculum, counters={"bad_steps_total": 0, "bad_steps_in_a_row": 0, "prompts_seen": 0, "no_signal_steps": 0})


def heldout_eval(run: Run, rows: list[dict]) -> dict[str, float]:
    """Greedy completions of the current policy on `rows`: `accuracy` (the accuracy reward >= 1)
    and, where the gold answers are numbers, `badly_wrong` (the share of answers off by more than
    10% or with no number; `training.rm_data.closeness` == 0). Empty without gold answers."""
    if run.accuracy_fn is None or not rows:
        return {}
    from training.rm_data import closeness
    from training.rollout import generate
    from verifiers.simple_kinds import read_number

    c = run.config
    prompts = [prompt_text(run.tokenizer, r["prompt"], c.chat_template) for r in rows]
    outs = [o[0] for o in generate(run.accelerator.unwrap_model(run.model), run.tokenizer, prompts,
                                   max_new_tokens=c.max_new_tokens, temperature=0, stop=c.stop or None)]
    s = score(run.accuracy_fn, prompts, outs, _columns(rows, 1))
    out = {"accuracy": sum(t is not None and t >= 1.0 for t in s.totals) / len(rows)}
    if all(read_number(str(r.get("answer", ""))) is not None for r in rows):
        out["badly_wrong"] = sum(closeness(o, r["answer"]) == 0.0 for o, r in zip(outs, rows)) / len(rows)
    return out


def greedy_accuracy(run: Run, rows: list[dict]) -> float | None:
    """Held-out greedy accuracy of the current policy on `rows` (None without gold answers)."""
    return heldout_eval(run, rows).get("accuracy")


# ---------------------------------------------------------------- the phases of a step
def generate_rollouts(run: Run, rows: list[dict]) -> tuple[list[str], Rollout]:
    """G completions for each prompt of `rows`: (prompt texts, rollout)."""
    c, G = run.config, run.config.group_size
    prompts = [prompt_text(run.tokenizer, r["prompt"], c.chat_template) for r in rows]
    if run.vllm is not None:
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
    scores = score(run.reward_fn, rep_prompts, rollout.texts, _columns(rows, G), group_size=G)
    metrics, gold = dict(scores.metrics), None
    if run.same_accuracy:
        gold = scores.totals
    elif run.accuracy_fn is not None:
        gold = score(run.accuracy_fn, rep_prompts, rollout.texts, _columns(rows, G), group_size=G).totals
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
        behaviour = _no_grad_pass(run.model, run.value_head, rollout, c.temperature, c.micro_batch_size, estimator.needs_entropy)
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
    c, G = run.config, run.config.group_size
    kept: list[tuple[list[dict], list[str], Rollout, Scores, list | None, tuple | None]] = []
    metrics: dict[str, float] = {}
    drawn = zero_var = 0
    seconds = {"generate": 0.0, "score": 0.0, "score_wait": 0.0}
    for round_no in range(c.max_sampling_rounds if c.dynamic_sampling else 1):
        need = c.prompts_per_step - sum(len(k[0]) for k in kept)
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
        rows, prompts, rollout, scores, gold, metrics = (scored.round.rows, scored.round.prompts, scored.round.rollout,
                                                         scored.scores, scored.gold, scored.metrics)
        drawn += len(rows)
        seq = torch.tensor([v if v is not None else 0.0 for v in scores.totals])
        varied = ~negligible_spread(seq, G, c.zero_variance_tol) if G > 1 else torch.ones(len(rows), dtype=torch.bool)
        zero_var += int((~varied).sum())
        if run.curriculum is not None:
            run.curriculum.record(rows, group_variance_score(seq, G))
        keep = varied if c.dynamic_sampling else torch.ones_like(varied)
        if keep.any():
            sel = keep.repeat_interleave(G)
            idx = sel.nonzero().flatten().tolist()
            kept.append(([r for r, k in zip(rows, keep.tolist()) if k], [prompts[i // G] for i in idx], _select(rollout, sel),
                         _subset(scores, idx), [gold[i] for i in idx] if gold is not None else None,
                         select_rows(scored.round.behaviour, idx)))
    run.counters["prompts_seen"] += drawn
    if not kept:
        return None
    merged = Scores(
        totals=[t for k in kept for t in k[3].totals], applicable=[a for k in kept for a in k[3].applicable],
        step_rewards=[x for k in kept for x in (k[3].step_rewards or [])] or None,
        step_ends=[x for k in kept for x in (k[3].step_ends or [])] or None)
    gold = [g for k in kept for g in k[4]] if kept[0][4] is not None else None
    rollout = _concat([k[2] for k in kept], run.tokenizer.pad_token_id)
    return Batch(rows=[r for k in kept for r in k[0]], prompts=[p for k in kept for p in k[1]],
                 rollout=rollout, scores=merged, gold=gold, metrics=metrics,
                 drawn=drawn, zero_variance_groups=zero_var, seconds=seconds,
                 behaviour=concat_behaviour([k[5] for k in kept], rollout.completion_ids.shape[1]))


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


def negligible_spread(seq_rewards: torch.Tensor, group_size: int, tol: float) -> torch.Tensor:
    """[N] -> [P] bool: groups whose reward spread (max - min) is at most `tol` x the batch's
    reward scale (the larger of its std and its mean |r|) plus 1e-8 (float noise). Normalising
    such a group by its std would turn noise into full-size advantages.

    >>> negligible_spread(torch.tensor([1.0, 1.0 + 1e-5, 0.0, 1.0]), 2, 1e-3).tolist()
    [True, False]
    """
    g = seq_rewards.view(-1, group_size)
    scale = max(float(seq_rewards.std()) if seq_rewards.numel() > 1 else 0.0, float(seq_rewards.abs().mean()))
    return (g.max(-1).values - g.min(-1).values) <= tol * scale + 1e-8


def compute_advantages(run: Run, batch: Batch) -> dict[str, Any]:
    """Rewards on tokens, the no-grad passes (old / reference logprobs, values), advantages."""
    c, G, device = run.config, run.config.group_size, run.accelerator.device
    estimator = ESTIMATORS[c.estimator]
    rollout = batch.rollout
    rewards_t, loss_mask = token_rewards(batch.scores, rollout.completion_mask.cpu(), rollout.completion_ids.cpu(), run.tokenizer, G)
    if estimator.grouped and G > 1:  # groups with a negligible spread carry no signal: equal totals, zero advantage
        rewards_t = flatten_negligible_groups(rewards_t, rollout.completion_mask.cpu(), G, c.zero_variance_tol)
    if c.mask_truncated:
        loss_mask = loss_mask * (~rollout.truncated.cpu()).long()[:, None]
    rewards_t, loss_mask = rewards_t.to(device), loss_mask.to(device)
    need_old = c.num_iterations > 1 or estimator.needs_entropy or estimator.needs_values or (c.kl_coef > 0 and c.kl_in == "reward")
    old_logprobs = old_entropy = old_values = ref_logprobs = None
    if batch.behaviour is not None:  # sampled one step earlier (--overlap): the ratio is to the sampling policy
        old_logprobs, old_entropy, old_values = (x.to(device) if x is not None else None for x in batch.behaviour)
    elif need_old:
        old_logprobs, old_entropy, old_values = _no_grad_pass(run.model, run.value_head, rollout, c.temperature, c.micro_batch_size,
                                                              estimator.needs_entropy)
    if run.ref_model is not None:
        ref_logprobs, _, _ = _no_grad_pass(run.ref_model, None, rollout, c.temperature, c.micro_batch_size, False)
    if run.ref_model is not None and c.kl_in == "reward":
        rewards_t = rewards_t - c.kl_coef * KL[c.kl_estimator](old_logprobs, ref_logprobs) * loss_mask
    est_params = dict(eps=c.eps, qae_k=c.qae_k, w_lambda=c.w_lambda, zvp_alpha=c.zvp_alpha,
                      success_threshold=c.success_threshold, gamma=c.gamma, lam=c.lam)
    advantages = estimator.fn(rewards_t, loss_mask.float(), G, entropy=old_entropy, values=old_values, **est_params)
    returns = None
    if estimator.needs_values:
        returns = advantages + old_values * loss_mask
        advantages = _whiten(advantages, loss_mask.float())
    return {"rewards_t": rewards_t, "loss_mask": loss_mask, "advantages": advantages, "returns": returns,
            "old_logprobs": old_logprobs, "old_values": old_values, "ref_logprobs": ref_logprobs}


def flatten_negligible_groups(rewards_t: torch.Tensor, completion_mask: torch.Tensor, group_size: int, tol: float) -> torch.Tensor:
    """Token rewards [N, C] whose groups of negligible spread get their group-mean total (the
    difference is taken off each completion's last token), so group estimators give them zero."""
    seq = sequence_rewards(rewards_t, completion_mask.float())  # [N]
    flat = negligible_spread(seq, group_size, tol).repeat_interleave(group_size)  # [N]
    if not flat.any():
        return rewards_t
    mean = seq.view(-1, group_size).mean(-1).repeat_interleave(group_size)
    last = (completion_mask.sum(-1).long() - 1).clamp(min=0)
    out = rewards_t.clone()
    rows = flat.nonzero().flatten()
    out[rows, last[rows]] -= (seq - mean)[rows]
    return out


def update_policy(run: Run, batch: Batch, adv: dict[str, Any]) -> dict[str, float]:
    """num_iterations passes of the clipped loss (+ KL, entropy, value) and optimizer steps. A step
    with no signal (every advantage 0 and no KL or entropy term) does not move the weights
    (AdamW's momentum would); a non-finite loss or gradient skips the step."""
    c, accelerator, model = run.config, run.accelerator, run.model
    rollout, n = batch.rollout, len(batch.rollout.texts)
    loss_mask, advantages = adv["loss_mask"], adv["advantages"]
    norm = BatchNorm.of(loss_mask, c.max_new_tokens)
    no_signal = not bool((advantages * loss_mask).abs().sum() > 0) and c.kl_coef == 0 and c.entropy_coef == 0 and run.value_head is None
    model.train()
    stats = {"loss": 0.0, "clip_frac": 0.0, "approx_kl": 0.0, "entropy": 0.0, "kl": 0.0, "value_loss": 0.0}
    bad = False
    for _it in range(c.num_iterations):
        starts = list(range(0, n, c.micro_batch_size))
        for j, s in enumerate(starts):
            idx = slice(s, s + c.micro_batch_size)
            sync = contextlib.nullcontext() if j == len(starts) - 1 else accelerator.no_sync(model)
            with sync, accelerator.autocast():
                logprobs, entropy, values = _forward(model, run.value_head, rollout, idx, c.temperature, True, entropy_grad=c.entropy_coef != 0)
                pick = lambda x: x[idx] if x is not None else None  # noqa: E731
                loss, parts = _loss(c, logprobs, entropy, values, loss_mask[idx].float(), norm, advantages[idx],
                                    pick(adv["old_logprobs"]), pick(adv["ref_logprobs"]),
                                    pick(adv["old_values"]) if values is not None else None, pick(adv["returns"]) if values is not None else None)
                if not torch.isfinite(loss):
                    bad = True
                    break
                if not no_signal:
                    accelerator.backward(loss)
            for k, v in parts.items():
                stats[k] += v / c.num_iterations
        if no_signal:
            break
        if not bad:
            grad_norm = accelerator.clip_grad_norm_(run.params, c.max_grad_norm)
            bad = not math.isfinite(float(grad_norm))
        if bad:  # skip the step: no update from a non-finite loss or gradient
            run.optimizer.zero_grad(set_to_none=True)
            break
        run.optimizer.step()
        run.scheduler.step()
        run.optimizer.zero_grad(set_to_none=True)
    _count_bad_step(run, bad)
    run.counters["no_signal_steps"] += int(no_signal and not bad)
    if run.vllm is not None:
        run.vllm.sync_weights(accelerator.unwrap_model(model))
    return {**stats, "skipped_nonfinite": int(bad), "skipped_no_signal": int(no_signal and not bad)}


def _count_bad_step(run: Run, bad: bool) -> None:
    if not bad:
        run.counters["bad_steps_in_a_row"] = 0
        return
    run.counters["bad_steps_total"] += 1
    run.counters["bad_steps_in_a_row"] += 1
    if run.counters["bad_steps_in_a_row"] >= run.config.max_bad_steps:
        raise TrainingStopped(
            f"{run.counters['bad_steps_in_a_row']} steps in a row had a non-finite loss or gradient "
            f"({run.counters['bad_steps_total']} in total); stopping. Lower --lr, set --max-grad-norm, or check the reward's scale."
        )


def step_record(run: Run, step: int, batch: Batch, adv: dict[str, Any], stats: dict[str, float], elapsed: float,
                t_train: float) -> dict[str, Any]:
    """The metrics line of one step (see docs/training.md). Times of this step's batch: `generate`
    (under --overlap it happened during the previous step), `score` (the reward's time),
    `score_wait` (how long the loop waited for the scores), `overlap` = score - score_wait (scoring
    hidden behind generation and training), `train`, and `step` (wall clock)."""
    rollout = batch.rollout
    seq_r = sequence_rewards(adv["rewards_t"], rollout.completion_mask.float().to(adv["rewards_t"].device)).cpu()
    lengths = rollout.completion_mask.sum(-1).float().cpu()
    tokens = float(rollout.completion_mask.sum())
    return {
        "step": step,
        "reward/mean": seq_r.mean().item(), "reward/std": seq_r.std().item() if len(seq_r) > 1 else 0.0,
        **{f"reward/{k}": v for k, v in batch.metrics.items() if isinstance(v, (int, float)) and k != "accuracy"},
        **({"accuracy": batch.metrics["accuracy"]} if "accuracy" in batch.metrics else {}),
        **stats,
        "length/mean": lengths.mean().item(), "length/max": lengths.max().item(),
        "truncated_frac": rollout.truncated.float().mean().item(),
        "zero_variance_frac": batch.zero_variance_groups / max(batch.drawn, 1),
        "prompts_drawn": batch.drawn, "completions_trained": len(rollout.texts),
        "bad_steps_total": run.counters["bad_steps_total"],
        "lr": run.scheduler.get_last_lr()[0],
        "time/generate": batch.seconds["generate"], "time/score": batch.seconds["score"], "time/score_wait": batch.seconds["score_wait"],
        "time/overlap": max(batch.seconds["score"] - batch.seconds["score_wait"], 0.0), "time/train": t_train, "time/step": elapsed,
        "tokens_per_s": tokens / max(elapsed, 1e-9),
        **({"gpu_peak_gb": torch.cuda.max_memory_allocated() / 2**30} if torch.cuda.is_available() else {}),
    }


# ---------------------------------------------------------------- monitors
@dataclass
class Monitors:
    """The per-step monitors (training/monitors.py) and what they said."""

    samples: SampleLog
    constant: ConstantReward
    ood: OODShare | None
    probe: GoldProbe | None
    hack: HackMonitor
    warn: Any  # fn(text): print a warning above the progress bar

    def step(self, run: Run, step: int, batch: Batch, record: dict[str, Any]) -> str | None:
        """Add the monitors' numbers to `record`; returns the hack alarm's text, if any."""
        view = StepView(step=step, prompts=batch.prompts, completions=batch.rollout.texts, totals=batch.scores.totals,
                        gold=batch.gold, metrics=batch.metrics, group_size=run.config.group_size)
        for monitor in (self.constant, self.ood):
            if monitor is None:
                continue
            numbers, warning = monitor(view)
            record.update(numbers)
            if warning:
                self.warn(f"rl: warning: {warning}")
        if self.probe is not None:
            record.update(self.probe(step, last=step == run.config.steps))
        alarm = self.hack.observe(record)
        record["monitor/alarm"] = float(alarm is not None)
        if alarm:
            record["monitor/alarm_reason"] = alarm
            self.warn(f"rl: HACK ALARM at step {step}: {alarm}" + ("; stopping (--stop-on-alarm)" if run.config.stop_on_alarm else ""))
        record.update(self.samples(view))
        return alarm

    def check_stop(self) -> None:
        """Raise `TrainingStopped` when a monitor says the run cannot learn (all-None or constant rewards)."""
        if self.constant.stop_reason:
            raise TrainingStopped(self.constant.stop_reason)


def build_monitors(run: Run, probe_rows: list[dict], warn: Any) -> Monitors:
    c = run.config
    models = learned_models(run.reward_fn)
    probe = GoldProbe(probe_rows, c.probe_every, lambda rows: greedy_accuracy(run, rows)) if probe_rows and run.accuracy_fn else None
    constant = ConstantReward(reward_name(run.reward_fn), max_none_steps=c.max_none_steps, max_constant_steps=c.max_constant_steps)
    return Monitors(samples=SampleLog(c.log_samples), constant=constant,
                    ood=OODShare(models) if models else None, probe=probe,
                    hack=HackMonitor(c.hack_gold_drop, c.hack_drift, gold_key="probe/accuracy" if probe else "accuracy"), warn=warn)


# ---------------------------------------------------------------- the loop
def train(config: RLConfig, run: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run RL as configured; returns the summary (accuracy before/after, times, counts)."""
    from training.policy import cpu_threads

    run = run or prepare_run(config)  # bad configuration fails here, before any model is loaded
    with cpu_threads(config.cpu_threads):
        return _train(config, run)


def _train(config: RLConfig, prepared: dict[str, Any]) -> dict[str, Any]:
    from tqdm.auto import tqdm

    out_dir = Path(config.output_dir)
    ckpt_root = out_dir / "checkpoints"
    run = _setup(config, prepared)
    accelerator = run.accelerator
    resume_from = resume_checkpoint(ckpt_root, log=accelerator.print) if config.resume else None
    if accelerator.is_main_process:
        start_run_dir(config, out_dir, resume_from)
    for warning in prepared.get("warnings", ()):
        accelerator.print(f"rl: warning: {warning}")
    metrics_path = out_dir / "metrics.jsonl"
    start_step, summary = _start_or_resume(run, resume_from, metrics_path, prepared["eval_rows"])
    bar = tqdm(total=config.steps, initial=start_step, desc="rl", disable=not accelerator.is_main_process or None, dynamic_ncols=True)
    monitors = build_monitors(run, prepared["probe_rows"], warn=lambda text: bar.write(text) if accelerator.is_main_process else None)
    tb = None
    if config.tensorboard and accelerator.is_main_process:
        from torch.utils.tensorboard import SummaryWriter

        tb = SummaryWriter(str(out_dir / "tensorboard"))
    log_file = open(metrics_path, "a") if accelerator.is_main_process else None
    run_start, stopped = time.time(), None
    scorer = BackgroundScorer(lambda round_: score_round(run, round_)) if config.overlap else None
    ahead = None  # --overlap: the future scores of this step's batch, generated during the previous step
    try:
        for step in range(start_step + 1, config.steps + 1):
            t0 = time.time()
            this_step, ahead = overlap_rounds(run, scorer, ahead, step)  # --overlap: this batch's scores to come, and the next batch
            batch = collect_batch(run, this_step)  # 1-2. sample prompts, generate G completions each, score them
            if batch is None:  # dynamic sampling found no group with any signal: log and move on
                _write(log_file, tb, {"step": step, "skipped": "all groups had zero reward variance", "zero_variance_frac": 1.0})
                bar.update(1)
                continue
            t_train = time.time()
            adv = compute_advantages(run, batch)  # 3-4. rewards on tokens, old/reference logprobs, advantages
            stats = update_policy(run, batch, adv)  # 5. clipped loss (+ KL, entropy) and optimizer steps
            t_train = time.time() - t_train
            record = step_record(run, step, batch, adv, stats, time.time() - t0, t_train)  # 6. log
            if config.eval_every and step % config.eval_every == 0 and step < config.steps:
                record["eval/accuracy"] = greedy_accuracy(run, prepared["eval_rows"])
            alarm = monitors.step(run, step, batch, record)
            _write(log_file, tb, record)
            monitors.check_stop()  # all-None or constant rewards for too long: nothing to learn from
            bar.set_postfix(reward=f"{record['reward/mean']:.3f}", **({"acc": f"{record['accuracy']:.1%}"} if "accuracy" in record else {}))
            bar.update(1)
            if alarm and config.stop_on_alarm:
                stopped = {"step": step, "reason": alarm}
            if (config.checkpoint_every and step % config.checkpoint_every == 0) or step == config.steps or stopped:  # 7. checkpoint
                save_checkpoint(accelerator, ckpt_root, step, {
                    "stream": run.stream.state(), "counters": run.counters, "summary": summary,
                    "curriculum": run.curriculum.state() if run.curriculum is not None else [],
                }, keep=config.keep_checkpoints)
            if stopped:
                break
    finally:
        if scorer is not None:
            scorer.close()  # a batch generated ahead of a stop is dropped
        bar.close()
        if log_file:
            log_file.close()
        if tb is not None:
            tb.close()
    return _finish(run, summary, prepared["eval_rows"], run_start, stopped)


def _write(log_file, tb, record: dict[str, Any]) -> None:
    if log_file:
        log_file.write(json.dumps(record) + "\n")
        log_file.flush()
    if tb is not None:
        for k, v in record.items():
            if isinstance(v, (int, float)):
                tb.add_scalar(k, v, record["step"])


def _start_or_resume(run: Run, resume_from: Path | None, metrics_path: Path, eval_rows: list[dict]) -> tuple[int, dict[str, Any]]:
    """Restore a checkpoint (dropping metrics logged after it), or measure the starting accuracy."""
    accelerator = run.accelerator
    if resume_from is not None:
        state = load_checkpoint(accelerator, resume_from)
        run.stream.load_state(state["stream"])
        run.counters.update(state["counters"])
        if run.curriculum is not None:
            run.curriculum.load_state(state["curriculum"])
        if accelerator.is_main_process and metrics_path.exists():  # drop lines logged after the checkpoint
            kept = [ln for ln in metrics_path.read_text().splitlines() if ln.strip() and json.loads(ln)["step"] <= state["step"]]
            metrics_path.write_text("".join(ln + "\n" for ln in kept))
        accelerator.print(f"rl: resumed from {resume_from} (step {state['step']})")
        if run.vllm is not None:
            run.vllm.sync_weights(accelerator.unwrap_model(run.model))
        return state["step"], state["summary"]
    if accelerator.is_main_process and metrics_path.exists():
        metrics_path.unlink()
    before = heldout_eval(run, eval_rows)
    summary = {"accuracy_before": before.get("accuracy"), "badly_wrong_before": before.get("badly_wrong"),
               "policy": str(run.config.model or "default"), "reward": run.config.reward}
    if summary["accuracy_before"] is not None:
        accelerator.print(f"rl: held-out greedy accuracy before RL: {summary['accuracy_before']:.1%} ({len(eval_rows)} prompts)")
    return 0, summary


def _finish(run: Run, summary: dict[str, Any], eval_rows: list[dict], run_start: float, stopped: dict | None) -> dict[str, Any]:
    """The end: accuracy after, the final policy, summary.json and the report."""
    c, accelerator = run.config, run.accelerator
    after = heldout_eval(run, eval_rows)
    summary["accuracy_after"], summary["badly_wrong_after"] = after.get("accuracy"), after.get("badly_wrong")
    summary["steps"] = stopped["step"] if stopped else c.steps
    summary["wall_seconds_this_session"] = round(time.time() - run_start, 1)
    summary["bad_steps_total"] = run.counters["bad_steps_total"]
    summary["no_signal_steps"] = run.counters["no_signal_steps"]
    if stopped:
        summary["stopped_by_alarm"] = stopped
    out_dir = Path(c.output_dir)
    if accelerator.is_main_process:
        from training.policy import save_policy_atomically

        save_policy_atomically(accelerator.unwrap_model(run.model), run.tokenizer, out_dir / "policy")
        (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        if c.report:
            from training.report import write_report

            write_report(out_dir, summary)
    return summary


def _loss(config: RLConfig, logprobs, entropy, values, mask, norm: BatchNorm, advantages, old_logprobs, ref_logprobs,
          old_values, returns) -> tuple[torch.Tensor, dict[str, float]]:
    """One micro-batch's loss: clipped surrogate - entropy bonus + KL (in the loss) + value loss,
    each aggregated with the whole batch's normaliser; and its diagnostics (sums over the batch).
    All tensors [n, C]; `old_logprobs` None means the rollout policy is the current one (ratio 1)."""
    aggregate = AGGREGATIONS[config.loss_agg]
    old = old_logprobs if old_logprobs is not None else logprobs.detach()
    pg, clipped = clipped_surrogate(logprobs, old, advantages, config.clip_low, config.clip_high, config.dual_clip)
    loss = aggregate(pg, mask, norm)
    parts = {"clip_frac": token_sum(clipped, mask) / norm.num_tokens,
             "approx_kl": token_sum(approx_kl(logprobs.detach(), old), mask) / norm.num_tokens,
             "entropy": token_sum(entropy, mask) / norm.num_tokens}
    if config.entropy_coef:
        loss = loss - config.entropy_coef * aggregate(entropy, mask, norm)
    if ref_logprobs is not None:
        kl = aggregate(KL[config.kl_estimator](logprobs, ref_logprobs), mask, norm)
        parts["kl"] = kl.item()
        if config.kl_in == "loss":
            loss = loss + config.kl_coef * kl
    if values is not None:
        vloss = aggregate(clipped_value_loss(values, old_values, returns, config.value_clip), mask, norm)
        loss = loss + config.value_coef * vloss
        parts["value_loss"] = vloss.item()
    parts["loss"] = loss.item()
    return loss, parts


def token_sum(x: torch.Tensor, mask: torch.Tensor) -> float:
    return float((x.detach().float() * mask).sum())
