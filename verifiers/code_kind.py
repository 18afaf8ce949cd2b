"""The `code` kind: run a Python solution against test cases in the sandbox (`verifiers.sandbox`).

prediction: a completion containing Python code. The last ```python (or ```py) fenced block is
    used; else the last fenced block of any language; else the whole text.
gold: the tests, in one of these formats
    - JSON list of stdin/stdout cases: `[{"input": "1 2\\n", "output": "3\\n"}, ...]`
    - JSON object `{"tests": [...same cases...]}` or the APPS/TACO style
      `{"inputs": ["1 2\\n", ...], "outputs": ["3\\n", ...]}`
    - otherwise: Python test code (e.g. `assert add(1, 2) == 3`), run once in a separate driver
      process against the solution loaded in the sandbox (`verifiers/sandbox_harness.py`); it
      passes only when the driver reports that the whole test code ran without an exception. How
      the solution's process exits proves nothing, and the tests compare the driver's own plain
      values, never objects of the solution.
    Hub shapes become one of these with `code_gold`: MBPP's `test_list` (a list of assert strings,
    with its `test_setup_code` in front), a list of stdin/stdout case objects, and HumanEval's
    `test` string (a `check(candidate)` function) with its `entry_point` (`check(<entry_point>)`
    is appended).
options: the `SandboxLimits` fields (`cpu_seconds`, `wall_seconds`, `memory_mb`, `max_processes`,
    `file_size_mb`, `open_files`, `tmpfs_mb`, `max_output_kb`, `network`, `drop_privileges`),
    applied per test run: the sandbox policy (`SANDBOX_OPTIONS`), which only whoever runs the
    verifier sets (the HTTP service refuses them from clients); and `compare` = "lines" (default:
    trailing spaces and blank lines at the end ignored) | "tokens" (whitespace-insensitive) | "exact".

Verdicts: CORRECT (every test passes), INCORRECT (wrong output, crash, syntax error, output flood,
memory exhausted), TIMEOUT (CPU or wall limit), NO_ANSWER (no code), BAD_GOLD (tests unreadable),
ERROR (the sandbox itself failed).

>>> verify_code("```python\\nprint(sum(map(int, input().split())))\\n```", '[{"input": "1 2", "output": "3"}]').verdict.value
'correct'
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from typing import Any, Callable

from verifiers.sandbox import SandboxLimits, SandboxRun, run_python
from verifiers.types import Verdict, VerifyResult

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_LIMIT_FIELDS = {f.name for f in dataclasses.fields(SandboxLimits)}
SANDBOX_OPTIONS = frozenset(_LIMIT_FIELDS)  # the sandbox policy: set by whoever runs the verifier, never by a service's client


def _lines(text: str) -> list[str]:
    out = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while out and not out[-1]:
        out.pop()
    return out


COMPARATORS: dict[str, Callable[[str, str], bool]] = {
    "lines": lambda got, want: _lines(got) == _lines(want),
    "tokens": lambda got, want: got.split() == want.split(),
    "exact": lambda got, want: got == want,
}


def extract_code(text: str) -> tuple[str, bool]:
    """(code, came from a fenced block). Prefers the last ```python block.

    >>> extract_code("Here:\\n```python\\nprint(1)\\n```")
    ('print(1)\\n', True)
    """
    blocks = _FENCE.findall(text)
    python = [body for lang, body in blocks if lang.lower() in ("python", "py", "python3")]
    if python:
        return python[-1], True
    if blocks:
        return blocks[-1][1], True
    return text, False


@dataclasses.dataclass(frozen=True)
class CodeTests:
    cases: list[tuple[str, str]]  # (stdin, expected stdout); empty when `asserts` is used
    asserts: str | None = None

    def describe(self) -> str:
        return "assert-style test code" if self.asserts is not None else f"{len(self.cases)} stdin/stdout tests"


def parse_tests(gold: str) -> CodeTests:
    """The tests of a gold string (formats in the module docstring); ValueError when unreadable."""
    text = gold.strip()
    if not text:
        raise ValueError("gold is empty: expected JSON test cases or Python test code")
    if text[0] in "[{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"gold looks like JSON but does not parse: {exc}") from None
        if isinstance(data, dict) and "inputs" in data and "outputs" in data:
            if len(data["inputs"]) != len(data["outputs"]):
                raise ValueError("gold has different numbers of inputs and outputs")
            data = [{"input": i, "output": o} for i, o in zip(data["inputs"], data["outputs"])]
        elif isinstance(data, dict):
            data = data.get("tests")
        if not isinstance(data, list) or not data:
            raise ValueError('gold JSON must be a non-empty list of {"input", "output"} cases')
        cases = []
        for i, case in enumerate(data):
            if not isinstance(case, dict) or not isinstance(case.get("output"), str) or not isinstance(case.get("input", ""), str):
                raise ValueError(f'gold test {i} must be {{"input": str, "output": str}}, got {case!r:.80}')
            cases.append((case.get("input", ""), case["output"]))
        return CodeTests(cases)
    try:
        compile(text, "<gold tests>", "exec")
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"gold test code does not compile: {exc}") from None
    return CodeTests([], asserts=text)


def prompt_helpers(prompt: str | None, entry_point: str | None) -> str:
    """The code of a HumanEval-style prompt other than the entry point's own definition (its
    imports and helper functions, e.g. HumanEval/38's `encode_cyclic`), for the tests to define
    themselves: a solution that redefines a helper the tests call cannot decide the check with it.
    Empty when the prompt is not Python that defines `entry_point`.

    >>> print(prompt_helpers("import math\\ndef helper(x):\\n    return x\\ndef f(x):\\n    pass\\n", "f"))
    import math
    def helper(x):
        return x
    """
    if not prompt or not entry_point:
        return ""
    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError):
        return ""
    lines = prompt.splitlines()
    keep, found = [], False
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            found = True
            continue
        keep.extend(lines[first - 1 : node.end_lineno])
    return "\n".join(keep).strip() + "\n" if found and any(line.strip() for line in keep) else ""


def code_gold(value: Any, entry_point: str | None = None, setup: str | None = None, prompt: str | None = None) -> str:
    """The gold string of the hub's test shapes (see the module docstring); ValueError otherwise.
    With HumanEval's `prompt`, its helpers (`prompt_helpers`) come first in the test code.

    >>> print(code_gold(["assert f(1) == 2", "assert f(2) == 3"]))
    assert f(1) == 2
    assert f(2) == 3
    >>> code_gold([{"input": "1 2", "output": "3"}])
    '[{"input": "1 2", "output": "3"}]'
    >>> code_gold("def check(candidate):\\n    assert candidate(1) == 2", entry_point="f").splitlines()[-1]
    'check(f)'
    """
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, str) for v in value):
            text = "\n".join(value)
        elif value and all(isinstance(v, dict) for v in value):
            return json.dumps(list(value))
        else:
            raise ValueError("a list of tests must hold assert strings or {\"input\", \"output\"} objects, "
                             f"got {json.dumps(value, default=str)[:80]}")
    elif isinstance(value, dict):
        return json.dumps(value)
    elif isinstance(value, str):
        text = value
    else:
        raise ValueError(f"tests must be a string, a list or an object, got {type(value).__name__}")
    if setup and setup.strip():
        text = setup.rstrip() + "\n" + text
    helpers = prompt_helpers(prompt, entry_point)
    if helpers and text.lstrip()[:1] not in ("[", "{"):
        text = helpers + "\n" + text
    if entry_point and re.search(r"^def check\(", text, re.M) and not re.search(r"^check\(", text, re.M):
        text = text.rstrip() + f"\n\ncheck({entry_point})\n"
    return text


def check_code_options(options: dict[str, Any]) -> None:
    """TypeError for an unknown option, ValueError for a bad value (run by the caller, in-process).

    >>> check_code_options({"cpu_secs": 1})
    Traceback (most recent call last):
    ...
    TypeError: code verifier got unknown option(s) 'cpu_secs'; valid options: compare, cpu_seconds, ...
    """
    limits = {k: v for k, v in options.items() if k != "compare"}
    unknown = sorted(set(limits) - _LIMIT_FIELDS)
    if unknown:
        valid = ", ".join(["compare", *sorted(_LIMIT_FIELDS)])
        raise TypeError(f"code verifier got unknown option(s) {', '.join(map(repr, unknown))}; valid options: {valid}")
    if "compare" in options and options["compare"] not in COMPARATORS:
        raise ValueError(f"unknown compare mode {options['compare']!r}; valid: {', '.join(COMPARATORS)}")
    SandboxLimits(**limits)  # validates the values


def _failure(run: SandboxRun) -> tuple[Verdict, str]:
    """Why a run that did not exit cleanly failed."""
    if run.setup_error:
        return Verdict.ERROR, f"sandbox failed: {run.setup_error}"
    if run.timed_out:
        how = f"CPU, {run.signal} after {run.cpu:g} s" if run.signal and run.cpu is not None else run.signal or "wall clock"
        return Verdict.TIMEOUT, f"time limit ({how})"
    if run.output_limited:
        return Verdict.INCORRECT, "output limit exceeded"
    last = run.stderr.strip().splitlines()[-1:] or [""]
    how = f"killed by {run.signal}" if run.signal else f"exit code {run.returncode}"
    return Verdict.INCORRECT, f"{how}: {last[0][:200]}"


def verify_code(prediction: str, gold: str, compare: str = "lines", **options: Any) -> VerifyResult:
    """Run the prediction's Python code against the gold tests; see the module docstring."""
    check_code_options({"compare": compare, **options})
    limits = SandboxLimits(**options)
    try:
        tests = parse_tests(gold)
    except ValueError as exc:
        return VerifyResult(Verdict.BAD_GOLD, detail=str(exc), kind="code")
    code, fenced = extract_code(prediction)
    base = {"kind": "code", "extracted": code[:2000], "gold_parsed": tests.describe()}
    if not code.strip():
        return VerifyResult(Verdict.NO_ANSWER, detail="no code in the prediction", **base)
    try:
        compile(code, "solution.py", "exec")
    except (SyntaxError, ValueError) as exc:
        if not fenced:
            return VerifyResult(Verdict.NO_ANSWER, detail=f"no code block, and the text is not Python ({exc})", **base)
        return VerifyResult(Verdict.INCORRECT, detail=f"solution does not compile: {exc}", **base)
    if tests.asserts is not None:
        return _verify_asserts(code, tests.asserts, limits, base)
    runs = [(code, stdin, expected) for stdin, expected in tests.cases]
    protections: list[str] = []
    for number, (source, stdin, expected) in enumerate(runs, start=1):
        run = run_python(source, stdin, limits)
        protections = run.protections
        extra = {"passed": number - 1, "total": len(runs), "protections": protections, "runs": number}
        if not run.ok:
            verdict, why = _failure(run)
            return VerifyResult(verdict, detail=f"test {number}/{len(runs)}: {why}", extra=extra, **base)
        if expected is not None and not COMPARATORS[compare](run.stdout, expected):
            detail = f"test {number}/{len(runs)}: expected {expected[:80]!r}, got {run.stdout[:80]!r}"
            return VerifyResult(Verdict.INCORRECT, detail=detail, extra=extra, **base)
    extra = {"passed": len(runs), "total": len(runs), "protections": protections, "runs": len(runs)}
    return VerifyResult(Verdict.CORRECT, detail=f"all {len(runs)} tests passed", extra=extra, **base)


def _verify_asserts(code: str, asserts: str, limits: SandboxLimits, base: dict[str, Any]) -> VerifyResult:
    """Assert-style tests: CORRECT only on the test driver's report of a pass (with the run's nonce)."""
    run = run_python(code, "", limits, tests=asserts)
    report = run.tests or {}
    extra = {"passed": int(run.tests_passed), "total": 1, "protections": run.protections,
             "requests": report.get("requests", 0), "runs": 1}
    if run.tests_passed and not run.timed_out and not run.output_limited and not run.setup_error:
        return VerifyResult(Verdict.CORRECT, detail="all 1 tests passed", extra=extra, **base)
    if run.setup_error or run.timed_out or run.output_limited:
        verdict, why = _failure(run)
    elif report.get("verdict") == "error":
        verdict, why = Verdict.ERROR, report.get("detail", "the tests could not run")
    else:
        verdict, why = Verdict.INCORRECT, report.get("detail") or "the test driver did not report a pass"
        last = run.stderr.strip().splitlines()[-1:]
        if "loading the solution raised" in why and last:
            why += f" ({last[0][:200]})"
    return VerifyResult(verdict, detail=f"test 1/1: {why}", extra=extra, **base)
