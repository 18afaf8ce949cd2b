"""`rewardlab train-rm`: train a bt / quantile / prm reward model, readable top to bottom.

config -> find_resume -> prepare_data -> build_model -> setup_training (encode, batches,
optimizer) -> start_log -> train_steps [train_step -> log -> evaluate -> save_rm_checkpoint] ->
finish (final save, OOD detector) -> summary. Each phase is a function over an `RMRun`. Devices and multi-GPU come from `accelerate`
(`accelerate launch -m rewardlab train-rm ...` runs the same code on several GPUs; the model and
optimizer are prepared by it, each process reads its own slice of every batch).

Outputs in `--output`: `config.json`, `metrics.jsonl` (one JSON object per log/eval event),
`checkpoints/step-N/` (model, tokenizer, `trainer_state.pt`, `trainer_state.json`; written
to a temp dir, then renamed, so a killed run leaves the last complete one: `rewardlab/runs.py`,
shared with `rl`), and `final/` (load it with `reward_models.load_reward_model`).
"""

from __future__ import annotations

import json
import math
import pickle
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import torch

from rewardlab.config import check_fields, opt, with_defaults
from rewardlab.runtime import RuntimeConfig, attention_for, make_accelerator, precision_record
from rewardlab.runs import (check_run_dir, resume_checkpoint, save_checkpoint, start_run_dir, truncate_metrics,
                            write_folder_atomically)
from reward_models import data as synthetic
from reward_models.backbones import BackboneConfig, default_backbone_path, is_causal_lm, load_tokenizer, padding_free_mismatch
from reward_models.batches import BatchSampler, encode_rows, make_batch, rows_by_prompt
from reward_models.encoding import PairEncoder
from reward_models.evaluation import EVALUATORS, RMScheduleConfig, clip_eta, is_sample_rows
from reward_models.loading import KIND_FORMATS, RMRowsConfig, check_rows, detect_format, heldout_split, load_rm_rows, score_columns_of
from reward_models.lora import AdapterConfig, apply_lora, load_lora_checkpoint, merge_lora
from reward_models.modeling import DEFAULT_TAUS, KINDS, RewardModel, RewardModelConfig
from reward_models.objectives import OBJECTIVES, ObjectiveConfig
from reward_models.prompt_record import record_training_prompts
from reward_models.scoring import LoadedRewardModel


# train-rm's defaults: threads by the machine (0), bf16 autocast where the device does it fast (auto)
RMRuntimeConfig = with_defaults(RuntimeConfig, cpu_threads=0, mixed_precision="auto")


# the pieces, listed last to first: a dataclass puts the fields of its last base first (--help's order)
@dataclass(frozen=True)
class TrainRMConfig(RMRuntimeConfig, AdapterConfig, RMScheduleConfig, ObjectiveConfig, BackboneConfig, RMRowsConfig):
    """train-rm: rows (`RMRowsConfig`), backbone (`BackboneConfig`), objective (`ObjectiveConfig`),
    schedule (`RMScheduleConfig`), LoRA (`AdapterConfig`), seed, threads and precision (`RuntimeConfig`), and
    the optimisation's own settings."""

    kind: str = opt("bt", "reward model kind (qrm = quantile, the name the reward spec uses)", choices=(*KINDS, "qrm"))
    output: str | None = opt(None, "output directory; default: outputs/rm-<kind>")
    steps: int = opt(150, "optimizer steps", ge=1)
    batch_size: int = opt(16, "pairs (bt), rows (quantile) or solutions (prm) per step, over all processes", ge=1)
    lr: float = opt(1e-4, "peak learning rate (AdamW, linear warmup then linear decay)", gt=0)
    warmup_steps: int = opt(20, "learning-rate warmup steps", ge=0)
    weight_decay: float = opt(0.0, "AdamW weight decay")
    max_grad_norm: float = opt(1.0, "gradient clipping norm (0 = off)")
    resume: bool = opt(False, "continue from the last complete checkpoint in --output")

    def __post_init__(self) -> None:
        if self.kind == "qrm":
            object.__setattr__(self, "kind", "quantile")
        for check in (self.check_rm_rows, self.check_backbone, self.check_objective, self.check_schedule, self.check_adapter,
                      self.check_runtime):
            check()
        check_fields(self, TrainRMConfig)

    @property
    def output_dir(self) -> Path:
        return Path(self.output or f"outputs/rm-{self.kind}")

    @property
    def taus(self) -> tuple[float, ...]:
        if self.n_quantiles == 19:
            return DEFAULT_TAUS
        return tuple((i + 1) / (self.n_quantiles + 1) for i in range(self.n_quantiles))


