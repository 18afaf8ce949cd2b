"""The update, the last phases of an RL step: rewards on tokens -> the no-grad passes (old and
reference log-probabilities, values) -> advantages (`compute_advantages`) -> `num_iterations` x
the clipped loss (+ KL, entropy, value) and optimizer steps (`update_policy`).

The estimators (training/advantages.py), loss terms and aggregations (training/losses.py) and KL
estimators (training/kl.py) are pure functions chosen by name; `policy_loss` below puts them
together for one micro-batch.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from training.advantages import ESTIMATORS, flatten_negligible_groups, whiten
from training.config import RLConfig
from training.guards import TrainingStopped
from training.kl import KL
from training.losses import AGGREGATIONS, BatchNorm, approx_kl, clipped_surrogate, clipped_value_loss
from training.forward import no_grad_pass, policy_pass
from training.reward_calls import token_rewards

if TYPE_CHECKING:
    from training.collect import Batch
    from training.run_state import Run


@dataclass
class Advantages:
    """What `compute_advantages` gives the update; tensors [N, C] on the accelerator's device."""

    rewards_t: torch.Tensor  # the rewards on tokens (KL included under --kl-in reward)
    loss_mask: torch.Tensor  # the tokens the loss sees
    advantages: torch.Tensor
    returns: torch.Tensor | None  # value targets (gae), else None
    old_logprobs: torch.Tensor | None  # the sampling policy's (None: the current one, ratio 1)
    old_values: torch.Tensor | None
    ref_logprobs: torch.Tensor | None  # the reference model's (None without a KL term)


def compute_advantages(run: Run, batch: Batch) -> Advantages:
    """Rewards on tokens, the no-grad passes (old / reference logprobs, values), advantages."""
    c, G, device = run.config, run.config.group_size, run.accelerator.device
    estimator = ESTIMATORS[c.estimator]
    rollout = batch.rollout
    rewards_t, loss_mask = token_rewards(batch.scores, rollout.completion_mask.cpu(), rollout.completion_ids.cpu(), run.tokenizer, G)
    if estimator.grouped and G > 1:  # groups with a negligible spread carry no signal: equal totals, zero advantage
        rewards_t = flatten_negligible_groups(rewards_t, rollout.completion_mask.cpu(), G, c.zero_variance_tol)
    if rollout.action_mask is not None:  # multi-turn: the environment's tokens (tool results) are not the policy's actions
        loss_mask = loss_mask * rollout.action_mask.cpu()
    if c.mask_truncated:
        loss_mask = loss_mask * (~rollout.truncated.cpu()).long()[:, None]
    rewards_t, loss_mask = rewards_t.to(device), loss_mask.to(device)
    need_old = c.num_iterations > 1 or estimator.needs_entropy or estimator.needs_values or (c.kl_coef > 0 and c.kl_in == "reward")
    old_logprobs = old_entropy = old_values = ref_logprobs = None
    if batch.behaviour is not None:  # sampled one step earlier (--overlap): the ratio is to the sampling policy
        old_logprobs, old_entropy, old_values = (x.to(device) if x is not None else None for x in batch.behaviour)
    elif need_old:
        old_logprobs, old_entropy, old_values = no_grad_pass(run.model, run.value_head, rollout, c.temperature, c.micro_batch_size,
                                                             estimator.needs_entropy)
    if run.ref_model is not None:
        ref_logprobs, _, _ = no_grad_pass(run.ref_model, None, rollout, c.temperature, c.micro_batch_size, False)
    if run.ref_model is not None and c.kl_in == "reward":
        rewards_t = rewards_t - c.kl_coef * KL[c.kl_estimator](old_logprobs, ref_logprobs) * loss_mask
    est_params = dict(eps=c.eps, qae_k=c.qae_k, w_lambda=c.w_lambda, zvp_alpha=c.zvp_alpha,
                      success_threshold=c.success_threshold, gamma=c.gamma, lam=c.lam)
    advantages = estimator.fn(rewards_t, loss_mask.float(), G, entropy=old_entropy, values=old_values, **est_params)
    returns = None
    if estimator.needs_values:
        returns = advantages + old_values * loss_mask
        advantages = whiten(advantages, loss_mask.float())
    return Advantages(rewards_t=rewards_t, loss_mask=loss_mask, advantages=advantages, returns=returns,
                      old_logprobs=old_logprobs, old_values=old_values, ref_logprobs=ref_logprobs)


def policy_loss(config: RLConfig, logprobs, entropy, values, mask, norm: BatchNorm, advantages, old_logprobs, ref_logprobs,
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
        kl = aggregate(KL[config.kl_estimator](logprobs.float(), ref_logprobs.float()), mask, norm)  # the KL in fp32, whatever autocast does
        parts["kl"] = kl.item()
        if config.kl_in == "loss":
            loss = loss + config.kl_coef * kl
    if values is not None:
        vloss = aggregate(clipped_value_loss(values, old_values, returns, config.value_clip), mask, norm)
        loss = loss + config.value_coef * vloss
        parts["value_loss"] = vloss.item()
    parts["loss"] = loss.item()
    return loss, parts


def update_policy(run: Run, batch: Batch, adv: Advantages) -> dict[str, float]:
    """num_iterations passes of the clipped loss (+ KL, entropy, value) and optimizer steps. A step
    with no signal (every advantage 0 and no KL or entropy term) does not move the weights
    (AdamW's momentum would); a non-finite loss or gradient skips the step."""
    c, accelerator, model = run.config, run.accelerator, run.model
    rollout, n = batch.rollout, len(batch.rollout.texts)
    loss_mask, advantages = adv.loss_mask, adv.advantages
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
                logprobs, entropy, values = policy_pass(model, run.value_head, rollout, idx, c.temperature, True, entropy_grad=c.entropy_coef != 0)
                pick = lambda x: x[idx] if x is not None else None  # noqa: E731
                loss, parts = policy_loss(c, logprobs, entropy, values, loss_mask[idx].float(), norm, advantages[idx],
                                          pick(adv.old_logprobs), pick(adv.ref_logprobs),
                                          pick(adv.old_values) if values is not None else None,
                                          pick(adv.returns) if values is not None else None)
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
    run.counters.no_signal_steps += int(no_signal and not bad)
    if run.vllm is not None:
        run.vllm.sync_weights(accelerator.unwrap_model(model))
    return {**stats, "skipped_nonfinite": int(bad), "skipped_no_signal": int(no_signal and not bad)}


def _count_bad_step(run: Run, bad: bool) -> None:
    if not bad:
        run.counters.bad_steps_in_a_row = 0
        return
    run.counters.bad_steps_total += 1
    run.counters.bad_steps_in_a_row += 1
    if run.counters.bad_steps_in_a_row >= run.config.max_bad_steps:
        raise TrainingStopped(
            f"{run.counters.bad_steps_in_a_row} steps in a row had a non-finite loss or gradient "
            f"({run.counters.bad_steps_total} in total); stopping. Lower --lr, set --max-grad-norm, or check the reward's scale."
        )


def token_sum(x: torch.Tensor, mask: torch.Tensor) -> float:
    return float((x.detach().float() * mask).sum())
