"""One CPU-thread policy for every command: a machine-fixed default, a warning past the free cores."""

import os

import torch

import rewardlab.runtime as runtime


def test_auto_is_fixed_per_machine_and_more_than_the_free_cores_is_warned_once(monkeypatch):
    monkeypatch.setattr(runtime, "machine_cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.4, 1.0, 1.0))  # one core busy with another job
    runtime._warned.clear()
    said = []
    assert runtime.free_cores() == 1 and runtime.default_threads() == 1
    assert runtime.check_threads(2, "train-rm", warn=said.append)
    assert "--cpu-threads 2 but only 1 of 2 cores are free" in said[0] and "pass --cpu-threads 1" in said[0]
    assert not runtime.check_threads(2, "train-rm", warn=said.append) and len(said) == 1  # once
    assert not runtime.check_threads(1, "train-rm", warn=said.append)  # within the free cores: quiet
    before = torch.get_num_threads()
    with runtime.cpu_threads(0, "rl"):
        assert torch.get_num_threads() == 1  # auto on a 2-core machine, whatever the load
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    with runtime.cpu_threads(0, "rl"):
        assert torch.get_num_threads() == 1  # the same on an idle one: the count never follows the load
    assert torch.get_num_threads() == before
    monkeypatch.setattr(runtime, "machine_cores", lambda: 16)
    assert runtime.default_threads() == 8 and runtime.free_cores() == 16


# ---------------------------------------------------------------- precision
import itertools  # noqa: E402

import pytest  # noqa: E402


@pytest.mark.parametrize("flags,onednn", itertools.product(
    ["fpu sse avx512f", "fpu amx_bf16 amx_tile", "fpu avx512_bf16", "fpu amx_bf16 avx512_bf16"], [True, False]))
def test_cpu_bf16_is_fast_only_with_a_flag_and_onednn(tmp_path, monkeypatch, flags, onednn):
    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    monkeypatch.setattr(runtime, "_onednn_bf16", lambda: onednn)
    runtime.cpu_bf16_support.cache_clear()
    try:
        got = runtime.cpu_bf16_support(str(info))
    finally:
        runtime.cpu_bf16_support.cache_clear()
    assert got["amx_bf16"] == ("amx_bf16" in flags) and got["avx512_bf16"] == ("avx512_bf16" in flags)
    assert got["fast"] == (onednn and ("amx_bf16" in flags or "avx512_bf16" in flags))


def test_no_cpuinfo_means_fp32(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime, "_onednn_bf16", lambda: True)
    runtime.cpu_bf16_support.cache_clear()
    try:
        assert runtime.cpu_bf16_support(str(tmp_path / "missing"))["fast"] is False
    finally:
        runtime.cpu_bf16_support.cache_clear()


@pytest.mark.parametrize("cuda,cuda_bf16,cpu_fast", itertools.product([True, False], repeat=3))
def test_auto_is_bf16_exactly_where_the_device_does_it_fast(monkeypatch, cuda, cuda_bf16, cpu_fast):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: cuda_bf16)
    monkeypatch.setattr(runtime, "cpu_bf16_support", lambda *a: {"fast": cpu_fast})
    fast = cuda_bf16 if cuda else cpu_fast
    assert runtime.resolve_precision("auto") == ("bf16" if fast else "no")
    for choice in ("no", "bf16", "fp16"):  # an explicit choice always stands
        assert runtime.resolve_precision(choice) == choice
    with pytest.raises(ValueError, match="--mixed-precision must be one of"):
        runtime.resolve_precision("bfloat16")


def test_the_default_rl_run_is_pinned_to_fp32_even_where_bf16_is_fast(monkeypatch):
    """The documented default demo (`rewardlab rl --reward verifier:math`) keeps its numbers: its
    config resolves to fp32 on every device, and is passed on unchanged (the fp32 code path)."""
    from training.config import RLConfig
    from training.run_state import _mixed_precision
    from training.run_state import resolved_precision

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.setattr(runtime, "cpu_bf16_support", lambda *a: {"fast": True})
    config = RLConfig(reward="verifier:math")
    assert config.mixed_precision == "no" and _mixed_precision(config) == "no"
    assert resolved_precision(config) is config
    auto = RLConfig(reward="verifier:math", mixed_precision="auto")
    assert _mixed_precision(auto) == "bf16" and resolved_precision(auto).mixed_precision == "bf16"  # recorded in config.json


def test_the_fp32_places_stay_fp32_under_bf16_autocast():
    """Under bf16 autocast the reward model's pooled output and rewards, the BT / pinball / BCE
    losses and the policy's logprobs come out in fp32; in fp32 the same code gives the plain result
    bit for bit."""
    from reward_models.losses import bt_loss, pinball_loss, step_bce_loss
    from training.policy import tiny_policy
    from training.rollout import token_logprobs

    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(8, generator=g), torch.randn(8, generator=g)
    plain = -torch.nn.functional.logsigmoid(a - b).mean()
    assert torch.equal(bt_loss(a, b)[0], plain)  # fp32: the casts change nothing
    with runtime.autocast("bf16"):
        assert bt_loss(a.bfloat16(), b.bfloat16())[0].dtype == torch.float32
        q = torch.randn(4, 1, 3, generator=g).sort(-1).values.bfloat16()
        assert pinball_loss(q, torch.randn(4, 1, generator=g).bfloat16(), torch.tensor([0.25, 0.5, 0.75]))[0].dtype == torch.float32
        assert step_bce_loss(torch.randn(2, 3, generator=g).bfloat16(), torch.tensor([[1.0, -100, 0.0], [-100, 1.0, -100]]))[0].dtype == torch.float32
    model, _ = tiny_policy(seed=0)
    ids = torch.randint(3, 20, (2, 6), generator=g)
    mask = torch.ones_like(ids)
    fp32, _ = token_logprobs(model, ids, mask, 3)
    with runtime.autocast("bf16"):
        low, _ = token_logprobs(model, ids, mask, 3)
    assert fp32.dtype == low.dtype == torch.float32
    assert torch.allclose(fp32, low, atol=0.1)  # bf16 matmuls, fp32 log-softmax: close, not equal


def test_reward_model_heads_run_in_fp32_under_autocast(tmp_path):
    from transformers import BertConfig, BertModel

    from reward_models.modeling import RewardModel

    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)).save_pretrained(tmp_path)
    ids, mask = torch.randint(1, 50, (3, 7)), torch.ones(3, 7, dtype=torch.long)
    for kind, key in (("bt", "rewards"), ("quantile", "quantiles"), ("prm", "step_logits")):
        model = RewardModel.from_backbone(str(tmp_path), kind).eval()
        with torch.no_grad():
            hidden = model.backbone(input_ids=ids, attention_mask=mask).last_hidden_state
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            assert torch.equal(model(input_ids=ids, attention_mask=mask)["pooled"], pooled)  # fp32: unchanged
            with runtime.autocast("bf16"):
                out = model(input_ids=ids, attention_mask=mask)
        assert out["pooled"].dtype == out[key].dtype == torch.float32, kind


def test_one_process_can_run_bf16_then_fp32():
    """train-rm in bf16 and then rl in fp32 in one process (the learned-reward pipeline, a notebook):
    accelerate alone refuses the second precision."""
    assert runtime.make_accelerator("bf16").mixed_precision == "bf16"
    assert runtime.make_accelerator("no").mixed_precision == "no"
    assert runtime.make_accelerator("no").mixed_precision == "no"
