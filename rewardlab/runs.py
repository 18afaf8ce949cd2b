"""Run folders, checkpoints, resume and atomic writes: one module for every command that writes a
run (`rl`, `sft`, `train-rm`, `score-data`, `verify --input`).

**Atomic writes.** `write_text_atomically` (a temporary file, fsync, rename), `write_file_atomically`
(any writer into a temporary file beside the target, then rename) and `write_folder_atomically`
(a temporary folder, then rename over the old one): readers see all of it or none of it.

**Run folders.** A folder that already holds a run (any of `RUN_ARTEFACTS`) is refused unless
`--resume` (continue it) or, where the command has it, `--overwrite` (delete its artefacts first:
nothing else in the folder is touched) (`check_run_dir`, before any model is loaded). The config is
written when the run starts (`write_config`). A resumed run keeps the `config.json` of the run it
continues; when its configuration differs (beyond --resume itself), it is written beside it as
`config.resume-<checkpoint>.json`. So a run that fails never leaves another run's folder with a
config.json that does not describe its metrics and checkpoints. `truncate_metrics` drops what a
killed run logged after the checkpoint a resumed run continues from.

**Checkpoints.** `save_checkpoint` fills a temporary folder (`write(tmp)`: for `rl` what
`accelerate` saves - model, optimizer, scheduler and the RNG states of python / numpy / torch /
CUDA per process; for `train-rm` the model, tokenizer and optimizer state), adds `trainer_state.json`
(step, the caller's state, and the name and size of every file of the folder), renames it to
`step-N` and points the file `latest` (replaced atomically) at it; the newest `keep` are kept. A
run killed at any moment therefore resumes from the last complete checkpoint. `resume_checkpoint`
chooses where `--resume` continues: the checkpoint `latest` names when it is complete; else (a
folder gone, a file missing or cut short) the newest complete one, saying why; never a fresh start
on top of checkpoints that exist (`CheckpointError` instead).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp()); (d / "metrics.jsonl").write_text("{}")
2
>>> existing_run(d)
['metrics.jsonl']
>>> write_text_atomically(d / "note.txt", "done\\n"); (d / "note.txt").read_text()
'done\\n'
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from dataclasses import dataclass

from rewardlab.config import check_fields, config_to_dict, opt, save_config

STATE_FILE = "trainer_state.json"
RUN_ARTEFACTS = ("config.json", "metrics.jsonl", "summary.json", "checkpoints", "policy", "report.md", "report.html",
                 "tensorboard")
PLOT_GLOB = "*.png"  # the report's plots


@dataclass(frozen=True)
class RunFolderConfig:
    """The run folder and its checkpoints: a piece of `rl`'s config."""

    output_dir: Path = opt(Path("runs/rl"), "run folder: config, metrics.jsonl, checkpoints, report, final policy")
    checkpoint_every: int = opt(50, "write a checkpoint every N steps (0: only at the end)", ge=0)
    keep_checkpoints: int = opt(2, "checkpoints kept on disk", gt=0)
    resume: bool = opt(False, "continue from the latest checkpoint in --output-dir")
    overwrite: bool = opt(False, "delete the run already in --output-dir and start again")
    tensorboard: bool = opt(False, "also log to TensorBoard (needs `tensorboard`)")
    report: bool = opt(True, "write report.md / report.html and PNG plots at the end")

    def check_run_folder(self) -> None:
        check_fields(self, RunFolderConfig)
        if self.resume and self.overwrite:
            raise ValueError("--resume continues the run in --output-dir and --overwrite deletes it; pass one of them")

    __post_init__ = check_run_folder


