"""linkdeck's own cost: CPU as % of one core since the last look, and resident memory.

What keeps that cost down at fleet scale (the collector, glibc's heap, the big passes' turns)
is ``core.fleetstate``'s."""

from __future__ import annotations

import time

import psutil


class SelfCost:
    """``read()`` gives (cpu_pct, rss_mb) of this process over the time since the previous
    read (the first read: since the process started)."""

    def __init__(self) -> None:
        self._proc = psutil.Process()
        self._last = (self._cpu(), time.monotonic())
        self._started = self._proc.create_time()

    def _cpu(self) -> float:
        t = self._proc.cpu_times()  # psutil ships no types: its seconds are floats
        seconds: float = t.user + t.system
        return seconds

    def read(self) -> tuple[float, float]:
        cpu, now = self._cpu(), time.monotonic()
        last_cpu, last_now = self._last
        self._last = (cpu, now)
        rss_mb = self._proc.memory_info().rss / 1e6
        if now - last_now < 0.05:  # too short a span to mean anything: the whole life so far
            return 100.0 * cpu / max(time.time() - self._started, 1e-3), rss_mb
        return 100.0 * (cpu - last_cpu) / (now - last_now), rss_mb
