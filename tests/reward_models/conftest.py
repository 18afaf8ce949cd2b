"""Shared fixtures: a tiny BERT backbone (from a config, MiniLM's tokenizer) saved to disk, so
every reward-model code path goes through `from_pretrained` with a local path."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory) -> str:
    from transformers import BertConfig, BertModel

    from reward_models.backbones import default_backbone_path, load_tokenizer

    tokenizer = load_tokenizer(default_backbone_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=256, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-bert")
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_causal_lm(tmp_path_factory) -> str:
    """A tiny randomly initialised character-level Llama saved like a policy (a causal LM with
    tied input/output embeddings), to build reward models on a policy's own backbone."""
    from training.policy import save_policy_atomically, tiny_policy

    path = tmp_path_factory.mktemp("tiny-llama") / "policy"
    model, tok = tiny_policy(seed=0)
    save_policy_atomically(model, tok, path)
    return str(path)
