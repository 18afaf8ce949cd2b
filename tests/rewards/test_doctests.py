"""Every `>>>` example in rewards/ runs and gives what its docstring says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import rewards

MODULES = sorted(m.name for m in pkgutil.iter_modules(rewards.__path__, "rewards."))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


def test_every_public_reward_has_an_example():
    for name in ["VerifierReward", "MajorityVoteReward", "FormatReward", "OverlongPenalty", "RepetitionPenalty",
                 "LengthPenalty", "ConfidenceCalibratedReward", "ScalarRMReward", "QuantileRMReward", "PRMReward",
                 "GenerativeRMReward", "FlawedPositiveReward", "Combine", "Gated", "build_reward"]:
        assert ">>>" in (getattr(rewards, name).__doc__ or ""), name
