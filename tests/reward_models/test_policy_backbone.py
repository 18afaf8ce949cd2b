"""Reward models on a policy's own backbone (a causal LM): the LM output layer is kept for the
next-token regulariser, EOS ends every input as it ends the policy's completions, preference
batches share the responses of a prompt, and the run leaves an OOD detector beside the model."""

from __future__ import annotations

import json

import pytest
import torch

from reward_models import load_reward_model
from reward_models.encoding import PairEncoder
from reward_models.modeling import RewardModel
from reward_models.batches import BatchSampler, encode_rows, make_batch, rows_by_prompt
from reward_models.train import TrainRMConfig, train
from training.policy import load_policy


def test_lm_head_is_the_policys_and_survives_save_and_load(tiny_causal_lm, tmp_path):
    rm = RewardModel.from_backbone(tiny_causal_lm, "bt", keep_lm_head=True)
    policy, tok = load_policy(tiny_causal_lm)
    ids = torch.tensor([tok("12+7=19")["input_ids"]])
    mask = torch.ones_like(ids)
    hidden = rm(ids, mask, return_hidden=True)["hidden"]
    assert rm.config.lm_head == "tied" and rm.config.append_eos and rm.pooling == "last"
    assert torch.allclose(rm.lm_logits(hidden), policy(input_ids=ids, attention_mask=mask).logits, atol=1e-5)  # same LM
    rm.save_pretrained(tmp_path / "rm")
    again = RewardModel.from_pretrained(tmp_path / "rm")
    assert torch.allclose(again(ids, mask)["rewards"], rm(ids, mask)["rewards"])
    assert torch.allclose(again.lm_logits(hidden), rm.lm_logits(hidden))


def test_an_encoder_has_no_lm_head_to_regularise_with(tiny_backbone, tmp_path):
    rm = RewardModel.from_backbone(tiny_backbone, "bt", keep_lm_head=True)  # an encoder: nothing to keep
    assert rm.config.lm_head == "none" and not rm.config.append_eos
    with pytest.raises(ValueError, match="no LM output layer"):
        rm.lm_logits(torch.zeros(1, 32))


def test_eos_ends_every_input_and_the_response_start_is_known(tiny_causal_lm):
    _, tok = load_policy(tiny_causal_lm)
    enc = PairEncoder(tok, max_length=16, append_eos=True)
    item = enc.encode_pair("12+7=", "19")
    assert item["input_ids"][-1] == tok.eos_token_id and len(item["input_ids"]) == 8  # 5 + 2 + EOS
    assert item["response_start"] == 5
    empty = enc.encode_pair("12+7=", "")  # a policy that answers nothing: prompt + EOS
    assert empty["input_ids"][-1] == tok.eos_token_id and empty["response_start"] == 5
    long = enc.encode_pair("1+1=", "9" * 40)  # the EOS counts in max_length
    assert len(long["input_ids"]) == 16 and long["input_ids"][-1] == tok.eos_token_id


def test_a_batch_forwards_each_distinct_response_once(tiny_causal_lm):
    _, tok = load_policy(tiny_causal_lm)
    rows = [{"prompt": "1+1=", "chosen": "2", "rejected": "3"}, {"prompt": "1+1=", "chosen": "2", "rejected": "4"},
            {"prompt": "2+2=", "chosen": "4", "rejected": "5"}]
    items = encode_rows(PairEncoder(tok, 16, append_eos=True), rows, "preference", [], "\n")
    batch = make_batch(items, "preference", tok.pad_token_id)
    assert batch["inputs"]["input_ids"].shape[0] == 5  # "1+1=2" is shared by two pairs
    assert batch["chosen"].tolist() == [0, 0, 3] and batch["rejected"].tolist() == [1, 2, 4]
    labels = batch["lm_labels"]  # next-token targets on the chosen responses (answer and EOS) only
    assert (labels[0] != -100).sum() == 2 and (labels[1] != -100).sum() == 0


def test_prompt_groups_stay_together_in_batches():
    rows = [{"prompt": p} for p in "aabbbc"]
    groups = rows_by_prompt(rows)
    assert groups == [[0, 1], [2, 3, 4], [5]]
    sampler = BatchSampler(6, 3, seed=0, groups=groups)
    order = sampler.indices(0) + sampler.indices(1)
    assert sorted(order) == list(range(6))  # one epoch visits every row once
    for prompt in "abc":  # a prompt's rows are consecutive in the epoch's order
        positions = [k for k, i in enumerate(order) if rows[i]["prompt"] == prompt]
        assert positions == list(range(positions[0], positions[0] + len(positions)))
    assert rows_by_prompt([{"prompt": "a"}, {"prompt": "b"}]) is None  # no prompt repeats: plain shuffling


