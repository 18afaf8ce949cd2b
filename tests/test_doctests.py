"""Every `>>>` example in the project runs and gives what its docstring says, and every module meant
to show examples has at least one (a doctest test over a module without examples passes vacuously)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ["rewardlab", "verifiers", "reward_models", "rewards", "training", "eval"]

# modules without examples on purpose: command-line glue, process boot and sandbox internals, the RL
# loop and its phases (their tests run them), and wiring that only composes other modules' functions
WITHOUT_EXAMPLES = {
    "rewardlab.__main__", "rewardlab.batching", "rewardlab.cli", "rewardlab.config", "rewardlab.runtime", "rewardlab.tables",
    "verifiers._math_compare", "verifiers.registry", "verifiers.sandbox_boot", "verifiers.sandbox_harness",
    "verifiers.service_cli", "verifiers.types",
    "reward_models.cli", "reward_models.hub", "reward_models.lora", "reward_models.scoring",
    "rewards.batch", "rewards.batch_cli", "rewards.env_service_cli", "rewards.service_cli",
    "training.cli", "training.collect", "training.forward", "training.heldout", "training.pipeline", "training.rm_data_cli",
    "training.run_state", "training.sft_cli", "training.trainer", "training.update", "training.vllm_backend",
    "eval.audit_cli", "eval.data", "eval.plots", "eval.policy_cli", "eval.policy_eval", "eval.rm_cli", "eval.rm_eval",
}


def modules() -> list[str]:
    names = []
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        names += [m.name for m in pkgutil.iter_modules(path, package + ".") if m.name != "rewardlab.__main__"]
    return sorted(names)


@pytest.mark.parametrize("name", modules())
def test_module_examples(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failed == 0, f"{failed} example(s) failed in {name}"
    if name not in WITHOUT_EXAMPLES:
        assert attempted > 0, f"{name} shows no >>> example; add one (or list it in WITHOUT_EXAMPLES with the reason)"


def test_the_exemptions_are_current():
    assert WITHOUT_EXAMPLES - {"rewardlab.__main__"} <= set(modules())  # a renamed module leaves no stale entry
