"""What the RL loop's phases share (`Run`) and how it is built.

`prepare_run` checks everything it can before any model is loaded (reward, data, columns, backend,
optional packages), so bad configuration fails at once and names the option; `setup_run` then
loads the models, builds the optimizer and schedule under `accelerate`, and returns the `Run`.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import torch

from rewardlab.runtime import make_accelerator, resolve_precision
from training.advantages import ESTIMATORS
from training.config import RLConfig
from training.kl import LEARNED_KL
from training.curriculum import VarianceCurriculum
from training.data import PromptStream, check_columns, load_prompt_rows, parse_task
from training.episodes import EnvironmentReward
from training.reward_calls import required_columns


@dataclass
class Prepared:
    """What `prepare_run` checked and loaded before any model: the rewards, the prompt rows
    (training, held-out evaluation, gold probe) and what to warn about."""

    reward_fn: Any
    accuracy_fn: Any  # None: no gold answers or --accuracy-reward none
    rows: list[dict]
    eval_rows: list[dict]
    probe_rows: list[dict]
    warnings: list[str] = field(default_factory=list)
    rm_prompt_overlap: dict[str, Any] = field(default_factory=dict)  # reward_model_overlap's report


def prepare_run(config: RLConfig) -> Prepared:
    """Everything that can be checked without a model: reward, data, columns, backend.
    Bad configuration fails here, naming the option."""
    from rewards import build_reward
    from rewards.spec import is_learned

    from training.guards import check_policy_vocabulary
    from rewardlab.runs import check_run_dir

    check_run_dir(config.output_dir, config.resume, config.overwrite)
    reward_fn = EnvironmentReward.build(config.env) if config.env else build_reward(config.reward)
    acc_spec = config.accuracy_reward if (config.accuracy_reward or "none").lower() != "none" else None
    columns = {"prompt_column": config.prompt_column, "answer_column": config.answer_column}
    rows = load_prompt_rows(config.data, split="train", seed=config.seed, pool="rl", **columns)
    check_columns(rows, sorted(required_columns(reward_fn)), config.data)
    if config.env:
        from training.guards import check_env_vocabulary

        reward_fn.check(rows[0], config.data)
        check_env_vocabulary(config.model, tuple(getattr(reward_fn.factory(), "stop", ()) or ()), config.env)
    check_policy_vocabulary(config.model, rows)
    held_out: list[dict] = []  # the first eval_size rows are the evaluation set, the next probe_size the gold probe
    if parse_task(config.data) is not None and config.eval_data is None:
        try:
            held_out = load_prompt_rows(config.data, split="test", limit=config.eval_size + config.probe_size, seed=config.seed)
        except ValueError:  # a small task's test split has too few problems for both: the probe uses training prompts
            held_out = load_prompt_rows(config.data, split="test", limit=config.eval_size, seed=config.seed)
    elif config.eval_data:
        held_out = load_prompt_rows(config.eval_data, split="test", seed=config.seed, flag="--eval-data", **columns)
    eval_rows = held_out[: config.eval_size]
    probe_rows = held_out[config.eval_size : config.eval_size + config.probe_size] or rows[: config.probe_size]
    rm_overlap, overlap_warnings = reward_model_overlap(config.reward, rows, eval_rows)
    has_gold = "answer" in rows[0]
    accuracy_fn = build_reward(acc_spec) if acc_spec and has_gold else None
    warnings = overlap_warnings
    if is_learned(config.reward) and config.kl_coef == 0:
        warnings.append(f"--kl-coef 0 with a learned reward ({config.reward}): nothing keeps the policy where the reward "
                        f"model was trained, and it will find the RM's blind spots; the default is {LEARNED_KL}")
    if config.backend == "vllm":
        from training.vllm_backend import check_vllm_backend

        check_vllm_backend()
    if config.lora:
        try:
            import peft  # noqa: F401
        except ImportError:
            raise ValueError("--lora needs peft: `pip install \"rewardlab[lora]\"`") from None
    if config.tensorboard:
        try:
            from torch.utils.tensorboard import SummaryWriter  # noqa: F401
        except ImportError:
            raise ValueError("--tensorboard needs the tensorboard package: `pip install tensorboard`") from None
    return Prepared(reward_fn=reward_fn, accuracy_fn=accuracy_fn, rows=rows, eval_rows=eval_rows,
                    probe_rows=probe_rows if config.probe_size and accuracy_fn is not None else [], warnings=warnings,
                    rm_prompt_overlap=rm_overlap)


OVERLAP_WARN = 0.01  # warn when more than 1% of RL's training prompts, or any held-out prompt, trained the RM


def reward_model_overlap(spec: str, rows: list[dict], eval_rows: list[dict]) -> tuple[dict[str, Any], list[str]]:
    """For each reward-model term of the reward, the share of RL's training prompts and of its
    held-out prompts that the reward model was trained on (from the record `train-rm` keeps with
    it: `reward_models.prompt_record`), and warnings where the share is above OVERLAP_WARN (any
    held-out prompt counts: the RM has seen the answers the evaluation asks for)."""
    from reward_models.prompt_record import prompt_overlap, recorded_prompts
    from rewards.spec import trained_model_paths

    report: dict[str, Any] = {}
    warnings = []
    for term, path in trained_model_paths(spec):
        seen = recorded_prompts(path)
        if seen is None:
            report[term] = "unknown: the reward model has no record of its training prompts (a hub model, or trained before the record existed)"
            continue
        train = prompt_overlap([r["prompt"] for r in rows], seen)
        heldout = prompt_overlap([r["prompt"] for r in eval_rows], seen)
        report[term] = {"train_prompts": round(train, 4), "heldout_prompts": round(heldout, 4), "rm_prompts": len(seen)}
        seen_canonical = recorded_prompts(path, canonical=True)  # reordered twins (`7+12=` for `12+7=`) too
        if seen_canonical is not None:
            train = prompt_overlap([r["prompt"] for r in rows], seen_canonical, canonical=True)
            heldout = prompt_overlap([r["prompt"] for r in eval_rows], seen_canonical, canonical=True)
        report[term].update(canonical_train_prompts=None if seen_canonical is None else round(train, 4),
                            canonical_heldout_prompts=None if seen_canonical is None else round(heldout, 4))
        if train > OVERLAP_WARN or heldout > 0:
            warnings.append(f"the reward model of {term} was trained on {train:.1%} of RL's training prompts and {heldout:.1%} "
                            "of its held-out prompts (counting reordered twins): it has seen what RL is asked (and held-out "
                            "accuracy may be inflated); draw RM data from other prompts (for a task, `rewardlab rm-data` uses its rm pool)")
    return report, warnings


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class LoadedModels:
    """The models `load_models` returns: the policy (with LoRA when asked), its tokenizer, the
    value head (gae) and the frozen reference model (when the KL weight is > 0), or None."""

    model: Any
    tokenizer: Any
    value_head: Any
    ref_model: Any
    policy_path: str


def load_models(config: RLConfig, accelerator: Any) -> LoadedModels:
    from training.policy import default_policy_path, load_policy

    policy_path = config.model or str(default_policy_path())
    model, tokenizer = load_policy(policy_path)
    if config.gradient_checkpointing:
        enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
        enable()
        model.config.use_cache = False
    if config.lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, target_modules="all-linear", task_type="CAUSAL_LM"))
    value_head = None
    if ESTIMATORS[config.estimator].needs_values:
        value_head = torch.nn.Linear(model.config.hidden_size, 1)
        torch.nn.init.zeros_(value_head.weight), torch.nn.init.zeros_(value_head.bias)
    ref_model = None
    if config.needs_reference:  # no reference model at all when the KL weight is 0
        ref_path = config.ref_model or policy_path
        ref_model, _ = load_policy(ref_path)
        ref_model.requires_grad_(False).eval()
        ref_model = ref_model.to(accelerator.device)
    return LoadedModels(model=model, tokenizer=tokenizer, value_head=value_head, ref_model=ref_model, policy_path=policy_path)


def _mixed_precision(config: RLConfig) -> str:
    return resolve_precision(config.mixed_precision)  # rewardlab/runtime.py; the default `no` is fp32 on every device



@dataclass
class Counters:
    """What the loop counts across steps (saved in checkpoints as a plain dict)."""

    bad_steps_total: int = 0  # steps with a non-finite loss or gradient, skipped
    bad_steps_in_a_row: int = 0
    prompts_seen: int = 0  # prompts drawn, dynamic sampling's extra rounds included
    no_signal_steps: int = 0  # steps where no group had reward variance

    def state(self) -> dict[str, int]:
        return asdict(self)

    def load_state(self, state: dict[str, int]) -> None:
        """Restore a checkpoint's counters; a counter the checkpoint predates stays 0."""
        for name, value in state.items():
            if not hasattr(self, name):
                raise ValueError(f"checkpoint counters: unknown counter {name!r}; known: {', '.join(asdict(self))}")
            setattr(self, name, int(value))


