"""Small helpers shared by the verifier kinds: option checking, input cleaning, results.

Pure Python; importing this never imports sympy or math-verify.
"""

from __future__ import annotations

import pickle
import re
import time
from typing import Any

from verifiers.types import Verdict, VerifyResult

# The final answer sits at the end of a completion; only this many trailing characters of a
# prediction are searched, so a 1 MB prediction costs the same as a short one.
TAIL_CHARS = 8192
# A reference answer longer than this is reported as BAD_GOLD instead of being parsed.
MAX_GOLD_CHARS = 10_000

_SURROGATES = re.compile("[\ud800-\udfff]")


MAX_DEPTH = 64  # nesting levels an input row or an option value may have (deeper: refused, not a RecursionError later)


def depth(value: Any, stop: int = MAX_DEPTH) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), without recursion; counting stops
    past `stop` levels (so a list that contains itself ends too).

    >>> loop = [1]; loop.append(loop)
    >>> depth({"a": [1, {"b": 2}]}), depth("x"), depth(loop)
    (3, 0, 65)
    """
    deepest, stack = 0, [(value, 0)]
    while stack and deepest <= stop:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, (list, tuple)):
            deepest = max(deepest, level)
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in node)
    return deepest


MAX_OPTIONS = 64  # options in one item (a kind has a handful; a million names would cost a million checks)
MAX_OPTION_VALUES = 10_000  # values (containers, keys, scalars) in one option value: a wider one is refused before any work
MAX_OPTION_CHARS = 100_000  # characters of one string inside an option value


def size(value: Any, stop: int = MAX_OPTION_VALUES) -> int:
    """Number of values in a parsed JSON value (each container, dict key and scalar counts one),
    without recursion; counting stops once past `stop`, before a wide container is walked.

    >>> size({"a": [1, 2]}), size("x"), size(list(range(10**6)), stop=100)
    (5, 1, 1000001)
    """
    count, stack = 1, [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += 2 * len(node)
            if count > stop:
                break
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set, frozenset)):
            count += len(node)
            if count > stop:
                break
            stack.extend(node)
    return count


def _long_string(value: Any) -> int:
    """Length of the longest string in a value of at most MAX_OPTION_VALUES values."""
    longest, stack = 0, [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            longest = max(longest, len(node))
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set, frozenset)):
            stack.extend(node)
    return longest


def check_plain_options(kind: str, options: dict[str, Any]) -> None:
    """TypeError unless every option value is plain data that can travel to a worker process:
    at most MAX_OPTIONS of them, each of at most MAX_OPTION_VALUES values with strings of at most
    MAX_OPTION_CHARS characters (checked first, at a cost bounded by the limits: a 3-million-element
    list costs nothing), nested at most MAX_DEPTH levels, and picklable (no lambdas, open files, ...).

    >>> check_plain_options("numeric", {"rel_tol": [[[0.1]]]})
    >>> check_plain_options("numeric", {"rel_tol": lambda x: x})
    Traceback (most recent call last):
    TypeError: numeric verifier option 'rel_tol' must be plain data (numbers, strings, lists, dicts); it cannot be sent to a worker process (PicklingError)
    """
    if len(options) > MAX_OPTIONS:
        raise TypeError(f"{kind} verifier got {len(options):,} options; the limit is {MAX_OPTIONS}")
    for name, value in options.items():
        n = size(value)
        if n > MAX_OPTION_VALUES:
            raise TypeError(f"{kind} verifier option {name!r} holds more than {MAX_OPTION_VALUES} values ({n:,} at least); "
                            f"send a smaller value")
        longest = _long_string(value)
        if longest > MAX_OPTION_CHARS:
            raise TypeError(f"{kind} verifier option {name!r} holds a string of {longest:,} characters; the limit is "
                            f"{MAX_OPTION_CHARS:,}")
        if depth(value) > MAX_DEPTH:
            raise TypeError(f"{kind} verifier option {name!r} is nested more than {MAX_DEPTH} levels deep")
        try:
            pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - any failure to pickle means the same to the caller
            raise TypeError(f"{kind} verifier option {name!r} must be plain data (numbers, strings, lists, dicts); "
                            f"it cannot be sent to a worker process ({type(exc).__name__})") from None


def check_options(kind: str, options: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """`defaults` updated with `options`; an unknown option raises TypeError naming the valid ones.

    >>> check_options("numeric", {"rel_tol": 0.1}, {"rel_tol": 1e-6, "abs_tol": 0.0})
    {'rel_tol': 0.1, 'abs_tol': 0.0}
    """
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        valid = ", ".join(sorted(defaults)) or "(none)"
        raise TypeError(f"{kind} verifier got unknown option(s) {', '.join(map(repr, unknown))}; valid options: {valid}")
    return {**defaults, **options}


def clean(text: str, tail: int | None = TAIL_CHARS) -> str:
    """NUL bytes become spaces (never glue '4<NUL>2' into 42), lone surrogates become U+FFFD,
    and only the last `tail` characters are kept.

    >>> clean("a\\x00b\\ud800c")
    'a b\\ufffdc'
    """
    if tail is not None and len(text) > tail:
        text = text[-tail:]
    if "\x00" in text:
        text = text.replace("\x00", " ")
    return _SURROGATES.sub("\ufffd", text)


def short(text: str | None, limit: int = 80) -> str | None:
    """`text` cut to `limit` characters for a result's `extracted` / `detail` fields."""
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 3] + "..."


def result(verdict: Verdict, kind: str, start: float, extracted: str | None = None,
           gold_parsed: str | None = None, detail: str = "", **extra: Any) -> VerifyResult:
    return VerifyResult(verdict=verdict, extracted=short(extracted, 200), gold_parsed=short(gold_parsed, 200),
                        detail=detail, elapsed=time.perf_counter() - start, kind=kind, extra=extra)
