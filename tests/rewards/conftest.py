"""Shared fakes for the reward tests (each follows the contract in docs/contracts.md)."""

from __future__ import annotations

import pytest

from verifiers.types import Verdict, VerifyResult


def scripted_backend(verdicts):
    """A verify_batch-like backend returning the given verdict names in order, recording calls."""

    def backend(predictions, golds, kind="math", **kwargs):
        backend.calls.append((list(predictions), list(golds), kind, kwargs))
        return [VerifyResult(Verdict(v), kind=kind) for v in verdicts[: len(predictions)]]

    backend.calls = []
    return backend


def integer_backend(predictions, golds, kind="math", **kwargs):
    """Equivalence of integers written in any of the forms '5', '05', '+5', '5.0' (a stand-in for the
    math verifier where a test needs to count calls)."""
    out = []
    for p, g in zip(predictions, golds):
        try:
            out.append(VerifyResult(Verdict.CORRECT if float(p) == float(g) else Verdict.INCORRECT, kind=kind))
        except ValueError:
            out.append(VerifyResult(Verdict.NO_ANSWER, kind=kind))
    return out


def last_token_extract(text, kind="math"):
    """A stand-in extractor: the last whitespace-separated token if it parses as a number."""
    words = text.split()
    if not words:
        return None
    try:
        float(words[-1])
    except ValueError:
        return None
    return words[-1]


@pytest.fixture
def fake_backend():
    return scripted_backend