GENERATORS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "preference": synthetic.make_preference_rows,
    "stepwise": synthetic.make_stepwise_rows,
    "scored": synthetic.make_scored_rows,
}


def prepare_data(cfg: TrainRMConfig) -> RMData:
    """The training and held-out rows, their format and score columns; stops on bad data."""
    if cfg.data is None:
        fmt = KIND_FORMATS[cfg.kind][0]
        train = GENERATORS[fmt](cfg.n_train, seed=cfg.seed, split="train")
        held = GENERATORS[fmt](cfg.n_eval, seed=cfg.seed, split="test")
        source = f"generated {fmt} data (arithmetic, seed {cfg.seed})"
    else:
        rows = load_rm_rows(cfg.data, prompt_column=cfg.prompt_column)
        fmt = detect_format(rows, cfg.kind, cfg.data)
        cols = score_columns_of(rows, cfg.score_columns, cfg.data) if fmt == "scored" else []
        check_rows(rows, fmt, cfg.data, cols)
        if cfg.eval_data:
            train, held = rows, load_rm_rows(cfg.eval_data, flag="--eval-data", prompt_column=cfg.prompt_column)
        else:
            train, held = heldout_split(rows, cfg.eval_fraction)
            if not train or not held:
                raise ValueError(f"{cfg.data}: {len(rows)} rows are too few to hold out {cfg.eval_fraction:.0%} by prompt; pass --eval-data")
        source = cfg.data
    cols = score_columns_of(train, cfg.score_columns, source) if fmt == "scored" else []
    check_rows(train, fmt, cfg.data or "generated data", cols)
    if not is_sample_rows(held):  # policy samples with gold labels are evaluated as such (best-of-N, correlation)
        check_rows(held, fmt, cfg.eval_data or cfg.data or "generated data", cols)
    return RMData(fmt=fmt, train_rows=train, eval_rows=held, cols=cols, source=source)


def make_optimizer(model: torch.nn.Module, cfg: TrainRMConfig) -> torch.optim.Optimizer:
    """AdamW over the trainable parameters, fused (one kernel for all parameters: much faster on
    CPU too) where torch supports it."""
    params = [p for p in model.parameters() if p.requires_grad]
    try:
        return torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True)
    except (RuntimeError, TypeError):  # an old torch or a device without the fused kernel
        return torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)


OOD_FIT_TEXTS = 1000  # responses the OOD detector is fitted and calibrated on (700 + 300)


