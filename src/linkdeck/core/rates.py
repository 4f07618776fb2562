"""Counter deltas → rates. The only place rate maths lives.

Hygiene rules (each one a bug some peer shipped):
- counters are unsigned, 32- or 64-bit; a negative delta is a wrap only when the corrected
  delta is physically possible for the link in that interval, otherwise it is a reset and the
  tick's rate is unknown — never a spike, never negative;
- a positive delta larger than the link could carry (a name that came back with unrelated
  counters) is unknown too;
- a clock that does not advance gives no rates and keeps the previous sample; a clock that
  goes backwards (the host rebooted) is a reset;
- interfaces come and go; a new one has no rate on its first tick.
"""

from __future__ import annotations

from itertools import compress, count
from operator import attrgetter, eq, is_, is_not
from typing import Iterable

from .model import COUNTER_FIELDS, Counters, HostSample, InterfaceView
from .tcpstats import TCP_COUNTERS, TcpCounters, TcpRates, retrans_pct
from .units import utilisation

# Ceiling used when the link speed is unknown: a generous 1.6 Tb/s keeps a loopback or a
# virtual NIC (which really can outrun any physical port) from being called a reset.
UNKNOWN_SPEED_BPS = 1.6e12
# Slack over the negotiated speed for a jittery interval. Kept small: on a 10G link a margin of
# 3 would let a reset from 1e9 to 100 pass as a 32-bit wrap of 3.3 GB in one second.
SPEED_MARGIN = 1.5
# Smallest thing on the wire counted as a packet, for the packet/error/drop ceilings.
MIN_FRAME_BYTES = 60


def counter_delta(prev: int, cur: int, bits: int | None, ceiling: float, speed_known: bool = True) -> int | None:
    """The increase from ``prev`` to ``cur``, or None when it is not a believable increase.

    A counter that went back is a wrap only when its width is known or the link speed bounds
    what could have moved; with neither, a 32-bit "wrap" of a reset counter would fit under any
    generous ceiling and draw a spike, so it is a reset.
    """
    delta = cur - prev
    if delta >= 0:
        return delta if delta <= ceiling else None
    if not bits and not speed_known:
        return None
    for width in (bits,) if bits else (32, 64):
        modulus = 1 << width
        if prev < modulus and cur < modulus:
            corrected = delta + modulus
            if corrected <= ceiling:
                return corrected
    return None


def ceiling(field_name: str, seconds: float, speed_mbps: int | None) -> float:
    """The most a counter could rise in ``seconds`` on a link of ``speed_mbps`` (bytes for a
    byte counter, else frames), with margin."""
    speed_bps = speed_mbps * 1e6 * SPEED_MARGIN if speed_mbps else UNKNOWN_SPEED_BPS
    byte_ceiling = speed_bps / 8 * seconds
    return byte_ceiling if field_name.endswith("bytes") else byte_ceiling / MIN_FRAME_BYTES


def field_delta(
    before: Counters, after: Counters, field_name: str, seconds: float, speed_mbps: int | None = None
) -> int | None:
    """How much one counter rose between two readings ``seconds`` apart; None when unknown or
    not believable (a reset)."""
    old, new = getattr(before, field_name), getattr(after, field_name)
    if old is None or new is None:
        return None
    limit = ceiling(field_name, seconds, speed_mbps)
    return counter_delta(old, new, after.bits or before.bits, limit, speed_known=bool(speed_mbps))


def frame_counter_delta(prev: int, cur: int, seconds: float, speed_mbps: int | None) -> int | None:
    """The rise of a driver's frame counter (drops, misses) of unknown width."""
    return counter_delta(prev, cur, None, ceiling("frames", seconds, speed_mbps), speed_known=bool(speed_mbps))


def bits_per_second(byte_count: int | None, seconds: float) -> float | None:
    return byte_count * 8 / seconds if byte_count is not None and seconds > 0 else None


