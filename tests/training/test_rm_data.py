"""`rewardlab rm-data`: a policy's own samples, labelled by the gold verifier, in the shapes
train-rm reads; near-misses verified wrong; step labels by checking and by Monte-Carlo rollouts;
a killed run resumes to the same files."""

from __future__ import annotations

import json
import random

import pytest

from rewardlab.cli import main as rewardlab
from training.rm_data import RMDataConfig, Sampler, label_shard, near_miss_variants
from verifiers.closeness import closeness
from training.step_labels import check_steps, mc_labels

BASE = ["rm-data", "--n-prompts", "40", "--eval-prompts", "10", "--samples", "4", "--max-new-tokens", "4",
        "--data", "arithmetic:digits=1", "--shard-prompts", "16"]


def _jsonl(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_labels_match_the_gold_answer_and_files_have_train_rm_shapes(tiny_dir, tmp_path, capsys):
    out = tmp_path / "data"
    assert rewardlab(BASE + ["--model", str(tiny_dir), "--output-dir", str(out)]) == 0
    assert "preference_pairs" in capsys.readouterr().out  # the label-balance table
    records = _jsonl(out / "train" / "samples.jsonl")
    assert len(records) == 40 and len(_jsonl(out / "test" / "samples.jsonl")) == 10
    from rewards import build_reward

    gold = build_reward("verifier:math")
    for rec in records:
        verdicts = gold([rec["prompt"]] * len(rec["samples"]), rec["samples"], answer=[rec["answer"]] * len(rec["samples"]))
        for text, ok, near, reward in zip(rec["samples"], rec["correct"], rec["near_miss"], verdicts):
            assert ok == (reward == 1.0)  # the gold verifier's verdict (math-verify reads '8(44' as 8, like a reader who stops there)
            assert ok == (text.strip() == rec["answer"]) or not text.strip().isdigit()  # on plain numbers: an exact match
            assert not (near and ok)  # a near-miss is kept only when the gold reward says it is wrong
    for row in _jsonl(out / "train" / "preference.jsonl") if (out / "train" / "preference.jsonl").exists() else []:
        rec = next(r for r in records if r["prompt"] == row["prompt"])
        assert gold([row["prompt"]] * 2, [row["chosen"], row["rejected"]], answer=[rec["answer"]] * 2) == [1.0, 0.0]
    scored = _jsonl(out / "train" / "scored.jsonl")
    assert all(r["correct"] in (0.0, 1.0) and 0.0 <= r["closeness"] <= 1.0 for r in scored)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["train"]["prompts"] == 40 and summary["train"]["samples"] == 160
    assert not (out / "train" / "stepwise.jsonl").exists()  # direct answers have no steps


def test_a_killed_run_resumes_to_the_same_files(tiny_dir, tmp_path):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    assert rewardlab(BASE + ["--model", str(tiny_dir), "--output-dir", str(straight)]) == 0
    assert rewardlab(BASE + ["--model", str(tiny_dir), "--output-dir", str(killed)]) == 0
    samples = killed / "train" / "samples.jsonl"
    lines = samples.read_text().splitlines(keepends=True)
    samples.write_text("".join(lines[:20]) + lines[20][:30])  # killed inside the second shard, mid-line
    (killed / "train" / "preference.jsonl").unlink(missing_ok=True)
    assert rewardlab(BASE + ["--model", str(tiny_dir), "--output-dir", str(killed)]) == 2  # refuses to overwrite
    assert rewardlab(BASE + ["--model", str(tiny_dir), "--output-dir", str(killed), "--resume"]) == 0
    for name in ("samples.jsonl", "scored.jsonl"):
        assert (killed / "train" / name).read_text() == (straight / "train" / name).read_text(), name


def test_near_misses_change_the_final_number():
    variants = near_miss_variants("97+5=102 102+41=143", random.Random(0), 20)
    assert variants and all(v.startswith("97+5=102 102+41=") and v != "97+5=102 102+41=143" for v in variants)
    assert "97+5=102 102+41=134" in variants and "97+5=102 102+41=142" in variants  # digit swap, -1
    assert near_miss_variants("no number", random.Random(0), 4) == []


@pytest.mark.parametrize("completion,answer,expected", [
    ("579", "579", 1.0),  # right
    ("600", "579", 1 - (21 / 579) / 0.1),  # off by 3.6%: partial
    ("666678", "579", 0.0),  # the length-filling hack: badly wrong
    ("", "579", 0.0),  # no answer
])
def test_closeness(completion, answer, expected):
    assert closeness(completion, answer) == pytest.approx(expected)


@pytest.mark.parametrize("steps,answer,labels", [
    (["56+12=68", "68+34=102"], "102", [True, True]),  # any order of the terms
    (["12+34=46", "46+56=103"], "102", [True, False]),  # a slip in the last step
    (["12+34=47", "47+56=103"], "102", [False, False]),  # once wrong, later steps are wrong
    (["12+12=24", "24+56=80"], "102", [False, False]),  # a term used twice
    (["12+34=46", "so", "46+56=102"], "102", [True, False, False]),  # a step the checker cannot read
    (["12+34=46", "46+56=102", "102+0=102"], "102", [True, True, False]),  # padding with a useless step
])
def test_check_steps(steps, answer, labels):
    assert check_steps("12+34+56=", steps, answer) == labels


def test_mc_labels_are_math_shepherd_labels():
    hard, soft = mc_labels([[True, False, False, False], [False] * 4], False)
    assert hard == [True, False, False] and soft == [0.25, 0.0, 0.0]


class ScriptedSampler(Sampler):
    """Completions chosen by the test: from a prefix ending in a right step, the right rest."""

    def complete(self, prompts, n):
        out = []
        for p in prompts:
            if p.endswith("12+34+56="):
                out.append(["12+34=46 46+56=102", "12+34=47 47+56=103"])
            elif p.endswith("12+34=46 "):
                out.append(["46+56=102"] * n)
            elif p.endswith("12+34=47 "):
                out.append(["47+56=103"] * n)
            else:
                out.append(["x"] * n)
        return out


def test_monte_carlo_step_labels(tmp_path):
    from rewards import build_reward

    cfg = RMDataConfig(samples=2, mc_rollouts=2, step_labels="mc")
    row = {"prompt": "12+34+56=", "answer": "102"}
    recs = label_shard([row], ScriptedSampler(None, None, cfg), build_reward("verifier:math"), cfg, " ", "mc", 0,
                       random.Random(0))
    rec = recs[0]
    assert rec["samples"] == ["12+34=46 46+56=102", "12+34=47 47+56=103"] and rec["correct"] == [True, False]
    assert rec["step_labels"] == [[True, True], [False, False]]  # from "12+34=47 " no rollout reaches 102
    assert rec["step_soft_labels"] == [[1.0, 1.0], [0.0, 0.0]]


def test_truncated_variants_are_early_stops():
    from training.rm_data import truncated_variants

    assert truncated_variants("1+2=3 3+4=7 7+5=12", " ") == ["1+2=3", "1+2=3 3+4=7"]
    assert truncated_variants("579", " ") == []


class WrongSampler(Sampler):
    """A policy that always answers 1."""

    def complete(self, prompts, n):
        return [["1"] * n for _ in prompts]


def test_gold_completions_give_a_right_answer_where_the_policy_has_none():
    from rewards import build_reward
    from training.rm_data import balance, derive_rows

    cfg = RMDataConfig(samples=2, near_misses=2, gold_completions="answer")
    rows = [{"prompt": "12+34=", "answer": "46"}, {"prompt": "0+1=", "answer": "1"}]
    recs = label_shard(rows, WrongSampler(None, None, cfg), build_reward("verifier:math"), cfg, " ", "none", 2,
                       random.Random(0), gold_completions="answer")
    wrong, right = recs
    assert wrong["samples"][:3] == ["1", "1", "46"] and wrong["correct"][:3] == [False, False, True]
    assert wrong["from_gold"][:3] == [False, False, True] and any(wrong["near_miss"])  # near misses of the gold
    assert "from_gold" not in right and right["correct"][:2] == [True, True]  # the policy was right: nothing added
    out = derive_rows(recs, " ", 0, random.Random(0))
    assert {"prompt": "12+34=", "chosen": "46", "rejected": "1"} in out["preference"]
    summary = balance(recs, out)
    assert summary["gold_completions"] == 1 and summary["samples"] == 4 and summary["prompts_all_wrong"] == 1


def test_a_gold_completions_column_that_does_not_exist_is_named(tmp_path, capsys):
    assert rewardlab(BASE + ["--gold-completions", "solutoin", "--output-dir", str(tmp_path / "d")]) == 2
    assert "--gold-completions 'solutoin': the rows of --data have no such column" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()  # nothing written

