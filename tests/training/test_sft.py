"""`rewardlab sft`: loss on answer tokens only, stops at the accuracy target, saves a loadable model."""

import json

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
    code = rewardlab(["sft", "--data", "arithmetic:digits=1", "--max-steps", "30", "--eval-every", "10",
                      "--batch-size", "32", "--eval-size", "8", "--output-dir", str(out)])
    assert code == 0
    log = [json.loads(x) for x in (out / "sft_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [10, 20, 30] and log[-1]["loss"] < log[0]["loss"]
    model, tok = load_policy(str(out / "model"))
    assert isinstance(model(torch.tensor([[4]])).logits, torch.Tensor)
    assert "held-out accuracy" in capsys.readouterr().out


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
    code = rewardlab(["sft", "--data", "arithmetic:digits=1,n_terms=3,worked=1", "--max-steps", "10", "--eval-every",
                      "10", "--batch-size", "16", "--eval-size", "4", "--output-dir", str(out)])
    assert code == 0
    assert json.loads((out / "sft_log.jsonl").read_text().splitlines()[-1])["step"] == 10
