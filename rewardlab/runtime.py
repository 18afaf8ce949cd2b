"""Process-wide runtime settings shared by every command (imported by all packages, so it
depends on nothing but torch).

CPU threads, one policy for every command (`rl`, `sft`, `rm-data`, `train-rm`, `eval-*`):
torch's intra-op threads spin while they wait for each other, so a run with more threads than the
cores that are free falls off a cliff (measured: `train-rm` at 2 threads with one core kept busy by
another process, 3.2x slower than at 1; with both cores busy, about 30x). So:

- `--cpu-threads 0` (auto) is `default_threads()`: 1 on a machine with at most 2 cores, else half of
  them - fixed per machine, never read from the momentary load, because the thread count changes
  the float reductions and so the numbers a run gives;
- asking for more threads than `free_cores()` (cores less the 1-minute load average) prints one line
  that says so and what to pass instead, or to set `OMP_WAIT_POLICY=PASSIVE` (threads that sleep
  instead of spinning while they wait). Measured on 2 cores with one kept busy, `train-rm` on the
  policy backbone, 256 pairs a step: the default (1 thread) 1,043 pairs/s against 1,214-1,433 idle
  (1.2-1.4x slower); 2 threads 403 pairs/s, with OMP_WAIT_POLICY=PASSIVE 766. PASSIVE is not set
  for you: it must be in the environment before torch starts, and it was not measured on an idle
  many-core machine, where spinning is what keeps threads fast.

>>> default_threads(cores=2), default_threads(cores=16)
(1, 8)
>>> free_cores(cores=2, load=1.2), free_cores(cores=2, load=5.0), free_cores(cores=8, load=0.0)
(1, 1, 8)
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from rewardlab.config import check_fields, opt

_warned: set[tuple[str, int]] = set()


@dataclass(frozen=True)
class RuntimeConfig:
    """Seed and CPU threads: a piece of every training command's config (`rl`, `rm-data`, `train-rm`)."""

    seed: int = opt(0, "random seed")
    cpu_threads: int = opt(1, "torch CPU threads on CPU (0: 1 on a machine with <= 2 cores, else half of them); see docs/training.md", ge=0)

    def check_runtime(self) -> None:
        check_fields(self, RuntimeConfig)

    __post_init__ = check_runtime


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's share)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads(cores: int | None = None) -> int:
    """Torch CPU threads when a command is given 0 (auto): 1 on <= 2 cores, else half of them."""
    cores = machine_cores() if cores is None else cores
    return 1 if cores <= 2 else cores // 2


def free_cores(cores: int | None = None, load: float | None = None) -> int:
    """Cores not taken by other work: the cores less the 1-minute load average, at least 1."""
    cores = machine_cores() if cores is None else cores
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            load = 0.0
    return max(1, min(cores, int(cores - load + 0.5)))


def check_threads(n: int, who: str = "", warn=None) -> bool:
    """Warn once per (who, n) when `n` threads exceed the free cores; True when it warned."""
    free = free_cores()
    if n <= free or (who, n) in _warned:
        return False
    _warned.add((who, n))
    message = (f"{who + ': ' if who else ''}warning: --cpu-threads {n} but only {free} of {machine_cores()} cores are free "
               f"(load {os.getloadavg()[0]:.1f}): torch's threads will wait on each other and steps can be several times "
               f"slower; pass --cpu-threads {free} (or 0 for the default, {default_threads()}), or set OMP_WAIT_POLICY=PASSIVE "
               f"in the environment to keep the threads but stop them spinning")
    (warn or print)(message)
    return True


def setup_cpu_threads(n: int, who: str = "") -> int:
    """Set torch's CPU threads by the policy above (no-op on CUDA machines); returns the count set."""
    import torch

    if torch.cuda.is_available():
        return torch.get_num_threads()
    n = n or default_threads()
    check_threads(n, who)
    torch.set_num_threads(n)
    return n


@contextlib.contextmanager
def cpu_threads(n: int, who: str = ""):
    """Run a block with `n` torch CPU threads (0: `default_threads()`; no-op on CUDA machines),
    warning when they exceed the free cores, then restore."""
    import torch

    before = torch.get_num_threads()
    setup_cpu_threads(n, who)
    try:
        yield
    finally:
        torch.set_num_threads(before)
