"""rewardlab: the command-line entry point. The library lives in the top-level packages
`verifiers`, `reward_models`, `rewards`, `training` and `eval`."""

__version__ = "0.1.0"
