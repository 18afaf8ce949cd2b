"""The RL loop (GRPO / PPO family), readable top to bottom:

    setup -> [ collect_batch (sample prompts -> generate G completions each -> score them)
               -> compute_advantages -> update_policy (num_iterations x clipped loss + KL + entropy -> step)
               -> step_record -> monitors -> log -> checkpoint ]

Each phase is a named function over a `Run` (the shared state, training/run_state.py) and a
`Batch` (one step's rollouts and rewards): collection in training/collect.py, advantages and the
loss in training/update.py, held-out accuracy in training/heldout.py. Monitors
(training/monitors.py) see every step: sample completions, a constant-reward warning, the learned
reward models' OOD share, a held-out gold probe and the hack alarm (proxy up while gold falls, or
length / step-count drift), which can stop the run.

With `--overlap` (training/pipeline.py; off by default: it is one step off-policy) each step
generates the next step's batch first and a background thread scores it while this step's batch
trains, so a slow reward no longer adds its whole time to every step.

Everything that varies by name (advantage estimator, loss aggregation, KL estimator) is a pure
function picked from a dict in its own module. `accelerate` handles devices, mixed precision and
multi-GPU / multi-node (`accelerate launch -m training.cli ...`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import torch

from rewardlab.runs import load_checkpoint, resume_checkpoint, save_checkpoint, start_run_dir, truncate_metrics
from training.advantages import sequence_rewards
from training.collect import Batch, collect_batch, overlap_rounds, score_round
from training.config import RLConfig
from training.heldout import episode_summary, heldout_eval, heldout_kind
from training.monitors import BestProbePolicy, build_monitors
from training.pipeline import BackgroundScorer
from training.run_state import Prepared, Run, prepare_run, resolved_precision, setup_run
from training.update import Advantages, compute_advantages, update_policy


# ---------------------------------------------------------------- the loop
def train(config: RLConfig, prepared: Prepared | None = None) -> dict[str, Any]:
    """Run RL as configured; returns the summary (accuracy before/after, times, counts)."""
    from rewardlab.runtime import cpu_threads

    prepared = prepared or prepare_run(config)  # bad configuration fails here, before any model is loaded
    config = resolved_precision(config)
    with cpu_threads(config.cpu_threads, "rl"):
        return _train(config, prepared)


def _train(config: RLConfig, prepared: Prepared) -> dict[str, Any]:
    from rewardlab.progress import progress_bar

    out_dir = Path(config.output_dir)
    ckpt_root = out_dir / "checkpoints"
    run = setup_run(config, prepared)
    accelerator = run.accelerator
    resume_from = resume_checkpoint(ckpt_root, log=accelerator.print) if config.resume else None
    if accelerator.is_main_process:
        start_run_dir(config, out_dir, resume_from)
    for warning in prepared.warnings:
        accelerator.print(f"rl: warning: {warning}")
    metrics_path = out_dir / "metrics.jsonl"
    start_step, summary = _start_or_resume(run, resume_from, metrics_path, prepared.eval_rows)
    if prepared.rm_prompt_overlap:  # prompts shared with the reward model's training (run_state.reward_model_overlap)
        summary["rm_prompt_overlap"] = prepared.rm_prompt_overlap
    bar = progress_bar(total=config.steps, initial=start_step, desc="rl", disable=not accelerator.is_main_process)
    monitors = build_monitors(run, prepared.probe_rows, warn=lambda text: bar.write(text) if accelerator.is_main_process else None)
    tb = None
    if config.tensorboard and accelerator.is_main_process:
        from torch.utils.tensorboard import SummaryWriter

        tb = SummaryWriter(str(out_dir / "tensorboard"))
    log_file = open(metrics_path, "a") if accelerator.is_main_process else None
    run_start, stopped = time.time(), None
    best = BestProbePolicy() if config.rollback_on_alarm else None  # the policy at its best gold probe
    scorer = BackgroundScorer(lambda round_: score_round(run, round_)) if config.overlap else None
    ahead = None  # --overlap: the future scores of this step's batch, generated during the previous step
    try:
        for step in range(start_step + 1, config.steps + 1):
            t0 = time.time()
            this_step, ahead = overlap_rounds(run, scorer, ahead, step)  # --overlap: this batch's scores to come, and the next batch
            batch = collect_batch(run, this_step)  # 1-2. sample prompts, generate G completions each, score them
            if batch is None:  # dynamic sampling found no group with any signal: log and move on
                _write(log_file, tb, {"step": step, "skipped": "all groups had zero reward variance", "zero_variance_frac": 1.0})
                bar.update(1)
                continue
            t_train = time.time()
            adv = compute_advantages(run, batch)  # 3-4. rewards on tokens, old/reference logprobs, advantages
            stats = update_policy(run, batch, adv)  # 5. clipped loss (+ KL, entropy) and optimizer steps
            t_train = time.time() - t_train
            record = step_record(run, step, batch, adv, stats, time.time() - t0, t_train)  # 6. log
            if config.eval_every and step % config.eval_every == 0 and step < config.steps:
                record.update({f"eval/{k}": v for k, v in {"accuracy": None, **heldout_eval(run, prepared.eval_rows)}.items()})
            t_monitors = time.time()
            alarm = monitors.step(run, step, batch, record)
            record["time/monitors"] = time.time() - t_monitors  # the gold probe, OOD share, hack alarm and samples of this step
            _write(log_file, tb, record)
            monitors.check_stop()  # all-None or constant rewards for too long: nothing to learn from
            bar.set_postfix(reward=f"{record['reward/mean']:.3f}", **({"acc": f"{record['accuracy']:.1%}"} if "accuracy" in record else {}))
            bar.update(1)
            if best is not None and isinstance(record.get("probe/accuracy"), (int, float)):
                best.offer(step, record["probe/accuracy"], accelerator.unwrap_model(run.model))
            if alarm and config.stop_on_alarm:
                stopped = {"step": step, "reason": alarm}
                if best is not None:
                    stopped["rolled_back_to"] = _roll_back(run, best, bar)
            if (config.checkpoint_every and step % config.checkpoint_every == 0) or step == config.steps or stopped:  # 7. checkpoint
                _checkpoint(run, ckpt_root, step, summary)
            if stopped:
                break
    finally:
        if scorer is not None:
            scorer.close()  # a batch generated ahead of a stop is dropped
        bar.close()
        if log_file:
            log_file.close()
        if tb is not None:
            tb.close()
    return _finish(run, summary, prepared.eval_rows, run_start, stopped)


def _roll_back(run: Run, best: BestProbePolicy, bar: Any) -> dict[str, Any] | None:
    """--rollback-on-alarm: the policy of the best gold probe replaces the current one."""
    model = run.accelerator.unwrap_model(run.model)
    kept = best.restore(model)
    if kept is None:
        text = ("rl: --rollback-on-alarm: no gold probe has run (the data has no gold answers, or --probe-size 0), "
                "so the policy of the alarm's step is kept")
    else:
        if run.vllm is not None:
            run.vllm.sync_weights(model)
        text = (f"rl: rolled back to the policy of step {kept['step']} (gold probe {kept['probe_accuracy']:.1%}); "
                "the optimizer state stays that of the alarm's step")
    if run.accelerator.is_main_process:
        bar.write(text)
    return kept


def _write(log_file, tb, record: dict[str, Any]) -> None:
    if log_file:
        log_file.write(json.dumps(record) + "\n")
        log_file.flush()
    if tb is not None:
        for k, v in record.items():
            if isinstance(v, (int, float)):
                tb.add_scalar(k, v, record["step"])


def _checkpoint(run: Run, root: Path, step: int, summary: dict[str, Any]) -> None:
    """What accelerate saves (model, optimizer, scheduler, RNG states) plus the loop's own state."""
    state = {"stream": run.stream.state(), "counters": run.counters.state(), "summary": summary,
             "curriculum": run.curriculum.state() if run.curriculum is not None else []}
    save_checkpoint(root, step, lambda tmp: run.accelerator.save_state(str(tmp), safe_serialization=False), state,
                    keep=run.config.keep_checkpoints, accelerator=run.accelerator)


