"""Process-wide runtime settings shared by every command (imported by all packages, so it
depends on nothing but torch)."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def cpu_threads(n: int):
    """Run a block with `n` torch CPU threads (no-op on CUDA machines or when n is 0), then restore.
    Tiny models gain nothing from more threads, and on a busy machine extra threads made steps up
    to 20x slower (measured)."""
    import torch

    before = torch.get_num_threads()
    if n and not torch.cuda.is_available():
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
