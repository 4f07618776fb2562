"""A deterministic synthetic host for UI tests, the UI benchmark and demos.

It is an ordinary Adapter (so it goes through the real collector and rate tracker); its
interfaces can be added and removed while it runs, and its clock is the tick count, so the
rates it produces are exact.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import AsyncIterator

from linkdeck.core.model import Counters, HostSample, Interface
from linkdeck.platforms.adapter import Adapter
from linkdeck.settings.config import HostSpec, Settings


class SyntheticAdapter(Adapter):
    """Interfaces whose byte counters grow at ``rate_bps`` on the tick clock (RX; TX half)."""

    os = "linux"

    def __init__(
        self, interfaces: list[Interface], rate_bps: dict[str, float] | None = None, os_detail: str | None = "synthetic"
    ) -> None:
        super().__init__(None, None, os_detail)
        self.interfaces = {i.name: i for i in interfaces}
        self.rate_bps = dict(rate_bps or {})
        self.ticks = 0
        self._counters: dict[str, Counters] = {}

    def add(self, iface: Interface, rate_bps: float = 0.0) -> None:
        self.interfaces[iface.name] = iface
        self.rate_bps[iface.name] = rate_bps

    def remove(self, name: str) -> None:
        self.interfaces.pop(name, None)
        self._counters.pop(name, None)

    def _advance(self, name: str, index: int, interval: float) -> Counters:
        old = self._counters.get(name) or Counters(0, 0, 0, 0, 0, 0, 0, 0)
        # without a set rate each interface varies tick to tick, as a busy host's do
        rate = self.rate_bps.get(name, 1e6 * (1 + index % 7) * (1 + self.ticks % 5))
        step = int(rate * interval / 8)
        new = replace(
            old,
            rx_bytes=old.rx_bytes + step,
            tx_bytes=old.tx_bytes + step // 2,
            rx_packets=old.rx_packets + step // 1000,
            tx_packets=old.tx_packets + step // 2000,
        )
        self._counters[name] = new
        return new

    async def samples(self, interval: float) -> AsyncIterator[HostSample]:
        while True:
            counters = {name: self._advance(name, i, interval) for i, name in enumerate(self.interfaces)}
            yield HostSample(time=float(self.ticks) * interval, interfaces=dict(self.interfaces), counters=counters)
            self.ticks += 1
            await asyncio.sleep(interval)

    async def close(self) -> None:
        return None


def physical(name: str, speed_mbps: int | None = 1000, **changes) -> Interface:
    fields = dict(
        name=name, kind="physical", oper="up", mtu=1500, speed_mbps=speed_mbps, duplex="full" if speed_mbps else None
    )
    fields.update(changes)
    return Interface(**fields)


def fleet_of(n_interfaces: int) -> SyntheticAdapter:
    """One host with ``n_interfaces`` 10G interfaces, for the benchmark."""
    return SyntheticAdapter([physical(f"eth{i}", 10000) for i in range(n_interfaces)])


def opener_for(adapters: dict[str, Adapter]):
    """An ``opener`` for Fleet/LinkdeckApp that hands out these adapters by host name; a host
    without one never answers (its row stays "connecting")."""

    async def open_(spec: HostSpec, settings: Settings, small_requests: bool = False) -> Adapter:
        adapter = adapters.get(spec.name)
        if adapter is None:
            await asyncio.Event().wait()
        return adapter

    return open_
