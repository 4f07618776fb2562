"""A host's TCP health: its TCP counters (running totals since boot, whatever OS counted them)
and their rates over one interval.

The names are the OS-neutral ones every parser maps to; a counter an OS does not keep stays
None, and so does its rate, all the way to ``snapshot --json`` ("null where the OS does not
tell").
"""

from __future__ import annotations

from dataclasses import dataclass

from .jsonfields import Field, write

# Every counter, in the order the JSON lists them, with what it counts.
TCP_COUNTERS = {
    "out_segs": "segments sent",
    "retrans_segs": "segments retransmitted",
    "in_segs": "segments received",
    "timeouts": "retransmission timeouts",
    "lost_retrans": "retransmissions lost again",
    "rcv_pruned": "segments pruned from receive queues (buffers overflowed)",
    "rcvq_drops": "segments dropped: receive queue full",
    "backlog_drops": "segments dropped: socket backlog full",
    "ofo_drops": "out-of-order segments dropped (no buffer)",
    "listen_drops": "connection requests dropped by listeners",
    "in_errs": "segments received in error",
    "in_csum_errs": "segments received with a bad checksum",
}


@dataclass(frozen=True, slots=True)
class TcpCounters:
    """Running totals of one host's TCP stack; None where the OS does not count it."""

    out_segs: int | None = None
    retrans_segs: int | None = None
    in_segs: int | None = None
    timeouts: int | None = None
    lost_retrans: int | None = None
    rcv_pruned: int | None = None
    rcvq_drops: int | None = None
    backlog_drops: int | None = None
    ofo_drops: int | None = None
    listen_drops: int | None = None
    in_errs: int | None = None
    in_csum_errs: int | None = None

    def merged(self, other: TcpCounters | None) -> TcpCounters:
        """These counters completed with what ``other`` knows (Linux's two files)."""
        if other is None:
            return self
        return TcpCounters(*(a if a is not None else b for a, b in zip(self.to_json(), other.to_json())))

    def to_json(self) -> list[int | None]:
        return [getattr(self, name) for name in TCP_COUNTERS]

    @classmethod
    def from_json(cls, data: object) -> TcpCounters:
        if not isinstance(data, list) or len(data) != len(TCP_COUNTERS):
            raise ValueError("recorded TCP counters are not a list of one value per counter")
        if not all(v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0) for v in data):
            raise ValueError("recorded TCP counters hold something other than counts")
        return cls(*data)


@dataclass(frozen=True, slots=True)
class TcpRates:
    """Per-second rates of a host's TCP counters over one interval, and the share of sent
    segments that were retransmissions; None when unknown (first sample, reset, not counted
    by the OS, stale)."""

    out_segs_ps: float | None = None
    retrans_segs_ps: float | None = None
    in_segs_ps: float | None = None
    timeouts_ps: float | None = None
    lost_retrans_ps: float | None = None
    rcv_pruned_ps: float | None = None
    rcvq_drops_ps: float | None = None
    backlog_drops_ps: float | None = None
    ofo_drops_ps: float | None = None
    listen_drops_ps: float | None = None
    in_errs_ps: float | None = None
    in_csum_errs_ps: float | None = None
    retrans_pct: float | None = None

    def to_json(self) -> dict[str, float | None]:
        return write(self, TCP_RATES_JSON)


def _count_field(counter: str, meaning: str) -> Field[TcpCounters]:
    return Field(counter, ("integer", "null"), f"{meaning}, running total", lambda c: getattr(c, counter))


# A host's TCP counters in `parse --json` of its TCP counters' output: null where the OS does not count one.
TCP_COUNTERS_JSON: tuple[Field[TcpCounters], ...] = tuple(_count_field(*c) for c in TCP_COUNTERS.items())


def _rate_field(counter: str, meaning: str) -> Field[TcpRates]:
    key = f"{counter}_ps"
    return Field(key, ("number", "null"), f"{meaning} per second", lambda r: getattr(r, key), digits=2)


# The `tcp` object of `snapshot --json` and `flows --json`: every key always there, null where unknown.
TCP_RATES_JSON: tuple[Field[TcpRates], ...] = (
    *(_rate_field(counter, meaning) for counter, meaning in TCP_COUNTERS.items()),
    Field(
        "retrans_pct",
        ("number", "null"),
        "retransmitted ÷ sent segments, in %; null when nothing was sent",
        lambda r: r.retrans_pct,
        digits=2,
    ),
)


def retrans_pct(out_segs_ps: float | None, retrans_segs_ps: float | None) -> float | None:
    """Retransmitted ÷ sent segments, in %; unknown when nothing was sent."""
    if out_segs_ps is None or retrans_segs_ps is None or out_segs_ps <= 0:
        return None
    return 100.0 * retrans_segs_ps / out_segs_ps
