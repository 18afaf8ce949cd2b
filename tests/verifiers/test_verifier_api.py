"""The public API: argument checking, kind lists, the fast path, and `extract_answer`."""

from __future__ import annotations

import pytest

import verifiers
from verifiers import Verdict, VerifyResult, verify, verify_batch
from verifiers import api


def test_public_names_import():
    from verifiers import averify_batch, Verdict, VerifyResult, verify, verify_batch  # noqa: F401

    assert set(verifiers.__all__) == {"verify", "verify_batch", "averify_batch", "Verdict", "VerifyResult", "extract_answer"}


DEEP = [1]  # a list 601 levels deep (deep enough to break pickling, shallow enough for JSON)
for _ in range(600):
    DEEP = [DEEP]

# (call, exception type, text the message must contain)
BAD_CALLS = [
    (lambda: verify(None, "1"), TypeError, "prediction must be a string, got NoneType"),  # None prediction
    (lambda: verify("1", 1), TypeError, "gold must be a string, got int"),  # int gold
    (lambda: verify_batch(["1", None], ["1", "2"]), TypeError, "predictions[1]"),  # names the index
    (lambda: verify_batch(["1", "2"], ["1", b"2"]), TypeError, "golds[1] must be a string, got bytes"),
    (lambda: verify_batch("12", "12"), TypeError, "predictions must be a list"),  # a bare string
    (lambda: verify_batch(["1"], ["1", "2"]), ValueError, "predictions has 1 items but golds has 2"),
    (lambda: verify("1", "1", kind="maths"), ValueError, "valid kinds: choice, code, math, numeric, regex, string"),
    (lambda: verify_batch(["1", "2"], ["1", "2"], kind=["math"]), ValueError, "kind is a list of 1"),
    (lambda: verify_batch(["1", "2"], ["1", "2"], kind=["math", "nope"]), ValueError, "'nope' for kind[1]"),
    (lambda: verify("1", "1", timeout=0), ValueError, "timeout must be a positive number"),
    (lambda: verify("1", "1", timeout="5"), ValueError, "timeout must be a positive number"),
    (lambda: verify_batch(["1"], ["1"], workers=0), ValueError, "workers must be a positive integer"),
    # an unknown option of a kind with a fast path raises in the caller, naming the valid ones
    (lambda: verify("1", "1", kind="numeric", tolerance=0.1), TypeError, "unknown option(s) 'tolerance'; valid options: abs_tol, rel_tol"),
    # option values travel to worker processes: plain data only, refused in the caller (was a RecursionError in
    # the pool's pickling, which also cost a worker)
    (lambda: verify("1", "1", kind="numeric", rel_tol=DEEP), TypeError, "option 'rel_tol' is nested more than 64 levels deep"),
    # 3 million values (held a service's /health for seconds while they were walked): refused after 10,001 are counted
    (lambda: verify("1", "1", kind="numeric", rel_tol=[0] * 3_000_000), TypeError, "option 'rel_tol' holds more than 10000 values"),
    (lambda: verify("1", "1", kind="numeric", rel_tol={"k": "x" * 200_000}), TypeError, "a string of 200,000 characters"),
    (lambda: verify("1", "1", kind="numeric", **{f"o{i}": 0 for i in range(100_000)}), TypeError, "got 100,000 options; the limit is 64"),
    (lambda: verify("1", "1", kind="string", case_sensitive=lambda: True), TypeError,
     "option 'case_sensitive' must be plain data (numbers, strings, lists, dicts); it cannot be sent to a worker process"),
]


@pytest.mark.parametrize("call,exc,text", BAD_CALLS)
def test_bad_arguments_get_clear_errors(call, exc, text):
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value)


def test_empty_batch():
    assert verify_batch([], []) == []


def test_fast_path_settles_items_in_process(light_pool, monkeypatch):
    # the fake fast path settles "fast" itself, raises on "boom", and passes the rest on
    def fake_fast(prediction, gold, kind, **options):
        if prediction == "boom":
            raise RuntimeError("fast path bug")
        if prediction == "fast":
            return VerifyResult(Verdict.CORRECT, extracted="fast")
        return None

    monkeypatch.setattr(api, "_fast_verify", lambda: fake_fast)
    results = verify_batch(["fast", "slow", "boom"], ["x", "x", "boom"], kind="pid")
    assert results[0].verdict is Verdict.CORRECT and results[0].extracted == "fast"  # never reached a worker
    assert results[0].kind == "pid"
    assert results[1].extracted.isdigit()  # the `pid` kind ran in a worker
    assert results[2].extracted.isdigit()
    assert "fast path raised RuntimeError" in results[2].extra["fast_path_error"]  # visible, not hidden