def _start_or_resume(run: Run, resume_from: Path | None, metrics_path: Path, eval_rows: list[dict]) -> tuple[int, dict[str, Any]]:
    """Restore a checkpoint (dropping metrics logged after it), or measure the starting accuracy."""
    accelerator = run.accelerator
    if resume_from is not None:
        state = load_checkpoint(accelerator, resume_from)
        run.stream.load_state(state["stream"])
        run.counters.load_state(state["counters"])
        if run.curriculum is not None:
            run.curriculum.load_state(state["curriculum"])
        if accelerator.is_main_process:
            truncate_metrics(metrics_path, state["step"])
        accelerator.print(f"rl: resumed from {resume_from} (step {state['step']})")
        if run.vllm is not None:
            run.vllm.sync_weights(accelerator.unwrap_model(run.model))
        return state["step"], state["summary"]
    if accelerator.is_main_process and metrics_path.exists():
        metrics_path.unlink()
    before = heldout_eval(run, eval_rows)
    summary = {"accuracy_before": before.get("accuracy"), "badly_wrong_before": before.get("badly_wrong"),
               "policy": str(run.config.model or "default"), "reward": run.config.reward}
    summary.update(episode_summary(before, "before"))
    if summary["accuracy_before"] is not None:
        tools = f", tool calls in {before['tool_use_rate']:.1%} of answers" if "tool_use_rate" in before else ""
        turns = f", right at the first turn {before['first_turn_accuracy']:.1%}" if "first_turn_accuracy" in before else ""
        accelerator.print(f"rl: held-out greedy accuracy before RL ({heldout_kind(run.config)}): {summary['accuracy_before']:.1%} "
                          f"({len(eval_rows)} prompts{tools}{turns})")
    return 0, summary


