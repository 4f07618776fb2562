"""The sliding window the counter and outlier rules read: a few numbers per interface per tick.

Each host's ticks are compared only with that host's own earlier ticks (its clock may be a
remote uptime). Raw counter increases go through ``rates.counter_delta`` so wraps and resets
are judged the same way the dashboard judges them.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import repeat
from typing import TYPE_CHECKING, Any, Final, Mapping, Sequence

from ..core import units
from ..core.model import InterfaceView, rate_values
from ..core.rates import frame_counter_delta

if TYPE_CHECKING:
    from typing_extensions import TypeAlias, Unpack

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


# One interface's window as the Diagnoser keeps it between ticks: one flat tuple, a head of
# (nic, carrier, oper, start, errors_ticks, drops_ticks, nic_ticks, transitions), then its ticks
# within the window, oldest first, TICK_LEN values each in TICK_FIELDS order. In the head:
# ``nic`` each NIC drop counter's last (name, time, value) seen, flat, and ``carrier``/``oper``
# the last carrier count and state, kept past the window for the next tick's increases;
# ``start`` the time of the last tick that aged out (None until one has); and the counts of
# what the commonest reads ask, kept as ticks come and go: ticks with errors_ps > 0, with
# drops_ps > 0, with a NIC drop rise, and the carrier changes in the window.
#
# A tick's rates cover the interval before its ``time`` (bps is max(rx, tx): what the link
# carries in its busier direction); ``nic_rise`` (each NIC drop counter's rise, None when none
# rose) and ``transitions`` (carrier changes) are what changed since the previous tick, so the
# window sums them.
#
# Plain numbers and strings in one flat tuple, not an object, nor tuples in tuples: 10,000
# hosts keep 80,000 windows alive, and the cyclic collector stops tracking a plain tuple only
# once it has untracked its items, one level of nesting per collection, never an instance of a
# class (core/fleetstate.py). A window holding a nic_rise dict stays tracked while that tick is
# in it: only while a NIC counter rises.
Window = tuple[Any, ...]
# A host's windows as the Diagnoser keeps them: one flat tuple, its interfaces' names (in the
# order of its last observed update), then each one's window in that order; flat for the same
# reason, so a host's windows are no object the collector tracks. Read by these places.
if TYPE_CHECKING:
    HostWindows: TypeAlias = tuple[tuple[str, ...], Unpack[tuple[Window, ...]]]
else:  # typing.Unpack is Python 3.11's
    HostWindows = tuple
NAMES: Final = 0  # hostwindows[NAMES]: the names
WINDOWS: Final = 1  # hostwindows[WINDOWS:]: the windows

TICK_FIELDS = (
    "time",
    "rx_errors_ps",
    "tx_errors_ps",
    "errors_ps",
    "rx_drops_ps",
    "tx_drops_ps",
    "drops_ps",
    "bps",
    "nic_rise",
    "transitions",
)
TICK_LEN: Final = len(TICK_FIELDS)
_HEAD: Final = 8
_START: Final = 3
_ERRORS_TICKS, _DROPS_TICKS, _NIC_TICKS, _TRANSITIONS = 4, 5, 6, 7
EMPTY: Window = ((), None, None, None, 0, 0, 0, 0)
# Where each field of the first tick is in a window: the field's values are window[at::TICK_LEN].
_AT = {name: _HEAD + n for n, name in enumerate(TICK_FIELDS)}
# … and where each is within a tick
_ERRORS, _DROPS, _RISE, _CHANGES = (TICK_FIELDS.index(f) for f in ("errors_ps", "drops_ps", "nic_rise", "transitions"))


def observed(window: Window, time: float, view: InterfaceView, window_s: float) -> Window:
    """``window`` with the tick of ``view`` at ``time`` added and the ticks older than
    ``window_s`` dropped."""
    last_nic = window[0]
    iface = view.iface
    rx_bps, tx_bps, _, _, rx_errors_ps, tx_errors_ps, rx_drops_ps, tx_drops_ps = rate_values(view)
    nic_rise = None
    if iface.nic_counters:
        nic = nic_drop_counters(iface.nic_counters)
        if nic:
            rises, last_nic = _nic_rise(last_nic, time, iface.speed_mbps, nic)
            nic_rise = rises or None
    carrier, oper = iface.carrier_changes, iface.oper
    tick = (
        time,
        rx_errors_ps,
        tx_errors_ps,
        units.sum_known(rx_errors_ps, tx_errors_ps),
        rx_drops_ps,
        tx_drops_ps,
        units.sum_known(rx_drops_ps, tx_drops_ps),
        None if rx_bps is None and tx_bps is None else max(rx_bps or 0.0, tx_bps or 0.0),
        nic_rise,
        _carrier_changes(window[1], window[2], carrier, oper),
    )
    return _added(window, (last_nic, carrier, oper), tick, window_s)


def repeated(window: Window, time: float, window_s: float) -> Window:
    """``window`` with a tick at ``time`` of the view its last tick was made from, when that
    is the same object again: what ``observed`` would add, without reading the view. The
    same view has the same rates and carrier, so nothing changed since that tick; a window
    that follows NIC drop counters (their times move on) or has no tick is ``observed``'s."""
    last = window[-TICK_LEN:]
    return _added(window, window[:3], (time, *last[1:_RISE], None, 0), window_s)


