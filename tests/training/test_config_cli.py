"""Bad configuration fails before any model is loaded, naming the option and the valid values;
a failing reward or repeated non-finite losses stop the run with a clear message."""

import json

import pytest

import training.policy
import training.update
from rewardlab.cli import main as rewardlab
from training.config import RLConfig
from training.guards import TrainingStopped
from training.run_state import prepare_run
from training.trainer import train


@pytest.fixture
def no_model_loading(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a model was loaded before the configuration was checked")

    monkeypatch.setattr(training.policy, "load_policy", refuse)
    monkeypatch.setattr(training.policy, "default_policy_path", refuse)


@pytest.fixture
def prompts_only(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text("\n".join(json.dumps({"prompt": f"{i}+1="}) for i in range(5)) + "\n")
    return path


CLI_ERRORS = [
    # (arguments, what stderr must say)
    (["--group-size", "1"], "--group-size 1 with --estimator grpo"),  # group estimator needs G >= 2
    (["--group-size", "1", "--estimator", "rloo"], "gae, reinforce_pp, w_reinforce"),  # ...and lists the ungrouped ones
    (["--kl-coef", "0.1", "--ref-model", "none"], "--kl-coef 0.1 needs a reference model"),
    (["--kl-coef", "0.1", "--ref-model", "/no/such/ref"], "--ref-model '/no/such/ref' does not exist"),
    (["--model", "/no/such/model"], "--model '/no/such/model' does not exist"),
    (["--backend", "vllm"], "--backend vllm needs"),  # no vllm / CUDA here: clear error, no model loaded
    (["--data", "arithmetic:digits=x"], "digits"),
    (["--data", "arithmetic:colour=red"], "bad task option"),
    (["--data", "arithmetic:worked=yes"], "worked must be 0 or 1"),
    (["--reward", "nope"], "unknown reward 'nope'"),
    (["--temperature", "0"], "--temperature 0"),
    (["--steps", "0"], "--steps must be > 0"),
    (["--top-p", "1.5"], "--top-p"),
    (["--dual-clip", "0.5"], "--dual-clip must be > 1"),
]


@pytest.mark.parametrize("argv,message", CLI_ERRORS)
def test_bad_configuration_fails_before_loading_a_model(argv, message, no_model_loading, capsys, tmp_path):
    code = rewardlab(["rl", "--output-dir", str(tmp_path / "run"), *argv])
    assert code == 2
    assert message in capsys.readouterr().err


def test_unknown_estimator_lists_the_valid_ones(capsys):
    with pytest.raises(SystemExit):
        rewardlab(["rl", "--estimator", "ppo2"])
    err = capsys.readouterr().err
    assert "--estimator" in err and "grpo" in err and "rl_zvp" in err and "gae" in err


def test_missing_reward_columns_fail_before_loading_a_model(prompts_only, no_model_loading, capsys, tmp_path):
    code = rewardlab(["rl", "--data", str(prompts_only), "--reward", "verifier:math", "--output-dir", str(tmp_path / "r")])
    assert code == 2
    err = capsys.readouterr().err
    assert "missing column(s) ['answer']" in err and str(prompts_only) in err


def test_ttrl_needs_no_gold_column(prompts_only, no_model_loading):
    run = prepare_run(RLConfig(data=str(prompts_only), reward="ttrl"))
    assert run.accuracy_fn is None and len(run.rows) == 5


def test_a_raising_reward_stops_the_run_with_its_name_and_the_sample(tiny_dir, tmp_path, monkeypatch, capsys):
    mod = tmp_path / "bad_reward_mod.py"
    mod.write_text("def exploding(prompts, completions, **columns):\n    raise KeyError('no such thing')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code = rewardlab(["rl", "--model", str(tiny_dir), "--data", "arithmetic:digits=1", "--reward", "bad_reward_mod:exploding",
                      "--steps", "1", "--prompts-per-step", "2", "--group-size", "2", "--max-new-tokens", "2",
                      "--eval-size", "4", "--accuracy-reward", "none", "--output-dir", str(tmp_path / "r")])
    assert code == 1
    err = capsys.readouterr().err
    assert "reward 'exploding' raised KeyError" in err and "no such thing" in err and "prompt='" in err


def test_repeated_non_finite_losses_stop_the_run(tiny_dir, tmp_path, monkeypatch):
    real = training.update.clipped_surrogate

    def nan_loss(*args, **kwargs):
        loss, clipped = real(*args, **kwargs)
        return loss * float("nan"), clipped

    monkeypatch.setattr(training.update, "clipped_surrogate", nan_loss)
    config = RLConfig(model=str(tiny_dir), data="arithmetic:digits=1", reward="length:target=2,coef=1", steps=5,
                      prompts_per_step=2, group_size=2, max_new_tokens=2, eval_size=4, max_bad_steps=2,
                      output_dir=tmp_path / "r", report=False)
    start = {k: v.clone() for k, v in training.policy.load_policy(str(tiny_dir))[0].state_dict().items()}
    with pytest.raises(TrainingStopped, match="2 steps in a row had a non-finite loss"):
        train(config)
    rows = [json.loads(x) for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    assert [r["skipped_nonfinite"] for r in rows] == [1]  # step 1 logged as skipped; step 2 stopped the run
    assert start  # the policy file on disk is untouched (nothing saved on a stopped run)
    assert not (tmp_path / "r" / "policy").exists()


# ---------------------------------------------------------------- configuration by pieces
def test_a_config_json_from_before_the_pieces_resumes_with_its_config_unchanged(tmp_path):
    # written by `rewardlab rl --reward verifier:math` when RLConfig was one flat class of 79 fields
    from pathlib import Path

    from rewardlab.config import config_to_dict
    from rewardlab.runs import write_config

    old = json.loads((Path(__file__).parent / "rl_config_before_pieces.json").read_text())
    config = RLConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in old.items()})
    now = json.loads(json.dumps(config_to_dict(config)))
    assert {k: now[k] for k in old} == old  # every field, flat, same values
    assert {k: v for k, v in now.items() if k not in old} == {"gold_alarm": True}  # options added since, at their default
    (tmp_path / "config.json").write_text(json.dumps(old, indent=2, sort_keys=True) + "\n")
    write_config(config, tmp_path, resumed_from="step-000050")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]  # same config: no config.resume-*.json