def _finish(run: Run, summary: dict[str, Any], eval_rows: list[dict], run_start: float, stopped: dict | None) -> dict[str, Any]:
    """The end: accuracy after, the final policy, summary.json and the report."""
    c, accelerator = run.config, run.accelerator
    after = heldout_eval(run, eval_rows)
    summary["accuracy_after"], summary["badly_wrong_after"] = after.get("accuracy"), after.get("badly_wrong")
    summary.update(episode_summary(after, "after"))
    summary["steps"] = stopped["step"] if stopped else c.steps
    summary["wall_seconds_this_session"] = round(time.time() - run_start, 1)
    summary["bad_steps_total"] = run.counters.bad_steps_total
    summary["no_signal_steps"] = run.counters.no_signal_steps
    if stopped:
        summary["stopped_by_alarm"] = stopped
    out_dir = Path(c.output_dir)
    if accelerator.is_main_process:
        from training.policy import save_policy_atomically

        save_policy_atomically(accelerator.unwrap_model(run.model), run.tokenizer, out_dir / "policy")
        (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        if c.report:
            from training.report import write_report

            write_report(out_dir, summary)
    return summary


# ---------------------------------------------------------------- the log
def step_record(run: Run, step: int, batch: Batch, adv: Advantages, stats: dict[str, float], elapsed: float,
                t_train: float) -> dict[str, Any]:
    """The metrics line of one step (see docs/training.md). Times of this step's batch: `generate`
    (under --overlap it happened during the previous step), `score` (the reward's time),
    `score_wait` (how long the loop waited for the scores), `overlap` = score - score_wait (scoring
    hidden behind generation and training), `train`, and `step` (wall clock)."""
    rollout = batch.rollout
    seq_r = sequence_rewards(adv.rewards_t, rollout.completion_mask.float().to(adv.rewards_t.device)).cpu()
    lengths = rollout.completion_mask.sum(-1).float().cpu()
    tokens = float(rollout.completion_mask.sum())
    return {
        "step": step,
        "reward/mean": seq_r.mean().item(), "reward/std": seq_r.std().item() if len(seq_r) > 1 else 0.0,
        **{(k if k.startswith("episodes/") else f"reward/{k}"): v for k, v in batch.metrics.items()
           if isinstance(v, (int, float)) and k != "accuracy"},
        **({"accuracy": batch.metrics["accuracy"]} if "accuracy" in batch.metrics else {}),
        **stats,
        "length/mean": lengths.mean().item(), "length/max": lengths.max().item(),
        **({"length/policy_mean": rollout.action_mask.sum(-1).float().mean().item()} if rollout.action_mask is not None else {}),
        "truncated_frac": rollout.truncated.float().mean().item(),
        "zero_variance_frac": batch.zero_variance_groups / max(batch.drawn, 1),
        "prompts_drawn": batch.drawn, "completions_trained": len(rollout.texts),
        "bad_steps_total": run.counters.bad_steps_total,
        "lr": run.scheduler.get_last_lr()[0],
        "time/generate": batch.seconds["generate"], "time/score": batch.seconds["score"], "time/score_wait": batch.seconds["score_wait"],
        "time/overlap": max(batch.seconds["score"] - batch.seconds["score_wait"], 0.0), "time/train": t_train, "time/step": elapsed,
        "tokens_per_s": tokens / max(elapsed, 1e-9),
        **({"gpu_peak_gb": torch.cuda.max_memory_allocated() / 2**30} if torch.cuda.is_available() else {}),
    }
