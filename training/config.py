"""The RL run's configuration: one frozen dataclass, every field with its help (shown by
`rewardlab rl --help`), validated at parse time, before any model is loaded.

>>> RLConfig(estimator="grpo", group_size=1)
Traceback (most recent call last):
...
ValueError: --group-size 1 with --estimator grpo: a group estimator needs at least 2 completions per prompt; use --group-size >= 2 or one of: gae, reinforce_pp, w_reinforce
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rewardlab.config import opt
from rewardlab.runtime import PRECISION_CHOICES as PRECISIONS
from training.advantages import ESTIMATORS
from training.kl import KL
from training.losses import AGGREGATIONS

DEFAULT_DATA = "arithmetic:digits=3,n_terms=2,ops=+"
LEARNED_KL = 0.02  # InstructGPT's per-token KL weight (beta ~ 0.02); the default when the reward is learned
BACKENDS = ("hf", "vllm")


def _choices(name: str, value: str, valid) -> None:
    if value not in valid:
        raise ValueError(f"--{name.replace('_', '-')} {value!r} is not valid; valid values: {', '.join(sorted(valid))}")


@dataclass(frozen=True)
class RLConfig:
    # what to train, on what, with which reward
    model: str | None = opt(None, "policy: a local folder or hub name; default: the tiny character-level Llama warm-started on arithmetic (shipped with the project, copied to the cache on first use)")
    data: str = opt(DEFAULT_DATA, "prompts: a task spec (arithmetic[:digits=3,n_terms=2,ops=+], or functions[:ops=+-*] for code), a JSONL/Parquet/CSV file or a hub dataset, with a `prompt` column plus what the reward needs")
    eval_data: str | None = opt(None, "held-out prompts for accuracy (file or hub name); default: the task's fixed test split, or none for files")
    prompt_column: str = opt("prompt", "column of --data / --eval-data holding the prompt (a string or chat messages); with the default, a GSM8K `question` or MATH `problem` column is used when there is no `prompt`")
    answer_column: str = opt("answer", "column holding the gold answer, given to the rewards as `answer`")
    reward: str | None = opt(None, "reward spec, e.g. verifier:math, ttrl, verifier:math*1.0+format*0.1, prm:PATH:clip-delta, module:function. Default: verifier:math; with --env, `env` (the environment's own reward, the only one it takes)")
    env: str | None = opt(None, "multi-turn episodes with an environment that owns the reward (rewards/environments.py): calculator[:cost=C,max_calls=K], code[:max_attempts=2] (a failing program gets the test output and another try), or module:attribute for your own; the policy's turns end at EOS or at the environment's stop strings, its observations are masked out of the loss")
    max_turns: int = opt(4, "--env: policy turns per episode at most (each up to --max-new-tokens)")
    accuracy_reward: str | None = opt(None, "reward whose correct rate is logged as `accuracy` (training rollouts and held-out greedy) when the data has an `answer` column; 'none' to skip. Default: verifier:math; with --env, the environment's (verifier:code for the code environment)")
    output_dir: Path = opt(Path("runs/rl"), "run folder: config, metrics.jsonl, checkpoints, report, final policy")
    # sampling
    steps: int = opt(200, "optimizer steps (each: sample, score, num_iterations passes)")
    prompts_per_step: int = opt(64, "prompts sampled per step")
    group_size: int = opt(8, "completions per prompt (G)")
    max_new_tokens: int = opt(6, "completion length limit (3-digit sums need 4 digits + EOS)")
    temperature: float = opt(1.0, "sampling temperature (logprobs use the same temperature)")
    top_p: float = opt(1.0, "nucleus sampling threshold (1 = off)")
    top_k: int = opt(0, "top-k sampling (0 = off)")
    stop: tuple[str, ...] = opt((), "stop strings (a completion ends after the first one)")
    mask_truncated: bool = opt(False, "exclude completions that hit max_new_tokens without EOS/stop from the loss")
    chat_template: bool = opt(False, "wrap text prompts in the tokenizer's chat template")
    backend: str = opt("hf", "rollout backend: hf (transformers generate, default) or vllm (GPU, `pip install rewardlab[vllm]`)", choices=BACKENDS)
    vllm_gpu_memory: float = opt(0.3, "fraction of GPU memory vLLM may use (vllm backend)")
    # advantages and loss
    estimator: str = opt("grpo", "advantage estimator", choices=tuple(ESTIMATORS))
    loss_agg: str = opt("token_mean", "loss aggregation", choices=tuple(AGGREGATIONS))
    clip_low: float = opt(0.2, "lower clip epsilon of the ratio")
    clip_high: float = opt(0.28, "upper clip epsilon of the ratio (clip-higher)")
    dual_clip: float | None = opt(None, "dual-clip constant c > 1 for negative advantages (off when unset)")
    entropy_coef: float = opt(0.0, "entropy bonus weight")
    kl_coef: float | None = opt(None, f"KL weight to the reference policy (0: no reference model is loaded). Default: {LEARNED_KL} with a learned reward (rm, qrm, prm, genrm, fapo: it keeps the policy where the reward model was trained; turning it off is warned about), 0 with rule rewards")
    kl_estimator: str = opt("k3", "KL estimator", choices=tuple(KL))
    kl_in: str = opt("loss", "where the KL goes: loss or reward", choices=("loss", "reward"))
    ref_model: str | None = opt(None, "reference model for the KL; default: the starting policy. 'none' disables the default")
    eps: float = opt(1e-6, "std epsilon of the estimators")
    zero_variance_tol: float = opt(1e-3, "a group whose reward spread is at most this x the batch's reward scale (max of std and mean |r|; plus 1e-8) counts as zero-variance: no advantage (float noise in a learned reward is not a signal)")
    qae_k: float = opt(0.4, "qae: quantile K of the baseline")
    w_lambda: float = opt(0.1, "w_reinforce: advantage of a success (failures get -1)")
    zvp_alpha: float = opt(0.1, "rl_zvp: entropy scale for zero-variance groups")
    success_threshold: float = opt(0.5, "w_reinforce / rl_zvp: a reward above this is a success")
    gamma: float = opt(1.0, "discount for token returns (reinforce_pp, gae)")
    lam: float = opt(0.95, "GAE lambda")
    value_coef: float = opt(0.5, "value loss weight (gae)")
    value_clip: float = opt(0.2, "value clip range (gae)")
    overlap: bool = opt(False, "score on a background thread while the next batch is generated and this one trains: faster steps with a slow reward, but one step off-policy (the next batch is sampled before this update; the loss uses the sampling policy's log-probs in the ratio). See training/pipeline.py")
    # sampling control
    dynamic_sampling: bool = opt(False, "DAPO: drop zero-variance groups and draw more prompts (up to --max-sampling-rounds)")
    max_sampling_rounds: int = opt(3, "dynamic sampling: rollout rounds per step at most")
    curriculum: str = opt("none", "variance: replay prompts whose group reward variance p=4(k/G)(1-k/G) >= --curriculum-kappa", choices=("none", "variance"))
    curriculum_kappa: float = opt(0.5, "variance curriculum: threshold on p")
    curriculum_fraction: float = opt(0.5, "variance curriculum: at most this fraction of a step's prompts are replayed")
    # optimisation
    lr: float = opt(2e-4, "AdamW learning rate")
    weight_decay: float = opt(0.0, "AdamW weight decay")
    warmup_steps: int = opt(0, "linear learning-rate warmup steps")
    max_grad_norm: float = opt(1.0, "gradient clipping norm")
    num_iterations: int = opt(1, "passes over each rollout batch (old logprobs are the rollout's)")
    micro_batch_size: int = opt(512, "completions per forward/backward; the rest is gradient accumulation")
    max_bad_steps: int = opt(3, "stop after this many consecutive steps with a non-finite loss or gradient")
    mixed_precision: str = opt("no", "no (fp32) by default: pinned so the documented default run reproduces bit for bit, and bf16 is slower on the default 64-wide policy (0.267 against 0.229 s/step on an AMX CPU); auto: bf16 autocast where the device does bf16 fast (CUDA, a CPU with AMX or AVX512-BF16; rewardlab/runtime.py), recorded in config.json", choices=PRECISIONS)
    gradient_checkpointing: bool = opt(False, "trade compute for memory in the policy")
    lora: bool = opt(False, "train LoRA adapters (peft) instead of all weights")
    lora_r: int = opt(16, "LoRA rank")
    lora_alpha: int = opt(32, "LoRA alpha")
    # monitors (learned rewards): gold probe, OOD share, hack alarm, samples
    probe_size: int = opt(256, "held-out gold probe: prompts whose greedy accuracy is measured every --probe-every steps (disjoint from the --eval-size prompts; needs gold answers); 0: off")
    probe_every: int = opt(10, "steps between gold probes")
    hack_gold_drop: float = opt(0.05, "hack alarm: gold accuracy (the mean of the last 3 probes) this far below its best while the proxy reward is still at or above its level then")
    hack_drift: float = opt(0.3, "hack alarm: mean completion length or PRM step count this far (relative) from its start")
    stop_on_alarm: bool = opt(False, "stop the run (policy, report and summary saved) when the hack monitor raises an alarm")
    rollback_on_alarm: bool = opt(False, "when the hack monitor raises an alarm, stop and keep the policy of the best gold probe so far instead of the current one (its weights are copied to CPU memory at each new best probe); implies --stop-on-alarm")
    max_none_steps: int = opt(2, "stop after this many steps in a row in which the reward is None (not applicable) for every completion: nothing is being trained (0: never stop)")
    max_constant_steps: int = opt(10, "stop after this many steps in a row in which the reward has one value for every completion: no learning signal (0: never stop)")
    log_samples: int = opt(4, "sample completions (prompt, completion, reward, gold) logged per step in metrics.jsonl and the report")
    # evaluation, logging, checkpoints
    eval_every: int = opt(50, "held-out greedy accuracy every N steps (0: only before and after)")
    eval_size: int = opt(500, "held-out prompts per evaluation")
    checkpoint_every: int = opt(50, "write a checkpoint every N steps (0: only at the end)")
    keep_checkpoints: int = opt(2, "checkpoints kept on disk")
    resume: bool = opt(False, "continue from the latest checkpoint in output_dir")
    overwrite: bool = opt(False, "replace the run already in output_dir (its config, metrics, checkpoints, policy and report are deleted); without it or --resume an existing run folder is refused")
    tensorboard: bool = opt(False, "also log to TensorBoard (needs `tensorboard`)")
    report: bool = opt(True, "write report.md / report.html and PNG plots at the end")
    seed: int = opt(0, "random seed")
    cpu_threads: int = opt(1, "torch CPU threads when running on CPU (0: 1 on a machine with <= 2 cores, else half of them; more than the free cores prints a warning). Tiny models gain nothing from more, and on a busy machine extra threads made steps 20x slower (measured)")

    def __post_init__(self) -> None:
        if self.reward is None:
            object.__setattr__(self, "reward", "env" if self.env else "verifier:math")
        if self.accuracy_reward is None:
            from rewards.environments import accuracy_reward_of

            object.__setattr__(self, "accuracy_reward", accuracy_reward_of(self.env) if self.env else "verifier:math")
        if self.env and self.reward != "env":
            raise ValueError(f"--env {self.env}: the reward is the environment's own (set its options in the spec, e.g. "
                             f"calculator:cost=0.05); leave --reward unset or pass --reward env, got {self.reward!r}")
        if self.reward == "env" and not self.env:
            raise ValueError("--reward env is the reward of an environment; pass --env SPEC (e.g. --env calculator)")
        if self.env and self.backend == "vllm":
            raise ValueError("--env rolls episodes out with the hf backend only (the vLLM sampler does not take turns yet); use --backend hf")
        if self.kl_coef is None:  # resolved here, so config.json records the value used
            from rewards.spec import is_learned

            object.__setattr__(self, "kl_coef", LEARNED_KL if is_learned(self.reward) else 0.0)
        if self.rollback_on_alarm:
            object.__setattr__(self, "stop_on_alarm", True)
        _choices("estimator", self.estimator, ESTIMATORS)
        _choices("loss_agg", self.loss_agg, AGGREGATIONS)
        _choices("kl_estimator", self.kl_estimator, KL)
        _choices("kl_in", self.kl_in, ("loss", "reward"))
        _choices("backend", self.backend, BACKENDS)
        _choices("mixed_precision", self.mixed_precision, PRECISIONS)
        _choices("curriculum", self.curriculum, ("none", "variance"))
        est = ESTIMATORS[self.estimator]
        if est.grouped and self.group_size < 2:
            ungrouped = sorted(n for n, e in ESTIMATORS.items() if not e.grouped)
            raise ValueError(
                f"--group-size {self.group_size} with --estimator {self.estimator}: a group estimator needs at "
                f"least 2 completions per prompt; use --group-size >= 2 or one of: {', '.join(ungrouped)}"
            )
        if self.kl_coef < 0:
            raise ValueError(f"--kl-coef must be >= 0, got {self.kl_coef}")
        if self.kl_coef > 0 and (self.ref_model or "").lower() == "none":
            raise ValueError(
                f"--kl-coef {self.kl_coef} needs a reference model, but --ref-model is 'none'; pass "
                "--ref-model PATH (or omit it to use the starting policy), or set --kl-coef 0"
            )
        if self.kl_coef > 0 and self.ref_model and self.ref_model.lower() != "none" and _looks_local(self.ref_model) and not Path(self.ref_model).exists():
            raise ValueError(f"--ref-model {self.ref_model!r} does not exist; pass a model folder or a hub name")
        if self.dynamic_sampling and self.group_size < 2:
            raise ValueError("--dynamic-sampling needs --group-size >= 2 (it drops groups whose rewards are all equal)")
        positive = ("steps", "prompts_per_step", "group_size", "max_new_tokens", "max_turns", "num_iterations", "micro_batch_size",
                    "max_bad_steps", "max_sampling_rounds", "eval_size", "keep_checkpoints", "lr")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"--{name.replace('_', '-')} must be > 0, got {getattr(self, name)}")
        for name in ("eval_every", "checkpoint_every", "warmup_steps", "entropy_coef", "temperature", "top_k", "probe_size",
                     "log_samples", "zero_variance_tol", "max_none_steps", "max_constant_steps"):
            if getattr(self, name) < 0:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(self, name)}")
        if self.probe_every <= 0 or self.hack_gold_drop <= 0 or self.hack_drift <= 0:
            raise ValueError("--probe-every, --hack-gold-drop and --hack-drift must be > 0")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"--top-p must be in (0, 1], got {self.top_p}")
        if self.temperature == 0:
            raise ValueError("--temperature 0 (greedy) gives every completion of a group the same text; use > 0")
        if not (0 <= self.clip_low < 1 and self.clip_high >= 0):
            raise ValueError(f"--clip-low must be in [0, 1) and --clip-high >= 0, got {self.clip_low}, {self.clip_high}")
        if self.dual_clip is not None and self.dual_clip <= 1:
            raise ValueError(f"--dual-clip must be > 1, got {self.dual_clip}")
        if not 0 < self.qae_k < 1:
            raise ValueError(f"--qae-k must be in (0, 1), got {self.qae_k}")
        if self.resume and self.overwrite:
            raise ValueError("--resume continues the run in --output-dir and --overwrite deletes it; pass one of them")
        if self.model is not None and _looks_local(self.model) and not Path(self.model).exists():
            raise ValueError(f"--model {self.model!r} does not exist; pass a model folder, a hub name, or omit it for the default policy")

    @property
    def needs_reference(self) -> bool:
        return self.kl_coef > 0


def _looks_local(name: str) -> bool:
    """A path-like name (./x, /x, ~/x, x/y/z) rather than a hub id (org/name)."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1
