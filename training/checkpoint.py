"""Atomic checkpoints: everything needed to continue a run exactly.

A checkpoint folder holds what `accelerate` saves (model, optimizer, scheduler, RNG states of
python / numpy / torch / CUDA, per process) plus `trainer_state.json` (step, data position,
counters, curriculum memory, and the name and size of every file of the folder). It is written
under a temporary name and renamed when complete; the file `latest` (replaced atomically) names
the newest one. A run killed at any moment therefore resumes from the last complete checkpoint.

`resume_checkpoint` chooses where `--resume` continues: the checkpoint `latest` names when it is
complete; else (a folder gone, a file missing or cut short) the newest complete one, saying why;
never a fresh start on top of checkpoints that exist (`CheckpointError` instead).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable

STATE_FILE = "trainer_state.json"


class CheckpointError(ValueError):
    """--resume cannot continue the run; the message says what is wrong and what to do."""


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save_checkpoint(accelerator: Any, root: Path, step: int, state: dict[str, Any], keep: int = 2) -> Path:
    """Save under `root/step-XXXXXX` atomically, point `root/latest` at it, keep the newest `keep`."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step-{step:06d}"
    tmp = root / f".tmp-step-{step:06d}"
    if accelerator.is_main_process and tmp.exists():
        shutil.rmtree(tmp)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp), safe_serialization=False)
    accelerator.wait_for_everyone()  # every process has written its RNG state: the file list is final
    if accelerator.is_main_process:
        files = {p.name: p.stat().st_size for p in sorted(tmp.iterdir()) if p.is_file()}
        (tmp / STATE_FILE).write_text(json.dumps({"step": step, **state, "files": files}, indent=1) + "\n")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        _write_atomically(root / "latest", final.name + "\n")
        for old in sorted(p for p in root.glob("step-*") if p.is_dir())[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()
    return final


def checkpoint_problem(path: Path) -> str | None:
    """Why `path` is not a complete checkpoint, or None when it is: the folder, its state file and
    every file that state file lists (with its size) must be there. A checkpoint written before the
    list existed needs at least the RNG state of process 0."""
    if not path.is_dir():
        return f"{path.name}: the folder does not exist"
    try:
        state = json.loads((path / STATE_FILE).read_text())
    except FileNotFoundError:
        return f"{path.name}: {STATE_FILE} is missing"
    except (OSError, ValueError) as exc:
        return f"{path.name}: {STATE_FILE} is unreadable ({exc})"
    files = state.get("files") if isinstance(state, dict) else None
    if not isinstance(files, dict):
        files = {"random_states_0.pkl": None}
    for name, size in sorted(files.items()):
        file = path / name
        if not file.is_file():
            return f"{path.name}: {name} is missing"
        if size is not None and file.stat().st_size != size:
            return f"{path.name}: {name} has {file.stat().st_size} bytes, {size} were written"
    return None


def _step_of(path: Path) -> int:
    try:
        return int(path.name.split("-", 1)[1])
    except (IndexError, ValueError):
        return -1


def latest_checkpoint(root: Path) -> Path | None:
    """The checkpoint `root/latest` names, when it is complete."""
    pointer = root / "latest"
    if not pointer.exists():
        return None
    path = root / pointer.read_text().strip()
    return path if checkpoint_problem(path) is None else None


def resume_checkpoint(root: Path, log: Callable[[str], Any] = print) -> Path | None:
    """The checkpoint `--resume` continues from (see the module docstring); None when `root` holds
    no checkpoint at all (nothing to continue). Raises `CheckpointError` when checkpoints exist but
    none is complete."""
    pointer = root / "latest"
    named = root / pointer.read_text().strip() if pointer.is_file() else None
    folders = sorted((p for p in root.glob("step-*") if p.is_dir() and _step_of(p) >= 0), key=_step_of, reverse=True)
    if named is None and not folders:
        log(f"rl: --resume given but {root} holds no checkpoint; starting the run")
        return None
    problems = []
    if named is not None:
        problem = checkpoint_problem(named)
        if problem is None:
            return named
        problems.append(f"latest -> {problem}")
    for folder in folders:
        if folder == named:
            continue
        problem = checkpoint_problem(folder)
        if problem is None:
            if problems:
                log(f"rl: not resuming from the newest checkpoint ({'; '.join(problems)}); "
                    f"falling back to {folder.name}, the newest complete one")
            return folder
        problems.append(problem)
    raise CheckpointError(f"--resume: no complete checkpoint in {root} ({'; '.join(problems)}); refusing to start over "
                          f"on top of this run: restore the missing files, or run without --resume into a new --output-dir")


def load_checkpoint(accelerator: Any, path: Path) -> dict[str, Any]:
    """Restore model / optimizer / scheduler / RNG states in place; return the trainer state."""
    problem = checkpoint_problem(path)
    if problem is not None:  # accelerate only warns about a missing RNG state: that run would diverge
        raise CheckpointError(f"cannot resume from {path}: {problem}")
    accelerator.load_state(str(path))
    return json.loads((path / STATE_FILE).read_text())
