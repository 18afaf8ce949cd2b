"""Learned reward models: Bradley-Terry, quantile (QRM), process (PRM) and generative judges.

>>> from reward_models import load_reward_model   # doctest: +SKIP
>>> rm = load_reward_model("runs/bt/final")       # doctest: +SKIP
>>> rm.score(["2+2="], ["2+2 = 4\\nThe answer is 4."])  # doctest: +SKIP
"""

from reward_models.modeling import DEFAULT_TAUS, KINDS, RewardModel, RewardModelConfig
from reward_models.scores import QuantileScore, StepScores
from reward_models.scoring import LoadedRewardModel, load_reward_model

__all__ = [
    "DEFAULT_TAUS",
    "KINDS",
    "LoadedRewardModel",
    "QuantileScore",
    "RewardModel",
    "RewardModelConfig",
    "StepScores",
    "load_reward_model",
]
