"""The sliding window the counter and outlier rules read: a few numbers per interface per tick.

Each host's ticks are compared only with that host's own earlier ticks (its clock may be a
remote uptime). Raw counter increases go through ``rates.counter_delta`` so wraps and resets
are judged the same way the dashboard judges them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Final, Mapping

from .. import units
from ..model import InterfaceView, rate_values
from ..rates import frame_counter_delta

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


# One tick of one interface: (time, rx_errors_ps, tx_errors_ps, errors_ps, rx_drops_ps,
# tx_drops_ps, drops_ps, bps, nic_rise, transitions). Rates cover the interval before ``time``
# (bps is max(rx, tx): what the link carries in its busier direction); ``nic_rise`` (each NIC
# drop counter's rise, None when none rose) and ``transitions`` (carrier changes) are what
# changed since the previous tick, so the window sums them. A plain tuple of numbers, not an
# object: the cyclic collector stops tracking such a tuple (not one holding a dict: hence None),
# while 10,000 hosts keep 80,000 interfaces' windows alive, which every full collection walks.
Rate = float | None
Tick = tuple[float, Rate, Rate, Rate, Rate, Rate, Rate, Rate, "Mapping[str, int] | None", int]
TICK_FIELDS = ("time", "rx_errors_ps", "tx_errors_ps", "errors_ps", "rx_drops_ps", "tx_drops_ps", "drops_ps", "bps", "nic_rise", "transitions")
_TIME: Final = 0
_ERRORS: Final = 3
_DROPS: Final = 6
_NIC_RISE: Final = 8
_TRANSITIONS: Final = 9
# Each field of a tick read by its name, for the window's reads.
_FIELD = {name: itemgetter(n) for n, name in enumerate(TICK_FIELDS)}


@dataclass(slots=True)
class History:
    """One interface's ticks within the window, oldest first, plus the last values seen (kept
    past the window) that the next tick's increases are measured from.

    Every rule reads every interface's window on every evaluation, while a tick arrives only
    once: so ``add`` also counts what the commonest reads ask (how many ticks have errors or
    drops above zero or a NIC drop rise, the carrier changes). Means are summed over the
    window in tick order."""

    # A tuple, not a deque or a list: a deque's first block alone is ~600 bytes, 50 MB over
    # 10,000 hosts' 80,000 windows of two or three ticks, and a tuple of number tuples is one
    # the cyclic collector stops tracking, where a list stays tracked. Remade on each add.
    ticks: tuple[Tick, ...] = ()
    _nic: dict[str, tuple[float, int]] = field(default_factory=dict)
    _carrier: int | None = None
    _oper: str | None = None
    _start: float | None = None
    _errors_ticks: int = 0  # ticks in the window with errors_ps > 0
    _drops_ticks: int = 0  # … with drops_ps > 0
    _nic_ticks: int = 0  # … with a NIC drop counter rise
    _transitions: int = 0  # carrier changes in the window

    def _count(self, tick: Tick, step: int) -> None:
        errors, drops = tick[_ERRORS], tick[_DROPS]
        if errors is not None and errors > 0:
            self._errors_ticks += step
        if drops is not None and drops > 0:
            self._drops_ticks += step
        if tick[_NIC_RISE]:
            self._nic_ticks += step
        self._transitions += step * tick[_TRANSITIONS]

    def add(self, time: float, view: InterfaceView, window_s: float) -> None:
        iface = view.iface
        rx_bps, tx_bps, _, _, rx_errors_ps, tx_errors_ps, rx_drops_ps, tx_drops_ps = rate_values(view)
        busier = None if rx_bps is None and tx_bps is None else max(rx_bps or 0.0, tx_bps or 0.0)
        nic = nic_drop_counters(iface.nic_counters) if iface.nic_counters else {}
        tick = (
            time,
            rx_errors_ps,
            tx_errors_ps,
            units.sum_known(rx_errors_ps, tx_errors_ps),
            rx_drops_ps,
            tx_drops_ps,
            units.sum_known(rx_drops_ps, tx_drops_ps),
            busier,
            (self._nic_rise(time, iface.speed_mbps, nic) or None) if nic else None,
            self._carrier_changes(iface.carrier_changes, iface.oper),
        )
        ticks = (*self.ticks, tick)
        self._count(tick, 1)
        # A tick's rates cover the interval before it: one at exactly now - window_s is out,
        # and its time is where the oldest remaining tick's interval begins.
        gone = 0
        while gone < len(ticks) and ticks[gone][_TIME] <= time - window_s:
            self._count(ticks[gone], -1)
            self._start = ticks[gone][_TIME]
            gone += 1
        self.ticks = ticks[gone:] if gone else ticks

    def _nic_rise(self, time: float, speed_mbps: int | None, values: dict[str, int]) -> dict[str, int]:
        """How much each NIC drop counter rose since it was last seen; a counter that went back
        (driver reload) or jumped beyond what the link could carry counts nothing."""
        rises = {}
        for name, value in values.items():
            last = self._nic.get(name)
            if last is not None and value != last[1]:
                delta = frame_counter_delta(last[1], value, max(time - last[0], 1.0), speed_mbps)
                if delta:
                    rises[name] = delta
            self._nic[name] = (time, value)
        return rises

    def _carrier_changes(self, carrier: int | None, oper: str) -> int:
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
    def full(self) -> bool:
        """Whether the ticks cover the whole window: one has already aged out of it. A rule
        stated "over window_s" judges nothing less (a snapshot's one interval is no window)."""
        return self._start is not None

    @property
    def span_s(self) -> float:
        """The time the window's ticks cover (their first interval included once known)."""
        if not self.ticks:
            return 0.0
        start = self._start if self._start is not None else self.ticks[0][_TIME]
        return self.ticks[-1][_TIME] - start

    def mean(self, attr: str) -> tuple[float | None, float | None]:
        """Mean and peak of a per-tick rate over the window (ticks where it is known)."""
        values = [v for v in map(_FIELD[attr], self.ticks) if v is not None]
        if not values:
            return None, None
        return sum(values) / len(values), max(values)

    def any_positive(self, attr: str) -> bool:
        """Whether any tick in the window has this rate above zero (when none has, its mean
        is unknown or at most zero: the rules that need a rising rate can stop there)."""
        if attr == "errors_ps":
            return self._errors_ticks > 0
        if attr == "drops_ps":
            return self._drops_ticks > 0
        return any(v is not None and v > 0 for v in map(_FIELD[attr], self.ticks))

    def nic_increases(self) -> dict[str, int]:
        """How much each NIC drop counter rose within the window."""
        if not self._nic_ticks:
            return {}
        rises: dict[str, int] = {}
        for tick in self.ticks:
            for name, delta in (tick[_NIC_RISE] or {}).items():
                rises[name] = rises.get(name, 0) + delta
        return rises

    def link_transitions(self) -> int:
        """Carrier changes within the window."""
        return self._transitions
