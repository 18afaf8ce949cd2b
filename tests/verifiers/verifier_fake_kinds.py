"""Misbehaving verifier kinds for the pool tests (registered by monkeypatching `KINDS`).

Workers import these by "module:function" name, like the real kinds; each one exercises a way a
check can hang, crash or misbehave inside a worker process.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import time

from verifiers.types import Verdict, VerifyResult


def exact(prediction: str, gold: str, **options) -> VerifyResult:
    """A stand-in `string` kind: exact match after stripping spaces."""
    if not prediction.strip():
        return VerifyResult(Verdict.NO_ANSWER, detail="empty prediction")
    verdict = Verdict.CORRECT if prediction.strip() == gold.strip() else Verdict.INCORRECT
    return VerifyResult(verdict, extracted=prediction.strip(), gold_parsed=gold.strip())


def sleep(prediction: str, gold: str, seconds: float = 60.0, **options) -> VerifyResult:
    """Hangs in Python (time.sleep)."""
    time.sleep(seconds)
    return exact(prediction, gold)


def spin_in_c(prediction: str, gold: str, **options) -> VerifyResult:
    """Catastrophic regex backtracking: spins in C, never returns to the interpreter loop."""
    re.match(r"(a+)+$", "a" * 64 + "b")
    return exact(prediction, gold)


def allocate(prediction: str, gold: str, gib: int = 64, **options) -> VerifyResult:
    """Asks for far more memory than the worker cap allows."""
    block = bytearray(gib << 30)
    return VerifyResult(Verdict.CORRECT, detail=str(len(block)))


def hard_exit(prediction: str, gold: str, **options) -> VerifyResult:
    """Kills its own process without cleanup."""
    os._exit(7)


def segfault(prediction: str, gold: str, **options) -> VerifyResult:
    """Dereferences NULL."""
    ctypes.string_at(0)
    return exact(prediction, gold)


def chatty(prediction: str, gold: str, **options) -> VerifyResult:
    """Writes to stdout (fd 1 and sys.stdout) and reads stdin: must not corrupt the worker protocol."""
    print("noise on stdout " * 100)
    os.write(1, b"\x00\x00\x00\x00\x00\x00\x00\x05garbage")
    sys.stdin.read()
    return exact(prediction, gold)


def raises(prediction: str, gold: str, **options) -> VerifyResult:
    raise ValueError("the checker broke on purpose")


def exits(prediction: str, gold: str, **options) -> VerifyResult:
    sys.exit(3)


def wrong_type(prediction: str, gold: str, **options) -> VerifyResult:
    return True  # type: ignore[return-value]


def pid(prediction: str, gold: str, **options) -> VerifyResult:
    """Reports which process ran it (to check workers are reused and replaced)."""
    return VerifyResult(Verdict.CORRECT, extracted=str(os.getpid()))


def stamp(prediction: str, gold: str, **options) -> VerifyResult:
    """A verdict that tells one run from another (process and clock): items run apart never share it."""
    return VerifyResult(Verdict.CORRECT if prediction == gold else Verdict.INCORRECT,
                        extracted=f"{os.getpid()}:{time.monotonic_ns()}")


FAKE_KINDS = {
    name: f"verifier_fake_kinds:{name}"
    for name in ("exact", "sleep", "spin_in_c", "allocate", "hard_exit", "segfault", "chatty", "raises", "exits", "wrong_type",
                 "pid", "stamp")
}
