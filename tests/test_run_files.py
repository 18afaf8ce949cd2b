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
