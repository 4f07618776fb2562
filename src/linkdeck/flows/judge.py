"""Each flow's limiter, from two reads of its tcp_info an interval apart: pure rules, no words
(``present_flows`` words them).

The rules, in order, over the interval (a flow new in it: over its life so far):

- not sending: a flow that moves (almost) nothing is ``application`` (idle); one that mostly
  receives is ``unknown`` here: what holds back data is seen by its sender;
- ``receiver``: the receiver's window held it back for at least half its busy time;
- ``sender``: this host's send buffer did, likewise;
- ``network``: neither, it was busy most of the interval, and its RTT stood well above its
  floor (a queue in front of a bottleneck) or it retransmitted at least 1 % of its segments;
- ``path MTU``: its path MTU is below this end's interface MTU (and the other end's, when
  watched);
- ``application``: none of these;
- ``unknown``: the OS does not say how long the flow was busy or window-limited.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..core.tcpflow import FlowRecord

LIMITED_SHARE = 0.5  # of busy time, window- or buffer-limited, to name the receiver or sender
BUSY_SHARE = 0.5  # of the interval with data in flight, for the network to be the limit
QUEUE_RATIO = 2.0  # RTT over its floor that reads as a queue…
QUEUE_MIN_MS = 1.0  # …when the queue holds at least this much time
RETRANS_PCT = 1.0
IDLE_BYTES = 16 * 1024  # moved less than this in the interval (either way): idle


class Limiter(str, enum.Enum):
    RECEIVER = "receiver"
    SENDER = "sender"
    NETWORK = "network"
    PATH_MTU = "path MTU"
    APPLICATION = "application"
    UNKNOWN = "unknown"


class Why(str, enum.Enum):
    """Which case of the rules named the limiter (the words depend on it)."""

    WINDOW = "window"
    BUFFER = "buffer"
    QUEUE = "queue"
    LOSS = "loss"
    PMTU = "pmtu"
    IDLE = "idle"
    NOT_BUSY = "not busy"
    CLEAR = "clear"  # busy, no window, buffer, queue or loss: the application sets the pace
    RECEIVING = "receiving"
    NOT_REPORTED = "not reported"
    NEW = "new"  # no earlier read to compare yet


@dataclass(frozen=True, slots=True)
class EndLink:
    """The interface one end of a flow goes through, as its host's collector last saw it."""

    host: str
    iface: str
    mtu: int | None = None
    speed_mbps: int | None = None
    drops_ps: float | None = None  # rx + tx drops per second at the last sample


@dataclass(frozen=True, slots=True)
class Flow:
    local: str
    remote: str
    remote_host: str | None
    tx_bps: float | None
    rx_bps: float | None
    rtt_ms: float | None
    min_rtt_ms: float | None
    cwnd: int | None
    snd_wnd: int | None  # the receiver's advertised window, bytes
    retrans: int | None  # segments retransmitted over the interval
    retrans_pct: float | None
    pmtu: int | None
    rwnd_limited_pct: float | None  # of busy time
    sndbuf_limited_pct: float | None
    busy_pct: float | None  # of the interval
    rate_bps: float | None  # the bottleneck rate TCP estimates: BBR's bw, else delivery_rate
    rate_source: str | None  # "BBR's estimate" / "delivery rate"
    limiter: Limiter
    why: Why
    local_link: EndLink | None = None
    remote_link: EndLink | None = None
    own: bool = False  # the connection linkdeck's own SSH session rides
    linkdeck_test: bool = False  # a connection of a test linkdeck runs through the host


def _delta(cur: int | None, prev: int | None) -> int | None:
    if cur is None:
        return None
    if prev is None:
        return cur
    d = cur - prev
    return d if d >= 0 else None


def _pct(part: int | None, whole: int | None) -> float | None:
    if part is None or not whole:
        return None
    return min(100.0, 100.0 * part / whole)


def _queue(rtt: float | None, floor: float | None) -> bool:
    return (
        rtt is not None
        and floor is not None
        and floor > 0
        and rtt >= QUEUE_RATIO * floor
        and rtt - floor >= QUEUE_MIN_MS
    )


