"""Fixtures for the verifier runtime tests."""

from __future__ import annotations

import pytest

from verifier_fake_kinds import FAKE_KINDS
from verifiers import pool as pool_module
from verifiers import registry


@pytest.fixture
def fake_kinds(monkeypatch):
    """Adds the misbehaving kinds of `verifier_fake_kinds` to the registry (workers import them
    by "module:function"; the parent's sys.path, which has this folder, is sent to each worker)."""
    for name, spec in FAKE_KINDS.items():
        monkeypatch.setitem(registry.KINDS, name, spec)
    return FAKE_KINDS


@pytest.fixture
def light_pool(fake_kinds):
    """A shared pool of 2 workers that preload nothing (fast restarts after each kill)."""
    pool = pool_module.configure_pool(pool_module.PoolConfig(workers=2, preload=()))
    yield pool
    pool_module.shutdown_pool()
