"""Rollouts: the public generate contract, completion masks (EOS, stop strings, truncation) and
logprobs recomputed under the same masking as generation."""

import pytest
import torch

from training.policy import load_policy, tiny_policy
from training.rollout import completion_mask_and_texts, generate, sample, token_logprobs
from training.tokenizer import char_tokenizer

TOK = char_tokenizer()
EOS, PAD = TOK.eos_token_id, TOK.pad_token_id


def ids(text):
    return TOK(text, add_special_tokens=False)["input_ids"]


MASK_CASES = [
    # (completion tokens, stop strings, expected mask length, truncated?, text)
    (ids("45") + [EOS, PAD], None, 3, False, "45"),  # through the EOS token
    (ids("4567"), None, 4, True, "4567"),  # no EOS within the limit: truncated
    (ids("12+3"), ["+"], 3, False, "12"),  # through the token that completes the stop string, text cut before it
    (ids("1\n\n2"), ["\n\n"], 3, False, "1"),  # a two-character stop string
    ([EOS, PAD, PAD, PAD], ["+"], 1, False, ""),  # immediate EOS: one token, empty text
]


@pytest.mark.parametrize("tokens,stop,length,truncated,text", MASK_CASES)
def test_completion_mask(tokens, stop, length, truncated, text):
    mask, trunc, texts = completion_mask_and_texts(TOK, torch.tensor([tokens]), stop, {EOS})
    assert mask.sum().item() == length and mask[0, :length].all()
    assert trunc.item() is truncated and texts == [text]


def test_generate_contract_shapes_and_greedy_determinism():
    model, tok = tiny_policy(seed=0)
    outs = generate(model, tok, ["1+1=", "12+34="], num_samples=3, max_new_tokens=4, temperature=1.0)
    assert [len(o) for o in outs] == [3, 3] and all(isinstance(t, str) and len(t) <= 4 for o in outs for t in o)
    a = generate(model, tok, ["1+1=", "12+34="], max_new_tokens=4, temperature=0)
    b = generate(model, tok, ["1+1=", "12+34="], max_new_tokens=4, temperature=0, batch_size=1)
    assert a == b  # greedy is deterministic, and batching (left padding) does not change it


def test_stop_strings_end_generation():
    model, tok = tiny_policy(seed=0)
    torch.manual_seed(0)
    r = sample(model, tok, ["1+1="] * 16, 1, max_new_tokens=12, temperature=1.5, stop=["1"])
    for text, m, ids_ in zip(r.texts, r.completion_mask, r.completion_ids):
        assert "1" not in text  # text is cut before the stop string
        n = int(m.sum())
        if not ids_[:n].tolist().count(tok.eos_token_id) and n < 12:
            assert tok.decode(ids_[:n]).endswith("1")  # and the mask ends on the stop token


def test_recomputed_logprobs_match_generation_scores_under_left_padding():
    model, tok = tiny_policy(seed=1)
    model.eval()
    torch.manual_seed(0)
    prompts = ["1+1=", "123+456="]  # different lengths: the first is left padded
    r = sample(model, tok, prompts, 2, max_new_tokens=5, temperature=1.0)
    batch_lp, _ = token_logprobs(model, r.input_ids, r.attention_mask, r.completion_ids.shape[1])
    # the same completion scored alone, without any padding, gives the same logprobs
    for i in range(4):
        n = int(r.completion_mask[i].sum())
        p = r.prompt_ids[i][r.prompt_mask[i].bool()]
        alone = torch.cat([p, r.completion_ids[i, :n]])[None]
        lp, _ = token_logprobs(model, alone, torch.ones_like(alone), n)
        assert torch.allclose(lp[0], batch_lp[i, :n], atol=1e-4)


def test_load_policy_from_a_local_folder_and_a_clear_error_otherwise(tiny_dir, tmp_path):
    model, tok = load_policy(str(tiny_dir))
    assert tok.padding_side == "left" and tok.decode(tok("12+3")["input_ids"]) == "12+3"
    with pytest.raises(ValueError, match="--model"):
        load_policy(str(tmp_path / "nothing-here"))


