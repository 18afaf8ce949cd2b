"""Checks that stop `rl` with a sentence instead of training on nothing: `check_policy_vocabulary`
runs before any model is loaded; `TrainingStopped` is what a running loop raises when it cannot
continue (repeated non-finite losses, all-None or constant rewards).

`check_policy_vocabulary`: the prompts must be readable by the policy's tokenizer. The default
policy is a character-level model for arithmetic (digits, `+-*=()`, space, newline): English
prompts would become `<unk>` tokens, and a run on them trains on noise.

>>> check_policy_vocabulary(None, [{"prompt": "12+7="}])
>>> check_policy_vocabulary(None, [{"prompt": "How many clips did Natalia sell?"}])
Traceback (most recent call last):
...
ValueError: --data: the default policy is a tiny character-level model for arithmetic; it cannot read 1 of 1 prompts (characters such as '?', 'H', 'N', 'a', 'c', 'd', 'e', 'i' would become <unk>). Pass --model with a model for this data (a local folder or a hub name)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from rewardlab.config import check_fields, opt

CHECKED_ROWS = 256  # prompts looked at
MAX_UNK_SHARE = 0.01  # a given model: refused when more than this share of prompt tokens are <unk>


class TrainingStopped(RuntimeError):
    """The run cannot continue (e.g. repeated non-finite losses); the message says why."""


def check_policy_vocabulary(model: str | None, rows: Sequence[dict[str, Any]]) -> None:
    """ValueError when the policy cannot read the prompts (the default policy: any character
    outside its vocabulary; a local model with an <unk> token: more than 1% <unk> tokens)."""
    prompts = [r.get("prompt") for r in rows[:CHECKED_ROWS]]
    if model is None:
        from training.tokenizer import DEFAULT_CHARS

        if any(not isinstance(p, str) for p in prompts):
            raise ValueError("--data: the prompts are chat messages, but the default policy is a character-level model "
                             "without a chat template; pass --model with a chat model")
        unknown = sorted({ch for p in prompts for ch in p if ch not in DEFAULT_CHARS})
        if unknown:
            bad = sum(any(ch not in DEFAULT_CHARS for ch in p) for p in prompts)
            raise ValueError(
                f"--data: the default policy is a tiny character-level model for arithmetic; it cannot read {bad} of "
                f"{len(prompts)} prompts (characters such as {', '.join(map(repr, unknown[:8]))} would become <unk>). "
                "Pass --model with a model for this data (a local folder or a hub name)")
        return
    if not (Path(model) / "config.json").exists():  # a hub name: its tokenizer is checked when it loads
        return
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
    except (OSError, ValueError):
        return  # the model load reports it, with its own message
    unk = tokenizer.unk_token_id
    texts = [p for p in prompts if isinstance(p, str)]
    if unk is None or not texts:
        return
    ids = [i for t in texts for i in tokenizer(t, add_special_tokens=False)["input_ids"]]
    share = sum(i == unk for i in ids) / max(len(ids), 1)
    if share > MAX_UNK_SHARE:
        raise ValueError(f"--data: {share:.0%} of the prompt tokens are {tokenizer.unk_token!r} for the tokenizer of "
                         f"--model {model!r}: it cannot read these prompts; pass a model for this data")


def check_env_vocabulary(model: str | None, stop: Sequence[str], env: str) -> None:
    """ValueError when the policy cannot write the environment's stop strings (a tool call's closing
    tag): its turns would never end with a call. The default policy's characters are arithmetic only."""
    if not stop:
        return
    hint = "widen a character-level policy with `rewardlab sft --add-chars tools` (see examples/calculator_rl.sh)"
    if model is None:
        from training.tokenizer import DEFAULT_CHARS

        missing = sorted({ch for s in stop for ch in s if ch not in DEFAULT_CHARS})
        if missing:
            raise ValueError(f"--env {env}: the default policy cannot write {list(stop)} (no {', '.join(map(repr, missing))} in "
                             f"its vocabulary), so it could never call the tool; {hint}")
        return
    if not (Path(model) / "config.json").exists():
        return
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
    except (OSError, ValueError):
        return
    unk = tokenizer.unk_token_id
    if unk is not None and any(unk in tokenizer(s, add_special_tokens=False)["input_ids"] for s in stop):
        raise ValueError(f"--env {env}: the tokenizer of --model {model!r} cannot write {list(stop)} (they map to "
                         f"{tokenizer.unk_token!r}), so the policy could never call the tool; {hint}")


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class MonitorConfig:
    """The monitors and what stops a run: a piece of `rl`'s config (docs/training.md, Monitors)."""

    probe_size: int = opt(256, "held-out gold probe: prompts whose greedy accuracy is measured every --probe-every steps (0: off)", ge=0)
    probe_every: int = opt(10, "steps between gold probes", gt=0)
    hack_gold_drop: float = opt(0.05, "hack alarm: gold accuracy this far below its best while the proxy reward holds", gt=0)
    hack_drift: float = opt(0.3, "hack alarm: mean completion length or PRM step count this far (relative) from its start", gt=0)
    gold_alarm: bool = opt(True, "hack alarm on a gold drop (reads gold: the probe, else the rollouts'); false: only the "
                                 "gold-free alarms (length, PRM step count drift)")
    stop_on_alarm: bool = opt(False, "stop the run (policy, report and summary saved) when the hack monitor raises an alarm")
    rollback_on_alarm: bool = opt(False, "on an alarm, stop and keep the policy of the best gold probe so far (implies --stop-on-alarm)")
    max_none_steps: int = opt(2, "stop after this many steps in a row with a None reward for every completion (0: never)", ge=0)
    max_constant_steps: int = opt(10, "stop after this many steps in a row with one reward value for every completion (0: never)", ge=0)
    log_samples: int = opt(4, "sample completions (prompt, completion, reward, gold) logged per step", ge=0)

    def check_monitors(self) -> None:
        check_fields(self, MonitorConfig)
        if self.rollback_on_alarm:
            object.__setattr__(self, "stop_on_alarm", True)

    __post_init__ = check_monitors
