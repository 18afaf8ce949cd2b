"""Generative judge on a tiny Llama built from a config with a word-level tokenizer."""

from __future__ import annotations

import pytest
import torch

from reward_models.local_judge import GenerativeJudge, JudgeTemplates, parse_scores

WORDS = ["[PAD]", "[UNK]", "[EOS]", "Yes", "No", "Question:", "Solution:", "Is", "this", "solution", "correct?",
         "Answer", "or", "No.", "Answer:", "Score", "for", "Response", "1:", "2:", "7", "3", "2+2=", "4", "5"]


@pytest.fixture(scope="module")
def judge():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(WORDS)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]", eos_token="[EOS]")
    config = LlamaConfig(vocab_size=len(WORDS), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128,
                         pad_token_id=0, eos_token_id=2, bos_token_id=None)
    torch.manual_seed(0)
    return GenerativeJudge(LlamaForCausalLM(config), tok)


def test_yes_and_no_are_single_tokens(judge):
    assert (judge.yes_id, judge.no_id) == (WORDS.index("Yes"), WORDS.index("No"))


def test_p_yes_is_the_softmax_of_the_next_token_logits(judge):
    questions, solutions = ["2+2=", "2+2="], ["4", "5 5 5"]  # different lengths: left padding must not matter
    got = judge.p_yes(questions, solutions)
    for q, s, p in zip(questions, solutions, got):
        text = judge.templates.verifier.format(question=q, solution=s)
        ids = torch.tensor([judge.tokenizer.encode(text)])
        with torch.no_grad():
            logits = judge.model(input_ids=ids).logits[0, -1]
        by_hand = torch.exp(logits[judge.yes_id]) / torch.exp(logits).sum()  # softmax written out
        assert p == pytest.approx(by_hand.item(), rel=1e-4)
    normalized = judge.p_yes(questions, solutions, normalize=True)
    probs = judge.next_token_probs([judge.templates.verifier.format(question=q, solution=s) for q, s in zip(questions, solutions)])
    assert normalized[0] == pytest.approx((probs[0, 3] / (probs[0, 3] + probs[0, 4])).item(), rel=1e-5)


@pytest.mark.parametrize(
    "text, n, expected",
    [
        ("Score for Response 1: 7\nScore for Response 2: 3", 2, [7, 3]),  # well formed
        ("blah Score for Response 2: 3 ... Score for Response 1: **7**", 2, [7, 3]),  # any order, markdown bold
        ("Score for Response 1: 7", 2, None),  # a response without a score
        ("Score for Response 1: 7\nScore for Response 1: 8\nScore for Response 2: 3", 2, None),  # two scores for one
        ("Score for Response 1: 0", 1, None),  # outside 1..10
        ("I think both are fine.", 2, None),  # no scores at all
    ],
)
def test_parse_scores(text, n, expected):
    assert parse_scores(text, n) == expected


def test_pointwise_voting_sums_scores_back_in_the_callers_order(judge, monkeypatch):
    # the judge always gives the response shown first 9 and the second 2; the shuffle decides which is which
    scripted = iter(["Score for Response 1: 9\nScore for Response 2: 2", "no scores here",
                     "Score for Response 1: 9\nScore for Response 2: 2", "Score for Response 1: 9\nScore for Response 2: 2"])
    seen_prompts = []

    def fake_generate(prompts, *args, **kwargs):
        seen_prompts.extend(prompts)
        return [next(scripted) for _ in prompts]

    monkeypatch.setattr(judge, "generate", fake_generate)
    result = judge.pointwise("2+2=", ["FIRST", "SECOND"], k=4, seed=1)
    first_shown = ["FIRST" if p.index("FIRST") < p.index("SECOND") else "SECOND" for p in seen_prompts]
    expected = [0, 0]
    for j, shown in enumerate(first_shown):
        if j == 1:
            continue  # the unparseable judgment adds nothing
        expected[0 if shown == "FIRST" else 1] += 9
        expected[1 if shown == "FIRST" else 0] += 2
    assert result.scores == expected and sum(result.scores) == 3 * 11
    assert (result.n_judgments, result.n_unparseable, result.unparseable) == (4, 1, ["no scores here"])
    assert [len(v) for v in result.votes] == [3, 3]
    assert len(set(first_shown)) == 2  # the order really was shuffled across judgments


def test_pointwise_with_the_real_sampler_counts_garbage_as_unparseable(judge):
    result = judge.pointwise("2+2=", ["4", "5"], k=2, seed=0, max_new_tokens=5)
    assert result.n_judgments == 2 and len(result.judgments) == 2
    assert result.n_unparseable == 2 and result.scores == [0, 0]  # an untrained model writes no valid scores


def test_templates_are_editable(judge):
    custom = GenerativeJudge(judge.model, judge.tokenizer, JudgeTemplates(verifier="{question} {solution} Answer:", yes_word="No", no_word="Yes"))
    assert custom.yes_id == WORDS.index("No")
    probs = judge.next_token_probs(["2+2= 4 Answer:"])  # the custom prompt, read by hand
    assert custom.p_yes(["2+2="], ["4"])[0] == pytest.approx(probs[0, WORDS.index("No")].item(), rel=1e-5)
    with pytest.raises(ValueError, match="same token"):
        GenerativeJudge(judge.model, judge.tokenizer, JudgeTemplates(yes_word="Yes", no_word="Yes"))