def test_code_never_takes_the_fast_path(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("code went through the in-process fast path")

    monkeypatch.setattr(api, "_fast_verify", lambda: fail)
    result = verify("print(1)", '[{"input": "", "output": "1"}]', kind="code", timeout=10)
    assert result.verdict is Verdict.CORRECT


def test_extract_answer_is_exported():
    from verifiers.extract import extract_answer as extract
    assert verifiers.extract_answer is extract


def _counting_pool(monkeypatch) -> list[str]:
    """The predictions the worker pool is given from now on (what really ran)."""
    ran: list[str] = []
    real = api.get_pool()

    class CountingPool:
        def run(self, tasks, workers=None):
            ran.extend(t.prediction for t in tasks)
            return real.run(tasks, workers)

    monkeypatch.setattr(api, "get_pool", lambda: CountingPool())
    return ran


def test_code_failures_are_cached_and_identical_items_run_once(monkeypatch):
    """A code check costs a sandboxed process: RL groups repeat programs, so identical items of a batch
    run once and a program that failed (incorrect) is not run again for the same (tests, options, time
    limit); passes, timeouts and errors are run again."""
    api.clear_cache()
    ran = _counting_pool(monkeypatch)
    tests = "assert f(2, 3) == 5"
    good, bad = "def f(a, b):\n    return a + b", "def f(a, b):\n    return a * b"
    out = verify_batch([good, bad, good, good, bad], [tests] * 5, kind="code")
    assert [r.correct for r in out] == [True, False, True, True, False]
    assert ran == [good, bad]  # identical items of one batch run once
    again = verify(bad, tests, kind="code")
    assert not again.correct and again.extra.get("cached") is True and ran == [good, bad]  # a failure is not run again
    assert verify(bad, tests + "\n", kind="code").verdict is Verdict.INCORRECT and len(ran) == 3  # other tests: another check
    assert verify(bad, tests, kind="code", timeout=7.0).verdict is Verdict.INCORRECT and len(ran) == 4  # another time limit too
    slow = "import time\ntime.sleep(5)\ndef f(a, b):\n    return a + b"
    assert verify(slow, tests, kind="code", timeout=1.0).verdict is Verdict.TIMEOUT
    assert verify(slow, tests, kind="code", timeout=1.0).verdict is Verdict.TIMEOUT and ran.count(slow) == 2  # never cached
    api.clear_cache()
    verify(bad, tests, kind="code")
    assert ran.count(bad) == 4


def test_a_pass_is_never_served_from_the_cache(monkeypatch):
    """A program that passes only sometimes, re-submitted until it passes, must not have that pass
    served to later callers: every submission of a passing program is a run of its own."""
    api.clear_cache()
    ran = _counting_pool(monkeypatch)
    tests = "assert f(2, 3) == 5"
    flaky = "import os\ndef f(a, b):\n    return a + b if os.urandom(1)[0] < 128 else 0"
    verdicts = [verify(flaky, tests, kind="code").verdict for _ in range(8)]
    failed = verdicts.index(Verdict.INCORRECT) if Verdict.INCORRECT in verdicts else len(verdicts) - 1
    assert ran.count(flaky) == failed + 1  # every pass was a run of its own; the first failure ended the runs
    assert set(verdicts[failed + 1:]) <= {Verdict.INCORRECT}  # a failure, once settled, is not re-rolled
    good = "def f(a, b):\n    return a + b"
    assert [verify(good, tests, kind="code").extra.get("cached") for _ in range(3)] == [None] * 3 and ran.count(good) == 3


def test_cheap_verdicts_cannot_flush_the_cache(monkeypatch):
    """Only failures settled by a sandboxed run are stored: no-answer items and syntax errors (no run)
    never evict them, however many arrive."""
    api.clear_cache()
    monkeypatch.setattr(api, "CACHE_SIZE", 4)
    ran = _counting_pool(monkeypatch)
    tests = "assert f(2, 3) == 5"
    bad = "def f(a, b):\n    return a * b"
    assert verify(bad, tests, kind="code").verdict is Verdict.INCORRECT and ran == [bad]
    cheap = [f"no code here {i}" for i in range(20)] + [f"```python\ndef f({i}:\n```" for i in range(20)]
    verdicts = {r.verdict for r in verify_batch(cheap, [tests] * len(cheap), kind="code")}
    assert verdicts == {Verdict.NO_ANSWER, Verdict.INCORRECT}
    assert len(api._cache) == 1
    assert verify(bad, tests, kind="code").extra.get("cached") is True and ran.count(bad) == 1


def test_the_cache_key_holds_the_options(monkeypatch):
    """The same program and tests under other options is another check: `exact` fails a trailing space
    that `lines` accepts; the cached `exact` failure must not answer the `lines` item."""
    api.clear_cache()
    gold = '[{"input": "", "output": "3\\n"}]'
    program = "print('3 ')"
    assert verify(program, gold, kind="code", compare="exact").verdict is Verdict.INCORRECT
    assert verify(program, gold, kind="code", compare="lines").verdict is Verdict.CORRECT
