"""Findings from a host's own TCP counters: the transfers the user already runs,
judged passively over a full ``window_s``.

- TCP_RETRANSMITS: a host sending at least MIN_SEGS_PS segments/s retransmits at least
  RETRANS_PCT % of them: loss on some path of this host. It names the interfaces that carry
  the traffic and whatever drops, errors or NIC drops they counted in the same window (a ring
  overflow on either end is seen as retransmissions), and says so when they counted none.
- RECEIVER_PRUNING: segments dropped because this host's own receive buffers overflowed
  (RcvPruned, TCPRcvQDrop, TCPBacklogDrop): the host, not the path.
- TCP_CHECKSUM_ERRORS: segments arriving with a bad checksum: corruption on some link.
"""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter
from typing import Iterable, NamedTuple

from ..core.codes import Code
from ..core.kinds import Kind
from ..core.levels import Severity
from ..core.model import Finding
from ..core.tcpstats import TcpRates
from ..core.units import per_second, percent
from ..settings.config import Thresholds
from .helpers import Port
from .window import History

MIN_SEGS_PS = 1000.0  # below this a host sends too little for a share of retransmits to mean much
RETRANS_PCT = 1.0
# An interface carries the host's traffic when it moves at least this share of the busiest one's.
CARRIER_SHARE = 0.25
PRUNING_FIELDS = ("rcv_pruned_ps", "rcvq_drops_ps", "backlog_drops_ps")


# A TcpRates' values in its fields' order: what a window keeps of each tick, after its time.
_RATE_VALUES = attrgetter(*(f.name for f in fields(TcpRates)))
TICK_LEN = 1 + len(fields(TcpRates))
# Where each rate of the first tick is in the ticks: its values are ticks[at::TICK_LEN].
_AT = {f.name: n for n, f in enumerate(fields(TcpRates), start=1)}


# A TcpWindow as the Diagnoser keeps it between passes: its fields in a plain tuple, which the
# collector stops tracking (a NamedTuple it tracks for life). TcpWindow(*kept) reads it.
TcpKept = tuple[tuple[float | None, ...], float | None]


class TcpWindow(NamedTuple):
    """One host's TCP rates within the window, oldest first (as findings/window.py does for
    an interface). Immutable: a findings pass on a worker thread reads the one it was handed
    while observing goes on (diagnose.View)."""

    # The ticks flat, TICK_LEN values each (time, then the rates' values): the cyclic collector
    # stops tracking a tuple of numbers (one nesting level per collection), where a TcpRates or
    # a list stays tracked for life, and a full collection walks every tracked object alive
    # (10,000 hosts).
    ticks: tuple[float | None, ...] = ()
    start: float | None = None  # the time of the last tick aged out: the window is full

    def added(self, time: float, rates: TcpRates, window_s: float) -> TcpWindow:
        ticks, start = self.ticks, self.start
        kept = 0
        while kept < len(ticks) and ticks[kept] <= time - window_s:  # type: ignore[operator]  # a tick's time is a float
            start = ticks[kept]
            kept += TICK_LEN
        return TcpWindow((*ticks[kept:], time, *_RATE_VALUES(rates)), start)

    @property
    def full(self) -> bool:
        return self.start is not None

    @property
    def span_s(self) -> float:
        if not self.ticks:
            return 0.0
        first, last = self.ticks[0], self.ticks[-TICK_LEN]
        return last - (self.start if self.start is not None else first)  # type: ignore[operator]  # a tick's time is a float

    def means(self, *names: str) -> list[float] | None:
        """The mean of each rate over the ticks where all of them are known; None when none is."""
        columns = [self.ticks[_AT[n] :: TICK_LEN] for n in names]
        known = [row for row in zip(*columns) if None not in row]
        if not known:
            return None
        return [sum(col) / len(known) for col in zip(*known)]


Hosts = Iterable[tuple[str, TcpWindow, Iterable[tuple[Port, History]]]]


def _carriers(ports: Iterable[tuple[Port, History]]) -> list[tuple[Port, History, float]]:
    """The host's interfaces that carried its traffic in the window, busiest first (not the
    loopback: a transfer there never crosses a link)."""
    busy = []
    for port, hist in ports:
        if port.iface.kind == Kind.LOOPBACK:
            continue
        mean, _ = hist.mean("bps")
        if mean:
            busy.append((port, hist, mean))
    if not busy:
        return []
    top = max(b for _, _, b in busy)
    return sorted((b for b in busy if b[2] >= CARRIER_SHARE * top), key=lambda b: -b[2])[:4]


