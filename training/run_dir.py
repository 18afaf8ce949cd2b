"""The run folder of `rewardlab rl`: an existing run is never overwritten by accident.

- A folder that already holds a run (any of `RUN_ARTEFACTS`) is refused unless `--resume`
  (continue it) or `--overwrite` (delete its artefacts first: nothing else in the folder is
  touched). The check runs before any model is loaded (`check_run_dir`).
- The config is written when the run starts (`write_config`). A resumed run keeps the
  `config.json` of the run it continues; when its configuration differs (beyond --resume itself),
  it is written beside it as `config.resume-<checkpoint>.json`. So a run that fails never leaves another run's folder with a
  config.json that does not describe its metrics and checkpoints.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp()); (d / "metrics.jsonl").write_text("{}")
2
>>> existing_run(d)
['metrics.jsonl']
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from rewardlab.config import config_to_dict, save_config

RUN_ARTEFACTS = ("config.json", "metrics.jsonl", "summary.json", "checkpoints", "policy", "report.md", "report.html",
                 "tensorboard")
PLOT_GLOB = "*.png"  # the report's plots


def existing_run(out_dir: str | Path) -> list[str]:
    """The run artefacts present in `out_dir` (empty: no run there)."""
    out = Path(out_dir)
    return [name for name in RUN_ARTEFACTS if (out / name).exists()]


def check_run_dir(out_dir: str | Path, resume: bool, overwrite: bool) -> None:
    """Refuse a folder that holds a run unless `resume` or `overwrite`. Under `accelerate launch`
    only the main process (RANK 0) checks: the others may start after it wrote the config."""
    if int(os.environ.get("RANK", "0") or 0) != 0:
        return
    found = existing_run(out_dir)
    if found and not (resume or overwrite):
        raise ValueError(f"--output-dir {str(out_dir)!r} already holds a run ({', '.join(found)}); pass --resume to continue "
                         "it, --overwrite to replace it, or choose another --output-dir")


def clear_run(out_dir: str | Path) -> None:
    """Delete the run artefacts of `out_dir` (and the report's plots); other files stay."""
    out = Path(out_dir)
    for name in existing_run(out):
        path = out / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    for plot in out.glob(PLOT_GLOB):
        plot.unlink()


def write_config(config: Any, out_dir: str | Path, resumed_from: str | None) -> Path:
    """config.json of a new run; for a resumed run (`resumed_from`: the checkpoint's name), the
    existing config.json is kept and a different configuration goes to
    `config.resume-<checkpoint>.json`."""
    out = Path(out_dir)
    current = out / "config.json"
    if resumed_from is not None and current.exists():
        ignore = ("resume", "overwrite")
        try:
            old = {k: v for k, v in json.loads(current.read_text()).items() if k not in ignore}
        except json.JSONDecodeError:
            old = None
        new = {k: v for k, v in json.loads(json.dumps(config_to_dict(config))).items() if k not in ignore}
        if old == new:
            return current
        return save_config(config, out, f"config.resume-{resumed_from}.json")
    return save_config(config, out)


def start_run_dir(config: Any, out_dir: str | Path, resume_from: Path | None) -> None:
    """At the start of a run (main process): clear the folder for --overwrite, write the config."""
    if getattr(config, "overwrite", False):
        clear_run(out_dir)
    write_config(config, out_dir, resume_from.name if resume_from is not None else None)
