"""`rewardlab train-rm`: bad data stops the run, resume continues exactly, every kind learns."""

from __future__ import annotations

import json

import pytest
import torch

from reward_models import load_reward_model
from reward_models.train import TrainRMConfig, train
from rewardlab.runs import STATE_FILE, resume_checkpoint
from rewardlab.cli import main


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


GOOD_PREF = {"prompt": "1+1=", "chosen": "The answer is 2.", "rejected": "The answer is 3."}
GOOD_STEP = {"prompt": "1+1=", "completions": ["1+1 = 2", "The answer is 2."], "labels": [True, True]}
GOOD_SCORED = {"prompt": "1+1=", "response": "The answer is 2.", "quality": 0.9}


@pytest.mark.parametrize(
    "kind, bad_row, message",
    [
        ("bt", {"prompt": "1+1=", "chosen": "2"}, "row 3: column 'rejected' is missing"),  # missing column
        ("bt", {**GOOD_PREF, "chosen": "   "}, "row 3: column 'chosen' is empty"),  # empty response
        ("prm", {**GOOD_STEP, "labels": [True]}, "row 3: column 'labels' has 1 labels for 2 steps"),  # label count
        ("quantile", {**GOOD_SCORED, "quality": "high"}, "row 3: column 'quality' is 'high', not a finite number"),  # non-numeric
        ("prm", {**GOOD_STEP, "completions": "1+1 = 2"}, "row 3: column 'completions' must be a non-empty list"),  # steps as one string
    ],
)
def test_bad_data_stops_before_training(tmp_path, capsys, kind, bad_row, message):
    good = {"bt": GOOD_PREF, "prm": GOOD_STEP, "quantile": GOOD_SCORED}[kind]
    data = _write_jsonl(tmp_path / "data.jsonl", [good, good, bad_row, good])
    out = tmp_path / "run"
    code = main(["train-rm", "--kind", kind, "--data", data, "--output", str(out), "--backbone", "unused"])
    err = capsys.readouterr().err
    assert code == 2
    assert str(tmp_path / "data.jsonl") in err and message in err  # names the file, the row and the column
    assert not (out / "checkpoints").exists()


def test_wrong_format_for_kind_is_explained(tmp_path, capsys):
    data = _write_jsonl(tmp_path / "d.jsonl", [GOOD_STEP])
    assert main(["train-rm", "--kind", "bt", "--data", data, "--output", str(tmp_path / "r")]) == 2
    assert "needs preference (chosen, rejected) columns" in capsys.readouterr().err


def test_bad_option_is_explained():
    with pytest.raises(ValueError, match="--steps"):
        TrainRMConfig(kind="bt", steps=0)


def _cfg(tmp_path, backbone, name, **kw):
    base = dict(kind="bt", backbone=backbone, output=str(tmp_path / name), steps=6, batch_size=4, n_train=24, n_eval=10,
                eval_every=3, save_every=2, log_every=1, lr=1e-3, max_seq_length=64)
    return TrainRMConfig(**{**base, **kw})


def test_killed_run_resumes_to_the_same_weights(tmp_path, tiny_backbone):
    straight = train(_cfg(tmp_path, tiny_backbone, "straight"), progress=False)
    # a run killed after its step-4 checkpoint: later checkpoints and the final model never got written
    killed = tmp_path / "killed"
    train(_cfg(tmp_path, tiny_backbone, "killed"), progress=False)
    import shutil

    shutil.rmtree(killed / "final")
    shutil.rmtree(killed / "checkpoints" / "step-6")
    (killed / "checkpoints" / ".tmp-step-6").mkdir()  # a half-written temp dir is ignored
    said = []
    assert resume_checkpoint(killed / "checkpoints", log=said.append, command="train-rm").name == "step-4"
    assert "falling back to step-4" in said[0]  # `latest` names the step-6 checkpoint, which is gone
    resumed = train(_cfg(tmp_path, tiny_backbone, "killed", resume=True), progress=False)
    a = load_reward_model(straight["final"], device="cpu").model.state_dict()
    b = load_reward_model(resumed["final"], device="cpu").model.state_dict()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    events = [json.loads(line) for line in (killed / "metrics.jsonl").read_text().splitlines()]
    assert [e["step"] for e in events if e["event"] == "start"] == [0, 4]
    assert {"loss", "lr", "samples_per_s", "bt_nll"} <= set(next(e for e in events if e["event"] == "train"))
    with pytest.raises(FileExistsError, match="--resume"):
        train(_cfg(tmp_path, tiny_backbone, "straight"), progress=False)