def test_lean_decoder_matches_transformers_generate_greedy():
    # the lean KV-cache loop and model.generate agree token for token (greedy, left-padded batch)
    from training.rollout import cache_argument, encode_prompts

    model, tok = tiny_policy(seed=3)
    model.eval()
    assert cache_argument(model) is not None
    prompts = ["1+1=", "123+456=", "7="]
    ours = sample(model, tok, prompts, 2, max_new_tokens=6, temperature=0)
    ids, mask = encode_prompts(tok, prompts)
    ref = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=6, do_sample=False,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)[:, ids.shape[1]:]
    ref_texts = [tok.decode(r, skip_special_tokens=True) for r in ref]
    assert ours.texts == [t for t in ref_texts for _ in range(2)]


def test_reserved_kv_cache_gives_the_same_bits(monkeypatch):
    # the decoding loop writes new keys/values into reserved room instead of concatenating the
    # cache at every step: the same samples, token for token, greedy and sampled
    import training.rollout as rollout

    model, tok = tiny_policy(seed=3)
    model.eval()
    prompts = ["1+1=", "123+456=", "7=", "45+5="]
    writes = []  # the reserved update really runs (else this test would compare a loop with itself)
    update = rollout._update_reserved
    monkeypatch.setattr(rollout, "_update_reserved", lambda *a, **k: writes.append(1) or update(*a, **k))
    runs = []
    for reserve in (True, False):
        if not reserve:
            assert writes, "the decoding loop did not use the reserved cache"
            monkeypatch.setattr(rollout, "_reserve", lambda cache, tokens: None)
        torch.manual_seed(0)
        sampled = sample(model, tok, prompts, 4, max_new_tokens=8, temperature=1.0)
        greedy = sample(model, tok, prompts, 2, max_new_tokens=8, temperature=0)
        runs.append((sampled.completion_ids, sampled.texts, greedy.completion_ids))
    assert torch.equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1] and torch.equal(runs[0][2], runs[1][2])


def test_reserved_kv_cache_grows_past_its_room():
    # more positions than reserved: the layer falls back to concatenation, with the same values
    from transformers.cache_utils import DynamicCache

    from training.rollout import _reserve

    states = [torch.randn(2, 1, 3, 4)] + [torch.randn(2, 1, 1, 4) for _ in range(3)]  # a prompt, then one token at a time
    plain, reserved = DynamicCache(), DynamicCache()
    for cache in (plain, reserved):
        cache.update(states[0], states[0] + 1, 0)
    _reserve(reserved, 2)
    layer = reserved.layers[0]
    for i, x in enumerate(states[1:]):  # three more positions, one past the room
        a = plain.update(x, x + 1, 0)
        b = reserved.update(x, x + 1, 0)
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
        in_room = i < 2
        assert ("update" in vars(layer)) == in_room  # written into the room, then concatenated again
        assert (layer.keys.untyped_storage().nbytes() > layer.keys.numel() * 4) == (i < 1)  # a view with room left
    assert reserved.get_seq_length() == 6


FILTER_CASES = [
    # (logits, top_p, top_k, kept positions)
    ([1.0, 3.0, 2.0, 0.0], 1.0, 2, [1, 2]),  # top-2 keeps the two largest
    ([0.0, 10.0, 0.0, 0.0], 0.5, 0, [1]),  # one token holds > 50% of the mass: nucleus keeps it alone
    ([0.0, 0.0, 0.0, 0.0], 0.6, 0, [0, 1, 2]),  # uniform: 3 of 4 tokens are needed to reach 60%
    ([1.0, 2.0, 3.0, 4.0], 1.0, 0, [0, 1, 2, 3]),  # no filtering
]


@pytest.mark.parametrize("logits,top_p,top_k,kept", FILTER_CASES)
def test_top_k_top_p_filter(logits, top_p, top_k, kept):
    from training.rollout import _filter_logits

    out = _filter_logits(torch.tensor([logits]), top_p, top_k)
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == kept