@dataclass
class Run:
    """What the loop's phases share: the configuration, the models and optimizer, the reward, the
    prompt stream and the counters that checkpoints carry."""

    config: RLConfig
    accelerator: Any
    model: Any
    tokenizer: Any
    value_head: Any
    ref_model: Any
    optimizer: Any
    scheduler: Any
    params: list
    vllm: Any
    reward_fn: Any
    accuracy_fn: Any
    stream: PromptStream
    curriculum: VarianceCurriculum | None
    counters: Counters

    @property
    def same_accuracy(self) -> bool:
        return self.accuracy_fn is not None and self.config.accuracy_reward == self.config.reward


def setup_run(config: RLConfig, prepared: Prepared) -> Run:
    """Devices, seeds, models, optimizer and schedule, the sampler (vLLM or HF), the prompt stream."""
    accelerator = make_accelerator(_mixed_precision(config))
    _seed_everything(config.seed + accelerator.process_index)
    models = load_models(config, accelerator)
    model, value_head = models.model, models.value_head
    params = [p for p in model.parameters() if p.requires_grad] + (list(value_head.parameters()) if value_head else [])
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / (config.warmup_steps + 1)))
    if value_head is not None:
        model, value_head, optimizer, scheduler = accelerator.prepare(model, value_head, optimizer, scheduler)
    else:
        model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    vllm = None
    if config.backend == "vllm":
        from training.vllm_backend import VLLMSampler

        vllm = VLLMSampler(models.policy_path, models.tokenizer, config.vllm_gpu_memory,
                           max_model_len=getattr(accelerator.unwrap_model(model).config, "max_position_embeddings", 4096), seed=config.seed,
                           accelerator=accelerator)
    curriculum = VarianceCurriculum(config.curriculum_kappa, config.curriculum_fraction) if config.curriculum == "variance" else None
    return Run(config=config, accelerator=accelerator, model=model, tokenizer=models.tokenizer, value_head=value_head,
               ref_model=models.ref_model, optimizer=optimizer, scheduler=scheduler, params=params, vllm=vllm,
               reward_fn=prepared.reward_fn, accuracy_fn=prepared.accuracy_fn,
               stream=PromptStream(prepared.rows, seed=config.seed + 1000 * accelerator.process_index),
               curriculum=curriculum, counters=Counters())


def resolved_precision(config: RLConfig) -> RLConfig:
    """`--mixed-precision auto` replaced by what it chose on this device (config.json records it);
    any other choice is returned as it is (the default `no` runs the fp32 code unchanged)."""
    if config.mixed_precision != "auto":
        return config
    return replace(config, mixed_precision=resolve_precision("auto"))
