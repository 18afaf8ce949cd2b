"""bf16 on CPU: the packed (padding-free) forward runs eager attention - matmuls and a softmax -
instead of SDPA, whose CPU backward in bf16 is slow (MiniLM BT step, 16 pairs, 2 threads, bf16
autocast: 2.76 s a step with SDPA against 0.33 s padded), and gives the padded eager forward's
rewards and gradients within bf16 rounding."""

from __future__ import annotations

import pytest
import torch

from reward_models.batches import forward_by_length
from reward_models.losses import bt_loss
from reward_models.modeling import RewardModel

# The packed and padded forwards run the same bf16 matmuls on the real tokens. Measured on the tiny
# BERT, seeds 0-2: rewards equal (max difference 0.0), whole-gradient relative difference 0.7e-6 to
# 2.2e-6; the bounds leave a wide margin and stay well under bf16's rounding (2^-8 = 3.9e-3)
REWARD_TOL = 1e-3
GRAD_TOL = 1e-3  # the whole gradient, relative
WEIGHT_TOL = 1e-2  # each weight's, relative, floored at 1% of the whole


def _batch(vocab: int, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(3, 20, (8,), generator=g)
    ids = torch.zeros(8, int(lengths.max()), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(lengths.tolist()):
        ids[i, :n] = torch.randint(3, vocab, (n,), generator=g)
        mask[i, :n] = 1
    return {"input_ids": ids, "attention_mask": mask}


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm().clamp(min=1e-12))


@pytest.mark.parametrize("seed", range(3))
def test_packed_forward_runs_eager_attention_in_bf16(tiny_backbone, monkeypatch, seed):
    torch.manual_seed(seed)
    model = RewardModel.from_backbone(tiny_backbone, "bt")
    model.backbone.config._attn_implementation = "eager"  # what train-rm picks for bf16 on CPU (runtime.attention_for)
    inputs = _batch(model.backbone.config.vocab_size, seed)
    results = []
    for padding_free in (False, True):
        model.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            if padding_free:  # the packed forward must not reach SDPA in bf16 on CPU

                def refuse(*args, **kwargs):
                    raise AssertionError("SDPA called in a bf16 packed forward on CPU")

                monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", refuse)
            rewards = forward_by_length(model, inputs, 1, padding_free)["rewards"]
            loss, _ = bt_loss(rewards[:4], rewards[4:])
        loss.backward()
        results.append((rewards.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
    (padded, padded_grads), (packed, packed_grads) = results
    assert torch.allclose(packed, padded, atol=REWARD_TOL, rtol=REWARD_TOL)
    assert packed_grads.keys() == padded_grads.keys() and len(padded_grads) > 10
    flat = lambda grads: torch.cat([grads[n].flatten() for n in sorted(padded_grads)])  # noqa: E731
    assert _rel(flat(packed_grads), flat(padded_grads)) < GRAD_TOL
    total = float(flat(padded_grads).norm())
    for name, g in padded_grads.items():  # per weight, floored at 1% of the whole (the key bias's is ~0: softmax ignores it)
        diff = float((packed_grads[name] - g).norm())
        assert diff < WEIGHT_TOL * max(float(g.norm()), 0.01 * total), (name, diff, float(g.norm()))