def caught_up(window: Window, times: Sequence[float], window_s: float) -> Window:
    """``window`` with its last tick repeated at each of ``times`` (its host's tick times,
    ascending) after that tick: what ``repeated`` at each of them would give, in one copy.
    The Diagnoser leaves the window of a view that is the same object as it was (nothing would
    change but a time) and catches it up when the view changes; a pass reads it through
    ``History``, which catches it up only for what it cannot answer without."""
    if len(window) == _HEAD:
        return window
    later = times[bisect_right(times, window[-TICK_LEN]) :]
    if not later:
        return window
    cut = later[-1] - window_s  # a tick at or before it is out, as in _added
    last = window[-TICK_LEN:]
    kept, start, errors_n, drops_n, nic_n, transitions = _aged(window, cut, *window[_START:_HEAD])
    out = bisect_right(later, cut)  # repeats already out of the window: added and dropped
    if out:
        start = later[out - 1]
    added = len(later) - out
    errors, drops = last[_ERRORS], last[_DROPS]
    if errors is not None and errors > 0:
        errors_n += added
    if drops is not None and drops > 0:
        drops_n += added
    values = (*last[1:_RISE], None, 0)  # a repeat: no NIC counter rose, no carrier changed
    ticks = [x for t in later[out:] for x in (t, *values)]
    return (*window[:3], start, errors_n, drops_n, nic_n, transitions, *window[kept:], *ticks)


def behind(window: Window, time: float) -> bool:
    """Whether the window's last tick is older than ``time`` (``caught_up`` would add to it)."""
    return len(window) > _HEAD and window[-TICK_LEN] < time


def repeatable(window: Window) -> bool:
    """Whether ``repeated`` may stand for ``observed`` on this window (its view the same)."""
    return len(window) > _HEAD and not window[0]


def _added(window: Window, head: tuple[Any, ...], tick: tuple[Any, ...], window_s: float) -> Window:
    """``window`` with ``head`` (its NIC counters, carrier and state as last seen) and
    ``tick`` added, the ticks older than ``window_s`` dropped and the counts kept."""
    start, errors_n, drops_n, nic_n, transitions = window[_START:_HEAD]
    time, errors, drops = tick[0], tick[_ERRORS], tick[_DROPS]
    if errors is not None and errors > 0:
        errors_n += 1
    if drops is not None and drops > 0:
        drops_n += 1
    if tick[_RISE]:
        nic_n += 1
    transitions += tick[_CHANGES]
    kept, start, errors_n, drops_n, nic_n, transitions = _aged(
        window, time - window_s, start, errors_n, drops_n, nic_n, transitions
    )
    return (*head, start, errors_n, drops_n, nic_n, transitions, *window[kept:], *tick)


def _aged(
    window: Window, cut: float, start: Any, errors_n: int, drops_n: int, nic_n: int, transitions: int
) -> tuple[int, Any, int, int, int, int]:
    """The ticks at or before ``cut`` leave ``window``: where the ticks it keeps begin, and the
    start and counts given less what those ticks brought. A tick's rates cover the interval
    before it: one at exactly ``cut`` is out, and its time is where the oldest remaining
    tick's interval begins."""
    kept = _HEAD
    while kept < len(window) and window[kept] <= cut:
        start, old_errors, old_drops = window[kept], window[kept + _ERRORS], window[kept + _DROPS]
        if old_errors is not None and old_errors > 0:
            errors_n -= 1
        if old_drops is not None and old_drops > 0:
            drops_n -= 1
        if window[kept + _RISE]:
            nic_n -= 1
        transitions -= window[kept + _CHANGES]
        kept += TICK_LEN
    return kept, start, errors_n, drops_n, nic_n, transitions


def _nic_rise(
    last: tuple[Any, ...], time: float, speed_mbps: int | None, values: dict[str, int]
) -> tuple[dict[str, int], tuple[Any, ...]]:
    """How much each NIC drop counter rose since it was last seen (a counter that went back,
    driver reload, or jumped beyond what the link could carry counts nothing), and each
    counter's last name, time and value seen from now on, flat."""
    seen = {name: (at, value) for name, at, value in zip(last[::3], last[1::3], last[2::3])}
    rises = {}
    for name, value in values.items():
        before = seen.get(name)
        if before is not None and value != before[1]:
            delta = frame_counter_delta(before[1], value, max(time - before[0], 1.0), speed_mbps)
            if delta:
                rises[name] = delta
        seen[name] = (time, value)
    return rises, tuple(x for name, (at, value) in seen.items() for x in (name, at, value))


