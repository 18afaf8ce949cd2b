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
import functools
import os
from dataclasses import dataclass

from rewardlab.config import check_fields, opt, with_defaults

_warned: set[tuple[str, int]] = set()
PRECISION_CHOICES = ("auto", "no", "bf16", "fp16")  # the policy: see "precision" below


@dataclass(frozen=True)
class RuntimeConfig:
    """Seed, CPU threads and precision: a piece of every command that runs a model (`rl`, `sft`,
    `rm-data`, `train-rm`, `eval-rm`, `eval-policy`; a command changes a default with `with_defaults`)."""

    seed: int = opt(0, "random seed")
    cpu_threads: int = opt(1, "torch CPU threads on CPU (0: 1 on a machine with <= 2 cores, else half of them); see docs/training.md", ge=0)
    mixed_precision: str = opt("no", "no (fp32: the documented numbers), auto (bf16 where the device does it fast), bf16, fp16; docs/training.md",
                               choices=PRECISION_CHOICES)

    def check_runtime(self) -> None:
        check_fields(self, RuntimeConfig)

    __post_init__ = check_runtime

    def precision(self, device_type: str | None = None) -> str:
        """The precision this run uses on `device_type` (`resolve_precision`: `auto` decided here)."""
        return resolve_precision(self.mixed_precision, device_type)


# `eval-rm` and `eval-policy`: threads by the machine (0); fp32 (`no`) so their reports keep the documented numbers
EvalRuntimeConfig = with_defaults(RuntimeConfig, cpu_threads=0)


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


# ---------------------------------------------------------------- precision
# One policy for every command that runs a model (`train-rm`, `rl`, `sft`, `rm-data`, `eval-*`):
# `--mixed-precision auto` is bf16 autocast where the device does bf16 matmuls fast, fp32 (`no`)
# elsewhere. Fast means CUDA with bf16, or a CPU with AMX or AVX512-BF16 that torch's oneDNN can use
# (measured on such a Xeon with 2 threads: [1349,384]x[384,1536] 80 GFLOP/s fp32 against 341 bf16).
# Autocast keeps the master weights, the optimizer state and the loss in fp32; the places that must
# stay fp32 whatever autocast does are cast with `.float()` and named in the code: log-softmax and
# its statistics for logprobs and entropy (training/forward.py), the KL, the Bradley-Terry,
# quantile and BCE reductions (reward_models/losses.py).
_CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def _onednn_bf16() -> bool:
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


@functools.lru_cache(maxsize=4)
def cpu_bf16_support(cpuinfo: str = "/proc/cpuinfo") -> dict[str, bool]:
    """What this CPU offers for bf16, detected once: the `cpuinfo` flags and whether torch's oneDNN
    has bf16 kernels for it; `fast` needs one of the flags and oneDNN."""
    try:
        with open(cpuinfo) as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), [])
    except OSError:  # not Linux: no flags to read, so fp32
        flags = []
    found = {flag: flag in flags for flag in _CPU_BF16_FLAGS}
    onednn = _onednn_bf16()
    return {**found, "mkldnn_bf16": onednn, "fast": onednn and any(found.values())}


def bf16_is_fast(device_type: str | None = None) -> bool:
    """Whether bf16 matmuls are fast on `device_type` (default: cuda when available, else cpu)."""
    import torch

    device_type = device_type or ("cuda" if torch.cuda.is_available() else "cpu")
    if device_type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return device_type == "cpu" and cpu_bf16_support()["fast"]


def resolve_precision(choice: str, device_type: str | None = None, fast: bool | None = None) -> str:
    """The precision a run uses for `--mixed-precision choice`: `auto` is `bf16` where bf16 is
    fast (`bf16_is_fast`, or `fast` when given), else `no` (fp32); other choices stand.

    >>> resolve_precision("auto", fast=True), resolve_precision("auto", fast=False), resolve_precision("no", fast=True)
    ('bf16', 'no', 'no')
    """
    if choice not in PRECISION_CHOICES:
        raise ValueError(f"--mixed-precision must be one of {', '.join(PRECISION_CHOICES)}, got {choice!r}")
    if choice != "auto":
        return choice
    return "bf16" if (bf16_is_fast(device_type) if fast is None else fast) else "no"


def precision_record(choice: str, device_type: str | None = None) -> dict:
    """What a run logs about its precision: asked, used, and the CPU's bf16 support."""
    return {"mixed_precision_asked": choice, "mixed_precision": resolve_precision(choice, device_type),
            "cpu_bf16": cpu_bf16_support()}


def autocast(precision: str, device_type: str = "cpu"):
    """The autocast context for a resolved precision (`no`: a no-op): weights stay fp32, matmuls
    run in bf16 / fp16. For code that runs a model outside `accelerate` (sampling, scoring)."""
    import torch

    if precision == "no":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device_type, dtype={"bf16": torch.bfloat16, "fp16": torch.float16}[precision])


def attention_for(precision: str, device_type: str, current: str) -> str:
    """The attention implementation to train with: on CPU in bf16, `eager` (matmuls and a softmax
    autocast keeps in fp32) instead of SDPA, whose CPU flash-attention backward in bf16 is slow
    (MiniLM BT step, 16 pairs, 1 thread, profiled: the SDPA backward 258 ms of a 768 ms bf16 step,
    34 ms in fp32; unprofiled, the step 0.48 s with eager against 0.69 s with SDPA). Elsewhere
    `current` stands.

    >>> attention_for("bf16", "cpu", "sdpa"), attention_for("no", "cpu", "sdpa"), attention_for("bf16", "cuda", "sdpa")
    ('eager', 'sdpa', 'sdpa')
    """
    return "eager" if precision == "bf16" and device_type == "cpu" and current == "sdpa" else current


def make_accelerator(precision: str):
    """An `accelerate.Accelerator` for a resolved precision. accelerate keeps one precision per
    process and refuses a second: a process that runs `train-rm` in bf16 and then `rl` in fp32 (a
    notebook, the learned-reward pipeline, the tests) gets its precision state renewed here; the
    distributed state (`accelerate launch`) is kept."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    shared = AcceleratorState._shared_state
    if shared and str(shared.get("_mixed_precision", precision)) != precision:
        AcceleratorState._reset_state(reset_partial_state=False)
    return Accelerator(mixed_precision=precision)
