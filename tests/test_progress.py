"""Progress on any stream (`rewardlab.progress`): a piped run prints a plain line at a steady
interval - from a timer, so also while one step outlasts the interval - and `sft` uses it."""

from __future__ import annotations

import io
import time

from rewardlab.progress import ProgressLines, progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_come_at_a_steady_interval_even_while_a_step_is_running():
    out = io.StringIO()
    bar = ProgressLines(total=10, desc="sft", interval=0.05, file=out)
    time.sleep(0.4)  # one long step: no update at all
    bar.update(1)
    bar.set_postfix(loss="0.5")
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "sft: 0/10 steps (0.0%), started"
    assert len(lines) >= 4 and all(line.startswith("sft: ") and "elapsed" in line for line in lines[1:])
    assert lines[-1].startswith("sft: 1/10 steps (10.0%)") and lines[-1].endswith("left; loss=0.5")
    time.sleep(0.15)
    assert out.getvalue().splitlines() == lines  # closed: the timer stopped


def test_a_terminal_gets_the_bar_and_any_other_stream_the_lines():
    from tqdm.auto import tqdm

    assert isinstance(progress_bar(total=3, desc="x", file=Terminal()), tqdm)
    lines = progress_bar(total=3, desc="x", file=io.StringIO())
    assert isinstance(lines, ProgressLines)
    lines.close()
    iterated = ProgressLines(range(3), desc="train-rm", interval=3600, file=io.StringIO())
    assert list(iterated) == [0, 1, 2] and iterated.n == 3
    iterated.close()


def test_sft_prints_progress_lines_when_piped(tmp_path, capsys, monkeypatch):
    """A newcomer's `rewardlab sft ... | tee log` sees progress (capsys is not a terminal)."""
    from rewardlab.cli import main as rewardlab

    monkeypatch.setenv("REWARDLAB_PROGRESS_SECONDS", "0.05")
    code = rewardlab(["sft", "--data", "arithmetic:digits=1", "--steps", "20", "--eval-every", "10", "--batch-size", "16",
                      "--eval-size", "4", "--output-dir", str(tmp_path / "sft")])
    assert code == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.startswith("sft: ")]
    assert lines[0] == "sft: 0/20 steps (0.0%), started" and lines[-1].startswith("sft: 20/20 steps (100.0%)")
    assert "single_turn_acc=" in lines[-1]
    assert "single turn, greedy, no tools" in captured.out
