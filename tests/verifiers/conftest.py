"""Fixtures for the verifier runtime tests."""

from __future__ import annotations

import pytest

from verifier_fake_kinds import FAKE_KINDS
from verifiers import registry


@pytest.fixture
def fake_kinds(monkeypatch):
    """Adds the misbehaving kinds of `verifier_fake_kinds` to the registry (workers import them
    by "module:function"; the parent's sys.path, which has this folder, is sent to each worker)."""
    for name, spec in FAKE_KINDS.items():
        monkeypatch.setitem(registry.KINDS, name, spec)
    return FAKE_KINDS