# The rate step runs for every interface of every sample (640,000 counters a refresh at 10,000
# hosts × 8 interfaces): each counter read in one C call, the rates worked out positionally as
# plain tuples the views keep as they are (InterfaceView.of; the order of COUNTER_FIELDS is
# Rates' order: tests/unit/test_rates.py holds them together), and nothing built that is the
# same every time.
# An interface's previous reading is kept as one plain tuple: its counters' values and width
# (_READING's), then each counter's believable increases summed since watching began. Numbers
# only, so the cyclic collector stops tracking it (core/fleetstate.py); a slots class holding
# the sample's Counters would be two objects per interface it tracks for life, that every full
# collection walks.
_READING = attrgetter(*COUNTER_FIELDS, "bits")
_BITS = len(COUNTER_FIELDS)  # where a reading's width sits, after the counters
_TOTALS = _BITS + 1  # where the totals start in a previous reading
_IS_BYTES = tuple(f.endswith("bytes") for f in COUNTER_FIELDS)
_NO_RATES: tuple[float | None, ...] = tuple(None for _ in COUNTER_FIELDS)
_IDLE_RATES: tuple[float | None, ...] = tuple(0.0 for _ in COUNTER_FIELDS)
_NO_TOTALS = tuple(0 for _ in COUNTER_FIELDS)
_NO_COUNTERS = Counters()  # an interface the sample has no counters for
_IFACE, _NAME = attrgetter("iface"), attrgetter("name")
# The Linux tick reader hands out the same Counters object for a line that did not change, and
# the tracker skips those by identity, so it keeps the last sample's objects; a source that
# makes new ones every sample (Prometheus) gets them dropped after this many samples in a row
# with none seen again, and kept for one sample every _PROBE_EVERY to look again.
_MISSES_BEFORE_DROP = 2
_PROBE_EVERY = 64


class RateTracker:
    """Keeps one host's previous sample and turns each new one into rows of rates.

    Every interface present in a sample has its previous reading from the sample before
    (one that is missing is forgotten), so a rate's interval is the time between the two
    samples. Where a sample's interfaces are the last one's (the same objects, in the same
    order) only the interfaces whose counters are not the same objects as last time, and those
    whose view was not an idle one, are worked out again: a 602-link node's idle veths keep
    their views (tests/unit/test_rates.py compares with fresh objects every sample). What it
    keeps per interface is numbers, but for the last sample's Counters while the source hands
    the same objects again."""

    def __init__(self) -> None:
        self._prev: dict[str, tuple[int | None, ...]] = {}  # by name: _READING's, then totals
        self._last_time: float | None = None
        self._views: tuple[InterfaceView, ...] = ()  # the last update's, in its order
        self._moving: tuple[int, ...] = ()  # where those are not an idle view kept
        self._held: list[Counters | None] | None = None  # the last update's, while they pay
        self._misses = 0  # updates in a row whose counters were all new objects
        self._updates = 0

    def reset(self) -> None:
        self._prev.clear()
        self._last_time = None
        self._views, self._moving = (), ()
        self._held, self._misses = None, 0

    def update(self, sample: HostSample) -> tuple[InterfaceView, ...]:  # noqa: C901, PLR0912 - the hot per-tick update: one pass, no calls
        before, now = self._last_time, sample.time
        if before is not None and now < before:
            self.reset()  # the host's clock went back: it rebooted, old counters mean nothing
            before = None
        self._last_time = now
        names = list(sample.interfaces)
        ifaces = list(sample.interfaces.values())
        counters = list(map(sample.counters.get, names))
        old, held, moving_before = self._views, self._held, self._moving
        not_idle = set(moving_before)
        todo: Iterable[int]
        idle_by_name: dict[str, InterfaceView] | None = None
        if (
            before is not None
            and now > before
            and len(ifaces) == len(old)
            and all(map(is_, ifaces, map(_IFACE, old)))
            and all(map(eq, names, map(_NAME, ifaces)))  # each key its interface's name
        ):
            views = list(old)
            if held is None:
                todo = range(len(names))
            else:
                new = list(compress(count(), map(is_not, counters, held)))
                self._misses = 0 if len(new) < len(names) else self._misses + 1
                todo = sorted({*new, *moving_before})
        else:
            todo, views = range(len(names)), [None] * len(names)  # type: ignore[list-item]
            if before is not None and now > before:  # idle views kept where links moved around
                idle_by_name = {v.iface.name: v for i, v in enumerate(old) if i not in not_idle}
        moving = []
        prev_of, interval = self._prev, (now - before if before is not None else 0.0)
        for i in todo:
            name, iface = names[i], ifaces[i]
            reading = _READING(counters[i] or _NO_COUNTERS)
            prev = prev_of.get(name)
            rates: tuple[float | None, ...]
            totals: tuple[int | None, ...]
            if prev is None:
                rates, totals = _NO_RATES, _NO_TOTALS
                prev_of[name] = reading + totals
            elif interval <= 0:  # the clock stalled: nothing to measure over
                rates, totals = _NO_RATES, prev[_TOTALS:]
            elif reading == prev[:_TOTALS] and None not in reading[:_BITS]:
                # idle since the last sample (most of a node's 600 veths): every rate is 0.0,
                # as _rates would reckon it, and the totals stand; with the same facts the view
                # made for them last time is the view to show
                if idle_by_name is not None:
                    view = idle_by_name.get(name)
                else:  # the last update's view at i, of this interface: kept if it was idle
                    view = None if i in not_idle else views[i]
                if view is None or view.iface is not iface:
                    view = InterfaceView.of(
                        iface, _IDLE_RATES, prev[_TOTALS:], utilisation(0.0, 0.0, iface.speed_mbps, iface.duplex)
                    )
                views[i] = view
                continue
            else:
                rates, totals = _rates(prev, reading, interval, iface.speed_mbps)
                prev_of[name] = reading + totals
            views[i] = InterfaceView.of(
                iface, rates, totals, utilisation(rates[_RX_BPS], rates[_TX_BPS], iface.speed_mbps, iface.duplex)
            )
            moving.append(i)
        if len(prev_of) > len(views):
            for gone in prev_of.keys() - sample.interfaces.keys():
                del prev_of[gone]
        if len(views) != len(old) or not all(map(is_, views, old)):
            # the same views as the last update keep the one tuple of them, so whoever reads
            # the updates can tell an unchanged host by identity alone
            self._views = tuple(views)
        self._moving = tuple(moving)
        self._updates += 1
        keep = self._misses < _MISSES_BEFORE_DROP or self._updates % _PROBE_EVERY == 0
        self._held = counters if keep else None
        return self._views


