"""Tiny real reward models (bt, quantile, prm) built from a config with the reward_models API and
saved to a directory, using the tokenizer of the packaged MiniLM encoder."""

from __future__ import annotations

from pathlib import Path

import torch


def make_tiny_rm(directory: Path, kind: str, seed: int = 0) -> str:
    from transformers import AutoTokenizer, BertConfig

    from reward_models import RewardModel, RewardModelConfig
    from reward_models.backbones import default_backbone_path

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(default_backbone_path())
    backbone = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=128)
    model = RewardModel(RewardModelConfig(kind=kind, backbone_config=backbone.to_dict(), max_seq_length=128))
    path = Path(directory) / f"tiny-{kind}"
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)