def _link_evidence(port: Port, hist: History) -> str:
    """What one carrying interface counted in the window: drops, errors, NIC drops (and its
    ring, when known, beside them)."""
    iface = port.iface
    said = []
    for what in ("drops", "errors"):
        mean, _ = hist.mean(f"{what}_ps")
        if mean:
            said.append(f"{what} {per_second(mean)}/s")
    rises = hist.nic_increases()
    if rises:
        said.append("NIC drops " + ", ".join(f"{k} +{v}" for k, v in sorted(rises.items(), key=lambda kv: -kv[1])))
    if not said:
        said.append("no drops or errors counted")
    if iface.ring_rx is not None and iface.ring_rx_max is not None:
        said.append(f"RX ring {iface.ring_rx} of {iface.ring_rx_max}")
    return f"{iface.name} ({', '.join(said)})"


def retransmits(hosts: Hosts, thresholds: Thresholds) -> list[Finding]:
    out = []
    for host, window, ports in hosts:
        if not window.full:
            continue
        means = window.means("out_segs_ps", "retrans_segs_ps")
        if means is None:
            continue
        sent, resent = means
        if sent < MIN_SEGS_PS or 100.0 * resent / sent < RETRANS_PCT:
            continue
        pct = 100.0 * resent / sent
        timeouts = window.means("timeouts_ps")
        carriers = _carriers(ports)
        if carriers:
            links = "; ".join(_link_evidence(p, h) for p, h, _ in carriers)
            counted = any(h.mean("drops_ps")[0] or h.mean("errors_ps")[0] or h.nic_increases() for _, h, _ in carriers)
            where = f"carried by {links}" + (
                "" if counted else ": the loss is further along the path, not counted on this host's links"
            )
        else:
            where = "no watched interface of this host carried the traffic"
        out.append(
            Finding(
                code=Code.TCP_RETRANSMITS,
                severity=Severity.WARNING,
                host=host,
                interface=None,
                message=(
                    f"{percent(pct)} of the TCP segments {host} sends are retransmitted: loss on a path of this host"
                ),
                evidence=(
                    f"{per_second(resent)}/s retransmitted of "
                    f"{per_second(sent)}/s sent over the last {window.span_s:.0f} s"
                    + (f", {per_second(timeouts[0])} retransmission timeouts/s" if timeouts and timeouts[0] else "")
                    + f"; {where}; threshold {percent(RETRANS_PCT)} of at least "
                    f"{MIN_SEGS_PS:,.0f} segments/s over {thresholds.window_s:g} s"
                ),
                hint=(
                    "TCP resends what the path lost: a full queue at a bottleneck (a shaper, a slower link), a full "
                    "receive ring, or a damaged link. Drops, errors or NIC drops on the interfaces named point at "
                    "this host's end; a test to the peer (t) measures the path"
                ),
            )
        )
    return out


def receiver_pruning(hosts: Hosts, thresholds: Thresholds) -> list[Finding]:
    out = []
    for host, window, _ in hosts:
        if not window.full:
            continue
        means = [(name, window.means(name)) for name in PRUNING_FIELDS]
        known = [(name, m[0]) for name, m in means if m is not None]
        total = sum(v for _, v in known)
        if not known or total <= thresholds.drops_per_s:
            continue
        parts = ", ".join(f"{_WORDS[name]} {per_second(v)}/s" for name, v in known if v)
        out.append(
            Finding(
                code=Code.RECEIVER_PRUNING,
                severity=Severity.WARNING,
                host=host,
                interface=None,
                message=(
                    f"{host}'s TCP receive buffers overflow: {per_second(total)} segments/s dropped by the host itself"
                ),
                evidence=(
                    f"{parts} over the last {window.span_s:.0f} s; "
                    f"threshold {thresholds.drops_per_s:g}/s over {thresholds.window_s:g} s"
                ),
                hint=(
                    "the host, not the path: a receiving application that reads too slowly, or receive buffers "
                    "too small for the traffic (on Linux net.ipv4.tcp_rmem and net.core.rmem_max)"
                ),
            )
        )
    return out


_WORDS = {"rcv_pruned_ps": "pruned", "rcvq_drops_ps": "receive queue full", "backlog_drops_ps": "socket backlog full"}


def checksum_errors(hosts: Hosts, thresholds: Thresholds) -> list[Finding]:
    out = []
    for host, window, _ in hosts:
        if not window.full:
            continue
        means = window.means("in_csum_errs_ps")
        if means is None or means[0] <= thresholds.errors_per_s:
            continue
        rate = means[0]
        out.append(
            Finding(
                code=Code.TCP_CHECKSUM_ERRORS,
                severity=Severity.ERROR,
                host=host,
                interface=None,
                message=f"{host} receives TCP segments with bad checksums ({per_second(rate)}/s): corruption on a link",
                evidence=(
                    f"{per_second(rate)}/s with a bad checksum over the last {window.span_s:.0f} s; "
                    f"threshold {thresholds.errors_per_s:g}/s over {thresholds.window_s:g} s"
                ),
                hint=(
                    "segments damaged where a link's own check does not see them (a NIC's offload, a middlebox, "
                    "memory) or on a link that does not check: ERRORS_RISING on an interface points at that link"
                ),
            )
        )
    return out
