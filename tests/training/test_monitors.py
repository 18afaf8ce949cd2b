"""Guards when the reward is learned: KL on by default, negligible spreads are no signal, steps
without signal do not move the weights, and the monitors (samples, constant reward, OOD share,
gold probe, hack alarm) report each step; the alarm can stop the run."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from training.config import RLConfig
from training.kl import LEARNED_KL
from training.monitors import ConstantReward, HackMonitor, OODShare, SampleLog, StepView, learned_models
from training.advantages import flatten_negligible_groups, negligible_spread
from training.run_state import prepare_run
from training.trainer import train

BASE = dict(data="arithmetic:digits=1", steps=3, prompts_per_step=4, group_size=4, max_new_tokens=3, eval_size=8,
            eval_every=0, checkpoint_every=0, lr=1e-2, report=False, probe_size=4, probe_every=1)


def _view(totals, metrics=None, gold=None, step=1, group_size=2):
    n = len(totals)
    return StepView(step=step, prompts=[f"p{i // group_size}" for i in range(n)], completions=[f"c{i}" for i in range(n)],
                    totals=totals, gold=gold, metrics=metrics or {}, group_size=group_size)


# ---------------------------------------------------------------- configuration
@pytest.mark.parametrize("reward,expected", [
    ("verifier:math", 0.0),  # a rule reward: no reference model by default
    ("rm:some/rm", LEARNED_KL),  # a learned reward: KL to the reference by default
    ("verifier:math*1.0+prm:some/prm*0.5", LEARNED_KL),  # any learned term counts
])
def test_kl_is_on_by_default_only_for_learned_rewards(reward, expected):
    assert RLConfig(reward=reward).kl_coef == expected
    assert RLConfig(reward=reward, kl_coef=0.1).kl_coef == 0.1  # an explicit value is kept


def test_turning_kl_off_with_a_learned_reward_is_warned_about(monkeypatch):
    import rewards.spec

    monkeypatch.setitem(rewards.spec.REWARDS, "rm", (lambda *a, **k: (lambda p, c, **kw: [0.0] * len(c)), "rm:PATH"))
    run = prepare_run(RLConfig(reward="rm:x", kl_coef=0, data="arithmetic:digits=1", eval_size=4, probe_size=0))
    assert any("--kl-coef 0 with a learned reward" in w for w in run.warnings)
    assert not prepare_run(RLConfig(reward="rm:x", data="arithmetic:digits=1", eval_size=4, probe_size=0)).warnings


def test_rl_reports_the_prompts_its_reward_model_was_trained_on(monkeypatch, tmp_path):
    """A reward model records its training prompts; rl reports the share of its own training and
    held-out prompts among them, and warns when it is above 1% (any held-out prompt counts)."""
    import rewards.spec
    from reward_models.prompt_record import record_training_prompts
    from training.rm_data import RMDataConfig, prompt_splits

    monkeypatch.setitem(rewards.spec.REWARDS, "rm", (lambda *a, **k: (lambda p, c, **kw: [0.0] * len(c)), "rm:PATH"))
    config = dict(data="arithmetic:digits=2", eval_size=50, probe_size=0)
    disjoint, shared, unknown = tmp_path / "disjoint", tmp_path / "shared", tmp_path / "unknown"
    for folder in (disjoint, shared, unknown):
        folder.mkdir()
    record_training_prompts(prompt_splits(RMDataConfig(data=config["data"], n_prompts=2000, eval_prompts=0))["train"], disjoint)
    rl_rows = prepare_run(RLConfig(reward="rm:x", **config)).rows
    record_training_prompts(rl_rows[:300], shared)  # 300 of RL's own 20,000 draws (2-digit sums repeat: more than 1.5%)
    run = prepare_run(RLConfig(reward=f"rm:{disjoint}*1.0+rm:{shared}*0.5+rm:{unknown}*0.1", **config))
    overlap = run.rm_prompt_overlap
    exact = {k: v for k, v in overlap[f"rm:{disjoint}"].items() if not k.startswith("canonical")}
    assert exact == {"train_prompts": 0.0, "heldout_prompts": 0.0, "rm_prompts": exact["rm_prompts"]}  # disjoint by hash
    seen = {r["prompt"] for r in rl_rows[:300]}
    assert overlap[f"rm:{shared}"]["train_prompts"] == round(sum(r["prompt"] in seen for r in rl_rows) / len(rl_rows), 4) > 0.01
    assert overlap[f"rm:{unknown}"].startswith("unknown")
    # ...but not by problem: `a+b=` and `b+a=` fall in different pools; the canonical share counts them
    # (computed here by sorting the two operands, independently of canonical_prompt)
    def twin(prompt):
        return tuple(sorted(int(x) for x in prompt.rstrip("=").split("+")))
    rm_twins = {twin(r["prompt"]) for r in prompt_splits(RMDataConfig(data=config["data"], n_prompts=2000, eval_prompts=0))["train"]}
    for key, rows_ in (("canonical_train_prompts", rl_rows), ("canonical_heldout_prompts", run.eval_rows)):
        expected = round(sum(twin(r["prompt"]) in rm_twins for r in rows_) / len(rows_), 4)
        assert overlap[f"rm:{disjoint}"][key] == expected > 0.01
    warned = [w for w in run.warnings if "was trained on" in w]
    assert len(warned) == 2 and str(shared) in warned[1] and "reordered twins" in warned[0]


def test_a_record_without_canonical_keys_reports_them_as_unknown(tmp_path):
    """A record written before the canonical keys existed: exact shares as before, canonical None."""
    import json as json_
    from reward_models.prompt_record import PROMPTS_FILE, prompt_overlap, recorded_prompts, training_prompt_key
    (tmp_path / PROMPTS_FILE).write_text(json_.dumps({"count": 1, "sha256_12": [training_prompt_key("12+7=")]}))
    assert recorded_prompts(tmp_path, canonical=True) is None
    assert prompt_overlap(["12+7=", "7+12="], recorded_prompts(tmp_path)) == 0.5


@pytest.mark.parametrize("seed", range(5))
def test_canonical_prompt_joins_reorderings_and_keeps_distinct_problems_apart(seed):
    """Generated: every reordering of a sum or product of numbers has one canonical form; a
    prompt whose value differs (an operand changed, a minus in the run) has another."""
    import random
    from reward_models.prompt_record import canonical_prompt
    rng = random.Random(seed)
    for _ in range(200):
        terms = [str(rng.randint(0, 999)) for _ in range(rng.randint(2, 5))]
        op = rng.choice("+*")
        shuffled = terms[:]
        rng.shuffle(shuffled)
        spaced = f"What is  {f' {op} '.join(shuffled)} ="
        assert canonical_prompt(f"what is {op.join(terms)} =") == canonical_prompt(spaced) == canonical_prompt(spaced.upper())
        changed = terms[:]
        changed[0] = str(int(changed[0]) + 1)
        assert canonical_prompt(op.join(changed) + "=") != canonical_prompt(op.join(terms) + "=")
        if op == "+" and len(set(terms)) > 1:
            minus = terms[0] + "-" + "+".join(terms[1:]) + "="  # a-b+c: the order matters
            swapped = terms[0] + "-" + "+".join(reversed(terms[1:])) + "="
            assert canonical_prompt(minus) == " ".join(minus.split())
            assert canonical_prompt(swapped) == swapped


# ---------------------------------------------------------------- zero-variance groups
@pytest.mark.parametrize("rewards,expected", [
    ([1.0, 1.0, 0.0, 1.0], [True, False]),  # exactly equal; a real spread
    ([2.31, 2.31001, -1.0, 1.0], [True, False]),  # a learned reward's float noise (1e-5 of a scale ~1.7)
    ([1e-9, 0.0, -2e-9, 0.0], [True, True]),  # every group near 0 (clip-delta with every step above eta)
    ([0.0, 0.01, 0.0, 0.0], [False, True]),  # a small but real spread when everything else is 0
])
def test_negligible_spread(rewards, expected):
    assert negligible_spread(torch.tensor(rewards), 2, 1e-3).tolist() == expected


def test_flattened_groups_get_equal_totals_and_zero_grpo_advantage():
    from training.advantages import grpo, sequence_rewards

    mask = torch.ones(4, 3)
    rewards = torch.zeros(4, 3)
    rewards[:, -1] = torch.tensor([2.31, 2.31001, 0.0, 1.0])
    flat = flatten_negligible_groups(rewards, mask, 2, 1e-3)
    seq = sequence_rewards(flat, mask)
    assert seq[0] == seq[1] and seq[2] == 0.0 and seq[3] == 1.0  # the noisy group is flattened, the real one kept
    adv = grpo(flat, mask, 2)
    assert torch.all(adv[:2] == 0) and torch.all(adv[2:].abs() > 0.5)


def test_a_step_without_signal_does_not_move_the_weights(tiny_dir, tmp_path):
    out = tmp_path / "run"
    train(RLConfig(model=str(tiny_dir), output_dir=out, reward="length:target=100,coef=0", **BASE))  # reward 0 for all
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert all(r["skipped_no_signal"] == 1 and r["monitor/constant_reward"] == 1.0 for r in rows)
    start, end = load_file(str(tiny_dir / "model.safetensors")), load_file(str(out / "policy" / "model.safetensors"))
    assert all(torch.equal(start[k], end[k]) for k in start)  # AdamW never stepped
    assert json.loads((out / "summary.json").read_text())["no_signal_steps"] == 3


# ---------------------------------------------------------------- monitors
def test_sample_log_takes_the_first_completion_of_the_first_prompts():
    out = SampleLog(k=2)(_view([0.5, 0.1, 0.9, 0.2, 0.3, 0.4], gold=[1.0, 0.0, 0.0, 0.0, 1.0, 1.0]))
    assert [s["completion"] for s in out["samples"]] == ["c0", "c2"]
    assert out["samples"][1] == {"prompt": "p1", "completion": "c2", "reward": 0.9, "gold": 0.0}


def test_constant_reward_warns_first_then_every_n_steps():
    mon = ConstantReward("prm", every=3)
    said = [mon(_view([0.0] * 4, step=s))[1] for s in range(1, 7)]
    assert said[0] and "constant reward over all 4 completions (prm = 0)" in said[0]
    assert [bool(x) for x in said] == [True, False, True, False, False, True]
    assert mon(_view([0.0, 1.0, 0.0, 0.0]))[0]["monitor/constant_reward"] == 0.0  # a spread: quiet again
    numbers, text = mon(_view([1.0, 0.0], metrics={"format/mean": 1.0, "format/std": 0.0}))
    assert numbers["monitor/constant_reward"] == 1.0 and "component 'format' = 1" in text  # a constant component


class FakeRM:
    """A reward model whose OOD detector flags completions containing 'x'."""

    class ood:  # noqa: N801 - stands in for an OODMonitor instance
        @staticmethod
        def check(prompts, completions):
            from types import SimpleNamespace

            flagged = [("x" in c) for c in completions]
            share = sum(flagged) / len(flagged)
            return SimpleNamespace(flagged_fraction=share, batch_is_ood=share > 0.2, target_fpr=0.05)


def test_ood_share_finds_the_reward_models_inside_a_composite_and_warns_once():
    from rewards.combine import Combine
    from rewards.learned import ScalarRMReward

    reward = Combine([("format", lambda p, c, **k: [1.0] * len(c), 0.1), ("rm", ScalarRMReward(FakeRM()), 1.0)])
    models = learned_models(reward)
    assert [name for name, _ in models] == ["rm"]
    mon = OODShare(models)
    view = _view([0.0] * 4)
    view.completions = ["1", "x", "x", "2"]
    numbers, warn = mon(view)
    assert numbers == {"ood/rm_frac": 0.5, "ood/rm_alarm": 1.0} and "50% of the completions are outside" in warn
    assert mon(view)[1] is None  # warned once
    # one rule for the flag and the warning: with an expected share of 10%, 25% is above the batch
    # level (20% here) but under 3 x 10%: no flag and no warning; 40% raises both
    strict = FakeRM()
    strict.ood = type("ood", (), {"check": staticmethod(lambda p, c: _with_target(FakeRM.ood.check(p, c), 0.1))})
    fresh = OODShare([("rm", strict)])
    view.completions = ["x", "1", "2", "3"]
    assert fresh(view) == ({"ood/rm_frac": 0.25, "ood/rm_alarm": 0.0}, None)
    view.completions = ["x", "1", "2", "x", "3", "x", "4", "x", "6", "7"]
    numbers, warn = fresh(view)
    assert numbers["ood/rm_alarm"] == 1.0 and "40% of the completions are outside" in warn


def _with_target(report, target):
    report.target_fpr = target
    return report


@pytest.mark.parametrize("records,alarm", [
    # proxy rises, gold probe (mean of 3) falls 5+ points from its best: over-optimisation
    ([(0.1, 0.30), (0.2, 0.40), (0.3, 0.44), (0.4, 0.34), (0.5, 0.30), (0.6, 0.28)], "gold probe accuracy fell"),
    # gold falls but so does the proxy: the reward tracks gold, no alarm
    ([(0.6, 0.44), (0.5, 0.44), (0.4, 0.44), (0.3, 0.30), (0.2, 0.30), (0.1, 0.28)], None),
    # probe noise within 5 points: no alarm
    ([(0.1, 0.30), (0.2, 0.34), (0.3, 0.31), (0.4, 0.33), (0.5, 0.30), (0.6, 0.32)], None),
])
def test_hack_monitor_gold_vs_proxy(records, alarm):
    mon = HackMonitor(gold_drop=0.05)
    said = [mon.observe({"step": i + 1, "reward/mean": p, "probe/accuracy": g, "length/mean": 4.0}) for i, (p, g) in enumerate(records)]
    raised = [x for x in said if x]
    if alarm is None:
        assert not raised
    else:
        assert len(raised) == 1 and alarm in raised[0]


def test_a_run_without_the_gold_alarm_reads_no_gold_and_still_alarms_on_drift(tiny_dir, tmp_path):
    """--gold-alarm false: gold that falls while the proxy rises raises nothing (nothing reads it), a drift still does."""
    falling = [(0.1, 0.30), (0.2, 0.40), (0.3, 0.44), (0.4, 0.34), (0.5, 0.30), (0.6, 0.28)]
    for key in ("probe/accuracy", "accuracy"):
        mon = HackMonitor(gold_drop=0.05, gold_key=None)
        assert not any(mon.observe({"step": i + 1, "reward/mean": p, key: g, "length/mean": 4.0})
                       for i, (p, g) in enumerate(falling))
    said = [mon.observe({"step": 7 + s, "reward/mean": 0.7, "probe/accuracy": 0.2, "length/mean": 9.0}) for s in range(5)]
    assert any(x and "mean completion length drifted" in x for x in said)
    from types import SimpleNamespace

    from training.monitors import build_monitors

    def reward(prompts, completions, **_):
        return [0.0] * len(completions)

    for gold_alarm, key in ((True, "probe/accuracy"), (False, None)):
        config = RLConfig(model=str(tiny_dir), output_dir=tmp_path / "run", reward="length:target=2,coef=1",
                          gold_alarm=gold_alarm, stop_on_alarm=True, **BASE)
        run = SimpleNamespace(config=config, reward_fn=reward, accuracy_fn=lambda *a: 1.0)
        assert build_monitors(run, [{"prompt": "1+1=", "answer": "2"}], print).hack.gold_key == key


def test_hack_monitor_length_and_step_count_drift():
    mon = HackMonitor(drift=0.5)
    said = [mon.observe({"step": s, "reward/mean": 0.0, "length/mean": 8.0, "reward/prm/steps_mean": 2.0 + (s > 5) * 13.0})
            for s in range(1, 11)]
    assert any(x and "mean PRM step count drifted from 2.00" in x for x in said)
    mon = HackMonitor(drift=0.5)
    said = [mon.observe({"step": s, "reward/mean": 0.0, "length/mean": 5.0 if s <= 5 else 1.0}) for s in range(1, 11)]
    assert any(x and "mean completion length drifted" in x for x in said)


def test_monitors_log_every_step_and_the_alarm_stops_the_run(tiny_dir, tmp_path, monkeypatch):
    import training.monitors

    # a hack monitor that raises an alarm at step 2
    real = training.monitors.HackMonitor
    monkeypatch.setattr(training.monitors, "HackMonitor", lambda *a, **k: type("H", (real,), {
        "observe": lambda self, r: "gold probe accuracy fell (test)" if r["step"] == 2 else None})(*a, **k))
    out = tmp_path / "run"
    summary = train(RLConfig(model=str(tiny_dir), output_dir=out, reward="length:target=2,coef=1", stop_on_alarm=True,
                             **{**BASE, "steps": 5, "report": True}))
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]  # stopped at the alarm
    assert summary["stopped_by_alarm"] == {"step": 2, "reason": "gold probe accuracy fell (test)"}
    assert all("probe/accuracy" in r and len(r["samples"]) == 4 for r in rows)
    assert rows[1]["monitor/alarm"] == 1.0 and rows[1]["monitor/alarm_reason"] == "gold probe accuracy fell (test)"
    report = (out / "report.md").read_text()
    assert "## Hack alarms" in report and "## Sample completions" in report
    assert (out / "overoptimization.png").exists() and (out / "policy").exists()


def test_rollback_on_alarm_keeps_the_policy_of_the_best_gold_probe(tiny_dir, tmp_path, monkeypatch):
    import training.monitors

    # scripted gold probes (best at step 2) and an alarm at step 4
    probes = {1: 0.25, 2: 0.75, 3: 0.5, 4: 0.25}
    monkeypatch.setattr(training.monitors.GoldProbe, "__call__", lambda self, step, last=False: {"probe/accuracy": probes[step]})
    real = training.monitors.HackMonitor
    monkeypatch.setattr(training.monitors, "HackMonitor", lambda *a, **k: type("H", (real,), {
        "observe": lambda self, r: "gold probe accuracy fell (test)" if r["step"] == 4 else None})(*a, **k))
    seen: dict[int, dict] = {}  # the policy's weights after each step, as the loop offers them
    offer = training.monitors.BestProbePolicy.offer

    def spy(self, step, accuracy, model):
        seen[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        return offer(self, step, accuracy, model)

    monkeypatch.setattr(training.monitors.BestProbePolicy, "offer", spy)
    out = tmp_path / "run"
    config = RLConfig(model=str(tiny_dir), output_dir=out, reward="length:target=2,coef=1", rollback_on_alarm=True,
                      **{**BASE, "steps": 6})
    assert config.stop_on_alarm  # implied
    summary = train(config)
    assert summary["stopped_by_alarm"] == {"step": 4, "reason": "gold probe accuracy fell (test)",
                                           "rolled_back_to": {"step": 2, "probe_accuracy": 0.75}}
    saved = load_file(str(out / "policy" / "model.safetensors"))
    differs = lambda a, b: any(not torch.equal(a[k], b[k]) for k in a if k in b)  # noqa: E731
    assert not differs(saved, seen[2]) and differs(saved, seen[4])  # the step-2 weights, not the alarm's


def test_a_damaged_prompt_record_is_an_error_not_unknown(tmp_path):
    from reward_models.prompt_record import PROMPTS_FILE, recorded_prompts

    (tmp_path / PROMPTS_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not a record of training prompts"):
        recorded_prompts(tmp_path)


@pytest.mark.parametrize("gold,calls,expected", [
    ([0.80 + 0.01 * s for s in range(12)], [0.1] * 5 + [1.0] * 7, True),   # the docs' case: tool use lengthens, gold rises
    ([0.80] * 3 + [0.60] * 9, [0.1] * 5 + [1.0] * 7, False),               # gold fell: a real alarm, said as one
    ([0.80 + 0.01 * s for s in range(12)], [0.5] * 12, False),              # longer without more tool calls: not explained
    ([0.80 + 0.01 * s for s in range(12)], None, False),                    # no environment: not explained
])
def test_a_length_alarm_explained_by_tool_use_reads_as_expected(gold, calls, expected):
    """The calculator run's length alarm (its tool calls and results lengthen every answer while
    the gold probe rises, docs/training.md) says so; every other length drift still reads as a hack."""
    mon = HackMonitor(drift=0.3)
    said = []
    for s in range(12):
        record = {"step": s + 1, "reward/mean": 0.5 + 0.01 * s, "length/mean": 10.0 if s < 5 else 20.0}
        if s < 5 or s % 4 == 3:  # the probe comes every few steps; the length alarm fires between two (step 7)
            record["probe/accuracy"] = gold[s]
        if calls is not None:
            record["episodes/tool_calls_mean"] = calls[s]
        said.append((mon.observe(record), mon.expected))
    length = [(text, exp) for text, exp in said if text and "mean completion length drifted" in text]
    assert len(length) == 1
    assert length[0][1] is expected and ("expected with tool use, not a hack" in length[0][0]) is expected