def _samples(path, n):
    rows = []
    for i in range(n):
        a, b = i % 7, (3 * i) % 5
        good, bad = str(a + b), str(a + b + 1)
        rows.append({"prompt": f"{a}+{b}=", "chosen": good, "rejected": bad})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_train_rm_on_a_policy_backbone_regularises_and_saves_an_ood_detector(tiny_causal_lm, tmp_path):
    data = _samples(tmp_path / "pairs.jsonl", 40)
    held = tmp_path / "samples.jsonl"  # policy samples with gold labels: evaluated as best-of-N and correlation
    held.write_text("".join(json.dumps({"prompt": f"{a}+1=", "samples": [str(a + 1), str(a + 2), ""],
                                        "correct": [True, False, False]}) + "\n" for a in range(6)))
    out = tmp_path / "rm"
    result = train(TrainRMConfig(kind="qrm", data=data, eval_data=str(held), backbone=tiny_causal_lm, output=str(out), steps=4,
                                 batch_size=8, eval_every=4, save_every=4, lr=1e-3, cpu_threads=1), progress=False)
    config = json.loads((out / "config.json").read_text())
    assert config["kind"] == "quantile" and config["lm_coef"] == 1.0  # qrm is the quantile kind; LM regulariser on by default
    events = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert any("lm_nll" in e and e["lm_nll"] > 0 for e in events if e["event"] == "train")
    assert {"best_of_n", "random_pick", "correlation", "within_prompt_correlation"} <= set(result["eval"])
    assert result["eval"]["random_pick"] == pytest.approx(1 / 3)
    rm = load_reward_model(out / "final", device="cpu")
    assert rm.ood is not None and (out / "final" / "ood.npz").exists()
    from reward_models.prompt_record import recorded_prompts, training_prompt_key

    # the prompts it was trained on are recorded beside it (rl reports its overlap with them): the 35 distinct ones
    assert recorded_prompts(out / "final") == {training_prompt_key(json.loads(x)["prompt"]) for x in open(data)}
    assert len(recorded_prompts(out / "final")) == 35
    report = rm.ood.check(["1+1=", "1+1="], ["2", "abc"])
    # each sample is flagged when its distance passes the detector's threshold; the fraction counts them
    assert report.flagged == [d > report.threshold for d in report.scores]
    assert report.n == 2 and report.flagged_fraction == sum(report.flagged) / 2


def test_embed_after_score_reuses_the_forward(tiny_causal_lm, monkeypatch):
    model = RewardModel.from_backbone(tiny_causal_lm, "bt")
    from reward_models.scoring import LoadedRewardModel

    _, tok = load_policy(tiny_causal_lm)
    loaded = LoadedRewardModel(model, tok)
    calls = []
    real = model.forward
    monkeypatch.setattr(model, "forward", lambda *a, **k: calls.append(1) or real(*a, **k))
    loaded.score(["1+1="], ["2"])
    emb = loaded.embed(["1+1="], ["2"])
    assert len(calls) == 1 and emb.shape == (1, 64)
    loaded.embed(["1+1="], ["3"])  # other inputs: a forward of their own
    assert len(calls) == 2


def test_stop_at_a_heldout_target(tiny_causal_lm, tmp_path):
    data = _samples(tmp_path / "pairs.jsonl", 40)
    out = tmp_path / "rm"
    result = train(TrainRMConfig(kind="bt", data=data, backbone=tiny_causal_lm, output=str(out), steps=50, batch_size=8,
                                 eval_every=2, save_every=50, lr=1e-3, cpu_threads=1, eval_fraction=0.3,
                                 stop_at="pairwise_accuracy=0.0"), progress=False)
    assert result["steps"] == 2 and (out / "final").exists() and (out / "checkpoints" / "step-2").exists()
    events = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert events[-1] == {**events[-1], "event": "end", "step": 2}
    with pytest.raises(ValueError, match="METRIC=VALUE"):
        TrainRMConfig(stop_at="pairwise_accuracy")
    with pytest.raises(ValueError, match="gives no 'auroc'"):
        train(TrainRMConfig(kind="bt", data=data, backbone=tiny_causal_lm, output=str(tmp_path / "rm2"), steps=4, batch_size=8,
                            eval_every=2, lr=1e-3, cpu_threads=1, eval_fraction=0.3, stop_at="auroc=0.9"), progress=False)


def test_a_causal_prm_reads_the_last_step_at_eos(tiny_causal_lm):
    _, tok = load_policy(tiny_causal_lm)
    enc = PairEncoder(tok, max_length=64, append_eos=True)
    item = enc.encode_steps("12+34+56=", ["12+34=46", "46+56=102"], " ")
    ids = item["input_ids"]
    assert item["step_positions"][0] == 9 + 7  # the last token of the first step ("6" of 46)
    assert item["step_positions"][1] == len(ids) - 1 and ids[-1] == tok.eos_token_id  # the last step: at EOS
    early = enc.encode_steps("12+34+56=", ["12+34=46"], " ")  # stopped after one step: judged at its EOS
    assert early["step_positions"] == [len(early["input_ids"]) - 1]


def test_a_quantile_rm_starts_from_a_trained_bt_rm(tiny_causal_lm, tmp_path):
    data = _samples(tmp_path / "pairs.jsonl", 40)
    bt = train(TrainRMConfig(kind="bt", data=data, backbone=tiny_causal_lm, output=str(tmp_path / "bt"), steps=2, batch_size=8,
                             eval_every=2, lr=1e-3, cpu_threads=1, eval_fraction=0.3), progress=False)
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps({"prompt": f"{a}+1=", "response": r, "graded": g}) + "\n"
                              for a in range(40) for r, g in ((str(a + 1), 1.0), (str(a + 2), 0.4))))
    start = RewardModel.from_reward_model(bt["final"], "quantile")
    trained_bt = RewardModel.from_pretrained(bt["final"])
    assert start.config.kind == "quantile" and start.config.lm_head == "tied" and start.config.append_eos
    assert all(torch.equal(a, b) for a, b in zip(start.backbone.state_dict().values(), trained_bt.backbone.state_dict().values()))
    out = train(TrainRMConfig(kind="qrm", init_from=bt["final"], data=str(scored), output=str(tmp_path / "qrm"), steps=2,
                              batch_size=8, eval_every=2, lr=1e-3, cpu_threads=1, eval_fraction=0.3), progress=False)
    assert load_reward_model(out["final"], device="cpu").kind == "quantile"
