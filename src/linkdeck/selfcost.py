"""linkdeck's own cost: CPU as % of one core since the last look, and resident memory; and
the one way the big passes over the fleet keep the cyclic garbage collector out of them."""

from __future__ import annotations

import contextlib
import gc
import time
from typing import Iterator

import psutil


class SelfCost:
    """``read()`` gives (cpu_pct, rss_mb) of this process over the time since the previous
    read (the first read: since the process started)."""

    def __init__(self) -> None:
        self._proc = psutil.Process()
        self._last = (self._cpu(), time.monotonic())
        self._started = self._proc.create_time()

    def _cpu(self) -> float:
        t = self._proc.cpu_times()
        return t.user + t.system

    def read(self) -> tuple[float, float]:
        cpu, now = self._cpu(), time.monotonic()
        last_cpu, last_now = self._last
        self._last = (cpu, now)
        rss_mb = self._proc.memory_info().rss / 1e6
        if now - last_now < 0.05:  # too short a span to mean anything: the whole life so far
            return 100.0 * cpu / max(time.time() - self._started, 1e-3), rss_mb
        return 100.0 * (cpu - last_cpu) / (now - last_now), rss_mb


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection during a pass that makes and drops many containers (a
    parsed Prometheus answer: half a million; a findings pass over 80,000 interfaces). Each
    few hundred new containers start a collection, each tenth of those a deeper one, and now
    and then one over everything alive (the dashboard's state included): most of such a pass's
    time, spent finding nothing, since these passes build no reference cycles. Whatever the
    pass frees is freed by reference counting as it goes; the collector runs again after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
