"""`rewardlab sft`: loss on answer tokens only, a fixed step count with deterministic kernels (the
same data and seed give the same weights), a loadable model; the shipped default policy is checked
by its fingerprint and rebuilt by the command it records."""

import json

import pytest
import torch

from rewardlab.cli import main as rewardlab
from training.policy import load_policy
from training.sft import sft_batch
from training.tokenizer import char_tokenizer


def test_sft_batch_puts_the_loss_on_answer_and_eos_only():
    tok = char_tokenizer()
    batch = sft_batch(tok, ["1+2=", "10+20="], ["3", "30"])
    # row 0: "1+2=" (4 prompt tokens, ignored) then "3" and EOS, then 3 pads (ignored)
    labels = batch["labels"].tolist()
    assert labels[0] == [-100] * 4 + [tok.convert_tokens_to_ids("3"), tok.eos_token_id] + [-100] * 3
    assert labels[1][:6] == [-100] * 6 and labels[1][-1] == tok.eos_token_id
    assert batch["attention_mask"].sum().item() == 6 + 9


def test_sft_command_trains_and_saves(tmp_path, capsys):
    out = tmp_path / "sft"
    code = rewardlab(["sft", "--data", "arithmetic:digits=1", "--steps", "30", "--eval-every", "10",
                      "--batch-size", "32", "--eval-size", "8", "--output-dir", str(out)])
    assert code == 0
    log = [json.loads(x) for x in (out / "sft_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [10, 20, 30] and log[-1]["loss"] < log[0]["loss"]
    model, tok = load_policy(str(out / "model"))
    assert isinstance(model(torch.tensor([[4]])).logits, torch.Tensor)
    out_text = capsys.readouterr().out
    assert "held-out accuracy" in out_text and "weights sha256" in out_text


def test_sft_command_names_missing_columns(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"prompt": "1+1="}) + "\n")
    assert rewardlab(["sft", "--data", str(data), "--output-dir", str(tmp_path / "o")]) == 2
    assert "missing column(s) ['answer']" in capsys.readouterr().err


def test_sft_trains_on_worked_solutions_and_scores_the_final_answer():
    from training.sft import is_correct, target

    row = {"prompt": "1+2+3=", "answer": "6", "solution": "3+1=4 4+2=6"}
    assert target(row) == "3+1=4 4+2=6" and target({"answer": 7}) == "7"
    assert is_correct("1+2=3 3+3=6", row)  # another path to the same answer counts
    assert not is_correct("3+1=4 4+2=7", row) and not is_correct("", row)
    assert is_correct(" 6", {"answer": "6"}) and not is_correct("3+3=6", {"answer": "6"})  # no solution: exact match


def test_sft_command_on_worked_solutions(tmp_path):
    out = tmp_path / "sft"
    code = rewardlab(["sft", "--data", "arithmetic:digits=1,n_terms=3,worked=1", "--steps", "10", "--eval-every",
                      "10", "--batch-size", "16", "--eval-size", "4", "--output-dir", str(out)])
    assert code == 0
    assert json.loads((out / "sft_log.jsonl").read_text().splitlines()[-1])["step"] == 10


def test_sft_runs_exactly_its_steps_and_the_same_seed_gives_the_same_weights():
    from training.policy import tiny_policy
    from training.sft import SFTConfig, train_sft, weights_sha256
    from verifiers.tasks import ArithmeticTask

    task, cfg = ArithmeticTask(digits=1), SFTConfig(steps=12, eval_every=5, batch_size=16, eval_size=4, lr=3e-3)
    runs = []
    for seed in (0, 0, 1):
        model, tok = tiny_policy(seed=0)
        before = weights_sha256(model)
        runs.append(train_sft(model, tok, SFTConfig(**{**cfg.__dict__, "seed": seed}), task=task))
        assert runs[-1]["weights_sha256"] == weights_sha256(model) != before
    assert [r["steps"] for r in runs] == [12, 12, 12] and [h["step"] for h in runs[0]["history"]] == [5, 10, 12]
    assert runs[0]["weights_sha256"] == runs[1]["weights_sha256"]  # bit for bit
    assert runs[2]["weights_sha256"] != runs[0]["weights_sha256"]  # another data order


def test_sft_names_the_removed_stop_rules_and_checks_min_accuracy(tmp_path, capsys):
    for flag, hint in (("--target-accuracy", "--min-accuracy"), ("--max-steps", "--steps N")):
        assert rewardlab(["sft", flag, "0.5", "--output-dir", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert f"{flag} was removed" in err and hint in err
    assert not (tmp_path / "x").exists()
    out = tmp_path / "sft"
    code = rewardlab(["sft", "--data", "arithmetic:digits=1", "--steps", "3", "--batch-size", "8", "--eval-size", "4",
                      "--min-accuracy", "0.99", "--output-dir", str(out)])
    assert code == 1 and "below --min-accuracy 99.0% after 3 steps" in capsys.readouterr().err
    assert (out / "model" / "config.json").exists()  # the work is kept


def test_the_policy_builder_and_rewardlab_sft_give_the_same_weights(tmp_path, monkeypatch):
    from training.policy import DefaultPolicySpec, default_policy_path

    spec = DefaultPolicySpec(digits=2, batch_size=16, steps=15, lr=3e-3)
    path = default_policy_path(spec)
    built = json.loads((path / "rewardlab.json").read_text())
    assert built["source"] == "built here by SFT" and built["sft"]["steps"] == 15
    assert built["rebuild"].startswith("rewardlab sft --data arithmetic:digits=2,n_terms=2,ops=+ ")
    assert built["built_with"]["torch"] == torch.__version__ and "matches_shipped_policy" not in built
    out = tmp_path / "sft"
    assert rewardlab(["sft", *spec.sft_args(), "--eval-size", "8", "--output-dir", str(out)]) == 0
    assert json.loads((out / "sft_result.json").read_text())["weights_sha256"] == built["weights_sha256"]


def test_the_shipped_default_policy_is_copied_after_its_fingerprint_is_checked(tmp_path, monkeypatch, capsys):
    import shutil

    import training.policy as policy
    from training.sft import weights_sha256

    monkeypatch.setenv("REWARDLAB_CACHE", str(tmp_path / "first"))  # empty: the first use copies it
    path = policy.default_policy_path()
    assert f"default policy (tiny Llama, {policy.DEFAULT_POLICY.steps} SFT steps" in capsys.readouterr().out
    info = json.loads((path / "rewardlab.json").read_text())
    assert info["weights_sha256"] == policy.SHIPPED_POLICY_SHA256 and info["source"].startswith("shipped with rewardlab")
    assert info["rebuild"] == "rewardlab sft " + " ".join(policy.DEFAULT_POLICY.sft_args()) + " --output-dir runs/default-policy"
    model, _ = load_policy(str(path))
    assert weights_sha256(model) == policy.SHIPPED_POLICY_SHA256
    assert policy.default_policy_path() == path and "default policy" not in capsys.readouterr().out  # cached
    # a changed shipped file is refused, and nothing is cached
    tampered = tmp_path / "shipped"
    shutil.copytree(policy.SHIPPED_POLICY, tampered)
    model.model.embed_tokens.weight.data[0, 0] += 1e-3
    model.save_pretrained(tampered)
    monkeypatch.setattr(policy, "SHIPPED_POLICY", tampered)
    monkeypatch.setenv("REWARDLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(RuntimeError, match="not the one this version of rewardlab was released with"):
        policy.default_policy_path()
    assert not list((tmp_path / "cache").glob("policy-*/config.json"))
