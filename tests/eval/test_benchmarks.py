"""Benchmark formats in `eval-rm` (RewardBench, RewardBench 2, ProcessBench): the scoring rules
with hand-computed values, the shipped samples end to end, the hub names; and eval-rm on the
user's own data (chat pairs; the OOD reference said, not generated arithmetic)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from eval.benchmarks import (HUB_NAMES, best_of_n, detect_benchmark, processbench_scores, rewardbench2_scores, rewardbench_scores,
                             run_processbench, ties_score)
from rewardlab.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
sys.path.insert(0, str(ROOT / "tests" / "rewards"))
from rm_fixtures import make_tiny_rm  # noqa: E402


# ---------------------------------------------------------------- scoring rules, hand-computed
def test_rewardbench_sections_weight_subsets_by_their_example_counts():
    r = rewardbench_scores({"alpacaeval-easy": [1, 1, 0, 1], "mt-bench-easy": [0, 0],  # Chat: (0.75*100 + 0*28) / 128
                            "math-prm": [1, 0], "hep-python": [1, 1],  # Reasoning: (0.5*984 + 1*164) / 1148
                            "refusals-dangerous": [1], "mt-bench-hard": [0], "my-own-subset": [1]})
    assert r["sections"]["Chat"] == pytest.approx(75 / 128)
    assert r["sections"]["Reasoning"] == pytest.approx((492 + 164) / 1148)
    assert r["sections"]["Safety"] == 1.0 and r["sections"]["Chat Hard"] == 0.0
    assert r["overall"] == pytest.approx((75 / 128 + 656 / 1148 + 1 + 0) / 4)
    assert r["unweighted_subsets"] == ["my-own-subset"]  # reported, not weighted


@pytest.mark.parametrize("chosen, rejected, expected", [
    (2.0, [1.0, 0.0, -1.0], 1.0),  # best of 4
    (2.0, [2.0, 0.0, -1.0], 0.5),  # tied at the top with one: 1/2
    (2.0, [2.0, 2.0, 2.0], 0.25),
    (0.5, [1.0, 0.0, -1.0], 0.0),
])
def test_rewardbench2_best_of_4(chosen, rejected, expected):
    assert best_of_n(chosen, rejected) == expected


def test_rewardbench2_ties_composite():
    # ref: one correct (3) vs wrong (1, 0): accurate, margin 2. tied: correct (3, 2.5) vs wrong (1, 0): accurate,
    # spread 0.5, margin 1.5 -> preferred (1.5 > 0.5) and hard (min(2, 1.5) > 0.5); margin term tanh(1.5/0.5 - 1)
    t = ties_score({"ref:0": ([3.0], [1.0, 0.0]), "tied:0": ([3.0, 2.5], [1.0, 0.0])})
    assert t["score"] == pytest.approx(0.3 + 0.3 + 0.2 + 0.2 + 0.01 * math.tanh(2.0))
    # tied correct answers spread wider than their margin over the wrong ones: not preferred
    t = ties_score({"ref:0": ([3.0], [1.0]), "tied:0": ([3.0, 1.5], [1.0])})
    assert (t["correctness_preferred"], t["tied_accuracy"]) == (0.0, 1.0)
    rows = [{"subset": "Math", "id": "1"}, {"subset": "Math", "id": "2"}, {"subset": "Ties", "id": "ref:0"}, {"subset": "Ties", "id": "tied:0"}]
    r = rewardbench2_scores(rows, [[2.0], [0.0], [3.0], [3.0, 2.5]], [[1.0, 0.0, 1.5], [1.0, 0.0, 0.5], [1.0, 0.0], [1.0, 0.0]])
    assert r["subsets"]["Math"] == 0.5 and r["overall"] == pytest.approx((0.5 + r["ties"]["score"]) / 2)


@pytest.mark.parametrize("predicted, labels, err, ok", [
    ([-1, 2, 1, -1], [-1, 2, 3, 1], 1 / 3, 1.0),  # erroneous: 1 of 3 located exactly; correct: 1 of 1 left alone
    ([0, -1], [-1, -1], math.nan, 0.5),  # no erroneous samples: accuracy undefined
    ([1, 1], [1, -1], 1.0, 0.0),  # flags a correct solution: F1 0
])
def test_processbench_f1_is_the_harmonic_mean(predicted, labels, err, ok):
    r = processbench_scores(predicted, labels)
    assert (r["error_accuracy"] == pytest.approx(err, nan_ok=True), r["correct_accuracy"]) == (True, ok)
    expected_f1 = 0.0 if math.isnan(err) or err + ok == 0 else 2 * err * ok / (err + ok)
    assert r["f1"] == pytest.approx(expected_f1) if not math.isnan(err) else math.isnan(r["f1"]) or r["f1"] == 0.0


def test_processbench_first_error_from_step_scores():
    class PRM:
        kind = "prm"

        def score(self, prompts, steps, batch_size=32):
            return [SimpleNamespace(step_probs=[0.9 if "ok" in s else 0.2 for s in item]) for item in steps]

    rows = [{"problem": "p", "steps": ["ok", "bad", "ok"], "label": 1, "split": "gsm8k"},
            {"problem": "p", "steps": ["ok", "ok"], "label": -1, "split": "gsm8k"},
            {"problem": "p", "steps": ["ok", "ok"], "label": 0, "split": "math"}]
    r = run_processbench(PRM(), rows, 8, "x", threshold=0.5)
    assert r["predicted"] == [1, -1, -1]
    assert r["splits"]["gsm8k"]["f1"] == 1.0 and r["splits"]["math"]["error_accuracy"] == 0.0


@pytest.mark.parametrize("sample, bench", [("rewardbench.jsonl", "rewardbench"), ("rewardbench2.jsonl", "rewardbench2"),
                                           ("processbench.jsonl", "processbench"), ("preference_text.jsonl", None),
                                           ("ultrafeedback.jsonl", None)])
def test_formats_are_detected_from_the_columns(sample, bench):
    rows = [json.loads(x) for x in (SAMPLES / sample).read_text().splitlines()]
    assert detect_benchmark(rows) == bench


# ---------------------------------------------------------------- eval-rm end to end on the samples
@pytest.fixture(scope="module")
def tiny_rms(tmp_path_factory):
    d = tmp_path_factory.mktemp("rms")
    return {"bt": make_tiny_rm(d, "bt"), "prm": make_tiny_rm(d, "prm")}


@pytest.mark.parametrize("sample, kind, table", [
    ("rewardbench.jsonl", "bt", "Sections (subsets weighted by their example counts) and overall"),
    ("rewardbench2.jsonl", "bt", "Overall (mean of the subsets)"),
    ("processbench.jsonl", "prm", "ProcessBench (first error = first step scored below 0.5)"),
])
def test_eval_rm_scores_the_shipped_benchmark_samples(tiny_rms, tmp_path, capsys, sample, kind, table):
    out = tmp_path / "out"
    assert main(["eval-rm", "--rm", tiny_rms[kind], "--data", str(SAMPLES / sample), "--out", str(out), "--progress", "false"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert table in report["tables"] and table in capsys.readouterr().out
    res = report["results"]
    if kind == "bt":
        assert 0.0 <= res["overall"] <= 1.0 and set(res["subsets"]) >= {"math-prm" if "2" not in sample else "Math"}
    else:
        assert res["n"] == 14.0 and res["n_erroneous"] + res["n_correct"] == 14.0


def test_the_real_sets_load_by_name_with_their_own_split(tiny_rms, tmp_path, monkeypatch):
    """Without a hub here, the call datasets would make is checked: name and split."""
    import datasets

    calls = []
    rows = [json.loads(x) for x in (SAMPLES / "processbench.jsonl").read_text().splitlines()]

    def fake_load(path, **kwargs):
        calls.append((path, kwargs.get("split")))
        return rows

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    assert main(["eval-rm", "--rm", tiny_rms["prm"], "--data", "Qwen/ProcessBench", "--split", "math",
                 "--out", str(tmp_path / "o"), "--progress", "false"]) == 0
    assert calls == [("Qwen/ProcessBench", "math")]
    assert HUB_NAMES["allenai/reward-bench"] == ("rewardbench", "filtered") and HUB_NAMES["allenai/reward-bench-2"][1] == "test"


def test_a_benchmark_needs_the_right_kind_of_model(tiny_rms, tmp_path, capsys):
    assert main(["eval-rm", "--rm", tiny_rms["bt"], "--data", str(SAMPLES / "processbench.jsonl"), "--out", str(tmp_path)]) == 2
    assert "processbench scores a 'prm' reward model" in capsys.readouterr().err


# ---------------------------------------------------------------- the user's own data
def test_eval_rm_on_chat_format_preference_rows(tiny_rms, tmp_path, capsys):
    """Before: UltraFeedback-style rows crashed with "row 0 has no response text" after the scoring."""
    out = tmp_path / "out"
    code = main(["eval-rm", "--rm", tiny_rms["bt"], "--data", str(SAMPLES / "ultrafeedback.jsonl"), "--out", str(out),
                 "--val-fraction", "0.5", "--n-boot", "50", "--shift-levels", "0.5", "--progress", "false"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    report = json.loads((out / "report.json").read_text())
    assert report["results"]["n_pairs"] == 4 and report["results"]["ood"]


def test_bad_rows_are_found_before_any_scoring(tiny_rms, tmp_path, capsys, monkeypatch):
    rows = [json.loads(x) for x in (SAMPLES / "ultrafeedback.jsonl").read_text().splitlines()]
    rows[2]["chosen"] = [rows[2]["chosen"][0], {"role": "assistant", "content": " "}]
    data = tmp_path / "bad.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import eval.rm_eval

    monkeypatch.setattr(eval.rm_eval, "score_pairs", lambda *a, **k: pytest.fail("scored before checking the rows"))
    assert main(["eval-rm", "--rm", tiny_rms["bt"], "--data", str(data), "--out", str(tmp_path / "o")]) == 2
    assert "row 3: column 'chosen' is empty" in capsys.readouterr().err


def test_the_ood_reference_is_said_and_is_never_generated_arithmetic_for_user_data(tiny_rms, tmp_path, monkeypatch):
    import eval.data

    monkeypatch.setattr(eval.data, "default_rows", lambda *a, **k: pytest.fail("generated rows used as the user's reference"))
    out = tmp_path / "out"
    assert main(["eval-rm", "--rm", tiny_rms["bt"], "--data", str(SAMPLES / "ultrafeedback.jsonl"), "--out", str(out),
                 "--val-fraction", "0.5", "--n-boot", "20", "--shift-levels", "0.5", "--progress", "false"]) == 0
    md = (out / "report.md").read_text()
    assert "OOD reference (in-distribution): the 4 evaluated rows of --data" in md


@pytest.mark.parametrize("args, message", [
    (["--rm", "./runs/no-rm/final"], "--rm './runs/no-rm/final': no such directory"),  # never tried on the hub
    (["--data", "./no/such.jsonl"], "--data './no/such.jsonl': no such file"),
    (["--data", "{empty}"], "the file is empty"),
])
def test_missing_and_empty_inputs_are_one_line_errors(tiny_rms, tmp_path, capsys, args, message):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    args = [a.replace("{empty}", str(empty)) for a in args]
    base = ["--rm", tiny_rms["bt"]] if "--rm" not in args else []
    assert main(["eval-rm", *base, *args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "StopIteration" not in err


def test_a_causal_lm_given_as_a_reward_model_says_what_to_do(tmp_path, capsys):
    from rm_fixtures import make_tiny_causal_lm

    path, _ = make_tiny_causal_lm(tmp_path)
    assert main(["eval-rm", "--rm", path, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "is a causal language model (LlamaForCausalLM), not a reward model" in err and "train-rm --backbone" in err
    assert "backbone_config has no model_type" not in err


def test_a_hub_step_tag_prm_on_processbench(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    from hub_fixtures import make_step_tag_prm

    prm = make_step_tag_prm(tmp_path)
    out = tmp_path / "out"
    assert main(["eval-rm", "--rm", prm, "--rm-kind", "prm", "--rm-option", "tag=ки", "--data", str(SAMPLES / "processbench.jsonl"),
                 "--out", str(out), "--progress", "false"]) == 0
    res = json.loads((out / "report.json").read_text())["results"]
    assert res["n"] == 14.0 and len(res["predicted"]) == 14
