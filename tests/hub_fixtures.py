"""Tiny reward models in the hub's own formats, built from a config and saved locally: a
sequence-classification RM (Skywork-Reward style, with a chat template), a causal-LM step-tag PRM
(Math-Shepherd: tag "ки", good "+", bad "-") and a token-classification PRM (Qwen2.5-Math-PRM
style: tag "<extra_0>", two labels). The tokenizer is character level over printable ASCII, with
the tags as whole tokens."""

from __future__ import annotations

import string
from pathlib import Path

import torch

CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def char_tokenizer(extra: tuple[str, ...] = (), chat_template: bool = True):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = [c for c in string.printable if c not in "\r\x0b\x0c"]
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2, "<bos>": 3, **{c: i + 4 for i, c in enumerate(chars)}}
    for tok in extra:
        vocab[tok] = len(vocab)
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    backend.decoder = decoders.Fuse()
    backend.add_tokens([AddedToken(t, normalized=False) for t in extra])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>",
                                        bos_token="<bos>")
    if chat_template:
        tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def _llama_config(tokenizer, **kw):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512, pad_token_id=0,
                       eos_token_id=1, bos_token_id=3, **kw)


def _saved(model, tok, directory: Path, name: str) -> str:
    """Save the model and its tokenizer in directory/name, as the hub holds them; return the path."""
    path = Path(directory) / name
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def make_sequence_rm(directory: Path, seed: int = 0, chat_template: bool = True) -> str:
    """A LlamaForSequenceClassification reward model (one label), as TRL's RewardTrainer saves one."""
    from transformers import LlamaForSequenceClassification

    torch.manual_seed(seed)
    tok = char_tokenizer(chat_template=chat_template)
    model = LlamaForSequenceClassification(_llama_config(tok, num_labels=1))
    return _saved(model, tok, directory, "seq-rm")


def make_step_tag_prm(directory: Path, seed: int = 0) -> str:
    """A LlamaForCausalLM whose vocabulary has Math-Shepherd's step tag."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    tok = char_tokenizer(extra=("ки",), chat_template=False)
    model = LlamaForCausalLM(_llama_config(tok))
    return _saved(model, tok, directory, "step-tag-prm")


def make_token_prm(directory: Path, seed: int = 0) -> str:
    """A LlamaForTokenClassification PRM with two labels and the step tag <extra_0>."""
    from transformers import LlamaForTokenClassification

    torch.manual_seed(seed)
    tok = char_tokenizer(extra=("<extra_0>",))
    model = LlamaForTokenClassification(_llama_config(tok, num_labels=2))
    return _saved(model, tok, directory, "token-prm")


def make_chat_policy(directory: Path, seed: int = 0) -> str:
    """A tiny LlamaForCausalLM policy that reads any printable ASCII and has a chat template."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    tok = char_tokenizer()
    model = LlamaForCausalLM(_llama_config(tok, tie_word_embeddings=True))
    model.generation_config.pad_token_id, model.generation_config.eos_token_id = 0, 1
    return _saved(model, tok, directory, "chat-policy")
