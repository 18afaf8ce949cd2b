"""The RL loop (GRPO / PPO family), readable top to bottom:

    setup -> [ sample prompts -> generate G completions -> score -> advantages
               -> num_iterations x (clipped loss + KL + entropy -> optimizer step) -> log -> checkpoint ]

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
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rewardlab.config import save_config
from training.advantages import ESTIMATORS, _whiten, sequence_rewards
from training.checkpoint import load_checkpoint, resume_checkpoint, save_checkpoint
from training.config import RLConfig
from training.data import PromptStream, check_columns, load_rows, parse_task
from training.kl import KL
from training.losses import AGGREGATIONS, BatchNorm, approx_kl, clipped_surrogate, clipped_value_loss
from training.rollout import Rollout, prompt_text, sample, token_logprobs
from training.sampling import VarianceCurriculum, group_variance_score, varied_groups
from training.scoring import Scores, required_columns, score, token_rewards


class TrainingStopped(RuntimeError):
    """The run cannot continue (e.g. repeated non-finite losses); the message says why."""


# ---------------------------------------------------------------- setup (no model loaded yet)
def prepare_run(config: RLConfig) -> dict[str, Any]:
    """Everything that can be checked without a model: reward, data, columns, backend.
    Bad configuration fails here, naming the option."""
    from rewards import build_reward

    reward_fn = build_reward(config.reward)
    acc_spec = config.accuracy_reward if (config.accuracy_reward or "none").lower() != "none" else None
    rows = load_rows(config.data, split="train", seed=config.seed)
    if "prompt" not in rows[0]:
        raise ValueError(f"--data {config.data!r}: rows need a 'prompt' column; they have {sorted(rows[0])}")
    check_columns(rows, sorted(required_columns(reward_fn)), config.data)
    if parse_task(config.data) is not None and config.eval_data is None:
        eval_rows = load_rows(config.data, split="test", limit=config.eval_size, seed=config.seed)
    elif config.eval_data:
        eval_rows = load_rows(config.eval_data, split="test", limit=config.eval_size, seed=config.seed)
    else:
        eval_rows = []
    has_gold = "answer" in rows[0]
    accuracy_fn = build_reward(acc_spec) if acc_spec and has_gold else None
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
    return {"reward_fn": reward_fn, "accuracy_fn": accuracy_fn, "rows": rows, "eval_rows": eval_rows}


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
    """Dataset columns (everything but the prompt), repeated once per completion."""
    keys = [k for k in rows[0] if k != "prompt"]
    return {k: [row.get(k) for row in rows for _ in range(group_size)] for k in keys}


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


# ---------------------------------------------------------------- the loop
def train(config: RLConfig, run: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run RL as configured; returns the summary (accuracy before/after, times, counts)."""
    from training.policy import cpu_threads

    run = run or prepare_run(config)  # bad configuration fails here, before any model is loaded
    with cpu_threads(config.cpu_threads):
        return _train(config, run)


