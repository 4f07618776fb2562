"""iperf3 client results: ``iperf3 -c … -J`` documents and ``--json-stream`` event lines.

"Forward" is always client → server and "reverse" server → client, whatever the mode:
a plain test fills forward, ``-R`` fills reverse, ``--bidir`` fills both. The end sums are
read by key (``sum_sent``, ``sum_received``, ``sum_sent_bidir_reverse``,
``sum_received_bidir_reverse``) and the direction from ``start.test_start.reverse``, never
from the sums' ``sender`` flags: iperf 3.12 marks ``sum_sent_bidir_reverse`` of a UDP test
``"sender": true`` and every -R sum ``"sender": false``.

iperf3 reports RTT in microseconds; a remote sender's RTT arrives as 0 (-R, the reverse half
of --bidir on some versions), which means "not measured" and becomes None.

iperf 3.12 with -J exits 0 when it cannot connect; only the document's ``"error"`` says so.
Output that is plain text (``iperf3: error - …``, ``iperf3: unrecognized option '--bidir'``)
is returned as a result whose ``error`` holds that message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from . import numbers
from .parse_error import ParseError
from .registry import Entry

_J = "iperf3 -J"
_STREAM = "iperf3 --json-stream"
_TEXT_ERROR_RE = re.compile(r"^iperf3: (?:error - )?(.+?)\s*$")


@dataclass(frozen=True)
class Iperf3Stream:
    """One TCP/UDP stream's totals from the end section."""

    socket: int | None
    direction: str  # "forward" (client → server) or "reverse"
    sent_bps: float | None
    received_bps: float | None
    retransmits: int | None
    rtt_ms: float | None  # the sender's mean RTT; None when not measured


@dataclass(frozen=True)
class Iperf3Result:
    """What one iperf3 client run measured. bps are bits per second; None = not reported."""

    forward_sent_bps: float | None = None
    forward_received_bps: float | None = None  # goodput client → server
    reverse_sent_bps: float | None = None
    reverse_received_bps: float | None = None  # goodput server → client
    forward_retransmits: int | None = None
    reverse_retransmits: int | None = None
    rtt_ms: float | None = None  # mean of every sender stream's mean RTT
    forward_rtt_ms: float | None = None
    reverse_rtt_ms: float | None = None
    cpu_local_pct: float | None = None  # cpu_utilization_percent.host_total (the client)
    cpu_remote_pct: float | None = None  # remote_total (the server)
    version: str | None = None  # "3.12", from start.version "iperf 3.12"
    duration_s: float | None = None  # measured seconds (the sender's), else the requested
    protocol: str | None = None  # "TCP" / "UDP"
    mode: str | None = None  # "forward", "reverse" (-R) or "bidir"
    num_streams: int | None = None
    streams: tuple[Iperf3Stream, ...] = ()
    error: str | None = None
    end: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Iperf3Interval:
    """One ``interval`` event of --json-stream (or one entry of a -J document's intervals)."""

    start_s: float | None
    end_s: float | None
    forward_bps: float | None
    reverse_bps: float | None
    forward_retransmits: int | None
    reverse_retransmits: int | None
    omitted: bool = False
    # the streams this end sends on (the client: forward, unless -R): their mean RTT and
    # their congestion windows summed; the other end's are not in the client's events
    rtt_ms: float | None = None
    cwnd_bytes: int | None = None


@dataclass(frozen=True)
class Iperf3Progress:
    """Everything a --json-stream run printed: the intervals and, once it ended, the result."""

    intervals: tuple[Iperf3Interval, ...]
    result: Iperf3Result | None


# --- -J ---------------------------------------------------------------------------------


