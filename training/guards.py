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

from pathlib import Path
from typing import Any, Sequence

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
