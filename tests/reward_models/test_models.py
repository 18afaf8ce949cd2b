"""Models and the scoring API: round-trips, score types, non-crossing quantiles, truncation."""

from __future__ import annotations

import math

import pytest
import torch

import reward_models
from reward_models import QuantileScore, StepScores, load_reward_model
from reward_models.backbones import load_tokenizer
from reward_models.encoding import PairEncoder
from reward_models.modeling import RewardModel, RewardModelConfig

PROMPTS = ["12+7+3=", "50-8=", "1+1="]
RESPONSES = ["12+7 = 19\n19+3 = 22\nThe answer is 22.", "50-8 = 42\nThe answer is 42.", "1+1 = 3\nThe answer is 3."]
STEPS = [["12+7 = 19", "19+3 = 22", "The answer is 22."], ["50-8 = 42", "The answer is 42."], ["1+1 = 3", "The answer is 3."]]


def _saved(tmp_path, backbone, kind, **settings):
    torch.manual_seed(1)
    model = RewardModel.from_backbone(backbone, kind, max_seq_length=64, **settings)
    with torch.no_grad():  # make the head non-trivial so equality checks mean something
        for p in model.head.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    path = tmp_path / kind
    model.save_pretrained(path)
    load_tokenizer(backbone).save_pretrained(path)
    return path


def _plain(scores):
    if scores and isinstance(scores[0], QuantileScore):
        return [s.quantiles for s in scores]
    if scores and isinstance(scores[0], StepScores):
        return [s.step_probs for s in scores]
    return scores


@pytest.mark.parametrize("kind", ["bt", "quantile", "prm"])
def test_save_load_round_trip_scores_identically(tmp_path, tiny_backbone, kind):
    path = _saved(tmp_path, tiny_backbone, kind, attributes=["correctness", "quality"])
    rm = load_reward_model(path, device="cpu")
    inputs = STEPS if kind == "prm" else RESPONSES
    first = rm.score(PROMPTS, inputs)
    rm.save_pretrained(tmp_path / "again")  # save the loaded one and load once more
    second = load_reward_model(tmp_path / "again", device="cpu").score(PROMPTS, inputs)
    assert _plain(first) == _plain(second)
    assert rm.kind == kind and rm.config.attributes == ["correctness", "quality"]
    assert rm.embed(PROMPTS, RESPONSES).shape == (3, 32)


@pytest.mark.parametrize("kind", ["bt", "quantile", "prm"])
def test_batch_size_does_not_change_scores(tmp_path, tiny_backbone, kind):
    rm = load_reward_model(_saved(tmp_path, tiny_backbone, kind), device="cpu")
    inputs = STEPS if kind == "prm" else RESPONSES
    one = _plain(rm.score(PROMPTS, inputs, batch_size=1))
    many = _plain(rm.score(PROMPTS, inputs, batch_size=8))
    for a, b in zip(one, many):
        assert a == pytest.approx(b, abs=1e-5)  # padding is masked: batching changes nothing


def test_score_types(tmp_path, tiny_backbone):
    bt = load_reward_model(_saved(tmp_path, tiny_backbone, "bt"), device="cpu").score(PROMPTS, RESPONSES)
    assert len(bt) == 3 and all(isinstance(x, float) for x in bt)
    qs = load_reward_model(_saved(tmp_path, tiny_backbone, "quantile", attributes=["a", "b"]), device="cpu").score(PROMPTS, RESPONSES)
    for q in qs:
        assert len(q.quantiles) == 19 and q.taus[0] == pytest.approx(0.05) and q.taus[-1] == pytest.approx(0.95)
        assert all(b >= a for a, b in zip(q.quantiles, q.quantiles[1:]))  # never crossing
        assert q.lower(0.05) <= q.cvar(0.5) <= q.mean and q.spread >= 0
        assert sum(q.gate.values()) == pytest.approx(1.0)
    steps = load_reward_model(_saved(tmp_path, tiny_backbone, "prm"), device="cpu").score(PROMPTS, STEPS)
    assert [len(s.step_probs) for s in steps] == [3, 2, 2]
    assert all(0 < p < 1 for s in steps for p in s.step_probs)


def test_quantiles_never_cross_even_with_wild_weights(tiny_backbone):
    model = RewardModel.from_backbone(tiny_backbone, "quantile", attributes=["a", "b", "c"])
    with torch.no_grad():
        for p in model.head.parameters():
            p.copy_(torch.randn_like(p) * 10)
    out = model(input_ids=torch.randint(1000, 2000, (8, 12)), attention_mask=torch.ones(8, 12, dtype=torch.long))
    assert (out["attribute_quantiles"].diff(dim=-1) >= 0).all()
    assert (out["quantiles"].diff(dim=-1) >= 0).all()


