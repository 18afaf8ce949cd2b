"""The docstring examples of the verifier runtime modules run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["verifiers.pool", "verifiers.api", "verifiers.sandbox", "verifiers.code_kind", "verifiers.cli", "verifiers.service",
           "verifiers._forms", "verifiers._numbers", "verifiers._spans", "verifiers.fastpath", "verifiers.math_kind"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
