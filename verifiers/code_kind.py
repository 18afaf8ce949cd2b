"""The `code` kind: run a solution against test cases in the sandbox (`verifiers.sandbox`).

language: the `language` option (python, cpp, c, java, javascript, rust, go; or a fence tag such as c++, js,
    rs), else the tag of the prediction's fenced blocks (a python block wins), else python. Languages other
    than Python are compiled and run in the same sandbox (`verifiers/code_languages.py`).
prediction: a completion containing code. The last fenced block tagged with the language (```python,
    ```cpp, ...) is used; else the last fenced block of any language; else the whole text.
gold: the tests, in one of these formats
    - JSON list of stdin/stdout cases: `[{"input": "1 2\\n", "output": "3\\n"}, ...]`
    - JSON object `{"tests": [...same cases...]}` or the APPS/TACO style
      `{"inputs": ["1 2\\n", ...], "outputs": ["3\\n", ...]}`
    - for another language: unit tests in that language (e.g. `assert(add(1, 2) == 3);` in C++, `if f(1) != 2
      { panic("...") }` in Go), judged outside the program (`verifiers/code_checks.py`): the program reports
      what each top-level assertion's actual side computes, the expected sides are evaluated without the
      solution, and the reports must match them one by one
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
    verifier sets (the HTTP service refuses them from clients); `compare` = "lines" (default:
    trailing spaces and blank lines at the end ignored) | "tokens" (whitespace-insensitive) | "exact"
    | "floats" (tokens; numbers within `tolerance`, default 1e-6, absolute or relative); and `language`.

Verdicts: CORRECT (every test passes), INCORRECT (wrong output, crash, syntax or compile error, output flood,
memory exhausted), TIMEOUT (CPU or wall limit, the compiler's too), NO_ANSWER (no code), BAD_GOLD (tests unreadable),
ERROR (the sandbox itself failed).

>>> verify_code("```python\\nprint(sum(map(int, input().split())))\\n```", '[{"input": "1 2", "output": "3"}]').verdict.value
'correct'
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import re
from typing import Any, Callable

from verifiers.code_checks import plan_checks, read_reports
from verifiers.code_languages import (
    Build, MissingToolchain, check_language, compile_program, expected_values, find_toolchain, language_of_tag,
    run_built, source_files)
from verifiers.sandbox import SandboxLimits, SandboxRun, run_python
from verifiers.types import Verdict, VerifyResult

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_LIMIT_FIELDS = {f.name for f in dataclasses.fields(SandboxLimits)}
_CHECK_OPTIONS = frozenset({"compare", "language", "tolerance"})  # how to check, not the sandbox policy
SANDBOX_OPTIONS = frozenset(_LIMIT_FIELDS)  # the sandbox policy: set by whoever runs the verifier, never by a service's client


def _lines(text: str) -> list[str]:
    out = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while out and not out[-1]:
        out.pop()
    return out


def _floats(got: str, want: str, tolerance: float = 1e-6) -> bool:
    """Token by token; tokens that both read as numbers may differ by `tolerance` (absolute, or relative to
    the expected value when it is larger than 1)."""
    a, b = got.split(), want.split()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if not (math.isfinite(fx) and math.isfinite(fy)) or abs(fx - fy) > tolerance * max(1.0, abs(fy)):
            return False
    return True


COMPARATORS: dict[str, Callable[..., bool]] = {
    "lines": lambda got, want, tolerance=0: _lines(got) == _lines(want),
    "tokens": lambda got, want, tolerance=0: got.split() == want.split(),
    "exact": lambda got, want, tolerance=0: got == want,
    "floats": _floats,
}


def extract_code(text: str, language: str | None = None) -> tuple[str, bool]:
    """(code, came from a fenced block). Prefers the last block tagged with `language` (default python).

    >>> extract_code("Here:\\n```python\\nprint(1)\\n```")
    ('print(1)\\n', True)
    """
    blocks = _FENCE.findall(text)
    wanted = [body for tag, body in blocks if (language_of_tag(tag) or "") == (language or "python")]
    if wanted:
        return wanted[-1], True
    if blocks:
        return blocks[-1][1], True
    return text, False


def code_language(text: str, language: str | None) -> str:
    """The language of a prediction: the `language` option, else the tag of its last fenced block that names
    one (a python block first, as before), else python.

    >>> code_language("```cpp\\nint main() {}\\n```", None)
    'cpp'
    """
    if language:
        return check_language(language)
    tags = [language_of_tag(tag) for tag, _ in _FENCE.findall(text)]
    known = [tag for tag in tags if tag]
    return "python" if "python" in known or not known else known[-1]


@dataclasses.dataclass(frozen=True)
class CodeTests:
    cases: list[tuple[str, str]]  # (stdin, expected stdout); empty when `asserts` is used
    asserts: str | None = None

    def describe(self) -> str:
        return "assert-style test code" if self.asserts is not None else f"{len(self.cases)} stdin/stdout tests"


def parse_tests(gold: str, language: str = "python") -> CodeTests:
    """The tests of a gold string (formats in the module docstring); ValueError when unreadable.
    Test code in another language than Python is checked by its compiler, with the program."""
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
    if language != "python":
        return CodeTests([], asserts=text)
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
    limits = {k: v for k, v in options.items() if k not in _CHECK_OPTIONS}
    unknown = sorted(set(limits) - _LIMIT_FIELDS)
    if unknown:
        valid = ", ".join(sorted(_CHECK_OPTIONS | _LIMIT_FIELDS))
        raise TypeError(f"code verifier got unknown option(s) {', '.join(map(repr, unknown))}; valid options: {valid}")
    if "compare" in options and options["compare"] not in COMPARATORS:
        raise ValueError(f"unknown compare mode {options['compare']!r}; valid: {', '.join(COMPARATORS)}")
    tolerance = options.get("tolerance", 1e-6)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance < math.inf:
        raise ValueError(f"tolerance must be a number >= 0 (for compare='floats'), got {tolerance!r}")
    if options.get("language") is not None:
        language = check_language(options["language"])
        if language != "python":
            try:
                find_toolchain(language)
            except MissingToolchain as exc:
                raise ValueError(str(exc)) from None
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


def verify_code(prediction: str, gold: str, compare: str = "lines", language: str | None = None,
                tolerance: float = 1e-6, **options: Any) -> VerifyResult:
    """Run the prediction's code against the gold tests; see the module docstring."""
    check_code_options({"compare": compare, "tolerance": tolerance, **options})
    limits = SandboxLimits(**options)
    language = code_language(prediction, language)
    try:
        tests = parse_tests(gold, language)
    except ValueError as exc:
        return VerifyResult(Verdict.BAD_GOLD, detail=str(exc), kind="code")
    code, fenced = extract_code(prediction, language)
    base = {"kind": "code", "extracted": code[:2000], "gold_parsed": tests.describe()}
    if not code.strip():
        return VerifyResult(Verdict.NO_ANSWER, detail="no code in the prediction", **base)
    if language != "python":
        return _verify_compiled(language, code, tests, limits, compare, tolerance, base)
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
        if expected is not None and not COMPARATORS[compare](run.stdout, expected, tolerance):
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


