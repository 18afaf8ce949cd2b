"""The public verifier API: `verify`, `verify_batch`, `averify_batch`.

Every item first tries the in-process fast path (`verifiers.fastpath.fast_verify`, cheap exact
cases); whatever it cannot settle goes to the shared worker pool (`verifiers.pool`), where each
item has a hard wall-clock limit: the worker is killed and replaced on timeout. Code verdicts are
cached: a program already checked against the same tests is not run again (see CACHED_KINDS).

>>> from verifiers import verify, verify_batch
>>> verify("The answer is \\\\boxed{4}", "4", kind="string").verdict.value
'correct'
>>> [r.verdict.value for r in verify_batch(["12", "13"], ["12", "12"], kind="numeric")]
['correct', 'incorrect']
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib
import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Callable

from rewardlab.config import check_fields, opt

from verifiers._common import check_plain_options
from verifiers.pool import Task, get_pool
from verifiers.registry import KINDS, kind_names
from verifiers.types import Verdict, VerifyResult

DEFAULT_TIMEOUT = 5.0  # seconds per item, for every kind not listed below
DEFAULT_TIMEOUTS: dict[str, float] = {"code": 30.0}  # code runs several sandboxed test cases
NO_FAST_PATH = frozenset({"code"})  # untrusted code never runs in the caller's process
# kinds without a fast path check their options here, so a typo raises at once (TypeError)
OPTION_CHECKS: dict[str, str] = {"code": "verifiers.code_kind:check_code_options"}

Item = tuple[str, str, str, dict[str, Any]]  # (prediction, gold, kind, options)



@dataclasses.dataclass(frozen=True)
class ItemsConfig:
    """Where a file's predictions and golds are, and the limits `verify_items` runs them under: a
    piece of `verify`'s and `audit-verifier`'s configs."""

    prediction_column: str = opt("prediction", "field with the prediction (falls back to `completion` / `response`)")
    gold_column: str = opt("gold", "field with the gold answer (falls back to `answer`)")
    timeout: float | None = opt(None, "hard limit per item in seconds (default: the kind's: 5, 30 for code)", seconds=True)
    workers: int | None = opt(None, "worker processes (default: min(cpu count, 4))", ge=1)

    def check_items(self) -> None:
        check_fields(self, ItemsConfig)

    __post_init__ = check_items


def default_timeout(kind: str) -> float:
    return DEFAULT_TIMEOUTS.get(kind, DEFAULT_TIMEOUT)


def _fast_verify() -> Callable[..., VerifyResult | None] | None:
    """`verifiers.fastpath.fast_verify` when that module exists (it is optional)."""
    try:
        module = importlib.import_module("verifiers.fastpath")
    except ModuleNotFoundError as exc:
        if exc.name != "verifiers.fastpath":
            raise
        return None
    return getattr(module, "fast_verify", None)


def _check_timeout(timeout: Any, where: str) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"{where}: timeout must be a positive number of seconds (e.g. 0.5 or 5), got {timeout!r}")
    return float(timeout)


def _check_text(value: Any, name: str, where: str) -> None:
    if not isinstance(value, str):
        raise TypeError(
            f"{where}: {name} must be a string, got {type(value).__name__}"
            + (" (use an empty string for a missing answer)" if value is None else "")
        )


def _check_kind(kind: Any, name: str, where: str) -> str:
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"{where}: unknown verifier kind {kind!r} for {name}; valid kinds: {', '.join(kind_names())}")
    return kind


def verify_items(
    items: Sequence[Item],
    timeout: float | None = None,
    workers: int | None = None,
    fast_path: bool = True,
    timeouts: Sequence[float | None] | None = None,
) -> list[VerifyResult]:
    """Verify already-validated (prediction, gold, kind, options) items, in order.

    `timeout` is the hard limit per item in seconds (None: the kind's default, see
    `default_timeout`); `timeouts` gives one per item instead (the service batches items of
    requests that asked for different limits). This is the common engine of `verify_batch`, the
    CLI and the service. An item repeated in the batch (same prediction, gold, kind, options and
    limit: an RL group often repeats a completion) is verified once and its copies get its result.
    """
    if timeouts is not None and len(timeouts) != len(items):
        raise ValueError(f"verify_items: {len(timeouts)} timeouts for {len(items)} items")
    fast = _fast_verify() if fast_path else None
    checked: set[int] = set()
    for _, _, kind, options in items:  # plain data only: it travels to the workers (a deeper list is a RecursionError there)
        if options and id(options) not in checked:
            check_plain_options(kind, options)
            checked.add(id(options))
    distinct = {(kind, repr(sorted(options.items()))): (kind, options) for _, _, kind, options in items}
    for kind, options in distinct.values():  # once per kind and set of options
        if kind in OPTION_CHECKS and options:
            module_name, _, attr = OPTION_CHECKS[kind].partition(":")
            getattr(importlib.import_module(module_name), attr)(options)
    sorting = _Sorting(len(items), fast, timeout, timeouts)
    for i, (prediction, gold, kind, options) in enumerate(items):
        sorting.take(i, prediction, gold, kind, options)
    return sorting.settle(get_pool().run(sorting.tasks, workers) if sorting.tasks else [])


class _Sorting:
    """Where each item of a `verify_items` batch gets its verdict: a copy of an earlier identical item, the fast
    path, the verdict cache, or a task for the workers (`tasks`, whose results `settle` puts in place)."""

    def __init__(self, n: int, fast: Callable[..., VerifyResult | None] | None, timeout: float | None,
                 timeouts: Sequence[float | None] | None) -> None:
        self.fast, self.timeout, self.timeouts = fast, timeout, timeouts
        self.results: list[VerifyResult | None] = [None] * n
        self.tasks: list[Task] = []
        self.slots: list[int] = []
        self.notes: dict[int, str] = {}  # item -> why the fast path failed (kept visible in `extra`)
        self.keys: dict[int, str] = {}  # item of a cached kind -> its cache key
        self.copies: dict[int, int] = {}  # item -> the earlier item of this batch it repeats (run once)
        self.seen: dict[tuple, int] = {}  # (prediction, gold, kind, options, limit) -> its first item (kinds are deterministic)
        self._options: dict[int, str] = {}  # id of an options dict -> its content, written once

    def take(self, i: int, prediction: str, gold: str, kind: str, options: dict[str, Any]) -> None:
        timeouts = self.timeouts
        limit = (timeouts[i] if timeouts is not None else self.timeout) or default_timeout(kind)
        if id(options) not in self._options:  # (the items hold their options: an id is not reused during the batch)
            self._options[id(options)] = repr(sorted(options.items()))
        same = (prediction, gold, kind, self._options[id(options)], limit)
        if same in self.seen:  # an RL group repeats completions (and programs): the first one's verdict serves its copies
            self.copies[i] = self.seen[same]
            return
        self.seen[same] = i
        if self.fast is not None and kind not in NO_FAST_PATH:
            start = time.perf_counter()
            try:
                result = self.fast(prediction, gold, kind, **options)
            except TypeError as exc:  # kinds raise TypeError for unknown options: the caller's mistake
                raise TypeError(f"kind {kind!r} (item {i + 1}): {exc}") from None
            except Exception as exc:  # noqa: BLE001 - the worker gives the verdict; the note stays visible
                result, self.notes[i] = None, f"fast path raised {type(exc).__name__}: {exc}"[:300]
            if result is not None:
                changes: dict[str, Any] = {"kind": result.kind or kind}
                if not result.elapsed:
                    changes["elapsed"] = time.perf_counter() - start
                self.results[i] = dataclasses.replace(result, **changes)
                return
        if kind in CACHED_KINDS:
            self.keys[i] = key = _cache_key(prediction, gold, kind, options, limit)
            cached = _cache_get(key)
            if cached is not None:
                self.results[i] = cached
                return
        self.slots.append(i)
        self.tasks.append(Task(KINDS[kind], prediction, gold, options, limit, kind))

    def settle(self, slow: list[VerifyResult]) -> list[VerifyResult]:
        """Every item's result: the workers' (`slow`, in task order) put in place, then the copies."""
        for slot, result in zip(self.slots, slow):
            if slot in self.notes:
                result = dataclasses.replace(result, extra={**result.extra, "fast_path_error": self.notes[slot]})
            self.results[slot] = result
            if slot in self.keys and _cacheable(result):
                _cache_put(self.keys[slot], result)
        for i, j in self.copies.items():
            self.results[i] = self.results[j]
        return self.results  # type: ignore[return-value]


# ---------------------------------------------------------------- the verdict cache of costly kinds
# A code check runs sandboxed processes (~0.1 s each); RL groups and a code environment's episodes
# repeat the same program for the same tests. Identical items in one batch run once. Across calls,
# an item of a kind in CACHED_KINDS identical to one already checked (prediction, gold, options and
# time limit, compared whole through a SHA-256) gets the earlier verdict back only when that verdict
# is one the program cannot re-roll into a pass: `incorrect`, settled by at least one sandboxed run
# (`extra["runs"]`). A pass is never served from the cache: a program that passes half the time,
# re-submitted until it passes once, would otherwise have that pass served to every later caller.
# Verdicts that cost no run (no answer, a syntax error, unreadable tests) are never stored, so
# flushing the cache costs one sandboxed run per entry, not microseconds; a timeout or an error may
# be the machine's and is checked again. `clear_cache()` empties it.
CACHED_KINDS = frozenset({"code"})
CACHE_SIZE = 4096
CACHEABLE = frozenset({Verdict.INCORRECT})
_cache: OrderedDict[str, VerifyResult] = OrderedDict()
_cache_lock = threading.Lock()


def _cacheable(result: VerifyResult) -> bool:
    """A verdict worth keeping: a failure that a sandboxed run settled (see CACHED_KINDS)."""
    runs = result.extra.get("runs")
    return result.verdict in CACHEABLE and isinstance(runs, int) and runs > 0


def _cache_key(prediction: str, gold: str, kind: str, options: dict[str, Any], limit: float) -> str:
    text = json.dumps([kind, prediction, gold, options, limit], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _cache_get(key: str) -> VerifyResult | None:
    with _cache_lock:
        result = _cache.get(key)
        if result is not None:
            _cache.move_to_end(key)
    return None if result is None else dataclasses.replace(result, extra={**result.extra, "cached": True})


def _cache_put(key: str, result: VerifyResult) -> None:
    with _cache_lock:
        _cache[key] = result
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)


def clear_cache() -> None:
    """Forget every cached verdict (see CACHED_KINDS)."""
    with _cache_lock:
        _cache.clear()


def verify_batch(
    predictions: Sequence[str],
    golds: Sequence[str],
    kind: str | Sequence[str] = "math",
    timeout: float | None = None,
    workers: int | None = None,
    **options: Any,
) -> list[VerifyResult]:
    """Verify `predictions[i]` against `golds[i]`; results in input order.

    kind    : one kind for all items, or a list with one kind per item
    timeout : hard wall-clock limit per item in seconds (fractions allowed); None = kind default
              (5 s, 30 s for `code`). Past it the worker is killed and the item is TIMEOUT.
    workers : worker processes to use (default min(cpu count, 4)); the shared pool grows to it.
    options : passed to the kind's function (e.g. `rel_tol=1e-6, abs_tol=0.0` for numeric).

    >>> [r.verdict.value for r in verify_batch(["a", "b"], ["a", "a"], kind="string")]
    ['correct', 'incorrect']
    """
    where = "verify_batch"
    for name, value in (("predictions", predictions), ("golds", golds)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise TypeError(f"{where}: {name} must be a list of strings, got {type(value).__name__}")
    if len(predictions) != len(golds):
        raise ValueError(f"{where}: predictions has {len(predictions)} items but golds has {len(golds)}; pass one gold per prediction")
    if isinstance(kind, str):
        kinds = [_check_kind(kind, "kind", where)] * len(predictions)
    elif isinstance(kind, Sequence):
        if len(kind) != len(predictions):
            raise ValueError(f"{where}: kind is a list of {len(kind)} but there are {len(predictions)} predictions; give one kind per item or a single kind")
        kinds = [_check_kind(k, f"kind[{i}]", where) for i, k in enumerate(kind)]
    else:
        raise TypeError(f"{where}: kind must be a kind name or a list of names, got {type(kind).__name__}")
    for i, (prediction, gold) in enumerate(zip(predictions, golds)):
        _check_text(prediction, f"predictions[{i}]", where)
        _check_text(gold, f"golds[{i}]", where)
    timeout = _check_timeout(timeout, where)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"{where}: workers must be a positive integer, got {workers!r}")
    items = [(p, g, k, options) for p, g, k in zip(predictions, golds, kinds)]
    return verify_items(items, timeout=timeout, workers=workers)


def verify(prediction: str, gold: str, kind: str = "math", timeout: float | None = None, **options: Any) -> VerifyResult:
    """Verify one prediction against one gold answer; see `verify_batch`.

    >>> verify("x", "x", kind="string").verdict.value
    'correct'
    """
    where = "verify"
    _check_text(prediction, "prediction", where)
    _check_text(gold, "gold", where)
    _check_kind(kind, "kind", where)
    timeout = _check_timeout(timeout, where)
    return verify_items([(prediction, gold, kind, options)], timeout=timeout, workers=1)[0]


async def averify_batch(
    predictions: Sequence[str],
    golds: Sequence[str],
    kind: str | Sequence[str] = "math",
    timeout: float | None = None,
    workers: int | None = None,
    **options: Any,
) -> list[VerifyResult]:
    """`verify_batch` for asyncio code: runs in a thread, so the event loop keeps running."""
    return await asyncio.to_thread(verify_batch, predictions, golds, kind, timeout, workers, **options)
