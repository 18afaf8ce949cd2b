"""The RL run's configuration: a frozen dataclass composed of the pieces each phase owns, every
field with its one-line help (shown by `rewardlab rl --help`), validated at parse time, before any
model is loaded. Each piece lives beside the module that uses it and checks itself once; this
class adds the loop's own settings and the checks that join two pieces. The command line and
config.json stay flat (one option per field).

| piece | home | options |
|---|---|---|
| `PolicyConfig` | training/policy.py | --model, --lora, ... |
| `DataConfig` | training/data.py | --data, --eval-data, --prompt-column, --answer-column |
| `RewardConfig` | training/reward_calls.py | --reward, --env, --max-turns, --accuracy-reward |
| `DecodingConfig`, `SamplingConfig` | training/rollout.py | --max-new-tokens, --temperature, ..., --group-size, --backend |
| `SelectionConfig` | training/curriculum.py | --dynamic-sampling, --curriculum, --zero-variance-tol |
| `EstimatorConfig` | training/advantages.py | --estimator and its settings |
| `LossConfig` | training/losses.py | --loss-agg, --clip-low, ..., --entropy-coef |
| `KLConfig` | training/kl.py | --kl-coef, --kl-estimator, --kl-in, --ref-model |
| `MonitorConfig` | training/guards.py | --probe-size, ..., --log-samples |
| `RunFolderConfig` | rewardlab/runs.py | --output-dir, --checkpoint-every, --resume, --overwrite, ... |
| `RuntimeConfig` | rewardlab/runtime.py | --seed, --cpu-threads, --mixed-precision (default no: fp32) |

>>> RLConfig(estimator="grpo", group_size=1)
Traceback (most recent call last):
...
ValueError: --group-size 1 with --estimator grpo: a group estimator needs at least 2 completions per prompt; use --group-size >= 2 or one of: gae, reinforce_pp, w_reinforce
"""

from __future__ import annotations

from dataclasses import dataclass

from rewardlab.config import check_fields, opt
from rewardlab.runs import RunFolderConfig
from rewardlab.runtime import RuntimeConfig
from training.advantages import ESTIMATORS, EstimatorConfig
from training.curriculum import SelectionConfig
from training.data import DataConfig
from training.kl import LEARNED_KL, KLConfig
from training.losses import LossConfig
from training.guards import MonitorConfig
from training.policy import PolicyConfig
from training.reward_calls import RewardConfig
from training.rollout import DecodingConfig, SamplingConfig


# the pieces, listed last to first: a dataclass puts the fields of its last base first (--help's order)
@dataclass(frozen=True)
class RLConfig(RuntimeConfig, RunFolderConfig, MonitorConfig, KLConfig, LossConfig, EstimatorConfig, SelectionConfig,
               SamplingConfig, DecodingConfig, RewardConfig, DataConfig, PolicyConfig):
    # the loop's own settings: steps, optimisation, held-out evaluation
    steps: int = opt(200, "optimizer steps (each: sample, score, num_iterations passes)", gt=0)
    lr: float = opt(2e-4, "AdamW learning rate", gt=0)
    weight_decay: float = opt(0.0, "AdamW weight decay")
    warmup_steps: int = opt(0, "linear learning-rate warmup steps", ge=0)
    max_grad_norm: float = opt(1.0, "gradient clipping norm")
    num_iterations: int = opt(1, "passes over each rollout batch (old logprobs are the rollout's)", gt=0)
    micro_batch_size: int = opt(512, "completions per forward/backward; the rest is gradient accumulation", gt=0)
    max_bad_steps: int = opt(3, "stop after this many consecutive steps with a non-finite loss or gradient", gt=0)
    eval_every: int = opt(50, "held-out greedy accuracy every N steps (0: only before and after)", ge=0)
    eval_size: int = opt(500, "held-out prompts per evaluation", gt=0)

    def __post_init__(self) -> None:
        """Each piece checks itself once (the reward first: the KL weight's default depends on it), then the joins."""
        self.check_reward()
        if self.kl_coef is None:  # resolved here, so config.json records the value used
            from rewards.spec import is_learned

            object.__setattr__(self, "kl_coef", LEARNED_KL if is_learned(self.reward) else 0.0)
        for check in (self.check_policy, self.check_data, self.check_decoding, self.check_sampling, self.check_selection,
                      self.check_estimator, self.check_loss, self.check_kl, self.check_monitors, self.check_run_folder,
                      self.check_runtime):
            check()
        check_fields(self, RLConfig)
        self._check_joins()

    def _check_joins(self) -> None:
        """What joins two pieces: the episode backend, group sizes, greedy groups."""
        if self.env and self.backend == "vllm":
            raise ValueError("--env rolls episodes out with the hf backend only (the vLLM sampler does not take turns yet); use --backend hf")
        est = ESTIMATORS[self.estimator]
        if est.grouped and self.group_size < 2:
            ungrouped = sorted(n for n, e in ESTIMATORS.items() if not e.grouped)
            raise ValueError(
                f"--group-size {self.group_size} with --estimator {self.estimator}: a group estimator needs at "
                f"least 2 completions per prompt; use --group-size >= 2 or one of: {', '.join(ungrouped)}"
            )
        if self.dynamic_sampling and self.group_size < 2:
            raise ValueError("--dynamic-sampling needs --group-size >= 2 (it drops groups whose rewards are all equal)")
        if self.temperature == 0:
            raise ValueError("--temperature 0 (greedy) gives every completion of a group the same text; use > 0")

    @property
    def needs_reference(self) -> bool:
        return self.kl_coef > 0
