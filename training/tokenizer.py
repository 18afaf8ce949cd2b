"""A character-level tokenizer that is a real `PreTrainedTokenizerFast`.

Built offline with the `tokenizers` library (a BPE model with no merges = one token per
character), so `save_pretrained` / `from_pretrained` / TRL all work, and with a `Fuse` decoder so
`decode()` joins characters without spaces (without a decoder, text rewards would see "1 2 3").

>>> tok = char_tokenizer()
>>> ids = tok("12+7=")["input_ids"]
>>> len(ids), tok.decode(ids)
(5, '12+7=')
>>> tok.decode(tok("9")["input_ids"] + [tok.eos_token_id], skip_special_tokens=True)
'9'
"""

from __future__ import annotations

from transformers import PreTrainedTokenizerFast

# Arithmetic prompts and answers need only these; anything else maps to <unk>.
DEFAULT_CHARS = "0123456789+-*=() \n"
# ... and a policy that calls tools writes tags (`<calc>734+289</calc>`) and reads results and
# errors (`<result>error: division by zero</result>`): the default characters first, so their ids stay.
TOOL_CHARS = DEFAULT_CHARS + "<>/:.,abcdefghijklmnopqrstuvwxyz"
SPECIAL_TOKENS = ("<pad>", "<eos>", "<unk>")


def char_tokenizer(chars: str = DEFAULT_CHARS) -> PreTrainedTokenizerFast:
    """One token per character of `chars`, plus <pad> (0), <eos> (1), <unk> (2); left padding."""
    from tokenizers import Tokenizer, decoders, models

    if len(set(chars)) != len(chars):
        raise ValueError(f"chars must not repeat characters, got {chars!r}")
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}
    for ch in chars:
        vocab[ch] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    backend.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        padding_side="left",
        clean_up_tokenization_spaces=False,
    )
    return tok
