"""LoRA for `train-rm` (peft): adapters on the backbone, the head trained in full; merged into a
plain reward model at the end, and restored from a checkpoint when resuming."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardlab.config import check_fields, opt
from reward_models.modeling import RewardModel


def apply_lora(model: RewardModel, cfg: Any) -> RewardModel:
    """Wrap the backbone with LoRA adapters (its own weights frozen); the head stays trainable and
    a separate LM output layer (`lm_out`) is frozen with the backbone."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:
        raise ValueError("--lora needs peft: `pip install \"rewardlab[lora]\"`") from None
    target = cfg.lora_target if cfg.lora_target == "all-linear" else [t.strip() for t in cfg.lora_target.split(",") if t.strip()]
    lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout, target_modules=target)
    try:
        model.backbone = get_peft_model(model.backbone, lora)
    except ValueError as exc:
        raise ValueError(f"--lora-target {cfg.lora_target!r}: {exc}") from None
    if getattr(model, "lm_out", None) is not None:
        model.lm_out.requires_grad_(False)
    return model


def has_lora(model: RewardModel) -> bool:
    return type(model.backbone).__name__.startswith("Peft")


def merge_lora(model: RewardModel, adapter_dir: Path | None = None) -> RewardModel:
    """Save the adapters alone to `adapter_dir` (when given), then fold them into the backbone's
    weights: the model is a plain `RewardModel` again, saved and loaded like any other."""
    if not has_lora(model):
        return model
    if adapter_dir is not None:
        model.backbone.save_pretrained(str(adapter_dir))
    model.backbone = model.backbone.merge_and_unload()
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def load_lora_checkpoint(model: RewardModel, checkpoint: Path) -> None:
    """Weights of a LoRA run's checkpoint (saved with the adapters unmerged) into `model`, which
    must already carry the same adapters (`apply_lora`)."""
    from safetensors.torch import load_file

    state = {}
    for f in sorted(checkpoint.glob("*.safetensors")):
        state.update(load_file(str(f)))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ValueError(f"--resume: {checkpoint} does not match a LoRA reward model with these settings "
                         f"(missing {missing[:3]}, unexpected {unexpected[:3]}); resume with the same --lora options")


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class AdapterConfig:
    """LoRA adapters on the backbone: a piece of train-rm's config."""

    lora: bool = opt(False, "train LoRA adapters (peft) on the backbone's linear layers, the head in full; merged into the final model")
    lora_r: int = opt(16, "LoRA rank", ge=1)
    lora_alpha: int = opt(32, "LoRA alpha (the update is scaled by alpha / r)", gt=0)
    lora_dropout: float = opt(0.0, "LoRA dropout")
    lora_target: str = opt("all-linear", "modules LoRA adapts: all-linear, or comma-separated module names (e.g. q_proj,v_proj)")

    def check_adapter(self) -> None:
        check_fields(self, AdapterConfig)
        if not 0 <= self.lora_dropout < 1:
            raise ValueError(f"--lora-dropout must be in [0, 1), got {self.lora_dropout}")

    __post_init__ = check_adapter
