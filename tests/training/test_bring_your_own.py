"""`rl` end to end with rewards the project did not make: a hub-format sequence-classification RM
(`rm:`), a Math-Shepherd-style step-tag PRM (`prm:`), and judges behind an OpenAI-compatible server
on 127.0.0.1 (`genrm:URL`, `hybrid:math:URL`). Each run is a few steps of the tiny policy; each
asserts the reward scored every completion and that the policy learned from it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from training.config import RLConfig
from training.trainer import train

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from hub_fixtures import make_sequence_rm, make_step_tag_prm  # noqa: E402
from openai_server import judge_server  # noqa: E402

RUN = dict(data="arithmetic:digits=1", steps=3, prompts_per_step=4, group_size=4, max_new_tokens=3, eval_size=8, eval_every=0,
           checkpoint_every=0, report=False, probe_size=0, lr=1e-2, max_constant_steps=0)


def _run(tiny_dir, out, reward, **extra):
    summary = train(RLConfig(model=str(tiny_dir), output_dir=out, reward=reward, **{**RUN, **extra}))
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    start, end = load_file(str(tiny_dir / "model.safetensors")), load_file(str(out / "policy" / "model.safetensors"))
    moved = not all(torch.equal(start[k], end[k]) for k in start)
    return summary, rows, moved


@pytest.mark.slow
def test_rl_with_a_hub_sequence_classification_rm(tiny_dir, tmp_path):
    rm = make_sequence_rm(tmp_path)
    summary, rows, moved = _run(tiny_dir, tmp_path / "run", f"rm:{rm}")
    assert summary["steps"] == 3 and moved
    assert all(r["monitor/none_frac"] == 0.0 and r["reward/std"] > 0 for r in rows)  # every completion scored, scores differ
    assert all("reward/score_mean" in r for r in rows)


@pytest.mark.slow
def test_rl_with_a_step_tag_prm(tiny_dir, tmp_path):
    prm = make_step_tag_prm(tmp_path)
    with pytest.warns(UserWarning, match="single step"):  # the arithmetic policy writes one step: said, not hidden
        summary, rows, moved = _run(tiny_dir, tmp_path / "run", f"prm:{prm}:raw:tag=ки,good=plus,bad=minus")
    assert summary["steps"] == 3 and moved
    # every completion with a step was scored; only empty ones (EOS at once: no step) are None, and counted
    assert all(r["monitor/none_frac"] == r["reward/empty"] / 16 < 0.5 and r["reward/steps_mean"] > 0.5 for r in rows)
    assert all(0.0 < r["reward/mean"] < 1.0 and r["reward/std"] > 0 for r in rows)  # raw step probabilities


@pytest.mark.slow
@pytest.mark.parametrize("spec, per_step", [("genrm:{url}:concurrency=4", 16), ("hybrid:math:{url}:concurrency=4", None)])
def test_rl_with_a_remote_judge(tmp_path, spec, per_step, monkeypatch):
    # the shipped policy on its own task (24% right): groups the judge splits, so the policy moves;
    # the untrained tiny policy is almost never right, and a step where the judge says "no" to every
    # completion has no signal (it passed or failed by the luck of the prompts drawn)
    from training.policy import default_policy_path

    monkeypatch.setenv("REWARDLAB_CACHE", str(tmp_path / "cache"))
    with judge_server() as srv:
        summary, rows, moved = _run(default_policy_path(), tmp_path / "run", spec.format(url=srv.url), kl_coef=0.0,
                                    data="arithmetic", max_new_tokens=5)
        served = srv.control.requests
    assert summary["steps"] == 3 and moved
    assert all(r["monitor/none_frac"] == 0.0 and r["reward/judge/failed"] == 0.0 for r in rows)
    asked = sum(r["reward/judge/requests"] for r in rows)
    assert asked == served > 0  # every judgment went over HTTP (the policy's completions rarely repeat)
    if per_step:
        assert all(r["reward/judge/calls"] == per_step for r in rows)  # 4 prompts x 4 completions a step
    else:  # the rule decided the rest: only wrong or unreadable answers went to the judge
        assert all(r["reward/judge_asked"] == r["reward/verifier/verdict/incorrect"] + r["reward/verifier/verdict/no_answer"]
                   for r in rows)