# ---------------------------------------------------------------- atomic writes
def _exclusive_temp(path: Path) -> Path:
    """A new empty file beside `path` with a random name, created exclusively (O_EXCL: never an
    existing file or a symlink planted at a name another user could guess)."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(name)


def write_text_atomically(path: Path, text: str) -> None:
    """Write `text` to a new temporary file beside `path` (`_exclusive_temp`), fsync it, and rename
    it into place (a rename replaces a symlink at `path`, it never writes through it)."""
    tmp = _exclusive_temp(path)
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()


def write_file_atomically(path: Path, write: Callable[[Path], Any]) -> None:
    """`write(tmp)` writes the file at a new temporary path beside `path` (`_exclusive_temp`), which
    is then renamed into place; a failed write leaves no partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _exclusive_temp(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()


def write_folder_atomically(path: Path, write: Callable[[Path], Any]) -> None:
    """`write(tmp)` fills a temporary folder beside `path`, which then replaces `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=path.name + ".tmp-", dir=path.parent))
    try:
        write(tmp)
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- run folders
class RunExistsError(FileExistsError, ValueError):
    """The output folder already holds a run and neither --resume nor --overwrite was given."""


def existing_run(out_dir: str | Path) -> list[str]:
    """The run artefacts present in `out_dir` (empty: no run there)."""
    out = Path(out_dir)
    return [name for name in RUN_ARTEFACTS if (out / name).exists()]


def check_run_dir(out_dir: str | Path, resume: bool, overwrite: bool | None, flag: str = "--output-dir") -> None:
    """Refuse a folder that holds a run unless `resume` or `overwrite` (None: the command has no
    --overwrite). Under `accelerate launch` only the main process (RANK 0) checks: the others may
    start after it wrote the config."""
    if int(os.environ.get("RANK", "0") or 0) != 0:
        return
    found = existing_run(out_dir)
    if found and not (resume or overwrite):
        fix = "pass --resume to continue it, --overwrite to replace it," if overwrite is not None else "pass --resume to continue it"
        raise RunExistsError(f"{flag} {str(out_dir)!r} already holds a run ({', '.join(found)}); {fix} or choose another {flag}")


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
        if old is not None:  # an option added since the run started, at its default, changes nothing
            defaults = _defaults(config)
            added = {k for k in new if k not in old and k in defaults and new[k] == defaults[k]}
            new = {k: v for k, v in new.items() if k not in added}
        if old == new:
            return current
        return save_config(config, out, f"config.resume-{resumed_from}.json")
    return save_config(config, out)


def _defaults(config: Any) -> dict[str, Any]:
    """The config's fields that have a default, with it (as config.json writes it)."""
    fields = [f for f in dataclasses.fields(config) if f.default is not dataclasses.MISSING]
    return json.loads(json.dumps({f.name: f.default for f in fields}, default=str))


def start_run_dir(config: Any, out_dir: str | Path, resume_from: Path | None) -> None:
    """At the start of a run (main process): clear the folder for --overwrite, write the config."""
    if getattr(config, "overwrite", False):
        clear_run(out_dir)
    write_config(config, out_dir, resume_from.name if resume_from is not None else None)


def truncate_metrics(path: Path, step: int, drop: Callable[[dict], bool] = lambda record: False) -> None:
    """Drop the records a killed run logged after its checkpoint at `step` (a resumed run logs them
    again), and those `drop` names; the kept lines are left as they were written. A last line cut
    short by the kill is dropped; an unreadable line before it is an error. The file is replaced
    atomically."""
    if not path.exists():
        return
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    kept = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # half-written when the run was killed
                break
            raise ValueError(f"{path}: line {number} is not JSON ({line[:80]!r}); only the last line may be cut short by a kill: "
                             "repair or delete that line, then resume") from None
        if record["step"] <= step and not drop(record):
            kept.append(line)
    write_text_atomically(path, "".join(ln + "\n" for ln in kept))


# ---------------------------------------------------------------- checkpoints
class CheckpointError(ValueError):
    """--resume cannot continue the run; the message says what is wrong and what to do."""


def save_checkpoint(root: Path, step: int, write: Callable[[Path], Any], state: dict[str, Any], keep: int = 2,
                    accelerator: Any = None, name: str | None = None) -> Path:
    """Save under `root/<name>` (default `step-XXXXXX`) atomically, point `root/latest` at it, keep
    the newest `keep`. With an `accelerator`, every process calls this and `write` (accelerate's
    `save_state` writes one RNG state per process); without, only the main process does."""
    main = accelerator is None or accelerator.is_main_process
    wait = accelerator.wait_for_everyone if accelerator is not None else (lambda: None)
    root.mkdir(parents=True, exist_ok=True)
    final = root / (name or f"step-{step:06d}")
    tmp = root / f".tmp-{final.name}"  # one name every process can find; made afresh, never followed
    if main:
        if tmp.is_symlink() or tmp.is_file():
            tmp.unlink()  # a planted link (dangling or not) is removed, never written through
        elif tmp.exists():
            shutil.rmtree(tmp)  # a crashed save's leftovers
        os.mkdir(tmp, 0o700)  # exclusive: fails rather than reuse what appeared in between
    wait()
    write(tmp)
    wait()  # every process has written its part: the file list is final
    if main:
        files = {p.name: p.stat().st_size for p in sorted(tmp.iterdir()) if p.is_file()}
        (tmp / STATE_FILE).write_text(json.dumps({"step": step, **state, "files": files}, indent=1) + "\n")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        write_text_atomically(root / "latest", final.name + "\n")
        for old in sorted((p for p in root.glob("step-*") if p.is_dir() and _step_of(p) >= 0), key=_step_of)[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    wait()
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


def resume_checkpoint(root: Path, log: Callable[[str], Any] = print, command: str = "rl", flag: str = "--output-dir") -> Path | None:
    """The checkpoint `--resume` continues from (see the module docstring); None when `root` holds
    no checkpoint at all (nothing to continue). Raises `CheckpointError` when checkpoints exist but
    none is complete."""
    pointer = root / "latest"
    named = root / pointer.read_text().strip() if pointer.is_file() else None
    folders = sorted((p for p in root.glob("step-*") if p.is_dir() and _step_of(p) >= 0), key=_step_of, reverse=True)
    if named is None and not folders:
        log(f"{command}: --resume given but {root} holds no checkpoint; starting the run")
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
                log(f"{command}: not resuming from the newest checkpoint ({'; '.join(problems)}); "
                    f"falling back to {folder.name}, the newest complete one")
            return folder
        problems.append(problem)
    raise CheckpointError(f"--resume: no complete checkpoint in {root} ({'; '.join(problems)}); refusing to start over "
                          f"on top of this run: restore the missing files, or run without --resume into a new {flag}")


def read_checkpoint_state(path: Path) -> dict[str, Any]:
    """The `trainer_state.json` of a complete checkpoint (`CheckpointError` when it is not)."""
    problem = checkpoint_problem(path)
    if problem is not None:
        raise CheckpointError(f"cannot resume from {path}: {problem}")
    return json.loads((path / STATE_FILE).read_text())


def load_checkpoint(accelerator: Any, path: Path) -> dict[str, Any]:
    """Restore what `accelerator.save_state` wrote (model / optimizer / scheduler / RNG states) in
    place; return the trainer state. An incomplete checkpoint is refused first: accelerate only
    warns about a missing RNG state, and that run would diverge."""
    state = read_checkpoint_state(path)
    accelerator.load_state(str(path))
    return state
