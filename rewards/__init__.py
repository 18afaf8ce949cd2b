"""Reward signals: one interface (`rewards.base`), the built-in rewards, composition, adapters.

>>> from rewards import build_reward, reward_name
>>> reward_name(build_reward("format:integer"))
'format'
"""

from rewards.base import (REASONING_MODES, RewardFn, RewardOutput, assistant_turn, completion_text, prompt_text,
                          reasoning_answer, reward_metrics, reward_name)
from rewards.combine import Combine, Gated, NORMALIZERS
from rewards.generative import FlawedPositiveReward, GenerativeRMReward, judge_first_error
from rewards.learned import QuantileRMReward, RunningStats, ScalarRMReward, UTILITIES
from rewards.prm import AGGREGATIONS, PRMReward, REFINEMENTS, split_steps
from rewards.shaping import (
    FORMAT_PATTERNS,
    ConfidenceCalibratedReward,
    FormatReward,
    LengthPenalty,
    OverlongPenalty,
    RepetitionPenalty,
)
from rewards.spec import REWARDS, build_reward, reward_names
from rewards.ttrl import MajorityVoteReward
from rewards.verifier import DEFAULT_VERDICT_REWARDS, VerifierReward, verdict_rewards

__all__ = [
    "AGGREGATIONS", "Combine", "ConfidenceCalibratedReward", "DEFAULT_VERDICT_REWARDS", "FORMAT_PATTERNS",
    "FlawedPositiveReward", "FormatReward", "Gated", "GenerativeRMReward", "LengthPenalty", "MajorityVoteReward",
    "NORMALIZERS", "OverlongPenalty", "PRMReward", "QuantileRMReward", "REASONING_MODES", "REFINEMENTS", "REWARDS",
    "RepetitionPenalty",
    "RewardFn", "RewardOutput", "RunningStats", "ScalarRMReward", "UTILITIES", "VerifierReward", "assistant_turn",
    "build_reward", "completion_text", "judge_first_error", "prompt_text", "reasoning_answer", "reward_metrics",
    "reward_name", "reward_names", "split_steps", "verdict_rewards",
]