def _carrier_changes(last_carrier: int | None, last_oper: str | None, carrier: int | None, oper: str) -> int:
    """Carrier changes since the last tick: the kernel's counter where there is one (each
    down and each up counts one; a lower value is a restart, not a flap), else an up/down
    change of state between ticks."""
    if carrier is not None and last_carrier is not None:
        return max(carrier - last_carrier, 0)
    if carrier is None and last_oper is not None and {last_oper, oper} == {"up", "down"}:
        return 1
    return 0


class History:
    """One interface's window as the rules read it: made during a findings pass over the
    plain tuple the Diagnoser keeps (``Window``), and dropped with the pass.

    A window the Diagnoser left as it was (its view the same object: ``caught_up``) comes with
    its host's tick ``times``: what the commonest reads ask of an idle link (no errors, drops,
    NIC drops nor carrier changes; its mean rate) is answered from the window and the number
    of repeats, the rest from the window caught up once.

    ``lasting`` says whether every answer given so far is one the same window object gives at
    any later tick of its host: the window's last tick repeated there adds no error, drop, NIC
    drop nor carrier change, and a rate that is zero (or unknown) everywhere stays so. A pass
    keeps the rules' answer for a port while it holds, and its window is the same object."""

    __slots__ = ("_window", "_times", "_window_s", "lasting")

    def __init__(self, window: Window = EMPTY, times: Sequence[float] = (), window_s: float = 0.0) -> None:
        self._window = window
        self._times = times if times and behind(window, times[-1]) else ()
        self._window_s = window_s
        self.lasting = True

    def _caught_up(self) -> Window:
        if self._times:
            self._window, self._times = caught_up(self._window, self._times, self._window_s), ()
        return self._window

    @property
    def full(self) -> bool:
        """Whether the ticks cover the whole window: one has already aged out of it. A rule
        stated "over window_s" judges nothing less (a snapshot's one interval is no window)."""
        full = self._caught_up()[_START] is not None
        self.lasting &= full  # a tick, once out, stays out; a window not yet full fills
        return full

    @property
    def span_s(self) -> float:
        """The time the window's ticks cover (their first interval included once known)."""
        self.lasting = False
        w = self._caught_up()
        if len(w) == _HEAD:
            return 0.0
        start: float = w[_START] if w[_START] is not None else w[_HEAD]
        last: float = w[-TICK_LEN]
        return last - start

    def mean(self, attr: str) -> tuple[float | None, float | None]:
        """Mean and peak of a per-tick rate over the window (ticks where it is known)."""
        w, at = self._window, _AT[attr]
        if len(w) == _HEAD:
            return None, None  # no tick, nor any to repeat
        last = w[at - TICK_LEN - _HEAD]
        if self._times:  # the window's ticks still in it, then its last one's repeats
            times, cut, last_time = self._times, self._times[-1] - self._window_s, w[-TICK_LEN]
            values = (
                [v for t, v in zip(w[_HEAD::TICK_LEN], w[at::TICK_LEN]) if t > cut and v is not None]
                if last_time > cut
                else []  # every tick of its own is out of the window
            )
            if last is not None:
                values.extend(repeat(last, len(times) - bisect_right(times, max(last_time, cut))))
        else:
            values = [v for v in w[at::TICK_LEN] if v is not None]
        # later ticks read some of these values and more of the last: the same answer when
        # every one is zero and so is the last, or none is known and nor is the last
        self.lasting &= not any(values) if last is not None else not values
        if not values:
            return None, None
        return sum(values) / len(values), max(values)

    def any_positive(self, attr: str) -> bool:
        """Whether any tick in the window has this rate above zero (when none has, its mean
        is unknown or at most zero: the rules that need a rising rate can stop there)."""
        counts = {"errors_ps": _ERRORS_TICKS, "drops_ps": _DROPS_TICKS}.get(attr)
        if counts is not None:
            if not self._window[counts]:  # nor in its last tick, which the repeats are of
                return False
            positive = bool(self._caught_up()[counts])
        else:
            positive = any(v is not None and v > 0 for v in self._caught_up()[_AT[attr] :: TICK_LEN])
        self.lasting &= not positive  # none left in the window: the repeats of its last tick add none
        return positive

    def nic_increases(self) -> dict[str, int]:
        """How much each NIC drop counter rose within the window."""
        if not self._window[_NIC_TICKS]:  # a repeat adds no rise
            return {}
        rises: dict[str, int] = {}
        for rise in self._caught_up()[_AT["nic_rise"] :: TICK_LEN]:
            for name, delta in (rise or {}).items():
                rises[name] = rises.get(name, 0) + delta
        self.lasting &= not rises
        return rises

    def link_transitions(self) -> int:
        """Carrier changes within the window."""
        if not self._window[_TRANSITIONS]:  # a repeat adds no change
            return 0
        transitions: int = self._caught_up()[_TRANSITIONS]
        self.lasting &= not transitions
        return transitions
