"""Rule verifiers that return honest verdicts.

    from verifiers import verify, verify_batch, averify_batch, Verdict, VerifyResult, extract_answer

`verify` / `verify_batch` / `averify_batch` live in `verifiers.api`; kinds are listed in
`verifiers.registry.KINDS`; `extract_answer(text, kind="math")` (from `verifiers.extract`) reads the
final answer a completion states. Importing this package is cheap: sympy and math-verify load only
inside the worker processes (and `extract_answer` only when first used).
"""

from __future__ import annotations

from typing import Any

from verifiers.api import averify_batch, verify, verify_batch
from verifiers.types import Verdict, VerifyResult

__all__ = ["verify", "verify_batch", "averify_batch", "Verdict", "VerifyResult", "extract_answer"]


def __getattr__(name: str) -> Any:
    if name == "extract_answer":
        try:
            from verifiers.extract import extract_answer
        except ModuleNotFoundError as exc:
            if exc.name != "verifiers.extract":
                raise
            raise ImportError("verifiers.extract_answer needs verifiers/extract.py, which is not installed") from exc
        return extract_answer
    raise AttributeError(f"module 'verifiers' has no attribute {name!r}")
