"""Verifier kinds, by name. A kind is a function `(prediction, gold, **options) -> VerifyResult`
(see `verifiers.types.KindFn`). Values are "module:function" so the parent process imports
nothing heavy (sympy, math-verify) until a kind is used; workers import on first call.

Add a kind by adding one line here.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from verifiers.types import KindFn

KINDS: dict[str, str] = {
    "math": "verifiers.math_kind:verify_math",
    "numeric": "verifiers.simple_kinds:verify_numeric",
    "choice": "verifiers.simple_kinds:verify_choice",
    "string": "verifiers.simple_kinds:verify_string",
    "regex": "verifiers.simple_kinds:verify_regex",
    "code": "verifiers.code_kind:verify_code",
}


def kind_names() -> list[str]:
    return sorted(KINDS)


@lru_cache(maxsize=None)
def get_kind(name: str) -> KindFn:
    """The function for verifier kind `name`; a clear ValueError lists the valid kinds."""
    if not isinstance(name, str) or name not in KINDS:
        raise ValueError(f"unknown verifier kind {name!r}; valid kinds: {', '.join(kind_names())}")
    module_name, _, attr = KINDS[name].partition(":")
    return getattr(importlib.import_module(module_name), attr)
