"""Waiting on conditions instead of sleeping: a polling app never goes idle, so tests wait
until what they assert on is true (or a deadline passes), never for a fixed time."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, Awaitable, Callable


async def wait_for(
    predicate: Callable[[], Any | Awaitable[Any]],
    timeout: float = 10.0,
    interval: float = 0.05,
    message: str | None = None,
) -> Any:
    """Poll ``predicate`` (sync or async) until it returns something truthy; return that.

    Raises TimeoutError naming ``message`` (or the predicate) and the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() >= deadline:
            what = message or getattr(predicate, "__qualname__", repr(predicate))
            raise TimeoutError(f"not true within {timeout:g}s: {what} (last value: {value!r})")
        await asyncio.sleep(interval)


async def until(cond: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """``wait_for`` as the UI tests say it: ``await until(lambda: app.screen.outcome, "the outcome")``."""
    return await wait_for(cond, timeout, message=what)


def wait_until(
    predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05, message: str | None = None
) -> Any:
    """The blocking twin of :func:`wait_for`, for synchronous code (the lab itself)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            what = message or getattr(predicate, "__qualname__", repr(predicate))
            raise TimeoutError(f"not true within {timeout:g}s: {what} (last value: {value!r})")
        time.sleep(interval)
