"""Benchmark: the canonical-solution set of every language of the `code` kind, and C++ throughput.

    python bench/code_languages.py                          # all languages, all 30 problems, every variant
    python bench/code_languages.py --languages cpp go --problems 6
    python bench/code_languages.py --throughput-only         # the C++ item: compile + 5 tests, cold and warm

For each language: every canonical solution must be `correct` and no wrong variant (off by one, wrong output
format, too slow, crash) `correct`; the script exits 1 otherwise and lists them. Reported per language: right
accepted, wrong rejected, the verdicts of the wrong ones, the time per item. The throughput part verifies one
C++ stdin/stdout item (5 tests) with the build cache cold (a fresh source each round) and warm (the same source;
the verdict cache is not involved: `verify_code` is called directly), several rounds, and prints the medians and
their ratio. Not a test; not run in CI. Timings on a shared machine are inflated: compare numbers of one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from tests.verifiers.code_problem_set import LANGS, fenced, problems  # noqa: E402
from verifiers.code_kind import verify_code  # noqa: E402
from verifiers.code_languages import MissingToolchain, clear_build_cache, find_toolchain  # noqa: E402

LIMITS = {"cpu_seconds": 1, "wall_seconds": 4}
CPP_ADD = ("#include <cstdio>\nint main() {\n    long long a, b;\n    if (scanf(\"%lld %lld\", &a, &b) != 2) return 1;\n"
           "    printf(\"%lld\\n\", a + b);\n    return 0;\n}\n")


def run_language(language: str, count: int) -> tuple[dict, list[str]]:
    """Verdict counts and timings for `count` problems of one language; the failures as lines."""
    right = wrong_rejected = wrong_total = 0
    verdicts: Counter = Counter()
    failures, times = [], []
    chosen = problems(language)[:count]
    for problem in chosen:
        for variant, code in problem.programs.items():
            start = time.perf_counter()
            result = verify_code(fenced(language, code), problem.gold, compare=problem.compare, language=language, **LIMITS)
            times.append(time.perf_counter() - start)
            if variant == "correct":
                right += result.correct
                if not result.correct:
                    failures.append(f"{language} {problem.name} canonical: {result.verdict.value}: {result.detail}")
            else:
                wrong_total += 1
                wrong_rejected += not result.correct
                verdicts[f"{variant}:{result.verdict.value}"] += 1
                if result.correct:
                    failures.append(f"{language} {problem.name} {variant} ACCEPTED")
    row = {"language": language, "problems": len(chosen), "canonical_correct": right, "wrong": wrong_total,
           "wrong_rejected": wrong_rejected, "seconds": round(sum(times), 1),
           "mean_item_s": round(statistics.mean(times), 3), "wrong_verdicts": dict(sorted(verdicts.items()))}
    return row, failures


def throughput(rounds: int) -> dict:
    """One C++ item, compile + 5 tests: cold build cache (fresh source) vs warm (same source)."""
    tests = json.dumps([{"input": f"{i} {i * 7}\n", "output": f"{i * 8}\n"} for i in range(1, 6)])
    cold, warm = [], []
    for _ in range(rounds):
        clear_build_cache()
        program = fenced("cpp", CPP_ADD + f"// {uuid.uuid4().hex}\n")
        start = time.perf_counter()
        first = verify_code(program, tests, language="cpp")
        cold.append(time.perf_counter() - start)
        start = time.perf_counter()
        second = verify_code(program, tests, language="cpp")
        warm.append(time.perf_counter() - start)
        assert first.correct and second.correct and second.extra["build_cached"], (first.detail, second.detail)
    return {"cold_median_s": round(statistics.median(cold), 3), "warm_median_s": round(statistics.median(warm), 3),
            "cold_min_s": round(min(cold), 3), "warm_min_s": round(min(warm), 3),
            "speedup": round(statistics.median(cold) / statistics.median(warm), 2), "rounds": rounds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", nargs="*", default=list(LANGS), help="languages to run (default: all)")
    parser.add_argument("--problems", type=int, default=30, help="problems per language (default: all 30)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of the C++ throughput item")
    parser.add_argument("--throughput-only", action="store_true")
    args = parser.parse_args()
    print("load:", Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "n/a")
    if find_toolchain("cpp"):
        print("cpp item (compile + 5 tests):", json.dumps(throughput(args.rounds)))
    if args.throughput_only:
        return 0
    failures: list[str] = []
    for language in args.languages:
        if language != "python":
            try:
                find_toolchain(language)
            except MissingToolchain as exc:
                print(f"{language}: skipped ({exc})")
                continue
        row, failed = run_language(language, args.problems)
        failures += failed
        print(json.dumps(row), flush=True)
    for line in failures:
        print("FAIL", line)
    print("load:", Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "n/a")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