@pytest.mark.parametrize(
    "taus, quantiles, alpha, lower, cvar",
    [
        ([0.25, 0.5, 0.75], [1.0, 2.0, 4.0], 0.5, 2.0, 1.5),  # on a level; cvar = mean(1, 2)
        ([0.25, 0.5, 0.75], [1.0, 2.0, 4.0], 0.375, 1.5, 1.0),  # halfway between 0.25 and 0.5
        ([0.25, 0.5, 0.75], [1.0, 2.0, 4.0], 0.1, 1.0, 1.0),  # below the lowest level: the lowest quantile
        ([0.25, 0.5, 0.75], [1.0, 2.0, 4.0], 0.9, 4.0, 7 / 3),  # above the highest: all levels count
    ],
)
def test_quantile_score_risk_measures(taus, quantiles, alpha, lower, cvar):
    q = QuantileScore(taus=taus, quantiles=quantiles)
    assert q.lower(alpha) == pytest.approx(lower)
    assert q.cvar(alpha) == pytest.approx(cvar)
    assert q.spread == pytest.approx(3.0)  # q(0.75) - q(0.25)
    with pytest.raises(ValueError, match="alpha"):
        q.cvar(1.5)


def test_step_scores_aggregations_skip_truncated_steps():
    s = StepScores([math.nan, 0.5, 0.8])  # first step truncated away
    assert (s.min, s.last, s.product, s.mean, s.n_truncated) == (0.5, 0.8, pytest.approx(0.4), pytest.approx(0.65), 1)
    with pytest.raises(ValueError, match="truncated"):
        StepScores([math.nan]).min


def test_truncation_keeps_the_end_of_the_response(tiny_backbone):
    tok = load_tokenizer(tiny_backbone)
    enc = PairEncoder(tok, max_length=16)
    long_response = " ".join(["filler"] * 40) + " the answer is 42"
    ids = enc.encode_pair("what is 6*7?", long_response)["input_ids"]
    assert len(ids) == 16
    text = tok.decode(ids)
    assert text.endswith("the answer is 42 [SEP]") and text.startswith("[CLS] what is 6 * 7? [SEP]")


def test_prm_steps_cut_by_truncation_get_nan(tmp_path, tiny_backbone):
    path = _saved(tmp_path, tiny_backbone, "prm")
    rm = load_reward_model(path, device="cpu")
    rm.encoder.max_length = 12  # tighter than the steps: the first steps fall away
    rm.encoder.__post_init__()
    s = rm.score(["1+2+3+4="], [["1+2 = 3", "3+3 = 6", "6+4 = 10", "The answer is 10."]])[0]
    assert math.isnan(s.step_probs[0]) and not math.isnan(s.step_probs[-1]) and s.n_truncated >= 1


def test_bad_scoring_input_is_explained(tmp_path, tiny_backbone):
    rm = load_reward_model(_saved(tmp_path, tiny_backbone, "bt"), device="cpu")
    with pytest.raises(ValueError, match="2 prompts but 1 responses"):
        rm.score(["a", "b"], ["c"])
    with pytest.raises(TypeError, match="lists"):
        rm.score("a", "b")
    prm = load_reward_model(_saved(tmp_path, tiny_backbone, "prm"), device="cpu")
    with pytest.raises(TypeError, match="list of lists"):
        prm.score(["a"], ["one string, not steps"])


def test_config_validation():
    with pytest.raises(ValueError, match="kind"):
        RewardModelConfig(kind="ranker")
    with pytest.raises(ValueError, match="taus"):
        RewardModelConfig(kind="quantile", taus=[0.5, 0.2])


def test_chat_messages_use_plain_rendering_without_template(tiny_backbone):
    enc = PairEncoder(load_tokenizer(tiny_backbone), max_length=64)
    p, r = enc.render([{"role": "user", "content": "1+1="}], [{"role": "assistant", "content": "2"}])
    assert (p, r) == ("user: 1+1=", "assistant: 2")


def test_package_exports():
    assert callable(reward_models.load_reward_model)


def test_a_decoder_backbone_pools_the_last_token_and_places_step_labels(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaModel, PreTrainedTokenizerFast

    words = ["<pad>", "<unk>", "<eos>", "1+2=", "1+2", "=", "3", "The", "answer", "is", "3."]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()  # no post-processor: plain concatenation
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", unk_token="<unk>", eos_token="<eos>")
    config = LlamaConfig(vocab_size=len(words), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, pad_token_id=0)
    path = tmp_path / "tiny-llama"
    LlamaModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    enc = PairEncoder(load_tokenizer(str(path)), max_length=32)
    item = enc.encode_steps("1+2=", ["1+2 = 3", "The answer is 3."], " ")
    assert item["step_positions"] == [3, 7]  # last token of each step: "3" and "3."
    model = RewardModel.from_backbone(str(path), "prm", max_seq_length=32)
    assert model.pooling == "last"
    model.save_pretrained(tmp_path / "prm")
    tok.save_pretrained(tmp_path / "prm")
    scores = load_reward_model(tmp_path / "prm", device="cpu").score(["1+2="], [["1+2 = 3", "The answer is 3."]])
    assert len(scores[0].step_probs) == 2 and scores[0].n_truncated == 0
