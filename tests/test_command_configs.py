"""The configs of sft, rm-data, eval-rm, eval-policy, audit-verifier, score-data and verify, made of
the shared pieces: old flags and old saved configs still load, and `--mixed-precision` reaches the
model's forward pass (autocast on, in bf16) while the fp32 places stay fp32."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
from pathlib import Path

import pytest
import torch

from rewardlab import runtime
from rewardlab.cli import COMMANDS, main
from rewardlab.config import config_to_dict

BEFORE = json.loads((Path(__file__).parent / "configs_before_pieces.json").read_text())


def _config_class(command: str) -> type:
    from eval.audit_cli import AuditConfig
    from eval.policy_cli import EvalPolicyConfig
    from eval.rm_cli import EvalRMConfig
    from reward_models.train import TrainRMConfig
    from rewards.batch_cli import ScoreDataConfig
    from training.rm_data import RMDataConfig
    from training.sft_cli import SFTRunConfig
    from verifiers.cli import VerifyConfig

    return {"sft": SFTRunConfig, "eval-rm": EvalRMConfig, "eval-policy": EvalPolicyConfig, "audit-verifier": AuditConfig,
            "score-data": ScoreDataConfig, "verify": VerifyConfig, "rm-data": RMDataConfig, "train-rm": TrainRMConfig}[command]


# the options each command gained with its pieces (everything else is as before)
ADDED = {"sft": {"data", "eval_data", "prompt_column", "answer_column", "model", "output_dir", "add_chars", "cpu_threads",
                 "mixed_precision"},
         "eval-rm": {"mixed_precision"}, "eval-policy": {"mixed_precision", "top_k", "stop", "chat_template"},
         "rm-data": {"mixed_precision"}, "train-rm": {"pinball_backbone"}}


@pytest.mark.parametrize("command", sorted(BEFORE["configs"]))
def test_a_config_saved_before_the_pieces_loads_with_every_value(command):
    old = BEFORE["configs"][command]
    cls = _config_class(command)
    config = cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in old.items()})
    new = json.loads(json.dumps(config_to_dict(config)))
    assert {k: new[k] for k in old} == old  # every old field, flat, with its value
    assert set(new) - set(old) == ADDED.get(command, set())


@pytest.mark.parametrize("command", sorted(BEFORE["flags"]))
def test_every_old_flag_is_still_an_option(command):
    parser = argparse.ArgumentParser()
    importlib.import_module(COMMANDS[command][0]).configure(parser)
    flags = {o for a in parser._actions for o in a.option_strings}
    assert set(BEFORE["flags"][command]) <= flags


def test_sft_flags_give_the_same_defaults_as_before():
    """`rewardlab sft` with no options: the saved config's old fields are the old defaults (fp32, one thread)."""
    from training.sft_cli import SFTRunConfig, configure

    parser = argparse.ArgumentParser()
    configure(parser)
    from rewardlab.config import config_from_args

    config = config_from_args(SFTRunConfig, parser.parse_args([]))
    assert (config.mixed_precision, config.cpu_threads, config.steps, config.data) == ("no", 1, 4000, "arithmetic:digits=3,n_terms=2,ops=+")


# ---------------------------------------------------------------- precision reaches the forward pass
@contextlib.contextmanager
def forward_log():
    """Every forward of a top-level model (a causal LM or a reward model's backbone): the autocast
    dtype in force (None when off), the dtype of the weights and of what it returned."""
    seen: list[dict] = []

    def hook(module, args, output):
        if module.__class__.__name__.endswith(("ForCausalLM", "BertModel")):
            on = torch.is_autocast_enabled("cpu")
            logits = getattr(output, "logits", None)
            hidden = getattr(output, "last_hidden_state", None)
            seen.append({"autocast": torch.get_autocast_dtype("cpu") if on else None,
                         "weights": next(module.parameters()).dtype,
                         "out": (logits if logits is not None else hidden).dtype,
                         "loss": output.loss.dtype if getattr(output, "loss", None) is not None else None})

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        yield seen
    finally:
        handle.remove()


@pytest.fixture
def bf16_is_fast(monkeypatch):
    """A device where bf16 is fast (`auto` picks bf16), whatever this machine is."""
    monkeypatch.setattr(runtime, "bf16_is_fast", lambda device_type=None: True)


