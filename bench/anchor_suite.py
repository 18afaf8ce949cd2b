"""math-verify's own test suite, run twice: with math-verify's comparison and with ours swapped in.

math-verify's tests (its `tests/` folder) check (gold, prediction, expected) cases through its own
`parse` + `verify`. This script runs that suite with pytest, as written, and a second time with
each comparison case answered by `verifiers.verify(pred, gold, kind="math")` instead; it prints
both pass counts, the verdicts ours gave, its false positives (a case the suite expects to be
wrong that ours calls correct) and every case ours fails.

Get the suite (the tests are not part of the installed package):

    git clone https://github.com/huggingface/Math-Verify /tmp/Math-Verify
    python bench/anchor_suite.py --suite /tmp/Math-Verify

What is compared. Every test parametrized with a gold, a prediction and an expected result is a
comparison case (269 at math-verify 0.8.0's tests). The settings a case passes to math-verify map
to ours: `precision` -> `precision` (decimal places, default 6 on both sides), `strict` ->
`strict`, `allow_set_relation_comp` -> `relation_as_set`. `match_types` has no counterpart: ours
has one extraction for every answer. The tests that check math-verify's internals rather than a
verdict (its parser configs, string extraction, timeouts, `raise_on_error`, `sympy_expr_eq` with
explicit arguments) are left out of both runs. In the first run each case runs exactly as its test
is written.

Run as a script it starts pytest twice in subprocesses, each loading this file as a pytest plugin
(`-p anchor_suite`), which reads the mode from $ANCHOR_SUITE_MODE and writes one JSON line per case
to $ANCHOR_SUITE_OUT.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
MODE_ENV, OUT_ENV = "ANCHOR_SUITE_MODE", "ANCHOR_SUITE_OUT"
EXPECTED_NAMES = ("expected", "result")  # what the suite's tests call the expected outcome
OPTION_NAMES = {"precision": "precision", "strict": "strict", "allow_set_relation_comp": "relation_as_set"}


# --------------------------------------------------------------------------- pytest plugin


def _case(item) -> dict | None:
    """(gold, pred, expected, settings) of a comparison case, else None."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    expected = next((params[name] for name in EXPECTED_NAMES if name in params), None)
    if "gold" not in params or "pred" not in params or expected is None:
        return None
    options = {ours: params[theirs] for theirs, ours in OPTION_NAMES.items() if theirs in params}
    if _match_types(item) == ["latex"]:
        options["latex_only"] = True  # the test reads answers with math-verify's LaTeX extraction alone
    return {"gold": params["gold"], "pred": params["pred"], "expected": bool(expected), "options": options}


def _match_types(item) -> list[str] | None:
    """The `match_types` a test passes to the suite's `compare_strings` function (read from its source)."""
    m = re.search(r"match_types=(\[[^\]]*\])", inspect.getsource(item.obj))
    return ast.literal_eval(m.group(1)) if m else None


def pytest_collection_modifyitems(config, items) -> None:
    if not os.environ.get(MODE_ENV):
        return
    keep = [item for item in items if _case(item) is not None]
    dropped = [item for item in items if _case(item) is None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if os.environ.get(MODE_ENV) != "ours":
        return None  # the test runs as written: math-verify's comparison
    from verifiers import verify

    case = _case(pyfuncitem)
    res = verify(case["pred"], case["gold"], kind="math", **case["options"])
    pyfuncitem.user_properties.append(("verdict", res.verdict.value))
    pyfuncitem.user_properties.append(("detail", res.detail))
    assert res.correct == case["expected"], f"{res.verdict.value}: {res.detail}"
    return True


def pytest_runtest_logreport(report) -> None:
    path = os.environ.get(OUT_ENV)
    if not path or report.when != "call" and not (report.when == "setup" and report.failed):
        return
    props = dict(report.user_properties)
    with open(path, "a") as f:
        f.write(json.dumps({"id": report.nodeid, "passed": report.passed, **props}) + "\n")


# --------------------------------------------------------------------------- the two runs


def run(suite: Path, mode: str) -> tuple[list[dict], float]:
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"anchor_suite_{mode}_{os.getpid()}.jsonl"
    out.unlink(missing_ok=True)
    env = {**os.environ, MODE_ENV: mode, OUT_ENV: str(out),
           # the project first: bench/ holds a verifiers.py script that must not shadow the package
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(suite), str(BENCH), os.environ.get("PYTHONPATH", "")])}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "tests", "-q", "-p", "anchor_suite", "-p", "no:cacheprovider",
                    "-o", "addopts=", "--no-header", "-rN", "--tb=no"], cwd=suite, env=env,
                   stdout=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    if not out.exists():
        raise SystemExit(f"anchor_suite: pytest wrote no results for the {mode} run; is {suite}/tests math-verify's test suite?")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    out.unlink()
    return rows, elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", required=True, type=Path,
                    help="a checkout of https://github.com/huggingface/Math-Verify (its tests/ folder is run)")
    ap.add_argument("--out", default="", help="append a JSONL record with both counts and every failing case here")
    args = ap.parse_args(argv)
    suite = args.suite.resolve()
    if not (suite / "tests" / "test_all.py").exists():
        ap.error(f"{suite} has no tests/test_all.py: pass a checkout of math-verify (git clone https://github.com/huggingface/Math-Verify)")

    import math_verify  # noqa: F401  - the anchor must be installed for both runs
    from importlib.metadata import version

    anchor, anchor_s = run(suite, "anchor")
    ours, ours_s = run(suite, "ours")
    verdicts = Counter(row.get("verdict", "no verdict") for row in ours)
    failed = [r for r in ours if not r["passed"]]
    false_pos = [r for r in failed if r.get("verdict") == "correct"]  # the suite expects "wrong"
    print(f"math-verify {version('math-verify')} test suite at {suite}: {len(ours)} comparison cases")
    print(f"  math-verify's comparison   {sum(r['passed'] for r in anchor):>4} / {len(anchor)} pass   ({anchor_s:.1f} s)")
    print(f"  ours (verify, kind=math)   {sum(r['passed'] for r in ours):>4} / {len(ours)} pass   ({ours_s:.1f} s)")
    print(f"  ours: {len(false_pos)} false positives, {verdicts.get('error', 0)} errors; verdicts {dict(sorted(verdicts.items()))}")
    for row in failed:
        print(f"  ours fails {row['id'][:160]}: {row.get('verdict')} ({row.get('detail', '')[:90]})")
    for row in anchor:
        if not row["passed"]:
            print(f"  math-verify fails {row['id'][:160]}")
    if args.out:
        record = {"suite": str(suite), "math_verify": version("math-verify"), "cases": len(ours),
                  "anchor_pass": sum(r["passed"] for r in anchor), "ours_pass": sum(r["passed"] for r in ours),
                  "false_positives": len(false_pos), "verdicts": dict(verdicts), "ours_failures": failed}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