def _pmtu_low(pmtu: int | None, local: EndLink | None, remote: EndLink | None) -> bool:
    if pmtu is None or local is None or local.mtu is None or pmtu >= local.mtu:
        return False
    return remote is None or remote.mtu is None or pmtu < remote.mtu


def judge(  # noqa: C901, PLR0911 - the limiter rules in their order of precedence
    cur: FlowRecord,
    prev: FlowRecord | None,
    interval_s: float | None,
    local_link: EndLink | None = None,
    remote_link: EndLink | None = None,
    remote_host: str | None = None,
) -> Flow:
    """``cur`` against ``prev`` (the same flow ``interval_s`` seconds earlier on the host's
    clock; None for a flow new in this round: then its shares are over its life so far and
    its rates unknown)."""
    have_prev = prev is not None and interval_s is not None and interval_s > 0
    before = prev if have_prev else None
    sent = _delta(cur.bytes_acked, before.bytes_acked if before else None)
    got = _delta(cur.bytes_received, before.bytes_received if before else None)
    step = interval_s if have_prev else None
    tx = sent * 8 / step if step is not None and sent is not None else None
    rx = got * 8 / step if step is not None and got is not None else None
    busy = _delta(cur.busy_ms, before.busy_ms if before else None)
    rwnd = _delta(cur.rwnd_limited_ms, before.rwnd_limited_ms if before else None)
    sndbuf = _delta(cur.sndbuf_limited_ms, before.sndbuf_limited_ms if before else None)
    segs = _delta(cur.segs_out, before.segs_out if before else None)
    if cur.retrans_total is not None:
        retrans = _delta(cur.retrans_total, before.retrans_total if before else None)
    else:  # ss prints retrans only once a segment was retransmitted
        retrans = 0 if cur.segs_out is not None else None
    retrans_pct = _pct(retrans, segs) if segs else None
    busy_pct = min(100.0, busy / (step * 10)) if step is not None and busy is not None else None
    rate, source = (cur.bbr_bw_bps, "BBR's estimate") if cur.bbr_bw_bps else (cur.delivery_rate_bps, "delivery rate")

    def flow(limiter: Limiter, why: Why) -> Flow:
        return Flow(
            cur.local,
            cur.remote,
            remote_host,
            tx,
            rx,
            cur.rtt_ms,
            cur.min_rtt_ms,
            cur.cwnd,
            cur.snd_wnd,
            retrans,
            retrans_pct,
            cur.pmtu,
            _pct(rwnd, busy),
            _pct(sndbuf, busy),
            busy_pct,
            rate,
            source if rate else None,
            limiter,
            why,
            local_link,
            remote_link,
        )

    moved_out, moved_in = sent or 0, got or 0
    if have_prev and max(moved_out, moved_in) < IDLE_BYTES:
        return flow(Limiter.APPLICATION, Why.IDLE)
    if moved_in > moved_out:
        return flow(Limiter.UNKNOWN, Why.RECEIVING)
    if busy is None or rwnd is None or sndbuf is None:
        return flow(Limiter.UNKNOWN, Why.NOT_REPORTED)
    if busy and rwnd >= LIMITED_SHARE * busy:
        return flow(Limiter.RECEIVER, Why.WINDOW)
    if busy and sndbuf >= LIMITED_SHARE * busy:
        return flow(Limiter.SENDER, Why.BUFFER)
    if not have_prev:
        return flow(Limiter.UNKNOWN, Why.NEW)
    if busy_pct is not None and busy_pct >= 100 * BUSY_SHARE:
        if _queue(cur.rtt_ms, cur.min_rtt_ms):
            return flow(Limiter.NETWORK, Why.QUEUE)
        if retrans_pct is not None and retrans_pct >= RETRANS_PCT:
            return flow(Limiter.NETWORK, Why.LOSS)
    if _pmtu_low(cur.pmtu, local_link, remote_link):
        return flow(Limiter.PATH_MTU, Why.PMTU)
    if busy_pct is not None and busy_pct < 100 * BUSY_SHARE:
        return flow(Limiter.APPLICATION, Why.NOT_BUSY)
    return flow(Limiter.APPLICATION, Why.CLEAR)
