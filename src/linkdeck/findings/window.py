"""The sliding window the counter and outlier rules read: a few numbers per interface per tick.

Each host's ticks are compared only with that host's own earlier ticks (its clock may be a
remote uptime). Raw counter increases go through ``rates.counter_delta`` so wraps and resets
are judged the same way the dashboard judges them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Mapping

from ..model import InterfaceView
from ..rates import MIN_FRAME_BYTES, SPEED_MARGIN, UNKNOWN_SPEED_BPS, counter_delta

# NIC-level receive drops: the ring or the NIC's FIFO had no room. Linux ethtool -S names
# (ixgbe/i40e/e1000e/igb rx_missed_errors, rx_no_buffer_count; mlx5 rx_out_of_buffer,
# rx_discards_phy; r8169 rx_missed; netdev rx_fifo_errors/rx_over_errors), FreeBSD
# dev.<drv>.N.mac_stats (missed_packets, recv_no_buff), illumos kstat norcvbuf. Matched on
# the last dotted component so "mac_stats.missed_packets" counts too.
NIC_DROP_COUNTERS = frozenset(
    {
        "rx_missed_errors",
        "rx_out_of_buffer",
        "rx_no_buffer_count",
        "rx_fifo_errors",
        "rx_over_errors",
        "rx_discards_phy",
        "rx_no_dma_resources",
        "rx_missed",
        "missed_packets",
        "recv_no_buff",
        "norcvbuf",
    }
)


def nic_drop_counters(counters: Mapping[str, int]) -> dict[str, int]:
    return {k: v for k, v in counters.items() if k.rsplit(".", 1)[-1] in NIC_DROP_COUNTERS and isinstance(v, int)}


def _sum(a: float | None, b: float | None) -> float | None:
    if a is None and b is None:
        return None
    return (a or 0.0) + (b or 0.0)


@dataclass(frozen=True, slots=True)
class Tick:
    """One tick of one interface. Rates cover the interval before ``time``; ``nic_rise`` and
    ``transitions`` are what changed since the previous tick, so the window sums them."""

    time: float
    rx_errors_ps: float | None
    tx_errors_ps: float | None
    errors_ps: float | None
    rx_drops_ps: float | None
    tx_drops_ps: float | None
    drops_ps: float | None
    bps: float | None  # max(rx, tx): what the link carries in its busier direction
    nic_rise: Mapping[str, int]
    transitions: int


@dataclass(slots=True)
class History:
    """One interface's ticks within the window, oldest first, plus the last values seen (kept
    past the window) that the next tick's increases are measured from."""

    ticks: deque[Tick] = field(default_factory=deque)
    _nic: dict[str, tuple[float, int]] = field(default_factory=dict)
    _carrier: int | None = None
    _oper: str | None = None
    _start: float | None = None

    def add(self, time: float, view: InterfaceView, window_s: float) -> None:
        r, iface = view.rates, view.iface
        busier = None if r.rx_bps is None and r.tx_bps is None else max(r.rx_bps or 0.0, r.tx_bps or 0.0)
        self.ticks.append(
            Tick(
                time=time,
                rx_errors_ps=r.rx_errors_ps,
                tx_errors_ps=r.tx_errors_ps,
                errors_ps=_sum(r.rx_errors_ps, r.tx_errors_ps),
                rx_drops_ps=r.rx_drops_ps,
                tx_drops_ps=r.tx_drops_ps,
                drops_ps=_sum(r.rx_drops_ps, r.tx_drops_ps),
                bps=busier,
                nic_rise=self._nic_rise(time, iface.speed_mbps, nic_drop_counters(iface.nic_counters)),
                transitions=self._transitions(iface.carrier_changes, iface.oper),
            )
        )
        # A tick's rates cover the interval before it: one at exactly now - window_s is out,
        # and its time is where the oldest remaining tick's interval begins.
        while self.ticks and self.ticks[0].time <= time - window_s:
            self._start = self.ticks.popleft().time

    def _nic_rise(self, time: float, speed_mbps: int | None, values: dict[str, int]) -> dict[str, int]:
        """How much each NIC drop counter rose since it was last seen; a counter that went back
        (driver reload) or jumped beyond what the link could carry counts nothing."""
        rises = {}
        speed_bps = speed_mbps * 1e6 if speed_mbps else UNKNOWN_SPEED_BPS
        for name, value in values.items():
            last = self._nic.get(name)
            if last is not None and value != last[1]:
                ceiling = speed_bps / (MIN_FRAME_BYTES * 8) * max(time - last[0], 1.0) * SPEED_MARGIN
                delta = counter_delta(last[1], value, None, ceiling)
                if delta:
                    rises[name] = delta
            self._nic[name] = (time, value)
        return rises

    def _transitions(self, carrier: int | None, oper: str) -> int:
        """Carrier changes since the last tick: the kernel's counter where there is one (each
        down and each up counts one; a lower value is a restart, not a flap), else an up/down
        change of state between ticks."""
        count = 0
        if carrier is not None and self._carrier is not None:
            count = max(carrier - self._carrier, 0)
        elif carrier is None and self._oper is not None and {self._oper, oper} == {"up", "down"}:
            count = 1
        self._carrier, self._oper = carrier, oper
        return count

    @property
    def span_s(self) -> float:
        """The time the window's ticks cover (their first interval included once known)."""
        if not self.ticks:
            return 0.0
        start = self._start if self._start is not None else self.ticks[0].time
        return self.ticks[-1].time - start

    def mean(self, attr: str) -> tuple[float | None, float | None]:
        """Mean and peak of a per-tick rate over the window (ticks where it is known)."""
        values = [v for v in map(attrgetter(attr), self.ticks) if v is not None]
        if not values:
            return None, None
        return sum(values) / len(values), max(values)

    def nic_increases(self) -> dict[str, int]:
        """How much each NIC drop counter rose within the window."""
        rises: dict[str, int] = {}
        for tick in self.ticks:
            for name, delta in tick.nic_rise.items():
                rises[name] = rises.get(name, 0) + delta
        return rises

    def link_transitions(self) -> int:
        """Carrier changes within the window."""
        return sum(t.transitions for t in self.ticks)
