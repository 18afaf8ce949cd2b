"""Files in run folders: another user of the machine may plant symlinks at names a writer will use
(a guessable temp name, a manifest not yet written). No write goes through a link."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardlab.runs import write_file_atomically, write_text_atomically


@pytest.mark.parametrize("writer", ["text", "file"])
def test_atomic_writers_never_follow_a_planted_symlink(tmp_path, writer):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    target = tmp_path / "run" / "config.json"
    target.parent.mkdir()
    # links at every name a predictable writer could use, the final name included
    for name in ("config.json.tmp", ".config.json.tmp", "config.json"):
        (target.parent / name).symlink_to(victim)
    if writer == "text":
        write_text_atomically(target, "new")
    else:
        write_file_atomically(target, lambda tmp: Path(tmp).write_text("new"))
    assert victim.read_text() == "precious"
    assert not target.is_symlink() and target.read_text() == "new"  # the link at the final name was replaced


def test_a_dangling_manifest_link_is_refused(tmp_path):
    from rewards.batch import prepare_folder

    class Plan:
        folder = tmp_path / "shards"

    Plan.folder.mkdir()
    victim = tmp_path / "victim-not-yet-there"
    (Plan.folder / "manifest.json").symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link"):
        prepare_folder(Plan(), {"a": 1}, overwrite=False)
    assert not victim.exists()


@pytest.mark.parametrize("dangling", [False, True])
def test_a_checkpoint_is_never_written_through_a_planted_temporary_link(tmp_path, dangling):
    """Another user plants `.tmp-step-000001` as a link (to a folder of the victim's, or to nowhere):
    the checkpoint is written into a folder of its own and the link's target is untouched."""
    from rewardlab.runs import checkpoint_problem, save_checkpoint

    root, victim = tmp_path / "run" / "checkpoints", tmp_path / "victim"
    root.mkdir(parents=True)
    if not dangling:
        victim.mkdir()
        (victim / "keep.txt").write_text("mine")
    (root / ".tmp-step-000001").symlink_to(victim, target_is_directory=True)
    final = save_checkpoint(root, 1, lambda d: (d / "random_states_0.pkl").write_bytes(b"x"), {})
    assert checkpoint_problem(final) is None and not final.is_symlink()
    assert (sorted(p.name for p in victim.iterdir()) == ["keep.txt"]) if not dangling else not victim.exists()