def parse_json(text: str) -> Iperf3Result:
    """An ``iperf3 -c … -J`` document (or iperf3's plain-text error) as an Iperf3Result."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return _text_error(_J, stripped)
    try:
        doc = json.loads(stripped)
    except (ValueError, RecursionError) as exc:
        raise ParseError(_J, f"not a JSON document ({str(exc)[:80]}); was -J given?") from None
    if not isinstance(doc, dict):
        raise ParseError(_J, "expected a JSON object")
    if not {"start", "end", "error"} & doc.keys():
        raise ParseError(_J, "no 'start', 'end' or 'error' key; is this iperf3 -J output?")
    return _result(_obj(doc, "start", _J), _obj(doc, "end", _J), doc.get("error"), _J)


def _text_error(command: str, text: str) -> Iperf3Result:
    for line in text.splitlines():
        m = _TEXT_ERROR_RE.match(line.strip())
        if m:
            return Iperf3Result(error=m.group(1))
    first = text.splitlines()[0] if text else None
    raise ParseError(command, "neither a JSON document nor an 'iperf3: …' error line", first)


def _result(start: dict[str, Any], end: dict[str, Any], error: object, command: str) -> Iperf3Result:
    if error is not None and not isinstance(error, str):
        raise ParseError(command, "'error' is not a string")
    test = _obj(start, "test_start", command)
    reverse = _num(test, "reverse", command) == 1
    bidir = "sum_sent_bidir_reverse" in end or "sum_received_bidir_reverse" in end
    sent, received = _obj(end, "sum_sent", command), _obj(end, "sum_received", command)
    if not sent and not received and "sum" in end:  # old UDP documents: one "sum"
        sent = _obj(end, "sum", command)
    if bidir:
        fwd = (sent, received)
        rev = (_obj(end, "sum_sent_bidir_reverse", command), _obj(end, "sum_received_bidir_reverse", command))
    elif reverse:
        fwd, rev = ({}, {}), (sent, received)
    else:
        fwd, rev = (sent, received), ({}, {})
    streams = _streams(end, reverse, command)
    cpu = _obj(end, "cpu_utilization_percent", command)
    version = start.get("version")
    duration = _num(sent, "seconds", command) or _num(test, "duration", command) or None
    protocol = test.get("protocol")
    return Iperf3Result(
        forward_sent_bps=_num(fwd[0], "bits_per_second", command),
        forward_received_bps=_num(fwd[1], "bits_per_second", command),
        reverse_sent_bps=_num(rev[0], "bits_per_second", command),
        reverse_received_bps=_num(rev[1], "bits_per_second", command),
        forward_retransmits=_int(fwd[0], "retransmits", command),
        reverse_retransmits=_int(rev[0], "retransmits", command),
        rtt_ms=_mean([s.rtt_ms for s in streams]),
        forward_rtt_ms=_mean([s.rtt_ms for s in streams if s.direction == "forward"]),
        reverse_rtt_ms=_mean([s.rtt_ms for s in streams if s.direction == "reverse"]),
        cpu_local_pct=_num(cpu, "host_total", command),
        cpu_remote_pct=_num(cpu, "remote_total", command),
        version=version.removeprefix("iperf ").strip() if isinstance(version, str) else None,
        duration_s=duration,
        protocol=protocol if isinstance(protocol, str) else None,
        mode=None if not test else "bidir" if bidir else "reverse" if reverse else "forward",
        num_streams=_int(test, "num_streams", command),
        streams=streams,
        error=error,
        end=end,
    )


def _streams(end: dict[str, Any], reverse: bool, command: str) -> tuple[Iperf3Stream, ...]:
    raw = end.get("streams", [])
    if not isinstance(raw, list):
        raise ParseError(command, "end.streams is not a list")
    out = []
    for s in raw:
        if not isinstance(s, dict):
            raise ParseError(command, "end.streams entry is not an object")
        if "udp" in s:
            udp = _obj(s, "udp", command)
            sender, receiver = udp, {}
        else:
            sender, receiver = _obj(s, "sender", command), _obj(s, "receiver", command)
        local_sends = sender.get("sender", True) is not False
        direction = "reverse" if reverse or not local_sends else "forward"
        rtt_us = _num(sender, "mean_rtt", command)
        out.append(
            Iperf3Stream(
                socket=_int(sender, "socket", command),
                direction=direction,
                sent_bps=_num(sender, "bits_per_second", command),
                received_bps=_num(receiver, "bits_per_second", command),
                retransmits=_int(sender, "retransmits", command),
                rtt_ms=rtt_us / 1000 if rtt_us else None,
            )
        )
    return tuple(out)


# --- --json-stream --------------------------------------------------------------------------


def parse_json_stream(lines: Iterable[str]) -> Iperf3Progress:
    """The event lines of ``iperf3 --json-stream`` (start, interval, end, error) → the progress
    intervals and, when an end or error event was seen, the final result."""
    start: dict[str, Any] = {}
    end: dict[str, Any] | None = None
    error: str | None = None
    intervals = []
    for line in lines:
        if not line.strip():
            continue
        event, data = _event(line)
        if event == "start":
            start = data if isinstance(data, dict) else {}
        elif event == "interval":
            intervals.append(_interval(data, _STREAM))
        elif event == "end":
            end = data if isinstance(data, dict) else {}
        elif event == "error":
            error = data if isinstance(data, str) else json.dumps(data)
    result = None
    if end is not None or error is not None:
        result = _result(start, end or {}, error, _STREAM)
    return Iperf3Progress(tuple(intervals), result)


def parse_stream_line(line: str) -> Iperf3Interval | None:
    """One --json-stream line as it arrives: the interval it reports, or None for other events."""
    event, data = _event(line)
    return _interval(data, _STREAM) if event == "interval" else None


def _event(line: str) -> tuple[str, object]:
    text = line.strip()
    if text.startswith("iperf3: "):  # a plain-text error before any JSON
        return "error", _text_error(_STREAM, text).error
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        raise ParseError(_STREAM, "not a JSON event line", line) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
        raise ParseError(_STREAM, 'expected {"event": …, "data": …}', line)
    return obj["event"], obj.get("data")


def _interval(data: object, command: str) -> Iperf3Interval:
    if not isinstance(data, dict):
        raise ParseError(command, "interval event without an object")
    total = _obj(data, "sum", command)
    back = _obj(data, "sum_bidir_reverse", command)
    # "sender" of "sum" says whether the client sends: true unless -R.
    fwd, rev = (total, back) if total.get("sender", True) is not False else ({}, total)
    raw = data.get("streams")
    sending = [s for s in raw if isinstance(s, dict) and s.get("sender") is not False] if isinstance(raw, list) else []
    rtts = [_num(s, "rtt", command) for s in sending]
    cwnds = [_int(s, "snd_cwnd", command) for s in sending]
    return Iperf3Interval(
        start_s=_num(total, "start", command),
        end_s=_num(total, "end", command),
        forward_bps=_num(fwd, "bits_per_second", command),
        reverse_bps=_num(rev, "bits_per_second", command),
        forward_retransmits=_int(fwd, "retransmits", command),
        reverse_retransmits=_int(rev, "retransmits", command),
        omitted=total.get("omitted") is True,
        rtt_ms=_mean([r / 1000 if r else None for r in rtts]),  # µs; 0 is "not measured"
        cwnd_bytes=sum(c for c in cwnds if c is not None) if any(c is not None for c in cwnds) else None,
    )


# --- helpers -------------------------------------------------------------------------------


def _obj(d: dict[str, Any], key: str, command: str) -> dict[str, Any]:
    value = d.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParseError(command, f"'{key}' is not an object")
    return value


def _num(d: dict[str, Any], key: str, command: str) -> float | None:
    value = d.get(key)
    return None if value is None else numbers.json_number(value, f"'{key}'", command)


def _int(d: dict[str, Any], key: str, command: str) -> int | None:
    value = _num(d, key, command)
    return None if value is None else int(value)


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _parse_j_entry(text: str, os_name: str) -> Iperf3Result:
    return parse_json(text)


def _parse_stream_entry(text: str, os_name: str) -> Iperf3Progress:
    return parse_json_stream(text.splitlines())


_ALL = frozenset({"linux", "bsd", "illumos"})
COMMANDS = (
    Entry(
        r"iperf3(?: \S+)* (?:-J|--json)(?: \S+)*",
        _ALL,
        _parse_j_entry,
        "a client's -J result (printed as JSON, not interfaces)",
    ),
    Entry(
        r"iperf3(?: \S+)* --json-stream(?: \S+)*",
        _ALL,
        _parse_stream_entry,
        "--json-stream events: intervals and the final result",
    ),
)
