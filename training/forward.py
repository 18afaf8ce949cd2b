"""Forward passes of a model over a rollout's completions: per-token log-probabilities, entropy
and (with a value head) values, as a `PolicyPass` record. Used for the loss (with gradients), for
the old / reference log-probabilities and for the sampling policy's outputs under --overlap."""

from __future__ import annotations

from typing import NamedTuple

import torch

from training.rollout import Rollout, token_logprobs


class PolicyPass(NamedTuple):
    """A model's per-token outputs over a rollout's completions, each [N, C]."""

    logprobs: torch.Tensor
    entropy: torch.Tensor | None  # None when not asked for
    values: torch.Tensor | None  # None without a value head


def policy_pass(model, value_head, rollout: Rollout, idx, temperature: float, with_entropy: bool,
                entropy_grad: bool = False) -> PolicyPass:
    """logprobs, entropy, values [n, C] of the rows `idx` of the rollout."""
    ids, attn = rollout.input_ids[idx], rollout.attention_mask[idx]
    c = rollout.completion_ids.shape[1]
    if value_head is None:
        logprobs, entropy = token_logprobs(model, ids, attn, c, temperature, with_entropy, entropy_grad=entropy_grad)
        return PolicyPass(logprobs, entropy, None)
    logprobs, entropy, hidden = token_logprobs(model, ids, attn, c, temperature, with_entropy, return_hidden=True,
                                               entropy_grad=entropy_grad)
    values = value_head(hidden.to(next(value_head.parameters()).dtype)).squeeze(-1).float()
    return PolicyPass(logprobs, entropy, values)


@torch.no_grad()
def no_grad_pass(model, value_head, rollout: Rollout, temperature: float, micro: int, with_entropy: bool) -> PolicyPass:
    """`policy_pass` over the whole rollout in micro-batches of `micro` rows, without gradients."""
    outs = [policy_pass(model, value_head, rollout, slice(s, s + micro), temperature, with_entropy)
            for s in range(0, len(rollout.texts), micro)]
    cat = lambda i: torch.cat([o[i] for o in outs]) if outs[0][i] is not None else None  # noqa: E731
    return PolicyPass(cat(0), cat(1), cat(2))
