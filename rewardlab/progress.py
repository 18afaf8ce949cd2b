"""Progress of a long phase on any stream: a tqdm bar on a terminal, plain lines elsewhere.

tqdm hides its bar when the output is not a terminal (a log file, `| tee`), so a piped run used
to be silent for minutes. `progress_bar(total, desc)` gives the bar on a terminal and otherwise a
`ProgressLines`: the same calls (`update`, `set_postfix`, `write`, `close`), printed as one line
every `interval` seconds (default `PROGRESS_SECONDS`, or $REWARDLAB_PROGRESS_SECONDS) from a
timer, so a line comes even while one step takes longer than the interval:

    sft: 120/1570 steps (7.6%), 0:38 elapsed, ~7:40 left; loss=0.412 acc=12.0%

>>> import io
>>> out = io.StringIO()
>>> bar = ProgressLines(total=4, desc="sft", interval=3600, file=out)
>>> bar.update(2); bar.set_postfix(loss="0.41"); bar.close()
>>> print(out.getvalue().replace("0:00", "T").strip())
sft: 0/4 steps (0.0%), started
sft: 2/4 steps (50.0%), T elapsed, ~T left; loss=0.41
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Iterable

PROGRESS_SECONDS = 30.0  # between two progress lines when the output is not a terminal


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else f"{seconds // 60}:{seconds % 60:02d}"


class ProgressLines:
    """tqdm's calls as plain progress lines: one at the start, one every `interval` seconds while
    the phase runs (a timer thread), one at `close`."""

    def __init__(self, iterable: Iterable | None = None, total: int | None = None, desc: str = "", initial: int = 0,
                 unit: str = "steps", interval: float | None = None, file: Any = None) -> None:
        self.iterable, self.desc, self.unit, self.n, self.start_n = iterable, desc, unit, initial, initial
        self.total = total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None)
        self.interval = interval if interval is not None else float(os.environ.get("REWARDLAB_PROGRESS_SECONDS", PROGRESS_SECONDS))
        self.file, self.postfix, self.started = file, "", time.monotonic()
        self.lock, self.stopped = threading.Lock(), threading.Event()
        self._print(f"{self._count()}, started")
        self.timer = threading.Thread(target=self._tick, name=f"progress-{desc}", daemon=True)
        self.timer.start()

    def _count(self) -> str:
        if not self.total:
            return f"{self.n} {self.unit}"
        return f"{self.n}/{self.total} {self.unit} ({self.n / self.total:.1%})"

    def _line(self) -> str:
        elapsed = time.monotonic() - self.started
        done = self.n - self.start_n
        left = f", ~{_clock(elapsed / done * (self.total - self.n))} left" if self.total and done > 0 else ""
        return f"{self._count()}, {_clock(elapsed)} elapsed{left}" + (f"; {self.postfix}" if self.postfix else "")

    def _print(self, text: str) -> None:
        with self.lock:
            print(f"{self.desc}: {text}" if self.desc else text, file=self.file or sys.stderr, flush=True)

    def _tick(self) -> None:
        while not self.stopped.wait(self.interval):
            self._print(self._line())

    def __enter__(self) -> "ProgressLines":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> Any:
        for item in self.iterable or ():
            yield item
            self.update(1)

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, **values: Any) -> None:
        self.postfix = " ".join(f"{k}={v}" for k, v in values.items())

    def write(self, text: str) -> None:
        with self.lock:
            print(text, file=self.file or sys.stderr, flush=True)

    def close(self) -> None:
        if self.stopped.is_set():
            return
        self.stopped.set()
        self._print(self._line())


def progress_bar(iterable: Iterable | None = None, total: int | None = None, desc: str = "", initial: int = 0,
                 unit: str = "steps", disable: bool = False, file: Any = None, **tqdm_options: Any) -> Any:
    """A tqdm bar on a terminal, `ProgressLines` on any other stream, a silent bar when `disable`."""
    from tqdm.auto import tqdm

    stream = file or sys.stderr
    if disable or getattr(stream, "isatty", lambda: False)():
        return tqdm(iterable, total=total, desc=desc, initial=initial, unit=unit, disable=disable, file=file, dynamic_ncols=True,
                    **tqdm_options)
    return ProgressLines(iterable, total=total, desc=desc, initial=initial, unit=unit, file=file)