def _verify_compiled(language: str, code: str, tests: CodeTests, limits: SandboxLimits, compare: str,
                     tolerance: float, base: dict[str, Any]) -> VerifyResult:
    """Another language than Python (verifiers/code_languages.py): build once in the sandbox (cached), then run
    the stdin/stdout cases in one sandbox setup with per-case limits; unit tests go to `_verify_checks`."""
    base = {**base, "gold_parsed": f"{tests.describe()} ({language})"}
    if tests.asserts is not None:
        return _verify_checks(language, code, tests.asserts, limits, base)
    try:
        files, main = source_files(language, code)
        build = compile_program(language, files)
    except MissingToolchain as exc:
        return VerifyResult(Verdict.ERROR, detail=str(exc), **base)
    extra = {"language": language, "compile_seconds": round(build.seconds, 3), "build_cached": build.cached}
    if build.error is not None:
        return VerifyResult(_build_verdict(build), detail=build.error, extra={**extra, "passed": 0, "total": len(tests.cases)}, **base)
    done = run_built(language, build, main, [stdin for stdin, _ in tests.cases], limits)  # stops at the first failed run
    for number, ((_, expected), run) in enumerate(zip(tests.cases, done), start=1):
        extra.update(passed=number - 1, total=len(tests.cases), protections=run.protections)
        if not run.ok:
            verdict, why = _failure(run)
            return VerifyResult(verdict, detail=f"test {number}/{len(tests.cases)}: {why}", extra=extra, **base)
        if not COMPARATORS[compare](run.stdout, expected, tolerance):
            detail = f"test {number}/{len(tests.cases)}: expected {expected[:80]!r}, got {run.stdout[:80]!r}"
            return VerifyResult(Verdict.INCORRECT, detail=detail, extra=extra, **base)
    if len(done) < len(tests.cases):  # never reached: a short list ends with a failed run; kept as a guard
        return VerifyResult(Verdict.ERROR, detail=f"test {len(done) + 1}/{len(tests.cases)}: not run", extra=extra, **base)
    extra["passed"] = len(tests.cases)
    return VerifyResult(Verdict.CORRECT, detail=f"all {len(tests.cases)} tests passed", extra=extra, **base)


