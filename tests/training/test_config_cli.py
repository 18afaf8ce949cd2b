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