def _train(config: RLConfig, run: dict[str, Any]) -> dict[str, Any]:
    from accelerate import Accelerator
    from tqdm.auto import tqdm

    accelerator = Accelerator(mixed_precision=_mixed_precision(config))
    out_dir = Path(config.output_dir)
    ckpt_root = out_dir / "checkpoints"
    resume_from = resume_checkpoint(ckpt_root, log=accelerator.print) if config.resume else None
    if accelerator.is_main_process:
        save_config(config, out_dir)
    _seed_everything(config.seed + accelerator.process_index)

    models = _load_models(config, accelerator)
    model, tokenizer, value_head, ref_model = models["model"], models["tokenizer"], models["value_head"], models["ref_model"]
    params = [p for p in model.parameters() if p.requires_grad] + (list(value_head.parameters()) if value_head else [])
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / (config.warmup_steps + 1)))
    if value_head is not None:
        model, value_head, optimizer, scheduler = accelerator.prepare(model, value_head, optimizer, scheduler)
    else:
        model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    device = accelerator.device

    vllm = None
    if config.backend == "vllm":
        from training.vllm_backend import VLLMSampler

        vllm = VLLMSampler(models["policy_path"], tokenizer, config.vllm_gpu_memory,
                           max_model_len=getattr(accelerator.unwrap_model(model).config, "max_position_embeddings", 4096), seed=config.seed,
                           accelerator=accelerator)

    reward_fn, accuracy_fn = run["reward_fn"], run["accuracy_fn"]
    same_accuracy = accuracy_fn is not None and config.accuracy_reward == config.reward
    stream = PromptStream(run["rows"], seed=config.seed + 1000 * accelerator.process_index)
    curriculum = VarianceCurriculum(config.curriculum_kappa, config.curriculum_fraction) if config.curriculum == "variance" else None
    estimator = ESTIMATORS[config.estimator]
    kl_fn = KL[config.kl_estimator]
    G = config.group_size
    est_params = dict(eps=config.eps, qae_k=config.qae_k, w_lambda=config.w_lambda, zvp_alpha=config.zvp_alpha,
                      success_threshold=config.success_threshold, gamma=config.gamma, lam=config.lam)
    counters = {"bad_steps_total": 0, "bad_steps_in_a_row": 0, "prompts_seen": 0}
    start_step, summary = 0, {}

    def evaluate() -> float | None:
        if accuracy_fn is None or not run["eval_rows"]:
            return None
        from training.rollout import generate

        rows = run["eval_rows"]
        prompts = [prompt_text(tokenizer, r["prompt"], config.chat_template) for r in rows]
        outs = generate(accelerator.unwrap_model(model), tokenizer, prompts, max_new_tokens=config.max_new_tokens,
                        temperature=0, stop=config.stop or None)
        s = score(accuracy_fn, prompts, [o[0] for o in outs], _columns(rows, 1))
        return sum(t is not None and t >= 1.0 for t in s.totals) / len(rows)

    metrics_path = out_dir / "metrics.jsonl"
    if resume_from is not None:
        state = load_checkpoint(accelerator, resume_from)
        start_step = state["step"]
        stream.load_state(state["stream"])
        counters.update(state["counters"])
        summary = state["summary"]
        if curriculum is not None:
            curriculum.load_state(state["curriculum"])
        if accelerator.is_main_process and metrics_path.exists():  # drop lines logged after the checkpoint
            kept = [ln for ln in metrics_path.read_text().splitlines() if ln.strip() and json.loads(ln)["step"] <= start_step]
            metrics_path.write_text("".join(ln + "\n" for ln in kept))
        accelerator.print(f"rl: resumed from {resume_from} (step {start_step})")
        if vllm is not None:
            vllm.sync_weights(accelerator.unwrap_model(model))
    else:
        if accelerator.is_main_process and metrics_path.exists():
            metrics_path.unlink()
        summary = {"accuracy_before": evaluate(), "policy": models["policy_path"], "reward": config.reward}
        if summary["accuracy_before"] is not None:
            accelerator.print(f"rl: held-out greedy accuracy before RL: {summary['accuracy_before']:.1%} ({len(run['eval_rows'])} prompts)")

    tb = None
    if config.tensorboard and accelerator.is_main_process:
        from torch.utils.tensorboard import SummaryWriter

        tb = SummaryWriter(str(out_dir / "tensorboard"))
    log_file = open(metrics_path, "a") if accelerator.is_main_process else None
    bar = tqdm(total=config.steps, initial=start_step, desc="rl", disable=not accelerator.is_main_process or None, dynamic_ncols=True)
    run_start = time.time()
    try:
        for step in range(start_step + 1, config.steps + 1):
            t0 = time.time()
            # 1. sample prompts and generate G completions each (more rounds under dynamic sampling)
            kept_rollouts, kept_scores, kept_rows, t_gen, t_score, drawn, zero_var_groups = [], [], [], 0.0, 0.0, 0, 0
            round_metrics: dict[str, float] = {}
            for _round in range(config.max_sampling_rounds if config.dynamic_sampling else 1):
                need = config.prompts_per_step - sum(len(r) for r in kept_rows)
                if need <= 0:
                    break
                replay = curriculum.take(need) if curriculum is not None else []
                rows = replay + stream.take(need - len(replay))
                drawn += len(rows)
                prompts = [prompt_text(tokenizer, r["prompt"], config.chat_template) for r in rows]
                tg = time.time()
                if vllm is not None:
                    rollout = vllm.sample(prompts, G, config.max_new_tokens, config.temperature, config.top_p, config.top_k, config.stop, device)
                else:
                    rollout = sample(accelerator.unwrap_model(model), tokenizer, prompts, G, config.max_new_tokens,
                                     config.temperature, config.top_p, config.top_k, config.stop or None)
                t_gen += time.time() - tg
                # 2. score with the reward (every component logged)
                ts = time.time()
                rep_prompts = [p for p in prompts for _ in range(G)]
                scores = score(reward_fn, rep_prompts, rollout.texts, _columns(rows, G), group_size=G)
                round_metrics = scores.metrics
                if accuracy_fn is not None and not same_accuracy:
                    acc_scores = score(accuracy_fn, rep_prompts, rollout.texts, _columns(rows, G), group_size=G)
                    round_metrics = {**round_metrics, "accuracy": sum(t is not None and t >= 1 for t in acc_scores.totals) / len(acc_scores.totals)}
                t_score += time.time() - ts
                seq = torch.tensor([t if t is not None else 0.0 for t in scores.totals])
                varied = varied_groups(seq, G) if G > 1 else torch.ones(len(rows), dtype=torch.bool)
                zero_var_groups += int((~varied).sum())
                if curriculum is not None:
                    curriculum.record(rows, group_variance_score(seq, G))
                keep = varied if config.dynamic_sampling else torch.ones_like(varied)
                keep = keep[: len(rows)]
                if keep.any():
                    sel = keep.repeat_interleave(G)
                    kept_rollouts.append(_select(rollout, sel))
                    kept_rows += [r for r, k in zip(rows, keep.tolist()) if k]
                    kept_scores.append(_subset(scores, sel.nonzero().flatten().tolist()))
            counters["prompts_seen"] += drawn
            if not kept_rollouts:  # dynamic sampling found no group with any signal: log and move on
                record = {"step": step, "skipped": "all groups had zero reward variance", "zero_variance_frac": 1.0}
                if log_file:
                    log_file.write(json.dumps(record) + "\n")
                    log_file.flush()
                bar.update(1)
                continue
            rollout = _concat(kept_rollouts, tokenizer.pad_token_id)
            n_kept = len(rollout.texts)
            merged = Scores(
                totals=[t for s in kept_scores for t in s.totals], applicable=[a for s in kept_scores for a in s.applicable],
                step_rewards=[x for s in kept_scores for x in (s.step_rewards or [])] or None,
                step_ends=[x for s in kept_scores for x in (s.step_ends or [])] or None)
            rewards_t, loss_mask = token_rewards(merged, rollout.completion_mask.cpu(), rollout.completion_ids.cpu(), tokenizer, G)
            if config.mask_truncated:
                loss_mask = loss_mask * (~rollout.truncated.cpu()).long()[:, None]
            rewards_t, loss_mask = rewards_t.to(device), loss_mask.to(device)

            # 3. old logprobs / entropy / values / reference logprobs (no grad)
            tt = time.time()
            micro = config.micro_batch_size
            need_pre = config.num_iterations > 1 or estimator.needs_entropy or estimator.needs_values or (config.kl_coef > 0 and config.kl_in == "reward")
            old_logprobs = old_entropy = old_values = None
            if need_pre:
                old_logprobs, old_entropy, old_values = _no_grad_pass(model, value_head, rollout, config.temperature, micro, estimator.needs_entropy)
            ref_logprobs = None
            if ref_model is not None:
                ref_logprobs, _, _ = _no_grad_pass(ref_model, None, rollout, config.temperature, micro, False)
            if ref_model is not None and config.kl_in == "reward":
                rewards_t = rewards_t - config.kl_coef * kl_fn(old_logprobs, ref_logprobs) * loss_mask

            # 4. advantages (pure function chosen by name)
            advantages = estimator.fn(rewards_t, loss_mask.float(), G, entropy=old_entropy, values=old_values, **est_params)
            returns = None
            if estimator.needs_values:
                returns = advantages + old_values * loss_mask
                advantages = _whiten(advantages, loss_mask.float())

            # 5. clipped policy loss (+ KL, + entropy, + value) over num_iterations passes
            norm = BatchNorm.of(loss_mask, config.max_new_tokens)
            model.train()
            stats = {"loss": 0.0, "clip_frac": 0.0, "approx_kl": 0.0, "entropy": 0.0, "kl": 0.0, "value_loss": 0.0}
            bad = False
            for _it in range(config.num_iterations):
                starts = list(range(0, n_kept, micro))
                for j, s in enumerate(starts):
                    idx = slice(s, s + micro)
                    sync = contextlib.nullcontext() if j == len(starts) - 1 else accelerator.no_sync(model)
                    with sync, accelerator.autocast():
                        logprobs, entropy, values = _forward(model, value_head, rollout, idx, config.temperature, True,
                                                             entropy_grad=config.entropy_coef != 0)
                        loss, parts = _loss(config, logprobs, entropy, values, loss_mask[idx].float(), norm, advantages[idx],
                                            old_logprobs[idx] if old_logprobs is not None else None,
                                            ref_logprobs[idx] if ref_logprobs is not None else None,
                                            old_values[idx] if values is not None else None,
                                            returns[idx] if values is not None else None)
                        if not torch.isfinite(loss):
                            bad = True
                            break
                        accelerator.backward(loss)
                    for k, v in parts.items():
                        stats[k] += v / config.num_iterations
                if not bad:
                    grad_norm = accelerator.clip_grad_norm_(params, config.max_grad_norm)
                    bad = not math.isfinite(float(grad_norm))
                if bad:  # skip the step: no update from a non-finite loss or gradient
                    optimizer.zero_grad(set_to_none=True)
                    break
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
            if bad:
                counters["bad_steps_total"] += 1
                counters["bad_steps_in_a_row"] += 1
                if counters["bad_steps_in_a_row"] >= config.max_bad_steps:
                    raise TrainingStopped(
                        f"step {step}: {counters['bad_steps_in_a_row']} steps in a row had a non-finite loss or gradient "
                        f"({counters['bad_steps_total']} in total); stopping. Lower --lr, set --max-grad-norm, or check the reward's scale."
                    )
            else:
                counters["bad_steps_in_a_row"] = 0
            if vllm is not None:
                vllm.sync_weights(accelerator.unwrap_model(model))
            t_train = time.time() - tt

            # 6. log
            seq_r = sequence_rewards(rewards_t, rollout.completion_mask.float().to(device)).cpu()
            lengths = rollout.completion_mask.sum(-1).float().cpu()
            tokens = float(rollout.completion_mask.sum())
            elapsed = time.time() - t0
            record = {
                "step": step,
                "reward/mean": seq_r.mean().item(), "reward/std": seq_r.std().item() if len(seq_r) > 1 else 0.0,
                **{f"reward/{k}": v for k, v in round_metrics.items() if isinstance(v, (int, float))},
                **({"accuracy": round_metrics["accuracy"]} if "accuracy" in round_metrics else {}),
                **{k: v for k, v in stats.items()},
                "length/mean": lengths.mean().item(), "length/max": lengths.max().item(),
                "truncated_frac": rollout.truncated.float().mean().item(),
                "zero_variance_frac": zero_var_groups / max(drawn, 1),
                "prompts_drawn": drawn, "completions_trained": n_kept,
                "skipped_nonfinite": int(bad), "bad_steps_total": counters["bad_steps_total"],
                "lr": scheduler.get_last_lr()[0],
                "time/generate": t_gen, "time/score": t_score, "time/train": t_train, "time/step": elapsed,
                "tokens_per_s": tokens / max(elapsed, 1e-9),
                **({"gpu_peak_gb": torch.cuda.max_memory_allocated() / 2**30} if torch.cuda.is_available() else {}),
            }
            if config.eval_every and step % config.eval_every == 0 and step < config.steps:
                record["eval/accuracy"] = evaluate()
            if log_file:
                log_file.write(json.dumps(record) + "\n")
                log_file.flush()
            if tb is not None:
                for k, v in record.items():
                    if isinstance(v, (int, float)):
                        tb.add_scalar(k, v, step)
            bar.set_postfix(reward=f"{record['reward/mean']:.3f}", **({"acc": f"{record['accuracy']:.1%}"} if "accuracy" in record else {}))
            bar.update(1)

            # 7. checkpoint
            if (config.checkpoint_every and step % config.checkpoint_every == 0) or step == config.steps:
                save_checkpoint(accelerator, ckpt_root, step, {
                    "stream": stream.state(), "counters": counters, "summary": summary,
                    "curriculum": curriculum.state() if curriculum is not None else [],
                }, keep=config.keep_checkpoints)
    finally:
        bar.close()
        if log_file:
            log_file.close()
        if tb is not None:
            tb.close()

    # the end: final policy, accuracy after, report
    summary["accuracy_after"] = evaluate()
    summary["steps"] = config.steps
    summary["wall_seconds_this_session"] = round(time.time() - run_start, 1)
    summary["bad_steps_total"] = counters["bad_steps_total"]
    if accelerator.is_main_process:
        from training.policy import save_policy_atomically

        save_policy_atomically(accelerator.unwrap_model(model), tokenizer, out_dir / "policy")
        (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        if config.report:
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
