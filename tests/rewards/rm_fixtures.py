"""Tiny real models built offline from a config: reward models (bt, quantile, prm) through the
reward_models API with the packaged MiniLM tokenizer, and a character-level causal LM."""

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


def make_tiny_causal_lm(directory: Path, chars: str = "0123456789+-*= ", name: str = "policy"):
    """A 2-layer Llama over a character vocabulary, saved with its tokenizer; decoding joins
    characters without spaces (otherwise a reward comparing text would silently score 0).
    Returns (path, tokenizer)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(0)
    vocab = {"<pad>": 0, "<eos>": 1, **{c: i + 2 for i, c in enumerate(dict.fromkeys(chars))}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tok.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                         pad_token_id=0, eos_token_id=1, bos_token_id=1)
    path = Path(directory) / name
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path), tokenizer
