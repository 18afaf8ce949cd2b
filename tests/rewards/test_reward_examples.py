"""Every public reward shows a runnable `>>>` example (the examples themselves run in tests/test_doctests.py)."""

from __future__ import annotations

import rewards


def test_every_public_reward_has_an_example():
    for name in ["VerifierReward", "MajorityVoteReward", "FormatReward", "OverlongPenalty", "RepetitionPenalty",
                 "LengthPenalty", "ConfidenceCalibratedReward", "ScalarRMReward", "QuantileRMReward", "PRMReward",
                 "GenerativeRMReward", "FlawedPositiveReward", "Combine", "Gated", "build_reward"]:
        assert ">>>" in (getattr(rewards, name).__doc__ or ""), name
