"""The prompts a reward model was trained on, recorded beside it, so that RL can say how many of
its own prompts the reward model has already seen.

`train-rm` writes `training_prompts.json` into `final/`: the count and a 12-hex-digit sha256 key
per distinct prompt (48 bits: a chance collision between 20,000 and 20,000 prompts is about one in
a million), not the text, once for the exact prompt and once for its canonical form
(`canonical_prompt`: case and spacing folded, the operands of each run of `+` or `*` sorted), so a
reordered twin (`7+12=` for `12+7=`) is seen too. `rl` reads it for every local `rm:` / `qrm:` /
`prm:` term of its reward and reports the share of its training prompts and of its held-out prompts
found there, exact and canonical. A reward model started from another (`--init-from`) carries that
one's prompts too; a record written before the canonical keys existed reports the canonical share
as unknown (None).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = record_training_prompts([{"prompt": "1+2="}, {"prompt": "3+4="}, {"prompt": "1+2="}], folder)
>>> seen = recorded_prompts(folder)
>>> len(seen), prompt_overlap(["1+2=", "5+6="], seen), recorded_prompts(folder / "elsewhere") is None
(2, 0.5, True)
>>> canonical_prompt("What is  4 + 3+10 ?"), prompt_overlap(["2+1=", "6+5="], recorded_prompts(folder, canonical=True), canonical=True)
('what is 3+4+10 ?', 0.5)
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

PROMPTS_FILE = "training_prompts.json"


CANONICAL_FIELD = "canonical_sha256_12"
# a run of two or more operands joined by one commutative operator: `12 + 7`, `3*4*5`
_COMMUTATIVE_RUN = re.compile(r"\d+(?:\.\d+)?(?:\s*\+\s*\d+(?:\.\d+)?)+|\d+(?:\.\d+)?(?:\s*\*\s*\d+(?:\.\d+)?)+")


def training_prompt_key(prompt: str, canonical: bool = False) -> str:
    text = canonical_prompt(prompt) if canonical else str(prompt)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def canonical_prompt(prompt: str) -> str:
    """`prompt` with case and runs of white space folded and the operands of every run of `+` or
    `*` between numbers sorted, so reordered twins of one problem share a form. A run that follows
    or precedes a tighter or non-commutative operator (`4-3+1`, `3+4*2`) keeps its order: sorting
    there could change the value, and two prompts that merely look alike must not count as one."""
    text = " ".join(str(prompt).casefold().split())

    def sort_run(match: re.Match) -> str:
        before = text[: match.start()].rstrip()[-1:]  # the operator (or digit) next to the run, if any
        after = text[match.end() :].lstrip()[:1]
        if before in tuple("-*/^.") or after in tuple("*/^.") or before.isdigit() or after.isdigit():
            return match.group(0)  # part of a larger expression whose value depends on the order
        op = "+" if "+" in match.group(0) else "*"
        operands = [x.strip() for x in match.group(0).split(op)]
        return op.join(sorted(operands, key=lambda x: (float(x), x)))

    return _COMMUTATIVE_RUN.sub(sort_run, text)


def record_training_prompts(rows: Iterable[dict[str, Any]], directory: Path, also_from: str | Path | None = None) -> Path:
    """Write the distinct prompts of `rows` (and of the reward model in `also_from`, if it has a
    record) to `directory/training_prompts.json`."""
    prompts = [row["prompt"] for row in rows if "prompt" in row]
    keys = {training_prompt_key(p) for p in prompts}
    canonical = {training_prompt_key(p, canonical=True) for p in prompts}
    if also_from:
        keys |= recorded_prompts(also_from) or set()
        earlier = recorded_prompts(also_from, canonical=True)
        canonical = None if earlier is None and recorded_prompts(also_from) is not None else canonical | (earlier or set())
    record = {"count": len(keys), "sha256_12": sorted(keys)}
    if canonical is not None:
        record[CANONICAL_FIELD] = sorted(canonical)
    path = Path(directory) / PROMPTS_FILE
    path.write_text(json.dumps(record) + "\n")
    return path


def recorded_prompts(directory: str | Path | None, canonical: bool = False) -> set[str] | None:
    """The prompt keys recorded with a reward model (of the canonical forms with `canonical`), or
    None when it has no record (trained before the record existed, a hub model, or not a folder; or
    a record older than the canonical keys); a damaged record is a ValueError."""
    path = Path(str(directory)) / PROMPTS_FILE
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
        keys = record["sha256_12"]
        if canonical:
            keys = record.get(CANONICAL_FIELD)
            if keys is None:
                return None
        return set(keys)
    except (ValueError, KeyError, TypeError) as exc:  # a damaged record is an error, not "no record"
        raise ValueError(f"{path}: not a record of training prompts ({type(exc).__name__}: {exc}); "
                         f"delete it, or retrain the reward model to write it again") from None


def prompt_overlap(prompts: Sequence[str], seen: set[str], canonical: bool = False) -> float:
    """The share of `prompts` (counted with repeats) whose key (of the canonical form with
    `canonical`) is in `seen`."""
    return sum(training_prompt_key(p, canonical) in seen for p in prompts) / len(prompts) if prompts else 0.0