def fit_ood_detector(rm: LoadedRewardModel, rows: list[dict], directory: Path, seed: int, n: int = OOD_FIT_TEXTS) -> Path:
    """Fit the Mahalanobis OOD detector on a sample of about `n` training responses (a preference
    row gives two) and save it beside the model (`ood.npz`), where `load_reward_model` finds it and
    RL reports the share of its samples that fall outside the RM's training distribution. It costs
    one forward pass per response: 4,000 responses took 19 s of a 44 s MiniLM run, 1,000 take 5 s,
    and a Ledoit-Wolf covariance of 700 embeddings is stable (calibrated on the other 300)."""
    from reward_models.ood import OODMonitor, rows_to_texts
    from reward_models.scoring import OOD_FILE

    per_row = max(1, len(rows_to_texts(rows[:1])[1]))  # responses per row, as the detector reads them
    picked = random.Random(seed).sample(rows, min(max(n // per_row, 2), len(rows)))
    return OODMonitor.fit(rm, picked, seed=seed).save(directory / OOD_FILE)


def load_trainer_state(checkpoint: Path) -> dict[str, Any]:
    """The optimizer / scheduler / step state of a checkpoint, unpickled with `weights_only=True`
    (tensors and plain values only), so a tampered file cannot run code."""
    path = checkpoint / "trainer_state.pt"
    try:
        return torch.load(path, weights_only=True)
    except pickle.UnpicklingError as exc:
        raise ValueError(f"--resume: {path} holds more than tensors and plain values; refusing to load it "
                         f"(was it written by another program?): {str(exc).splitlines()[0]}") from None


def target_reached(stop_at: str | None, result: dict[str, float]) -> bool:
    """Whether the held-out `result` meets `--stop-at METRIC=VALUE` (an unknown metric is an error
    naming the ones the evaluation gives).

    >>> target_reached("pairwise_accuracy=0.9", {"pairwise_accuracy": 0.93}), target_reached(None, {})
    (True, False)
    """
    if not stop_at:
        return False
    name, _, value = stop_at.partition("=")
    if name not in result:
        raise ValueError(f"--stop-at {stop_at!r}: the evaluation gives no {name!r}; it gives {', '.join(sorted(result))}")
    return result[name] >= float(value)


# ---------------------------------------------------------------------------------------------
# the run: what its phases share, and the phases in order

@dataclass
class RMData:
    """The training data, read and checked (`prepare_data`)."""

    fmt: str  # preference, scored or stepwise
    train_rows: list[dict]
    eval_rows: list[dict]
    cols: list[str]  # score columns (scored data), else []
    source: str  # what the data is, for the log


@dataclass
class RMRun:
    """What the phases of `train-rm` share: the configuration, the data as the model reads it, the
    model and its optimizer, and where the run continues from."""

    cfg: TrainRMConfig
    accelerator: Any
    data: RMData
    model: Any
    tokenizer: Any
    backbone: str
    optimizer: Any = None
    scheduler: Any = None
    items: list[dict] = field(default_factory=list)  # the encoded training rows
    sampler: BatchSampler | None = None
    rank_unit: float = 1.0  # quantile ranking: a tenth of the score's range
    resume_from: Path | None = None
    start_step: int = 0
    padding_free: bool = False  # --padding-free asked and the backbone passed the check

    @property
    def metrics_path(self) -> Path:
        return self.cfg.output_dir / "metrics.jsonl"

    def log(self, record: dict[str, Any]) -> None:
        with self.metrics_path.open("a") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")


def train(cfg: TrainRMConfig, progress: bool = True) -> dict[str, Any]:
    """Train, evaluate, checkpoint; returns {"final": path, "eval": last eval metrics, ...}."""
    from rewardlab.runtime import cpu_threads

    with cpu_threads(cfg.cpu_threads, "train-rm"):
        return _train(cfg, progress)


def _train(cfg: TrainRMConfig, progress: bool) -> dict[str, Any]:
    from accelerate.utils import set_seed

    precision = precision_record(cfg.mixed_precision)
    cfg = replace(cfg, mixed_precision=precision["mixed_precision"],  # config.json says what auto chose
                  freeze_embeddings=precision["mixed_precision"] == "bf16" if cfg.freeze_embeddings is None else cfg.freeze_embeddings)
    accelerator = make_accelerator(cfg.mixed_precision)
    set_seed(cfg.seed)
    resume_from = find_resume(cfg, accelerator)  # a folder that holds a run is refused without --resume
    run = build_model(cfg, accelerator, prepare_data(cfg), resume_from)
    setup_training(run)
    start_log(run, precision)
    eval_result, done, t0 = train_steps(run, progress)
    final = finish(run, eval_result, done, t0)
    data = run.data
    return {"final": str(final), "eval": eval_result, "format": data.fmt, "n_train": len(data.train_rows),
            "n_eval": len(data.eval_rows), "seconds": time.perf_counter() - t0, "steps": done}


def find_resume(cfg: TrainRMConfig, accelerator: Any) -> Path | None:
    """The checkpoint `--resume` continues from (`rewardlab.runs.resume_checkpoint`); None without --resume."""
    check_run_dir(cfg.output_dir, cfg.resume, None, flag="--output")
    if not cfg.resume:
        return None
    root = cfg.output_dir / "checkpoints"
    if not any(p.is_dir() for p in root.glob("step-*")):
        raise FileNotFoundError(f"--resume: no complete checkpoint under {root}; run without --resume")
    return resume_checkpoint(root, log=accelerator.print, command="train-rm", flag="--output")


def build_model(cfg: TrainRMConfig, accelerator: Any, data: RMData, resume_from: Path | None) -> RMRun:
    """The tokenizer and the reward model: resumed from a checkpoint, a new head on a trained RM's
    backbone (--init-from), or a new head on a backbone; LoRA adapters with --lora."""
    backbone = cfg.init_from or cfg.backbone or default_backbone_path()
    tokenizer = load_tokenizer(str(resume_from or backbone))
    if cfg.lm_coef is None:  # resolved once, saved in config.json
        causal = RewardModelConfig.from_pretrained(cfg.init_from).lm_head != "none" if cfg.init_from else is_causal_lm(str(backbone))
        cfg = replace(cfg, lm_coef=1.0 if causal else 0.0)
    settings = dict(taus=cfg.taus, attributes=data.cols or ["score"], gating=cfg.gating, gate_temperature=cfg.gate_temperature)
    lora_resume = resume_from is not None and cfg.lora
    if resume_from is not None and not lora_resume:
        model = RewardModel.from_pretrained(str(resume_from))
    elif cfg.init_from:
        torch.manual_seed(cfg.seed)
        model = RewardModel.from_reward_model(cfg.init_from, cfg.kind, **settings)
    else:
        torch.manual_seed(cfg.seed)
        model = RewardModel.from_backbone(
            backbone, cfg.kind, keep_lm_head=cfg.lm_coef > 0, pooling=cfg.pooling, max_seq_length=cfg.max_seq_length,
            step_separator=cfg.step_separator, use_chat_template=bool(getattr(tokenizer, "chat_template", None)), **settings,
        )
    if cfg.lora:
        model = apply_lora(model, cfg)
        if lora_resume:
            load_lora_checkpoint(model, resume_from)
    if cfg.lm_coef > 0 and model.config.lm_head == "none":
        raise ValueError(f"--lm-coef {cfg.lm_coef}: the backbone {backbone!r} has no LM output layer (an encoder, or a model "
                         "saved without one); use --lm-coef 0 or a causal-LM checkpoint")
    return RMRun(cfg=cfg, accelerator=accelerator, data=data, model=model, tokenizer=tokenizer, backbone=str(backbone),
                 resume_from=resume_from)


def setup_training(run: RMRun) -> None:
    """Encode the data, the batch order, the optimizer and schedule (restored when resuming), and
    `accelerate`'s wrapping of the model and optimizer."""
    cfg, data, model = run.cfg, run.data, run.model
    enc = PairEncoder(run.tokenizer, max_length=cfg.max_seq_length, append_eos=model.config.append_eos,
                      chat_template=getattr(model.config, "use_chat_template", None))
    run.items = encode_rows(enc, data.train_rows, data.fmt, data.cols, cfg.step_separator)
    run.sampler = BatchSampler(len(run.items), cfg.batch_size, cfg.seed, rows_by_prompt(data.train_rows))
    first = [float(r[data.cols[0]]) for r in data.train_rows] if data.fmt == "scored" else [0.0, 1.0]
    run.rank_unit = max((max(first) - min(first)) / 10, 1e-6)
    if cfg.disable_dropout:
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
    if cfg.freeze_embeddings:
        model.backbone.get_input_embeddings().weight.requires_grad_(False)
    backbone_config = model.backbone.config
    backbone_config._attn_implementation = attention_for(cfg.mixed_precision, run.accelerator.device.type,
                                                         backbone_config._attn_implementation)
    run.padding_free = cfg.padding_free and _padding_free_works(run)
    optimizer = make_optimizer(model, cfg)
    schedule = lambda s: min(1.0, (s + 1) / max(1, cfg.warmup_steps)) * max(0.0, 1 - s / cfg.steps)  # noqa: E731
    run.scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    if run.resume_from is not None:
        state = load_trainer_state(run.resume_from)
        optimizer.load_state_dict(state["optimizer"])
        run.scheduler.load_state_dict(state["scheduler"])
        run.start_step = state["step"]
    # the scheduler stays unprepared: the global batch is fixed (split across processes), so one
    # optimizer step is one schedule step (a prepared scheduler would step once per process)
    run.model, run.optimizer = run.accelerator.prepare(model, optimizer)


def _padding_free_works(run: RMRun) -> bool:
    """Whether the packed forward gives the padded forward's hidden states on a training batch
    (`backbones.padding_free_mismatch`); if not, a note says why and the length chunks are used."""
    model = run.model
    batch = make_batch([run.items[i] for i in run.sampler.indices(run.start_step)[:16]], run.data.fmt, run.tokenizer.pad_token_id)
    inputs = {k: v for k, v in batch["inputs"].items() if k != "token_type_ids" or model.uses_token_types}
    was_training = model.training
    model.eval()  # dropout (if kept on) would make the two forwards differ
    try:
        why = padding_free_mismatch(model.backbone, inputs)
    finally:
        model.train(was_training)
    if why is not None:
        run.accelerator.print(f"train-rm: padding-free batches off ({why}); length-sorted chunks instead")
    return why is None


def start_log(run: RMRun, precision: dict[str, Any] | None = None) -> None:
    """config.json (`rewardlab.runs.start_run_dir`), metrics logged after the resumed checkpoint
    dropped, and the `start` event (with `precision`: what --mixed-precision asked, used, and the CPU's bf16 support)."""
    if not run.accelerator.is_main_process:
        return
    cfg, data, model = run.cfg, run.data, run.model
    cfg.output_dir.mkdir(parents=True, exist_ok=True)
    start_run_dir(cfg, cfg.output_dir, run.resume_from)
    if run.resume_from is not None:
        truncate_metrics(run.metrics_path, run.start_step, drop=lambda record: record["event"] == "end")
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    run.log({"event": "start", "step": run.start_step, "format": data.fmt, "source": data.source, "n_train": len(data.train_rows),
             "n_eval": len(data.eval_rows), "backbone": run.backbone, "resumed_from": str(run.resume_from or ""),
             "trainable_params": trainable, "padding_free": run.padding_free, "params": sum(p.numel() for p in model.parameters()),
             **(precision or {})})


def train_step(run: RMRun, step: int) -> tuple[torch.Tensor, dict[str, float], int]:
    """One optimizer step on this process's slice of the step's batch: (loss, stats, rows in the batch)."""
    cfg, accelerator = run.cfg, run.accelerator
    per_process = max(1, cfg.batch_size // accelerator.num_processes)
    idx = run.sampler.indices(step)
    mine = idx[accelerator.process_index * per_process : (accelerator.process_index + 1) * per_process] or idx[:1]
    batch = make_batch([run.items[i] for i in mine], run.data.fmt, run.tokenizer.pad_token_id)
    batch = {k: ({kk: vv.to(accelerator.device) for kk, vv in v.items()} if isinstance(v, dict) else v.to(accelerator.device)) for k, v in batch.items()}
    # several forwards before one backward would confuse DDP's gradient hooks: chunk on one process only
    batch["chunks"] = cfg.length_chunks if accelerator.num_processes == 1 else 1
    batch["padding_free"] = run.padding_free
    batch["rank_unit"] = run.rank_unit
    loss, stats = OBJECTIVES[(cfg.kind, run.data.fmt)](run.model, batch, cfg)
    if not math.isfinite(loss.item()):
        raise FloatingPointError(f"step {step}: loss is {loss.item()}; lower --lr (now {cfg.lr})")
    accelerator.backward(loss)
    if cfg.max_grad_norm > 0:
        accelerator.clip_grad_norm_(run.model.parameters(), cfg.max_grad_norm)
    run.optimizer.step()
    run.scheduler.step()
    run.optimizer.zero_grad(set_to_none=True)
    return loss, stats, len(idx)


def train_steps(run: RMRun, progress: bool) -> tuple[dict[str, float], int, float]:
    """The loop: step -> log -> evaluate (and --stop-at) -> checkpoint. Returns (the last
    evaluation, the steps done, the start time)."""
    from accelerate.utils import broadcast_object_list
    from rewardlab.progress import progress_bar

    cfg, accelerator = run.cfg, run.accelerator
    run.model.train()
    bar = progress_bar(range(run.start_step, cfg.steps), desc=f"train-rm {cfg.kind}", initial=run.start_step,
                       total=cfg.steps, disable=not (progress and accelerator.is_local_main_process))
    eval_result: dict[str, float] = {}
    t0, seen, done = time.perf_counter(), 0, run.start_step
    for step in bar:
        loss, stats, n = train_step(run, step)
        seen += n
        done = step + 1
        if accelerator.is_main_process and (done % cfg.log_every == 0 or done == cfg.steps):
            rate = seen / (time.perf_counter() - t0)
            run.log({"event": "train", "step": done, "loss": loss.item(), "lr": run.scheduler.get_last_lr()[0], "samples_per_s": rate, **stats})
            bar.set_postfix(loss=f"{loss.item():.3f}")
        reached = False
        if done % cfg.eval_every == 0 or done == cfg.steps:
            if accelerator.is_main_process:
                eval_result = evaluate(run, done)
                headline = {k: round(v, 3) for k, v in eval_result.items() if "/" not in k}
                bar.write(f"step {done}: {headline}")
                reached = target_reached(cfg.stop_at, eval_result)
                if reached:
                    bar.write(f"step {done}: {cfg.stop_at} reached; stopping (--stop-at)")
            reached = broadcast_object_list([reached])[0]
        if done % cfg.save_every == 0 or done == cfg.steps or reached:
            if accelerator.is_main_process:
                save_rm_checkpoint(run, done)
            accelerator.wait_for_everyone()
        if reached:
            break
    bar.close()
    return eval_result, done, t0


def evaluate(run: RMRun, step: int) -> dict[str, float]:
    """Held-out metrics of the current model (logged as an `eval` event)."""
    cfg, data = run.cfg, run.data
    run.model.eval()
    rm = LoadedRewardModel(run.accelerator.unwrap_model(run.model), run.tokenizer, batch_size=cfg.eval_batch_size)
    result = EVALUATORS[(cfg.kind, "samples" if is_sample_rows(data.eval_rows) else data.fmt)](rm, data.eval_rows, data.cols, cfg.eval_batch_size)
    run.model.train()
    run.log({"event": "eval", "step": step, **result})
    return result


def save_rm_checkpoint(run: RMRun, step: int) -> Path:
    """`checkpoints/step-N/`: the model (LoRA adapters unmerged), tokenizer and optimizer /
    scheduler state, through `rewardlab.runs.save_checkpoint` (atomic, rotated, resumable)."""
    state = {"optimizer": run.optimizer.state_dict(), "scheduler": run.scheduler.state_dict(), "step": step}

    def write(tmp: Path) -> None:
        _save_model(run, tmp)
        torch.save(state, tmp / "trainer_state.pt")

    return save_checkpoint(run.cfg.output_dir / "checkpoints", step, write, {}, keep=run.cfg.keep_checkpoints, name=f"step-{step}")


def _save_model(run: RMRun, path: Path) -> None:
    run.accelerator.unwrap_model(run.model).save_pretrained(path)
    run.tokenizer.save_pretrained(path)


def finish(run: RMRun, eval_result: dict[str, float], done: int, t0: float) -> Path:
    """`final/`: a plain reward model (LoRA merged; a PRM's Clip threshold set), saved atomically
    with an OOD detector beside it."""
    cfg, data, accelerator = run.cfg, run.data, run.accelerator
    final = cfg.output_dir / "final"
    if accelerator.is_main_process:
        if not eval_result:  # resumed at the end: evaluate once so the summary has numbers
            eval_result.update(evaluate(run, cfg.steps))
        merge_lora(accelerator.unwrap_model(run.model), cfg.output_dir / "lora_adapter")  # final/ is a plain reward model
        run.model.eval()
        loaded = LoadedRewardModel(accelerator.unwrap_model(run.model), run.tokenizer, batch_size=cfg.eval_batch_size)
        if cfg.kind == "prm" and not is_sample_rows(data.eval_rows):  # the Clip threshold the PRM reward uses by default
            loaded.model.config.clip_eta = clip_eta(loaded, data.eval_rows, batch_size=cfg.eval_batch_size)
        write_folder_atomically(final, lambda tmp: _save_model(run, tmp))
        record_training_prompts(data.train_rows, final, also_from=cfg.init_from)  # rl reports its overlap with them
        try:
            fit_ood_detector(loaded, data.train_rows, final, cfg.seed)
        except ValueError as exc:  # too few rows to fit it: the model is saved, RL runs without the OOD share
            print(f"train-rm: warning: no OOD detector saved with the model: {exc}")
            run.log({"event": "ood_skipped", "step": done, "reason": str(exc)})
        run.log({"event": "end", "step": done, "seconds": time.perf_counter() - t0})
    accelerator.wait_for_everyone()
    return final
