"""The prompts a reward model was trained on, recorded beside it, so that RL can say how many of
its own prompts the reward model has already seen.

`train-rm` writes `training_prompts.json` into `final/`: the count and a 12-hex-digit sha256 key
per distinct prompt (48 bits: a chance collision between 20,000 and 20,000 prompts is about one in
a million), not the text. `rl` reads it for every local `rm:` / `qrm:` / `prm:` term of its reward
and reports the share of its training prompts and of its held-out prompts found there. A reward
model started from another (`--init-from`) carries that one's prompts too.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = record_training_prompts([{"prompt": "1+2="}, {"prompt": "3+4="}, {"prompt": "1+2="}], folder)
>>> seen = recorded_prompts(folder)
>>> len(seen), prompt_overlap(["1+2=", "5+6="], seen), recorded_prompts(folder / "elsewhere") is None
(2, 0.5, True)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Sequence

PROMPTS_FILE = "training_prompts.json"


def training_prompt_key(prompt: str) -> str:
    return hashlib.sha256(str(prompt).encode()).hexdigest()[:12]


def record_training_prompts(rows: Iterable[dict[str, Any]], directory: Path, also_from: str | Path | None = None) -> Path:
    """Write the distinct prompts of `rows` (and of the reward model in `also_from`, if it has a
    record) to `directory/training_prompts.json`."""
    keys = {training_prompt_key(row["prompt"]) for row in rows if "prompt" in row}
    if also_from:
        keys |= recorded_prompts(also_from) or set()
    path = Path(directory) / PROMPTS_FILE
    path.write_text(json.dumps({"count": len(keys), "sha256_12": sorted(keys)}) + "\n")
    return path


def recorded_prompts(directory: str | Path | None) -> set[str] | None:
    """The prompt keys recorded with a reward model, or None when it has no record (trained before
    the record existed, a hub model, or not a folder); a damaged record is a ValueError."""
    path = Path(str(directory)) / PROMPTS_FILE
    if not path.is_file():
        return None
    try:
        return set(json.loads(path.read_text())["sha256_12"])
    except (ValueError, KeyError, TypeError) as exc:  # a damaged record is an error, not "no record"
        raise ValueError(f"{path}: not a record of training prompts ({type(exc).__name__}: {exc}); "
                         f"delete it, or retrain the reward model to write it again") from None


def prompt_overlap(prompts: Sequence[str], seen: set[str]) -> float:
    """The share of `prompts` (counted with repeats) whose key is in `seen`."""
    return sum(training_prompt_key(p) in seen for p in prompts) / len(prompts) if prompts else 0.0