CASES = [([], None), (["--mixed-precision", "no"], None), (["--mixed-precision", "bf16"], torch.bfloat16),
         (["--mixed-precision", "auto"], torch.bfloat16)]


@pytest.mark.parametrize("flags,autocast", CASES, ids=["default", "no", "bf16", "auto"])
def test_sft_runs_its_forward_passes_in_the_precision_asked(tmp_path, bf16_is_fast, flags, autocast):
    out = tmp_path / "sft"
    with forward_log() as seen:
        assert main(["sft", "--data", "arithmetic:digits=1", "--steps", "2", "--eval-every", "2", "--batch-size", "4",
                     "--eval-size", "2", "--max-new-tokens", "2", "--output-dir", str(out), *flags]) == 0
    assert seen and all(s["autocast"] == autocast for s in seen)  # training and held-out generation alike
    assert all(s["weights"] == torch.float32 for s in seen)  # master weights stay fp32
    losses = [s for s in seen if s["loss"] is not None]
    assert losses and all(s["loss"] == torch.float32 for s in losses)  # the loss is fp32 (logits cast before it)
    assert all(s["out"] == (autocast or torch.float32) for s in losses)
    saved = json.loads((out / "sft_config.json").read_text())
    assert saved["mixed_precision"] == ("bf16" if autocast else "no")  # `auto` recorded as what it chose
    assert json.loads((out / "sft_result.json").read_text())["mixed_precision"] == saved["mixed_precision"]


@pytest.mark.parametrize("precision,autocast", [("no", None), ("bf16", torch.bfloat16)])
def test_rm_data_samples_in_the_precision_asked(tmp_path, precision, autocast):
    from tests.rewards.rm_fixtures import make_tiny_causal_lm
    from training.policy import load_policy
    from training.rm_data import RMDataConfig, Sampler

    path, _ = make_tiny_causal_lm(tmp_path)
    model, tokenizer = load_policy(path)
    sampler = Sampler(model, tokenizer, RMDataConfig(max_new_tokens=3, mixed_precision=precision))
    with forward_log() as seen:
        texts = sampler.complete(["1+2=", "3+4="], 2)
    assert [len(t) for t in texts] == [2, 2]
    assert seen and all(s["autocast"] == autocast and s["weights"] == torch.float32 for s in seen)


@pytest.mark.parametrize("precision,autocast", [("no", None), ("auto", torch.bfloat16)])
def test_eval_policy_samples_in_the_precision_asked(tmp_path, bf16_is_fast, precision, autocast):
    from eval.policy_cli import EvalPolicyConfig, sample_completions
    from tests.rewards.rm_fixtures import make_tiny_causal_lm

    path, _ = make_tiny_causal_lm(tmp_path)
    cfg = EvalPolicyConfig(model=path, n=2, k=(1, 2), max_new_tokens=3, mixed_precision=precision)
    with forward_log() as seen:
        completions, _ = sample_completions(cfg, ["1+2=", "3+4="])
    assert [len(c) for c in completions] == [2, 2]
    assert seen and all(s["autocast"] == autocast for s in seen)


@pytest.mark.parametrize("flags,autocast", CASES, ids=["default", "no", "bf16", "auto"])
def test_eval_rm_scores_in_the_precision_asked_and_the_scores_stay_fp32(tmp_path, bf16_is_fast, flags, autocast):
    from tests.rewards.rm_fixtures import make_tiny_rm

    rm = make_tiny_rm(tmp_path, "bt")
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"prompt": f"{i}+1=", "response": str(i + 1)}) + "\n" for i in range(4)))
    out = tmp_path / "report"
    with forward_log() as seen:
        assert main(["eval-rm", "--mode", "check", "--rm", rm, "--samples", str(samples), "--n-train", "24",
                     "--out", str(out), *flags]) == 0
    assert seen and all(s["autocast"] == autocast and s["weights"] == torch.float32 for s in seen)
    assert json.loads((out / "config.json").read_text())["mixed_precision"] == ("bf16" if autocast else "no")
    report = json.loads((out / "report.json").read_text())
    assert report["results"]["scores"] and all(isinstance(x, float) for x in report["results"]["scores"])
