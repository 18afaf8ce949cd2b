"""The reward-model network: any `AutoModel` backbone plus a small head, as one `PreTrainedModel`.

`RewardModelConfig` carries the backbone's config (as a dict) and the head's kind and settings,
so `RewardModel.from_pretrained(dir)` rebuilds the same network with one call. Heads are chosen
from `HEADS` by kind:

- `bt`       : `ScalarHead`   pooled [N, H] -> reward [N]
- `quantile` : `QuantileHead` pooled [N, H] -> quantiles [N, A, K] per attribute, non-crossing by
               construction (a base plus a cumulative sum of softplus increments), and the
               gate-mixed quantiles [N, K] (a convex mix of ascending vectors stays ascending)
- `prm`      : `TokenHead`    hidden [N, T, H] -> per-token logit [N, T] (read at each step's end)

A reward model built on a causal LM (e.g. the policy's own SFT warm start, as InstructGPT builds
its RM from the SFT model) keeps the LM's output layer (`lm_head`: "tied" to the input
embeddings, or its "own" matrix) so training can add a next-token loss on the preferred responses
(`lm_logits(forward(..., return_hidden=True)["hidden"])`; GRM, Yang et al. 2024: the regulariser keeps the hidden
states that the task needs). It also appends the EOS token to every input (`append_eos`): the
policy ends its completions with EOS, and the reward is read there.

>>> from transformers import BertConfig
>>> cfg = RewardModelConfig(kind="quantile", backbone_config=BertConfig(hidden_size=32,
...     num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, vocab_size=100).to_dict())
>>> model = RewardModel(cfg)
>>> out = model(input_ids=torch.tensor([[1, 5, 6, 2]]), attention_mask=torch.ones(1, 4, dtype=torch.long))
>>> tuple(out["quantiles"].shape), bool((out["quantiles"].diff(dim=-1) >= 0).all())
((1, 19), True)
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, PretrainedConfig, PreTrainedModel

from reward_models.backbones import POOLERS, is_decoder_config, packed_hidden_states, resolve_pooling

KINDS = ("bt", "quantile", "prm")
LM_HEADS = ("none", "tied", "own")
DEFAULT_TAUS = tuple(round(0.05 * i, 2) for i in range(1, 20))  # 0.05 .. 0.95, 19 levels


class RewardModelConfig(PretrainedConfig):
    """Config of a reward model: the backbone's config dict plus the head and its settings."""

    model_type = "rewardlab_rm"

    def __init__(
        self,
        kind: str = "bt",
        backbone_config: dict[str, Any] | None = None,
        pooling: str = "auto",
        max_seq_length: int = 512,
        taus: tuple[float, ...] | list[float] = DEFAULT_TAUS,
        attributes: tuple[str, ...] | list[str] = ("score",),
        gating: bool = True,
        gate_temperature: float = 5.0,
        step_separator: str = "\n",
        lm_head: str = "none",
        append_eos: bool = False,
        clip_eta: float | None = None,
        use_chat_template: bool | None = None,
        **kwargs: Any,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        taus = [float(t) for t in taus]
        if not taus or any(not 0.0 < t < 1.0 for t in taus) or sorted(taus) != taus or len(set(taus)) != len(taus):
            raise ValueError(f"taus must be strictly increasing levels in (0, 1), got {taus}")
        if not attributes:
            raise ValueError("attributes must name at least one score attribute")
        if gate_temperature <= 0:
            raise ValueError(f"gate_temperature must be > 0, got {gate_temperature}")
        if lm_head not in LM_HEADS:
            raise ValueError(f"lm_head must be one of {', '.join(LM_HEADS)}, got {lm_head!r}")
        self.kind = kind
        self.backbone_config = dict(backbone_config or {})
        self.pooling = pooling
        self.max_seq_length = int(max_seq_length)
        self.taus = taus
        self.attributes = list(attributes)
        self.gating = bool(gating)
        self.gate_temperature = float(gate_temperature)
        self.step_separator = step_separator
        self.lm_head = lm_head  # none | tied (logits from the input embeddings) | own (a saved matrix)
        self.append_eos = bool(append_eos)  # an EOS token ends every input (decoders; the score is read there)
        # prm: the 10th percentile of its scores on held-out correct steps (the PRM reward's Clip threshold)
        self.clip_eta = float(clip_eta) if clip_eta is not None else None
        # True: text prompts/responses are rendered through the tokenizer's chat template as well (see
        # reward_models.encoding), in training and scoring alike; None: only chat messages are (older models)
        self.use_chat_template = use_chat_template
        super().__init__(**kwargs)
        if self.backbone_config:
            self.hidden_size = int(self.backbone_config.get("hidden_size") or self.backbone_config.get("d_model"))


AutoConfig.register(RewardModelConfig.model_type, RewardModelConfig, exist_ok=True)


def backbone_config_object(config: RewardModelConfig) -> PretrainedConfig:
    cfg = dict(config.backbone_config)
    model_type = cfg.pop("model_type", None)
    if not model_type:
        raise ValueError("RewardModelConfig.backbone_config has no model_type; build it with from_backbone()")
    return AutoConfig.for_model(model_type, **cfg)


class ScalarHead(nn.Module):
    """pooled [N, H] -> {"rewards": [N]}"""

    def __init__(self, config: RewardModelConfig) -> None:
        super().__init__()
        self.score = nn.Linear(config.hidden_size, 1)

    def forward(self, pooled: torch.Tensor, hidden: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"rewards": self.score(pooled).squeeze(-1)}


class QuantileHead(nn.Module):
    """pooled [N, H] -> {"attribute_quantiles": [N, A, K], "gate": [N, A], "quantiles": [N, K]}"""

    def __init__(self, config: RewardModelConfig) -> None:
        super().__init__()
        self.n_attr, self.n_tau = len(config.attributes), len(config.taus)
        self.base = nn.Linear(config.hidden_size, self.n_attr)  # lowest quantile per attribute
        self.increments = nn.Linear(config.hidden_size, self.n_attr * (self.n_tau - 1))
        self.gate = nn.Linear(config.hidden_size, self.n_attr) if config.gating and self.n_attr > 1 else None
        self.temperature = config.gate_temperature

    def forward(self, pooled: torch.Tensor, hidden: torch.Tensor) -> dict[str, torch.Tensor]:
        n = pooled.shape[0]
        base = self.base(pooled).unsqueeze(-1)  # [N, A, 1]
        steps = F.softplus(self.increments(pooled)).view(n, self.n_attr, self.n_tau - 1)  # [N, A, K-1] > 0
        attr_q = torch.cat([base, base + steps.cumsum(-1)], dim=-1)  # [N, A, K], ascending
        if self.gate is None:
            gate = torch.full((n, self.n_attr), 1.0 / self.n_attr, device=pooled.device, dtype=pooled.dtype)
        else:
            gate = torch.softmax(self.gate(pooled) / self.temperature, dim=-1)  # [N, A]
        mixed = (gate.unsqueeze(-1) * attr_q).sum(1)  # [N, K], convex mix keeps the order
        return {"attribute_quantiles": attr_q, "gate": gate, "quantiles": mixed}


class TokenHead(nn.Module):
    """hidden [N, T, H] -> {"step_logits": [N, T]}"""

    def __init__(self, config: RewardModelConfig) -> None:
        super().__init__()
        self.score = nn.Linear(config.hidden_size, 1)

    def forward(self, pooled: torch.Tensor, hidden: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"step_logits": self.score(hidden).squeeze(-1)}


HEADS: dict[str, type[nn.Module]] = {"bt": ScalarHead, "quantile": QuantileHead, "prm": TokenHead}


class RewardModel(PreTrainedModel):
    """Backbone + head. `forward(input_ids, attention_mask, token_type_ids=None)` returns a dict
    with "pooled" [N, H] and the head's outputs (see `HEADS`)."""

    config_class = RewardModelConfig
    base_model_prefix = "backbone"
    supports_gradient_checkpointing = True

    def __init__(self, config: RewardModelConfig, backbone: PreTrainedModel | None = None) -> None:
        super().__init__(config)
        bb_config = backbone_config_object(config)
        self.backbone = backbone if backbone is not None else AutoModel.from_config(bb_config)
        self.pooling = resolve_pooling(config.pooling, bb_config)
        self.uses_token_types = "token_type_ids" in inspect.signature(self.backbone.forward).parameters
        self.head = HEADS[config.kind](config)
        self._init_head()
        if config.lm_head == "own":
            vocab = self.backbone.get_input_embeddings().weight.shape[0]
            self.lm_out = nn.Linear(config.hidden_size, vocab, bias=False)
        self.post_init()

    def _init_head(self) -> None:
        for module in self.head.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, std=0.02)
                nn.init.zeros_(module.bias)
        increments = getattr(self.head, "increments", None)
        if increments is not None:
            nn.init.constant_(increments.bias, -3.0)  # softplus(-3) ~ 0.05: quantiles start close together
        gate = getattr(self.head, "gate", None)
        if gate is not None:
            nn.init.zeros_(gate.weight)  # start from a uniform mix of attributes

    def _init_weights(self, module: nn.Module) -> None:
        # the backbone arrives pretrained (or is loaded right after); the head is set in _init_head
        return

    @classmethod
    def from_backbone(cls, path_or_name: str, kind: str, keep_lm_head: bool = False, **settings: Any) -> "RewardModel":
        """A new reward model on a pretrained backbone (a local path or a hub name). With
        `keep_lm_head` and a causal-LM checkpoint, the LM's output layer is kept (see the module
        docstring); decoders get `append_eos` unless `settings` say otherwise."""
        bb_config = AutoConfig.from_pretrained(path_or_name)
        lm_head, lm_weight = "none", None
        if keep_lm_head and is_decoder_config(bb_config):
            causal = AutoModelForCausalLM.from_pretrained(path_or_name, dtype=torch.float32)
            backbone = causal.get_decoder()
            tied = causal.get_output_embeddings().weight is backbone.get_input_embeddings().weight
            lm_head, lm_weight = ("tied", None) if tied else ("own", causal.get_output_embeddings().weight.detach().clone())
        else:
            backbone = AutoModel.from_pretrained(path_or_name, dtype=torch.float32)
        settings.setdefault("append_eos", is_decoder_config(bb_config))
        config = RewardModelConfig(kind=kind, backbone_config=backbone.config.to_dict(), lm_head=lm_head, **settings)
        config.backbone_name_or_path = str(path_or_name)
        model = cls(config, backbone=backbone)
        if lm_weight is not None:
            model.lm_out.weight.data.copy_(lm_weight)
        return model

    @classmethod
    def from_reward_model(cls, path: str, kind: str, **settings: Any) -> "RewardModel":
        """A new head of `kind` on the backbone (and LM output layer) of a trained reward model of
        any kind: e.g. a quantile RM started from a Bradley-Terry RM that already reads the task."""
        trained = cls.from_pretrained(path)
        keep = {k: getattr(trained.config, k) for k in ("pooling", "max_seq_length", "step_separator", "lm_head", "append_eos")}
        config = RewardModelConfig(kind=kind, backbone_config=dict(trained.config.backbone_config), **{**keep, **settings})
        config.backbone_name_or_path = str(path)
        model = cls(config, backbone=trained.backbone)
        if config.lm_head == "own":
            model.lm_out.weight.data.copy_(trained.lm_out.weight.data)
        return model

    def lm_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden [..., H] -> next-token logits [..., V] from the kept LM output layer."""
        if self.config.lm_head == "none":
            raise ValueError("this reward model has no LM output layer; build it with from_backbone(..., keep_lm_head=True) on a causal LM")
        if self.config.lm_head == "tied":
            return F.linear(hidden, self.backbone.get_input_embeddings().weight)
        return self.lm_out(hidden)

    def forward(
        self,
        input_ids: torch.Tensor,  # [N, T]
        attention_mask: torch.Tensor,  # [N, T] 1 = token, 0 = right padding
        token_type_ids: torch.Tensor | None = None,  # [N, T] (encoders with segment embeddings)
        return_hidden: bool = False,  # also "hidden" [N, T, H], the last hidden states (for `lm_logits`)
        padding_free: bool = False,  # run the backbone on the real tokens only (backbones.packed_hidden_states)
        **_: Any,
    ) -> dict[str, torch.Tensor]:
        token_type_ids = token_type_ids if self.uses_token_types else None
        if padding_free:
            hidden = packed_hidden_states(self.backbone, input_ids, attention_mask, token_type_ids)  # [N, T, H]
        else:
            kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kwargs["token_type_ids"] = token_type_ids
            hidden = self.backbone(**kwargs).last_hidden_state  # [N, T, H]
        # fp32 from here whatever autocast does (rewardlab/runtime.py): the pooling mean over tokens and the heads'
        # reductions (the quantiles' cumulative sum, the gate's softmax) are where bf16 rounding would show
        hidden = hidden.float()
        with torch.autocast(device_type=hidden.device.type, enabled=False):
            pooled = POOLERS[self.pooling](hidden, attention_mask)  # [N, H]
            out = {"pooled": pooled, **self.head(pooled, hidden)}
        if return_hidden:
            out["hidden"] = hidden
        return out