_RX_BPS, _TX_BPS = 0, 1  # where Rates' fields sit in its values (COUNTER_FIELDS' order)


def _rates(
    prev: tuple[int | None, ...], cur: tuple[int | None, ...], dt: float, speed_mbps: int | None
) -> tuple[tuple[float | None, ...], tuple[int, ...]]:
    """The same as field_delta per field, with the two ceilings worked out once, from a
    previous reading (its values, width and totals) and the new one's values and width."""
    byte_ceiling = ceiling("bytes", dt, speed_mbps)
    frame_ceiling = byte_ceiling / MIN_FRAME_BYTES
    bits, known = cur[_BITS] or prev[_BITS], bool(speed_mbps)
    totals: list[int] = list(prev[_TOTALS:])  # type: ignore[arg-type]  # totals are never None
    out: list[float | None] = []
    for i, is_bytes, old, new in zip(range(_BITS), _IS_BYTES, prev, cur):
        if old is None or new is None:
            out.append(None)
            continue
        limit = byte_ceiling if is_bytes else frame_ceiling
        delta = new - old
        if delta < 0 or delta > limit:  # not a plain rise: a wrap, a reset or unbelievable
            rise = counter_delta(old, new, bits, limit, known)
            if rise is None:
                out.append(None)
                continue
            delta = rise
        totals[i] += delta
        per_s = delta / dt
        out.append(per_s * 8 if is_bytes else per_s)
    return tuple(out), tuple(totals)


class TcpTracker:
    """One host's previous TCP counters and their time, turned into TcpRates: the same rules
    as an interface's counters (a fall is a reset, never a wrap: a host's segment counters
    have no link speed to bound a wrap; a clock that stalls or goes back gives no rates)."""

    def __init__(self) -> None:
        # the time and the counters' values: plain tuples of numbers, which the cyclic
        # collector stops tracking (a TcpCounters kept is one more tracked object per host)
        self._prev: tuple[float, tuple[int | None, ...]] | None = None

    def update(self, now: float, tcp: TcpCounters | None) -> TcpRates | None:
        if tcp is None:
            self._prev = None
            return None  # the OS (or this sample) says nothing about TCP
        prev, values = self._prev, _TCP_VALUES(tcp)
        self._prev = (now, values)
        if prev is None:
            return TcpRates()
        then, before = prev
        if now <= then:
            if now == then:
                self._prev = prev  # a stalled clock keeps the older reading to measure from
            return TcpRates()
        seconds = now - then
        limit = ceiling("frames", seconds, None)  # frame_counter_delta's, once for all of them
        # counter_delta of a counter of unknown width on a link of unknown speed: a rise up
        # to the ceiling, else unknown (a fall is a reset); worked out inline, every tick of
        # every host brings a dozen
        out: list[float | None] = [
            None if old is None or new is None or not 0 <= new - old <= limit else (new - old) / seconds
            for old, new in zip(before, values)
        ]
        return TcpRates(*out, retrans_pct(out[_OUT_SEGS], out[_RETRANS_SEGS]))  # type: ignore[call-arg]


_TCP_VALUES = attrgetter(*TCP_COUNTERS)
# TcpRates' fields are each counter's rate, in TCP_COUNTERS' order, then retrans_pct
# (tests/unit/test_tcp_rates.py holds them together): it is built positionally.
_TCP_RATE_KEYS = tuple(f"{name}_ps" for name in TCP_COUNTERS)
_OUT_SEGS, _RETRANS_SEGS = list(TCP_COUNTERS).index("out_segs"), list(TCP_COUNTERS).index("retrans_segs")
