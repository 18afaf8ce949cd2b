"""Run folders: resume trims metrics.jsonl (a line cut short by a kill included) atomically; a checkpoint
whose files do not have the sizes written is never resumed from."""

import json

import pytest

from rewardlab import runs
from rewardlab.runs import checkpoint_problem, resume_checkpoint, save_checkpoint, truncate_metrics


def _metrics(path, steps):
    lines = [json.dumps({"step": s, "reward/mean": s / 10, "event": "log"}) for s in steps]
    path.write_text("".join(x + "\n" for x in lines))
    return lines


def test_every_cut_of_the_last_line_is_dropped_on_resume(tmp_path):
    # a kill can stop the writer anywhere in the last line: every prefix of it is dropped, the whole lines kept
    path = tmp_path / "metrics.jsonl"
    lines = _metrics(path, [1, 2, 3])
    last = json.dumps({"step": 4, "reward/mean": 0.4, "event": "log"})
    for cut in range(1, len(last)):
        path.write_text("".join(x + "\n" for x in lines) + last[:cut])
        truncate_metrics(path, step=2)
        assert path.read_text().splitlines() == lines[:2], cut


def test_a_broken_line_before_the_last_is_an_error_naming_it(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = _metrics(path, [1, 2, 3])
    path.write_text(lines[0] + "\n{\"step\": 2, \"rew\n" + lines[2] + "\n")
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        truncate_metrics(path, step=3)


def test_a_failed_rewrite_leaves_the_metrics_whole(tmp_path, monkeypatch):
    # the trimmed file replaces the old one in one rename: a failure while writing (disk full) leaves the old one
    path = tmp_path / "metrics.jsonl"
    _metrics(path, [1, 2, 3])
    before = path.read_text()

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runs.os, "fsync", full)
    with pytest.raises(OSError):
        truncate_metrics(path, step=1)
    assert path.read_text() == before


def _checkpoint(root, step, files):
    def write(tmp):
        tmp.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (tmp / name).write_bytes(data)

    return save_checkpoint(root, step, write, {"note": "x"}, keep=3)


FILES = {"model.safetensors": b"m" * 40, "optimizer.bin": b"o" * 25, "random_states_0.pkl": b"r" * 7}


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("delta", [-1, 1, "empty"])
def test_a_file_of_another_size_than_written_makes_the_checkpoint_incomplete(tmp_path, name, delta):
    older = _checkpoint(tmp_path, 2, FILES)
    newer = _checkpoint(tmp_path, 4, FILES)
    assert checkpoint_problem(newer) is None
    data = FILES[name]
    (newer / name).write_bytes(b"" if delta == "empty" else (data[:-1] if delta == -1 else data + b"x"))
    problem = checkpoint_problem(newer)
    assert problem is not None and name in problem and f"{len(data)} were written" in problem
    assert resume_checkpoint(tmp_path, log=lambda msg: None) == older  # falls back to the complete one
