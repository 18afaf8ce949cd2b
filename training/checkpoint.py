"""Atomic checkpoints: everything needed to continue a run exactly.

A checkpoint folder holds what `accelerate` saves (model, optimizer, scheduler, RNG states of
python / numpy / torch / CUDA, per process) plus `trainer_state.json` (step, data position,
counters, curriculum memory). It is written under a temporary name and renamed when complete; the
file `latest` (replaced atomically) names the newest one. A run killed at any moment therefore
resumes from the last complete checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any


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
    if accelerator.is_main_process:
        (tmp / "trainer_state.json").write_text(json.dumps({"step": step, **state}, indent=1) + "\n")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        _write_atomically(root / "latest", final.name + "\n")
        for old in sorted(p for p in root.glob("step-*") if p.is_dir())[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()
    return final


def latest_checkpoint(root: Path) -> Path | None:
    pointer = root / "latest"
    if not pointer.exists():
        return None
    path = root / pointer.read_text().strip()
    return path if (path / "trainer_state.json").exists() else None


def load_checkpoint(accelerator: Any, path: Path) -> dict[str, Any]:
    """Restore model / optimizer / scheduler / RNG states in place; return the trainer state."""
    accelerator.load_state(str(path))
    return json.loads((path / "trainer_state.json").read_text())
