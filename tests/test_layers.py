"""The package layers: imports only point down, and no module imports itself back through others.

Every import counts, including those inside functions (read with `ast`, nothing is imported):
`rewardlab` (shared plumbing) <- `verifiers` <- `reward_models` <- `rewards` <- `training` <- `eval`;
`rewardlab/cli.py` (and `__main__`), the dispatcher, sits above them all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["rewardlab", "verifiers", "reward_models", "rewards", "training", "eval"]
DISPATCHERS = ("rewardlab.cli", "rewardlab.__main__")  # import every command module: the top, not the bottom


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))}


def imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `path` imports anywhere in its body (`from a import b` counts as `a.b`
    when b is a module, else as `a`)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a package: the nearest module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int:
    return len(LAYERS) if module in DISPATCHERS else LAYERS.index(module.split(".")[0])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_sees_function_level_imports_and_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    imports = imports_of(ROOT / "training" / "cli.py", project_modules())
    assert "training.trainer" in imports  # imported inside run()


def test_no_import_cycles():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_only_point_down(layer):
    up = []
    for module, targets in import_graph().items():
        if module.split(".")[0] != layer or module in DISPATCHERS:
            continue
        for target in sorted(targets):
            if layer_of(target) > layer_of(module):
                up.append(f"{module} -> {target}")
    assert up == []


# one name, one meaning: these are defined once per command or service on purpose
SAME_MEANING = {"configure", "run", "main",  # every command module (rewardlab/cli.py's protocol)
                "create_app",  # each HTTP service's app
                "train"}  # each package's training entry point (rl, train-rm)


def test_public_names_have_one_home():
    homes: dict[str, list[str]] = {}
    for name, path in project_modules().items():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                homes.setdefault(node.name, []).append(name)
    shared = {name: modules for name, modules in homes.items() if len(modules) > 1 and name not in SAME_MEANING}
    assert shared == {}


TRAINER_LINES = 250  # training/trainer.py, the RL loop read top to bottom (docs/training.md states it)


def test_functions_fit_on_a_screen():
    """No function over 80 lines in any package, and the RL loop file stays the size docs/training.md states."""
    long = []
    for name, path in project_modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80:
                long.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert long == []
    assert len((ROOT / "training" / "trainer.py").read_text().splitlines()) <= TRAINER_LINES
    assert f"{TRAINER_LINES} lines" in (ROOT / "docs" / "training.md").read_text()


def private_imports() -> list[str]:
    """`from a import _b` where `_b` is a name defined in module `a` (not a submodule): a private name used
    by another module. A private module (`verifiers._spans`) may be imported within its package."""
    modules = project_modules()
    found = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__") and f"{node.module}.{alias.name}" not in modules:
                        found.append(f"{name}: from {node.module} import {alias.name}")
    return found


def test_no_private_names_imported_across_modules():
    assert private_imports() == []