# kind -> (metric, threshold): held-out accuracy must be clearly above chance (0.5; for prm the
# step AUROC, whose chance level is 0.5 whatever the label balance). Measured with --seed 0-4 on one
# 2-core machine (this test is seed 0; 120 held-out rows, one standard error ~0.04):
#   bt pairwise 0.733 0.639 0.773 0.750 0.742; quantile pairwise 0.667 0.700 0.712 0.817 0.683;
#   prm step AUROC 0.763 0.752 0.738 0.723 0.766. Each bound is below the worst seed with a margin.
SMOKE = {"bt": ("pairwise_accuracy", 0.6), "quantile": ("pairwise_accuracy", 0.6), "prm": ("step_auroc", 0.6)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(SMOKE))
def test_every_kind_learns_above_chance_on_a_tiny_backbone(tmp_path, tiny_backbone, kind):
    cfg = _cfg(tmp_path, tiny_backbone, kind, kind=kind, steps=120, batch_size=16, n_train=400, n_eval=120,
               eval_every=120, save_every=120, log_every=20, lr=2e-3, max_seq_length=64)
    result = train(cfg, progress=False)
    metric, threshold = SMOKE[kind]
    assert result["eval"][metric] > threshold, result["eval"]
    rm = load_reward_model(result["final"], device="cpu")
    assert rm.kind == kind


@pytest.mark.slow
def test_minilm_bt_smoke_run(tmp_path):
    """The default backbone (the packaged MiniLM) on generated data, few steps. Pairwise accuracy
    over --seed 0-4: 0.76 0.77 0.74 0.77 0.80 (bound 0.6); missing answers always 1.0."""
    cfg = TrainRMConfig(kind="bt", output=str(tmp_path / "minilm"), steps=40, batch_size=16, n_train=320, n_eval=100,
                        eval_every=40, save_every=40, lr=1e-4, warmup_steps=5, max_seq_length=64)
    result = train(cfg, progress=False)
    assert result["eval"]["pairwise_accuracy"] > 0.6, result["eval"]
    assert result["eval"]["pairwise_accuracy/missing_answer"] == 1.0  # an easy negative is always separated


def test_quantile_from_a_preference_file_with_a_held_out_share(tmp_path, tiny_backbone):
    """QRM trained with Bradley-Terry on the mean, from a user file split 80/20 by prompt."""
    from reward_models.data import make_preference_rows

    rows = [{**r, "margin": 0.5} for r in make_preference_rows(60, seed=1)]
    data = _write_jsonl(tmp_path / "prefs.jsonl", rows)
    cfg = _cfg(tmp_path, tiny_backbone, "qrm-pref", kind="quantile", data=data, eval_fraction=0.2, steps=3, eval_every=3, save_every=3)
    result = train(cfg, progress=False)
    assert result["format"] == "preference" and result["n_train"] + result["n_eval"] == len(rows)
    # the logged accuracy is the final model's, counted by hand on the prompts the hash held out
    from reward_models.loading import heldout_split

    rm = load_reward_model(result["final"], device="cpu")
    _, held = heldout_split(rows, 0.2)
    chosen = rm.score([r["prompt"] for r in held], [r["chosen"] for r in held])
    rejected = rm.score([r["prompt"] for r in held], [r["rejected"] for r in held])
    wins = [c.mean > r.mean for c, r in zip(chosen, rejected)]
    assert len(held) == result["n_eval"] and result["eval"]["pairwise_accuracy"] == pytest.approx(sum(wins) / len(wins))
    score = rm.score(["1+1="], ["The answer is 2."])[0]
    assert len(score.quantiles) == 19 and score.gate == {"score": 1.0}


@pytest.mark.parametrize("kind, key", [("bt", "rewards"), ("quantile", "quantiles"), ("prm", "step_logits")])
def test_length_sorted_chunks_give_the_same_outputs(tiny_backbone, kind, key):
    from reward_models.modeling import RewardModel
    from reward_models.batches import forward_by_length

    model = RewardModel.from_backbone(tiny_backbone, kind).eval()
    lengths = [5, 12, 3, 9, 7, 12, 4, 6]  # right-padded rows of different lengths
    ids = torch.zeros(8, 12, dtype=torch.long)
    mask = torch.zeros(8, 12, dtype=torch.long)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(1000, 2000, (n,))
        mask[i, :n] = 1
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    with torch.no_grad():
        plain = model(**inputs)[key]
        chunked = forward_by_length(model, inputs, 3)[key]
    if key == "step_logits":  # padding positions carry no label: compare real tokens only
        plain, chunked = plain[mask.bool()], chunked[mask.bool()]
    assert torch.allclose(plain, chunked, atol=1e-5)


