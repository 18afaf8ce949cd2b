"""Reward models this project did not train, in the hub's formats (tests/hub_fixtures.py builds
tiny ones from a config and saves them locally): a sequence-classification RM scored through its
chat template, a Math-Shepherd-style step-tag PRM and a token-classification PRM; each score is
checked against a hand-made forward pass of the same model."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hub_fixtures import make_sequence_rm, make_step_tag_prm, make_token_prm  # noqa: E402

from reward_models import load_reward_model  # noqa: E402
from rewards import build_reward  # noqa: E402


@pytest.fixture(scope="module")
def hub_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hub")
    return {"seq": make_sequence_rm(d), "tag": make_step_tag_prm(d), "token": make_token_prm(d),
            "seq_plain": make_sequence_rm(d / "plain", chat_template=False)}


def test_sequence_rm_scores_the_chat_template_text_at_its_last_token(hub_dir):
    rm = load_reward_model(hub_dir["seq"])
    assert rm.kind == "bt"
    tok = rm.tokenizer
    text = tok.apply_chat_template([{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}], tokenize=False)
    assert text == "<|user|>What is 2+2?\n<|assistant|>4\n"  # the model's own template, not our rendering
    with torch.no_grad():
        expected = rm.model(input_ids=torch.tensor([tok(text, add_special_tokens=False)["input_ids"]])).logits[0, 0].item()
    assert rm.score(["What is 2+2?"], ["4"])[0] == pytest.approx(expected, abs=1e-5)
    # a chat prompt is used as it is: the same conversation, the same score
    assert rm.score([[{"role": "user", "content": "What is 2+2?"}]], ["4"])[0] == pytest.approx(expected, abs=1e-5)


def test_sequence_rm_batched_scores_equal_one_by_one(hub_dir):
    rm = load_reward_model(hub_dir["seq"], batch_size=4)
    prompts = ["1+1=", "What is the capital of France?", "2*3=", "Say hi"] * 2
    responses = ["2", "Paris, the capital, is a large city.", "6", "hi", "3", "Lyon", "7", "hello there friend"]
    batched = rm.score(prompts, responses)
    single = [rm.score([p], [r])[0] for p, r in zip(prompts, responses)]  # no padding at all
    assert batched == pytest.approx(single, abs=1e-5)
    assert len(set(round(s, 6) for s in batched)) > 1  # the scores differ between responses
    emb = rm.embed(prompts, responses)
    assert tuple(emb.shape) == (8, 32) and torch.isfinite(emb).all()


def test_sequence_rm_without_a_chat_template_encodes_a_text_pair(hub_dir):
    rm = load_reward_model(hub_dir["seq_plain"])
    tok = rm.tokenizer
    ids = tok("1+1=", "2")["input_ids"]
    with torch.no_grad():
        expected = rm.model(input_ids=torch.tensor([ids])).logits[0, 0].item()
    assert rm.score(["1+1="], ["2"])[0] == pytest.approx(expected, abs=1e-5)


def test_rm_spec_loads_a_hub_sequence_rm_and_scores_like_trl(hub_dir):
    fn = build_reward(f"rm:{hub_dir['seq']}")
    rm = fn.model
    out = fn(["1+1=", "1+1="], ["2", "3"])
    assert out == pytest.approx(rm.score(["1+1=", "1+1="], ["2", "3"]))
    # the RL loop passes the data's prompt as `raw_prompt`: the RM sees it, not the policy's templated text
    templated = ["<|im_start|>user\n1+1=<|im_end|>\n<|im_start|>assistant\n"] * 2
    assert fn(templated, ["2", "3"], raw_prompt=["1+1=", "1+1="]) == pytest.approx(out)


def _manual_step_tag(prm, question, steps):
    tok = prm.tokenizer
    text = question + " " + "\n".join(f"{s} ки" for s in steps)
    ids = tok(text)["input_ids"]
    tag, good, bad = (tok.convert_tokens_to_ids(t) for t in ("ки", "+", "-"))
    with torch.no_grad():
        logits = prm.model(input_ids=torch.tensor([ids])).logits[0]
    at = [i for i, t in enumerate(ids) if t == tag]
    return [torch.softmax(logits[i, [good, bad]], -1)[0].item() for i in at]


def test_step_tag_prm_reads_the_good_token_probability_at_each_tag(hub_dir):
    prm = load_reward_model(hub_dir["tag"], kind="prm")
    steps = ["Step 1: 12+7=19", "Step 2: 19*2=38", "The answer is 38"]
    got = prm.score(["What is (12+7)*2?"], [steps])[0].step_probs
    assert got == pytest.approx(_manual_step_tag(prm, "What is (12+7)*2?", steps), abs=1e-6)
    assert len(got) == 3 and all(0 < p < 1 for p in got)


def test_step_tag_prm_marks_steps_cut_away_by_truncation_as_nan(hub_dir):
    prm = load_reward_model(hub_dir["tag"], kind="prm", max_length=40)
    steps = ["Step 1: " + "1+" * 20 + "1=21", "Step 2: so it is 21 now", "Step 3: it is done"]  # 40 tokens hold steps 2-3
    got = prm.score(["Q"], [steps])[0].step_probs
    assert math.isnan(got[0]) and not any(math.isnan(p) for p in got[1:])  # the end (last steps) is kept


def test_token_classification_prm_reads_label_one_at_each_tag(hub_dir):
    prm = load_reward_model(hub_dir["token"])
    assert prm.kind == "prm"
    steps = ["a=1", "b=2"]
    got = prm.score(["Find b."], [steps])[0].step_probs
    tok = prm.tokenizer
    text = tok.apply_chat_template([{"role": "user", "content": "Find b."}, {"role": "assistant", "content": "a=1<extra_0>b=2<extra_0>"}],
                                   tokenize=False)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = prm.model(input_ids=torch.tensor([ids])).logits[0]
    at = [i for i, t in enumerate(ids) if t == tok.convert_tokens_to_ids("<extra_0>")]
    assert got == pytest.approx([torch.softmax(logits[i], -1)[1].item() for i in at], abs=1e-6)


def test_prm_spec_loads_hub_prms_and_gives_dense_step_rewards(hub_dir):
    for key in ("tag", "token"):
        fn = build_reward(f"prm:{hub_dir[key]}:raw")
        out = fn(["Q"] * 2, ["x=1\ny=2", "z=3"])
        assert [len(s) for s in out.step_rewards] == [2, 1] and out.step_ends == [[3, 7], [3]]
        assert all(0 < v < 1 for s in out.step_rewards for v in s)


@pytest.mark.parametrize("spec, message", [
    ("rm:{tag}", r"causal language model .* use prm:"),  # a causal LM is not a sequence RM: say what to use
    ("prm:{seq}", r"sequence reward model .* use rm:"),  # a sequence RM gives no step scores
    ("rm:{seq}:lable=1", r"unknown option 'lable' \(did you mean 'label'\?\)"),  # spec typo
    ("rm:{seq}:label=3", r"label=3: the model has 1 output label"),
    ("prm:{tag}:tag=XYZ", r"step tag 'XYZ' is 3 tokens"),  # a tag must be one token
    ("prm:{tag}:good=plus,bad=plus", "are the same token"),
])
def test_hub_model_errors_say_what_to_do(hub_dir, spec, message):
    with pytest.raises(ValueError, match=message):
        build_reward(spec.format(**hub_dir))


def test_missing_local_paths_are_never_looked_up_on_the_hub(monkeypatch):
    import huggingface_hub

    def no_hub(*a, **k):  # any hub access is a failure of this test
        raise AssertionError("a local path was sent to the hub")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_hub)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    start = time.perf_counter()
    for path in ("./runs/no-rm/final", "/no/such/rm", "runs/x/final"):
        with pytest.raises(FileNotFoundError, match="no such directory"):
            load_reward_model(path)
    with pytest.raises(ValueError, match="no such directory"):
        build_reward("rm:./runs/no-rm/final")
    assert time.perf_counter() - start < 5