def _config_classes():
    from eval.audit_cli import AuditConfig
    from eval.policy_cli import EvalPolicyConfig
    from eval.rm_cli import EvalRMConfig
    from reward_models.train import TrainRMConfig
    from rewards.batch_cli import ScoreDataConfig
    from rewards.env_service_cli import ServeEnvConfig
    from rewards.service_cli import ServeRewardConfig
    from training.rm_data import RMDataConfig
    from training.sft_cli import SFTRunConfig
    from verifiers.cli import VerifyConfig
    from verifiers.service_cli import ServeVerifierConfig

    return [RLConfig, RMDataConfig, TrainRMConfig, SFTRunConfig, EvalRMConfig, EvalPolicyConfig, AuditConfig, ScoreDataConfig,
            VerifyConfig, ServeVerifierConfig, ServeRewardConfig, ServeEnvConfig]


# the fields a command must give (the rest have defaults)
REQUIRED = {"ServeRewardConfig": {"reward": "verifier:math"}, "ServeEnvConfig": {"env": "calculator"}, "EvalRMConfig": {"rm": "x"},
            "AuditConfig": {"input": "x.jsonl"}, "VerifyConfig": {"gold": "1", "pred": "1"},
            "ScoreDataConfig": {"data": "x.jsonl", "reward": "verifier:math", "output": "o.jsonl"}}


def _pieces(cls):
    """The pieces a config is made of; a piece given other defaults (`with_defaults`) is its piece."""
    return [c for c in cls.__mro__ if c not in (cls, object) and "__defaults_of__" not in vars(c)]


@pytest.mark.parametrize("cls", _config_classes(), ids=lambda c: c.__name__)
def test_configs_are_compositions_of_small_pieces_checked_once_each(cls, monkeypatch):
    import dataclasses

    for part in [cls, *_pieces(cls)]:
        own = vars(part).get("__annotations__", {})
        assert len(own) <= 15, f"{part.__name__} declares {len(own)} fields of its own"
    checks = {name: piece for piece in _pieces(cls) for name, fn in vars(piece).items() if name.startswith("check_")}
    assert len(checks) == len(_pieces(cls))  # one check per piece
    calls = []
    for name, piece in checks.items():
        original = vars(piece)[name]
        monkeypatch.setattr(piece, name, lambda self, _o=original, _n=name: (calls.append(_n), _o(self))[1])
    required = REQUIRED.get(cls.__name__, {})
    cls(**required)
    assert sorted(calls) == sorted(checks)  # each piece validated exactly once
    names = [f.name for f in dataclasses.fields(cls)]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("cls", _config_classes(), ids=lambda c: c.__name__)
def test_choice_lists_are_written_once_and_enforced_outside_the_command_line(cls):
    import dataclasses

    required = REQUIRED.get(cls.__name__, {})
    for f in dataclasses.fields(cls):
        if f.metadata.get("choices"):
            with pytest.raises(ValueError, match=f"--{f.name.replace('_', '-')} 'nope' is not valid; valid values: "):
                cls(**{**required, f.name: "nope"})


def test_every_help_text_is_one_short_line():
    import dataclasses

    for cls in _config_classes():
        for f in dataclasses.fields(cls):
            text = f.metadata.get("help", "")
            assert text and "\n" not in text and len(text) <= 160, f"{cls.__name__}.{f.name}: {len(text)} characters"
