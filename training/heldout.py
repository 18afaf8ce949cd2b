"""Held-out measurements of the current policy: greedy accuracy before and after RL, every
`--eval-every` steps, and for the gold probe (training/monitors.py)."""

from __future__ import annotations

from typing import Any

from training.collect import rollout_columns
from training.episodes import final_answers, sample_episodes
from training.rollout import generate, render_prompt
from training.run_state import Run
from training.reward_calls import score
from verifiers.closeness import closeness, is_numeric_answer


def heldout_eval(run: Run, rows: list[dict]) -> dict[str, float]:
    """Greedy completions of the current policy on `rows`: `accuracy` (the accuracy reward >= 1),
    with an environment also `first_turn_accuracy` (right in one turn), the tool-use rate and
    calls per episode, and, where the gold answers are numbers, `badly_wrong` (the share of answers off by more than
    10% or with no number; `verifiers.closeness.closeness` == 0). Empty without gold answers."""
    if run.accuracy_fn is None or not rows:
        return {}
    c = run.config
    prompts = [render_prompt(run.tokenizer, r["prompt"], c.chat_template) for r in rows]
    extra: dict[str, float] = {}
    if c.env:  # greedy episodes with the environment; the accuracy reward reads the final answers
        episodes = sample_episodes(run.accelerator.unwrap_model(run.model), run.tokenizer, prompts, rows, run.reward_fn.factory, 1,
                                   c.max_turns, c.max_new_tokens, temperature=0).episodes
        outs = final_answers(episodes)
        if getattr(run.reward_fn.factory(), "stop", ()):  # tools called in text (a stop string ends a call): how often
            extra = {"tool_use_rate": sum(e.tool_calls > 0 for e in episodes) / len(rows),
                     "tool_calls_mean": sum(e.tool_calls for e in episodes) / len(rows)}
    else:
        outs = [o[0] for o in generate(run.accelerator.unwrap_model(run.model), run.tokenizer, prompts,
                                       max_new_tokens=c.max_new_tokens, temperature=0, stop=c.stop or None)]
    s = score(run.accuracy_fn, prompts, outs, rollout_columns(rows, 1))
    right = [t is not None and t >= 1.0 for t in s.totals]
    out = {"accuracy": sum(right) / len(rows), **extra}
    if c.env:  # right with the first message alone: no tool result, no feedback read (the code environment: pass after one try)
        out["first_turn_accuracy"] = sum(r and e.turns == 1 for r, e in zip(right, episodes)) / len(rows)
    if all(is_numeric_answer(r.get("answer", "")) for r in rows):
        out["badly_wrong"] = sum(closeness(o, r["answer"]) == 0.0 for o, r in zip(outs, rows)) / len(rows)
    return out


def greedy_accuracy(run: Run, rows: list[dict]) -> float | None:
    """Held-out greedy accuracy of the current policy on `rows` (None without gold answers)."""
    return heldout_eval(run, rows).get("accuracy")


def heldout_kind(config: Any) -> str:
    """What the held-out accuracy measures: with an environment, whole episodes (tools, feedback,
    up to --max-turns turns); else one completion per prompt. `sft` measures single-turn answers,
    so its number and an `--env` run's "before" differ for the same policy."""
    if config.env:
        return f"episodes with the environment {config.env.split(':')[0]}, up to {config.max_turns} turns"
    return "single turn"


def episode_summary(heldout: dict[str, float], when: str) -> dict[str, float]:
    """--env: how often the greedy episodes call a tool (environments with text tool calls) and
    are right at the first turn, as summary.json names them (`tool_use_before`, ...)."""
    names = {"tool_use_rate": "tool_use", "first_turn_accuracy": "first_turn_accuracy"}
    return {f"{name}_{when}": heldout[key] for key, name in names.items() if key in heldout}
