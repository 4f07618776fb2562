"""illumos's ``connstat`` (SmartOS, OmniOS, OpenIndiana; not Oracle Solaris): per-connection
TCP counters. Two forms: the table (a header of upper-case field names, right-aligned columns,
repeated with every ``-i`` interval, a date or ``time(2)`` line before each block with ``-T``)
and the parsable form (``-P -o FIELDS``: comma-separated, no header, ``= `` before a ``-T``
timestamp), whose fields are the ones asked for, in that order (``FIELDS`` below for the
flows loop's).

connstat reports, per connection: bytes and data segments each way (``outbytes`` excludes what
was retransmitted), retransmitted bytes and segments, the unacknowledged bytes (``suna``) and
unsent bytes at this instant, the send window (the peer's receive window), the congestion
window in bytes, the MSS, and the smoothed RTT in microseconds. It has no minimum RTT, no path
MTU and no time spent busy or window-limited: those stay unknown.
"""

from __future__ import annotations

from ..core.tcpflow import FlowRecord
from . import numbers
from .parse_error import ParseError
from .registry import Entry

COMMAND = "connstat"

# What the flows loop asks for (connstat -P -o), in this order.
FIELDS = (
    "laddr",
    "lport",
    "raddr",
    "rport",
    "inbytes",
    "outbytes",
    "outsegs",
    "retranssegs",
    "retransbytes",
    "suna",
    "unsent",
    "swnd",
    "cwnd",
    "mss",
    "rtt",
)
KNOWN = frozenset(FIELDS) | {"state", "insegs", "inunorderbytes", "inunordersegs", "rwnd", "rto", "rtts", "rttc"}


def rows(text: str, fields: tuple[str, ...] | None = None) -> list[dict[str, str]]:
    """Every connection line as {field: text}. Without ``fields`` the table's own header names
    them; with them, lines are read as ``-P`` output. Timestamp lines, the ``...`` an example
    ends with, and blank lines are skipped."""
    out: list[dict[str, str]] = []
    names = list(fields) if fields else None
    for line in text.splitlines():
        words = line.split(",") if fields else line.split()
        if not line.strip() or line.startswith("= ") or line.strip() == "...":
            continue
        if not fields and words and all(w.isalpha() and w.isupper() for w in words):
            names = [w.lower() for w in words]
            unknown = [n for n in names if n not in KNOWN]
            if unknown:
                raise ParseError(COMMAND, f"unknown field {numbers.shown(unknown[0])}", line)
            continue
        if names is None:
            if not fields and not words[0][:1].isdigit() and not words[0].startswith(("[", ":")):
                continue  # -T d's date line ("July  7, 2016 11:04:40 AM EDT") before a header
            raise ParseError(COMMAND, "a row before any header", line)
        if not fields and not words[-1][:1].isdigit() and ":" not in words[-1] and names[-1] != "state":
            continue  # a date line between blocks
        if len(words) != len(names):
            raise ParseError(COMMAND, f"{len(words)} fields where {len(names)} were asked for", line)
        out.append(dict(zip(names, (w.strip() for w in words))))
    return out


def _int(row: dict[str, str], name: str, line: str) -> int | None:
    text = row.get(name)
    return None if text is None else numbers.counter(text, name, COMMAND, line)


def _endpoint(address: str, port: str) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def record(row: dict[str, str]) -> FlowRecord:
    """One connection as a FlowRecord: bytes acknowledged are those sent less those still
    unacknowledged; segments sent count the retransmitted ones too (as Linux's segs_out does);
    the window in segments is cwnd / MSS."""
    line = ",".join(row.values())
    for name in ("laddr", "lport", "raddr", "rport"):
        if name not in row:
            raise ParseError(COMMAND, f"no {name}: a flow needs both endpoints", line)
    for name in ("lport", "rport"):
        numbers.integer(row[name], name, COMMAND, line)

    def get(name: str) -> int | None:
        return _int(row, name, line)

    out, suna, mss, cwnd = get("outbytes"), get("suna"), get("mss"), get("cwnd")
    segs, retrans, rtt = get("outsegs"), get("retranssegs"), get("rtt")
    unsent = get("unsent")
    return FlowRecord(
        local=_endpoint(row["laddr"], row["lport"]),
        remote=_endpoint(row["raddr"], row["rport"]),
        rtt_ms=None if rtt is None else rtt / 1000,
        cwnd=cwnd // mss if cwnd is not None and mss else None,
        mss=mss,
        bytes_acked=None if out is None else max(0, out - (suna or 0)),
        bytes_received=get("inbytes"),
        bytes_retrans=get("retransbytes"),
        segs_out=None if segs is None else segs + (retrans or 0),
        retrans_total=retrans,
        snd_wnd=get("swnd"),
        send_q=None if suna is None and unsent is None else (suna or 0) + (unsent or 0),
    )


def parse(text: str, os_name: str | None = None) -> list[FlowRecord]:
    """The table form (its header names the fields), each connection a FlowRecord."""
    return [record(r) for r in rows(text)]


def parse_line(line: str) -> FlowRecord:
    """One line of the flows loop's ``connstat -P -o`` (its ``FIELDS``)."""
    got = rows(line, FIELDS)
    if len(got) != 1:
        raise ParseError(COMMAND, "expected one connection", line)
    return record(got[0])


COMMANDS = (
    Entry(
        r"connstat(?: -[eLP46]{1,4})?(?: -o [a-z,]{1,200})?",
        frozenset({"illumos"}),
        parse,
        "TCP connections: bytes and segments each way, retransmits, "
        "unacknowledged and unsent bytes, send and congestion windows, MSS, RTT",
    ),
)
