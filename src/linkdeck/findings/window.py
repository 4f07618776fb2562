"""The sliding window the counter and outlier rules read: a few numbers per interface per tick.

Each host's ticks are compared only with that host's own earlier ticks (its clock may be a
remote uptime). Raw counter increases go through ``rates.counter_delta`` so wraps and resets
are judged the same way the dashboard judges them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Iterator, Mapping

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
    time: float
    rx_errors_ps: float | None
    tx_errors_ps: float | None
    rx_drops_ps: float | None
    tx_drops_ps: float | None
    bps: float | None  # max(rx, tx): what the link carries in its busier direction
    speed_mbps: int | None
    nic: Mapping[str, int]
    carrier_changes: int | None
    oper: str

    @classmethod
    def of(cls, time: float, view: InterfaceView) -> "Tick":
        r, iface = view.rates, view.iface
        busier = None if r.rx_bps is None and r.tx_bps is None else max(r.rx_bps or 0.0, r.tx_bps or 0.0)
        return cls(
            time=time,
            rx_errors_ps=r.rx_errors_ps,
            tx_errors_ps=r.tx_errors_ps,
            rx_drops_ps=r.rx_drops_ps,
            tx_drops_ps=r.tx_drops_ps,
            bps=busier,
            speed_mbps=iface.speed_mbps,
            nic=nic_drop_counters(iface.nic_counters),
            carrier_changes=iface.carrier_changes,
            oper=iface.oper,
        )

    @property
    def errors_ps(self) -> float | None:
        return _sum(self.rx_errors_ps, self.tx_errors_ps)

    @property
    def drops_ps(self) -> float | None:
        return _sum(self.rx_drops_ps, self.tx_drops_ps)


@dataclass(slots=True)
class History:
    """One interface's ticks within the window, oldest first."""

    ticks: deque[Tick] = field(default_factory=deque)

    def add(self, tick: Tick, window_s: float) -> None:
        self.ticks.append(tick)
        # A tick's rates cover the interval before it: one at exactly now - window_s is out.
        while self.ticks and self.ticks[0].time <= tick.time - window_s:
            self.ticks.popleft()

    @property
    def span_s(self) -> float:
        return self.ticks[-1].time - self.ticks[0].time if self.ticks else 0.0

    def mean(self, attr: str) -> tuple[float | None, float | None]:
        """Mean and peak of a per-tick rate over the window (ticks where it is known)."""
        values = [v for v in (getattr(t, attr) for t in self.ticks) if v is not None]
        if not values:
            return None, None
        return sum(values) / len(values), max(values)

    def _pairs(self) -> Iterator[tuple[Tick, Tick]]:
        ticks = list(self.ticks)
        return zip(ticks, ticks[1:])

    def nic_increases(self) -> dict[str, int]:
        """How much each NIC drop counter rose within the window; a counter that went back
        (driver reload) or jumped beyond what the link could carry counts nothing."""
        rises: dict[str, int] = {}
        last: dict[str, int] = {}
        prev_time: dict[str, float] = {}
        for tick in self.ticks:
            for name, value in tick.nic.items():
                if name in last:
                    speed_bps = tick.speed_mbps * 1e6 if tick.speed_mbps else UNKNOWN_SPEED_BPS
                    ceiling = speed_bps / (MIN_FRAME_BYTES * 8) * max(tick.time - prev_time[name], 1.0) * SPEED_MARGIN
                    delta = counter_delta(last[name], value, None, ceiling)
                    if delta:
                        rises[name] = rises.get(name, 0) + delta
                last[name], prev_time[name] = value, tick.time
        return rises

    def link_transitions(self) -> int:
        """Carrier changes within the window: the kernel's counter where there is one (each
        down and each up counts one), else the up/down changes seen between ticks."""
        total = 0
        for a, b in self._pairs():
            if a.carrier_changes is not None and b.carrier_changes is not None:
                if b.carrier_changes > a.carrier_changes:  # lower: counter restarted, not a flap
                    total += b.carrier_changes - a.carrier_changes
            elif {a.oper, b.oper} == {"up", "down"}:
                total += 1
        return total