def _build_verdict(build: Build) -> Verdict:
    return Verdict.ERROR if build.setup_error else Verdict.TIMEOUT if build.timed_out else Verdict.INCORRECT


def _verify_checks(language: str, code: str, asserts: str, limits: SandboxLimits, base: dict[str, Any]) -> VerifyResult:
    """Unit tests in the program's language, judged outside it (`verifiers.code_checks`): the program reports the
    value of each top-level check's actual side; CORRECT only when the reports are exactly one per check, in
    order, each equal to the expected side's value, evaluated without the solution. Nothing the program can
    print, read or skip stands for a pass."""
    try:
        plan = plan_checks(language, asserts)
    except ValueError as exc:
        return VerifyResult(Verdict.BAD_GOLD, detail=str(exc), **base)
    total = len(plan.checks)
    try:
        expected, why = expected_values(plan, limits)
        if expected is None:
            return VerifyResult(Verdict.BAD_GOLD, detail=why, extra={"passed": 0, "total": total}, **base)
        files, main = source_files(language, code, plan)
        build = compile_program(language, files)
    except MissingToolchain as exc:
        return VerifyResult(Verdict.ERROR, detail=str(exc), **base)
    extra = {"language": language, "compile_seconds": round(build.seconds, 3), "build_cached": build.cached,
             "passed": 0, "total": total}
    if build.error is not None:
        return VerifyResult(_build_verdict(build), detail=build.error, extra=extra, **base)
    run = run_built(language, build, main, [""], limits)[-1]
    extra["protections"] = run.protections
    reports = read_reports(run.stdout)
    for number, check in enumerate(plan.checks):
        got = reports[number] if number < len(reports) else None
        if got != (number, expected[number]):
            if not run.ok:
                verdict, why = _failure(run)
            elif got is None:
                verdict, why = Verdict.INCORRECT, "not reported: the unit tests did not finish"
            else:
                verdict, why = Verdict.INCORRECT, f"got {got[1][:80]}" + (f" (report of check {got[0] + 1})" if got[0] != number else "")
            return VerifyResult(verdict, detail=f"check {number + 1}/{total} ({check.text[:120]}): {why}", extra=extra, **base)
        extra["passed"] = number + 1
    if len(reports) > total or not run.ok:
        why = _failure(run)[1] if not run.ok else f"{len(reports) - total} reports more than checks"
        verdict = _failure(run)[0] if not run.ok else Verdict.INCORRECT
        return VerifyResult(verdict, detail=f"after the checks: {why}", extra=extra, **base)
    return VerifyResult(Verdict.CORRECT, detail=f"all {total} checks passed", extra=extra, **base)