def _ragged_batch(vocab: int, lengths=(5, 12, 3, 9, 7, 12, 4, 6)) -> dict[str, torch.Tensor]:
    """Right-padded rows of different lengths."""
    torch.manual_seed(0)
    ids = torch.zeros(len(lengths), max(lengths), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(3, vocab, (n,))
        mask[i, :n] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": (torch.arange(ids.shape[1]) >= 4).long().expand_as(ids) * mask}


@pytest.mark.parametrize("backbone", ["tiny_backbone", "tiny_causal_lm"])  # bidirectional, and causal attention
@pytest.mark.parametrize("kind, key", [("bt", "rewards"), ("prm", "step_logits")])
def test_padding_free_forward_gives_the_padded_outputs_and_gradients(request, backbone, kind, key):
    from reward_models.backbones import padding_free_mismatch
    from reward_models.batches import forward_by_length
    from reward_models.modeling import RewardModel

    torch.manual_seed(0)
    model = RewardModel.from_backbone(request.getfixturevalue(backbone), kind, keep_lm_head=False)
    inputs = _ragged_batch(model.backbone.config.vocab_size)
    real = inputs["attention_mask"].bool()
    grads = []
    for padding_free in (False, True):
        model.zero_grad()
        out = forward_by_length(model, inputs, 1, padding_free=padding_free, return_hidden=True)
        values = out[key][real] if key == "step_logits" else out[key]
        (values.square().sum() + out["hidden"][real].sum()).backward()
        # the packed forward never computes padding positions (zeros there); the padded one does
        assert bool((out["hidden"][~real] == 0).all()) == padding_free
        grads.append((values.detach(), out["hidden"][real].detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
    (plain, plain_hidden, plain_grads), (packed, packed_hidden, packed_grads) = grads
    assert torch.allclose(plain, packed, atol=1e-5) and torch.allclose(plain_hidden, packed_hidden, atol=1e-5)
    assert plain_grads.keys() == packed_grads.keys() and len(plain_grads) > 4
    for name, g in plain_grads.items():
        assert torch.allclose(g, packed_grads[name], rtol=1e-4, atol=1e-6), name
    keep = {k: v for k, v in inputs.items() if k != "token_type_ids" or model.uses_token_types}
    assert padding_free_mismatch(model.backbone, keep) is None


@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory) -> str:
    """RoBERTa numbers positions from padding_idx + 1 (computed from the ids): packed positions from 0 differ."""
    from transformers import RobertaConfig, RobertaModel

    from reward_models.backbones import default_backbone_path, load_tokenizer

    tokenizer = load_tokenizer(default_backbone_path())
    config = RobertaConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=64, max_position_embeddings=258, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-roberta")
    RobertaModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def test_padding_free_is_checked_and_falls_back_with_a_note(tmp_path, tiny_backbone, tiny_roberta, capsys):
    from reward_models.backbones import padding_free_mismatch
    from reward_models.modeling import RewardModel

    model = RewardModel.from_backbone(tiny_roberta, "bt").eval()
    inputs = _ragged_batch(1000)
    why = padding_free_mismatch(model.backbone, {k: v for k, v in inputs.items() if k != "token_type_ids"})
    assert why is not None and "differ from the padded forward" in why
    result = train(_cfg(tmp_path, tiny_roberta, "roberta", steps=2, eval_every=2, save_every=2, padding_free=True), progress=False)
    start = json.loads((tmp_path / "roberta" / "metrics.jsonl").read_text().splitlines()[0])
    assert start["event"] == "start" and start["padding_free"] is False and result["steps"] == 2
    assert "padding-free batches off (its hidden states differ" in capsys.readouterr().out
    train(_cfg(tmp_path, tiny_backbone, "bert", steps=2, eval_every=2, save_every=2, padding_free=True), progress=False)
    start = json.loads((tmp_path / "bert" / "metrics.jsonl").read_text().splitlines()[0])
    assert start["padding_free"] is True
    off = train(_cfg(tmp_path, tiny_backbone, "bert-off", steps=2, eval_every=2, save_every=2), progress=False)  # the default
    start = json.loads((tmp_path / "bert-off" / "metrics.jsonl").read_text().splitlines()[0])
    assert start["padding_free"] is False and off["steps"] == 2


class _RunsCode:
    """A pickle payload that makes a directory when unpickled: the stand-in for a tampered checkpoint."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.mkdir, (self.marker,))


def _killed_after_step_2(tmp_path, tiny_backbone, name):
    """A 4-step run that checkpoints every 2 steps, 'killed' after its step-2 checkpoint: the step-4
    checkpoint and the final model never got written, but metrics.jsonl already has steps 3 and 4."""
    import shutil

    out = tmp_path / name
    train(_cfg(tmp_path, tiny_backbone, name, steps=4, eval_every=4), progress=False)
    shutil.rmtree(out / "final")
    shutil.rmtree(out / "checkpoints" / "step-4")
    return out


def test_resume_refuses_a_trainer_state_that_runs_code(tmp_path, tiny_backbone):
    out = _killed_after_step_2(tmp_path, tiny_backbone, "tampered")
    marker = tmp_path / "code-ran"
    ckpt = out / "checkpoints" / "step-2"
    torch.save({"optimizer": _RunsCode(str(marker)), "scheduler": {}, "step": 2}, ckpt / "trainer_state.pt")
    manifest = json.loads((ckpt / STATE_FILE).read_text())  # the forger also fixes the file list
    manifest["files"]["trainer_state.pt"] = (ckpt / "trainer_state.pt").stat().st_size
    (ckpt / STATE_FILE).write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="trainer_state.pt"):
        train(_cfg(tmp_path, tiny_backbone, "tampered", steps=4, eval_every=4, resume=True), progress=False)
    assert not marker.exists()  # loaded with weights_only=True: the payload never ran


def test_resume_logs_each_step_once(tmp_path, tiny_backbone):
    out = _killed_after_step_2(tmp_path, tiny_backbone, "twice")
    train(_cfg(tmp_path, tiny_backbone, "twice", steps=4, eval_every=4, resume=True), progress=False)
    events = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [e["step"] for e in events if e["event"] == "train"] == [1, 2, 3, 4]  # 3 and 4 were logged before the kill
    assert [e["step"] for e in events if e["event"] == "eval"] == [4]
    assert [e["event"] for e in events].count("end") == 1


@pytest.mark.parametrize("fast", [True, False])
def test_auto_precision_is_recorded_and_bf16_freezes_the_embeddings(tmp_path, tiny_backbone, monkeypatch, fast):
    """--mixed-precision auto (the default) trains in bf16 where the CPU does it fast, fp32 elsewhere;
    config.json says which, the start event has the CPU's bf16 flags, and the bf16 run keeps the
    token embeddings fixed (--freeze-embeddings' default) while the rest of the model learns."""
    import rewardlab.runtime as runtime
    from reward_models.modeling import RewardModel

    monkeypatch.setattr(runtime, "cpu_bf16_support", lambda *a: {"amx_bf16": fast, "avx512_bf16": False, "mkldnn_bf16": True, "fast": fast})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = _cfg(tmp_path, tiny_backbone, "bt", steps=6, batch_size=8, n_train=64, n_eval=32, eval_every=6, save_every=6, log_every=3, lr=1e-2)
    result = train(cfg, progress=False)
    out = tmp_path / "bt"
    used = "bf16" if fast else "no"
    assert json.loads((out / "config.json").read_text())["mixed_precision"] == used
    start = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert start["mixed_precision_asked"] == "auto" and start["mixed_precision"] == used and start["cpu_bf16"]["fast"] is fast
    before = RewardModel.from_backbone(tiny_backbone, "bt")
    after = RewardModel.from_pretrained(result["final"])
    same = lambda name: torch.equal(getattr(before.backbone, name)().weight, getattr(after.backbone, name)().weight)  # noqa: E731
    assert same("get_input_embeddings") is fast  # frozen in bf16 only
    assert not torch.equal(before.backbone.encoder.layer[0].attention.self.query.weight, after.backbone.encoder.layer[0].attention.self.query.weight)
    assert after.backbone.get_input_embeddings().weight.dtype == torch.float32  # master weights stay fp32
