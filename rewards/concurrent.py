"""Async rewards and running several rewards at once.

A reward may be `async def` (TRL's convention: its GRPOTrainer awaits async rewards concurrently on
an event loop of its own). Everything in rewardlab that calls a reward goes through `call_reward`
(blocking callers: the trainer, the services, batch scoring) or `acall_reward` (asyncio callers:
`Combine`, TRL), so a reward can be written either way and used everywhere:

- `call_reward(fn, ...)`: the values of a sync reward, or of an async one run to completion (on
  this thread's new event loop, or on a thread of its own when this thread already runs a loop);
- `acall_reward(fn, ...)`: awaits an async reward; a blocking one runs in a thread
  (`asyncio.to_thread`), so the event loop and the other rewards keep going;
- `as_async(fn)`: a blocking reward as an `async def` callable with the same name and metrics, for
  frameworks that run only their async rewards concurrently (TRL runs sync ones one by one).

>>> import asyncio
>>> async def slow_len(prompts, completions, **columns):
...     await asyncio.sleep(0.01)
...     return [float(len(c)) for c in completions]
>>> is_async_reward(slow_len), call_reward(slow_len, ["q"], ["abc"])
(True, [3.0])
>>> asyncio.run(acall_reward(lambda p, c, **k: [1.0] * len(c), ["q"], ["a"]))
[1.0]
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import threading
from typing import Any, Awaitable, Callable, Sequence, TypeVar

T = TypeVar("T")


def is_async_reward(fn: Any) -> bool:
    """Whether calling `fn` returns a coroutine: an `async def` function, a `functools.partial` of
    one, or an object whose `__call__` is `async def` (the forms TRL recognises)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run a coroutine to completion from blocking code. On a thread that already runs an event
    loop (e.g. a notebook cell or a server handler calling a blocking reward) the coroutine runs on
    a thread of its own with a loop of its own (`asyncio.run` cannot nest); the caller waits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(awaitable))
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(_as_coroutine(awaitable))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller below
            box["error"] = exc

    thread = threading.Thread(target=target, name="rewardlab-run-sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable


def call_reward(fn: Any, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> Any:
    """`fn(prompts, completions, **columns)` for any reward, sync or async (see the module docstring)."""
    out = fn(prompts, completions, **columns)
    if inspect.isawaitable(out):
        return run_sync(out)
    return out


async def acall_reward(fn: Any, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> Any:
    """Await an async reward; run a blocking one in a worker thread."""
    if is_async_reward(fn):
        return await fn(prompts, completions, **columns)
    acall = getattr(fn, "acall", None)  # a composite (Combine, Gated) awaits its own parts
    if callable(acall):
        return await acall(prompts, completions, **columns)
    out = await asyncio.to_thread(fn, prompts, completions, **columns)
    if inspect.isawaitable(out):  # a sync-looking callable that returned a coroutine anyway
        return await out
    return out


class AsyncReward:
    """A blocking reward as an async callable (`await AsyncReward(fn)(prompts, completions, ...)`
    runs `fn` in a thread). Keeps `fn`'s name (`__name__`, which TRL logs rewards by) and shows
    its `last_metrics`.

    >>> from rewards.shaping import FormatReward
    >>> fn = AsyncReward(FormatReward("integer"))
    >>> fn.__name__, is_async_reward(fn), asyncio.run(fn(["q"], ["12"]))
    ('format', True, [1.0])
    """

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.name = getattr(fn, "name", None) or getattr(fn, "__name__", None) or type(fn).__name__

    @property
    def __name__(self) -> str:
        return self.name

    @property
    def itemwise(self) -> bool:
        return getattr(self.fn, "itemwise", False) is True

    @property
    def last_metrics(self) -> dict[str, float]:
        return dict(getattr(self.fn, "last_metrics", None) or {})

    async def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> Any:
        return await acall_reward(self.fn, prompts, completions, **columns)

    def __repr__(self) -> str:
        return f"AsyncReward({self.fn!r})"


def as_async(fn: Any) -> Any:
    """`fn` itself when it is already async, else `AsyncReward(fn)`."""
    return fn if is_async_reward(fn) else AsyncReward(fn)


def gather_blocking(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Run blocking calls at once: the first on this thread, the others on threads of their own;
    results in order. An exception in any call is raised here (after all calls ended)."""
    if len(calls) <= 1:
        return [call() for call in calls]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(calls) - 1, thread_name_prefix="rewardlab-reward") as pool:
        futures = [pool.submit(call) for call in calls[1:]]
        first_error: BaseException | None = None
        try:
            first = calls[0]()
        except BaseException as exc:  # noqa: BLE001 - re-raised once the others have ended
            first, first_error = None, exc
        concurrent.futures.wait(futures)
    if first_error is not None:
        raise first_error
    return [first, *(f.result() for f in futures)]  # type: ignore[list-item]
