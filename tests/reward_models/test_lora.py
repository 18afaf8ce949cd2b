"""LoRA for `train-rm` (peft): only the adapters and the head train; the final model has the
adapters merged and loads like any reward model (same scores as the adapted model); the adapters
are also saved alone; a killed LoRA run resumes to exactly the weights of an uninterrupted one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from reward_models import load_reward_model
from reward_models.train import TrainRMConfig, train

pytest.importorskip("peft")


def _cfg(backbone, out, **kw):
    return TrainRMConfig(kind="bt", backbone=backbone, output=str(out), steps=6, batch_size=8, n_train=64, n_eval=16,
                         eval_every=3, save_every=3, warmup_steps=1, max_seq_length=96, lr=5e-3, lora=True, lora_r=4, **kw)


@pytest.fixture(scope="module")
def lora_run(tiny_causal_lm, tmp_path_factory):
    out = tmp_path_factory.mktemp("lora") / "run"
    return out, train(_cfg(tiny_causal_lm, out), progress=False)


def test_lora_trains_adapters_and_head_only(tiny_causal_lm, lora_run):
    out, _ = lora_run
    start = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert 0 < start["trainable_params"] < 0.25 * start["params"]  # adapters + head, not the backbone
    ckpt = load_file(str(out / "checkpoints" / "step-6" / "model.safetensors"))
    base = load_file(str(Path(tiny_causal_lm) / "model.safetensors"))
    lora_keys = [k for k in ckpt if "lora_" in k]
    assert lora_keys and any(ckpt[k].abs().sum() > 0 for k in lora_keys if "lora_B" in k)  # B starts at 0: it moved
    frozen = [k for k in ckpt if k.startswith("backbone.base_model.model.") and "lora_" not in k]
    for key in frozen:  # every base weight still equals the backbone's
        name = key.removeprefix("backbone.base_model.model.").replace(".base_layer", "")
        assert torch.equal(ckpt[key], base["model." + name]), key


def test_the_final_model_is_merged_and_loads_like_any_reward_model(lora_run):
    out, result = lora_run
    rm = load_reward_model(result["final"])
    assert not any("lora" in name for name, _ in rm.model.named_parameters())
    prompts, responses = ["12+7="] * 2, ["Step 1: 12+7 = 19\nThe answer is 19.", "Step 1: 12+7 = 18\nThe answer is 18."]
    scores = rm.score(prompts, responses)
    assert scores[0] != scores[1]
    # the adapted model before merging gives the same scores (up to float rounding)
    from peft import PeftModel

    from reward_models import RewardModel
    from reward_models.scoring import LoadedRewardModel

    ckpt = out / "checkpoints" / "step-6"
    model = RewardModel.from_backbone(json.loads((out / "config.json").read_text())["backbone"], "bt", max_seq_length=96)
    model.backbone = PeftModel.from_pretrained(model.backbone, str(out / "lora_adapter"))
    state = load_file(str(ckpt / "model.safetensors"))
    model.head.load_state_dict({k.removeprefix("head."): v for k, v in state.items() if k.startswith("head.")})
    assert LoadedRewardModel(model, rm.tokenizer).score(prompts, responses) == pytest.approx(scores, abs=1e-4)


def test_a_lora_run_resumes_exactly(tiny_causal_lm, lora_run, tmp_path):
    out, result = lora_run
    again = tmp_path / "run"
    shutil.copytree(out, again)
    shutil.rmtree(again / "checkpoints" / "step-6")  # killed after the checkpoint at step 3
    shutil.rmtree(again / "final")
    resumed = train(_cfg(tiny_causal_lm, again, resume=True), progress=False)
    a, b = load_file(str(Path(result["final"]) / "model.safetensors")), load_file(str(Path(resumed["final"]) / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_lora_options_are_checked():
    with pytest.raises(ValueError, match="--lora-r"):
        TrainRMConfig(lora=True, lora_r=0)