GROUP_CASES = [
    # (prompt rows, mask rows, expected first rows, expected owner of each row)
    ([[1, 2], [1, 2], [3, 4]], [[1, 1]] * 3, [0, 2], [0, 0, 1]),  # a run of two, then a new prompt
    ([[1, 2], [3, 4], [1, 2]], [[1, 1]] * 3, [0, 1, 2], [0, 1, 2]),  # only consecutive rows are shared
    ([[0, 2], [0, 2]], [[0, 1], [1, 1]], [0, 1], [0, 1]),  # same ids but a different mask: not the same prompt
    ([[5]] * 4, [[1]] * 4, [0], [0, 0, 0, 0]),  # one group
]


@pytest.mark.parametrize("prompts,masks,first,owner", GROUP_CASES)
def test_prompt_groups(prompts, masks, first, owner):
    from training.rollout import prompt_groups

    f, o = prompt_groups(torch.tensor(prompts), torch.tensor(masks))
    assert f.tolist() == first and o.tolist() == owner


def _logprobs_and_grads(model, r, share, with_hidden):
    model.zero_grad(set_to_none=True)
    out = token_logprobs(model, r.input_ids, r.attention_mask, r.completion_ids.shape[1], 0.7, True,
                         return_hidden=with_hidden, share_prompts=share)
    weights = torch.randn(out[0].shape, generator=torch.Generator().manual_seed(0))
    loss = (out[0] * r.completion_mask * weights).sum() + (out[1] * r.completion_mask).sum()
    if with_hidden:
        loss = loss + (out[2].sum(-1) * r.completion_mask).sum()
    loss.backward()
    return [o.detach() for o in out], [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("max_new_tokens", [1, 5])  # one completion token: the prompt pass alone
@pytest.mark.parametrize("with_hidden", [False, True])  # the value head reads the hidden states
def test_shared_prompt_forward_equals_the_full_forward(max_new_tokens, with_hidden):
    # G completions of one prompt run the prompt once; logprobs, entropy, hidden states and
    # every parameter gradient equal those of the plain forward over all rows (left padding too)
    from training.rollout import _shared_prompt_forward

    model, tok = tiny_policy(seed=1)
    torch.manual_seed(0)
    r = sample(model, tok, ["1+1=", "123+456=", "12+7="], 4, max_new_tokens=max_new_tokens, temperature=1.0)
    model.train()
    assert r.prompt_mask[0].sum() < r.prompt_mask[4].sum()  # the first prompt is left padded
    assert _shared_prompt_forward(model, r.input_ids, r.attention_mask, r.completion_ids.shape[1], False) is not None
    full, full_grads = _logprobs_and_grads(model, r, False, with_hidden)
    shared, shared_grads = _logprobs_and_grads(model, r, True, with_hidden)
    m = r.completion_mask.bool()
    for a, b in zip(full, shared):
        assert torch.allclose(a[m], b[m], atol=1e-6, rtol=1e-5)
    for a, b in zip(full_grads, shared_grads):  # float rounding only (sums over a group run in another order)
        assert torch.linalg.norm(a - b) <= 1e-5 * torch.linalg.norm(a) + 1e-7


def test_shared_prompt_forward_falls_back_when_nothing_is_shared():
    from training.rollout import _shared_prompt_forward

    model, tok = tiny_policy(seed=1)
    r = sample(model, tok, ["1+1=", "123+456="], 1, max_new_tokens=3, temperature=1.0)
    assert _shared_prompt_forward(model, r.input_ids, r.attention_mask, r.completion_ids.shape[1], False) is None
    (getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable)()
    model.train()
    r = sample(model, tok, ["1+1="], 4, max_new_tokens=3, temperature=1.0)
    assert _shared_prompt_forward(model, r.input_ids, r.attention_mask, r.completion_ids.shape[1], False) is None
    lp, _ = token_logprobs(model, r.input_ids, r.attention_mask, r.completion_ids.shape[1])
    assert lp.shape == r.completion_ids.shape
