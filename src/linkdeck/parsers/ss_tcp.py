"""``ss -tinH state established`` (and ``ss -ti``, ``-tin``, ``-tinO``): one FlowRecord per TCP
connection.

A socket is a line with the queues and the two endpoints (``Netid`` and ``State`` columns
only without a state filter), followed by the kernel's tcp_info on lines that start with
whitespace (a TAB in real output; ``-O`` puts it all on one line). Every iproute2 era is
read: ``send 2.9Mbps`` and ``send 900150880bps`` alike; fields a kernel or ss does not print
(``pmtu`` before ~4.15, ``busy``/``rwnd_limited`` before 4.10–4.19) stay unknown. ``busy``,
``rwnd_limited`` and ``sndbuf_limited`` are printed only when above zero: where the output
shows the kernel has them (``delivered:``, 4.18 on), their absence reads as 0, and so does
that of ``bytes_acked`` and ``bytes_received``, printed likewise.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.tcpflow import FlowRecord
from . import numbers
from .parse_error import ParseError
from .registry import Entry

COMMAND = "ss -ti"

_ENDPOINT = r"(?:\[[0-9A-Fa-f:.%\w-]{1,80}\]|[\w.:%*-]{1,80}):[\w*-]{1,40}"
_SOCKET = re.compile(
    r"(?:(?:tcp|TCP)\s+)?(?:(?:ESTAB|[A-Z][A-Z0-9-]{1,15})\s+)?([0-9]{1,20})\s+([0-9]{1,20})\s+("
    + _ENDPOINT
    + r")\s+("
    + _ENDPOINT
    + r")(.*)"
)
_HEADER = re.compile(r"(?:Netid|State|Recv-Q)\s")
_RATE = re.compile(r"([0-9]{1,20}(?:\.[0-9]{1,20})?)([KMG]?)bps")
_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}
_LIMITED = re.compile(r"([0-9]{1,20})ms(?:\([0-9.]{1,10}%\))?")
_INTS = {
    "cwnd": "cwnd",
    "mss": "mss",
    "pmtu": "pmtu",
    "bytes_acked": "bytes_acked",
    "bytes_received": "bytes_received",
    "bytes_retrans": "bytes_retrans",
    "segs_out": "segs_out",
    "snd_wnd": "snd_wnd",
}
_CC = {
    "cubic",
    "bbr",
    "bbr2",
    "bbr3",
    "reno",
    "dctcp",
    "htcp",
    "vegas",
    "westwood",
    "bic",
    "illinois",
    "hybla",
    "scalable",
    "yeah",
    "lp",
    "veno",
    "nv",
    "cdg",
}


def _rate(text: str, line: str) -> float:
    m = _RATE.fullmatch(text)
    if not m:
        raise ParseError(COMMAND, f"a rate is not a number of bps: {numbers.shown(text)}", line)
    return float(m.group(1)) * _SCALE[m.group(2)]


def _ms(text: str, what: str, line: str) -> int:
    m = _LIMITED.fullmatch(text)
    if not m:
        raise ParseError(COMMAND, f"{what} is not a time in ms: {numbers.shown(text)}", line)
    return int(m.group(1))


def _info(tokens: list[str], line: str) -> dict[str, Any]:  # noqa: C901, PLR0912 - one branch per ss -i field
    """The tcp_info fields of one socket, as FlowRecord keyword arguments."""
    out: dict[str, Any] = {}
    modern = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok in ("send", "pacing_rate", "delivery_rate") and i < len(tokens):
            speed = _rate(tokens[i], line)
            i += 1
            if tok == "delivery_rate":
                out["delivery_rate_bps"] = speed
            continue
        if tok == "app_limited":
            out["app_limited"] = True
            continue
        if tok in _CC:
            out["cc"] = tok
            continue
        name, sep, value = tok.partition(":")
        if not sep:
            continue
        if name in _INTS:
            out[_INTS[name]] = numbers.integer(value, name, COMMAND, line)
        elif name == "rtt":
            out["rtt_ms"] = numbers.decimal(value.split("/", 1)[0], "rtt", COMMAND, line)
        elif name == "minrtt":
            out["min_rtt_ms"] = numbers.decimal(value, "minrtt", COMMAND, line)
        elif name == "retrans":
            out["retrans_total"] = numbers.integer(value.rpartition("/")[2], "retrans", COMMAND, line)
        elif name in ("busy", "rwnd_limited", "sndbuf_limited"):
            out[f"{name}_ms"] = _ms(value, name, line)
        elif name == "delivered":
            modern = True
        elif name == "bbr" and value.startswith("(") and value.endswith(")"):
            for part in value[1:-1].split(","):
                key, _, v = part.partition(":")
                if key == "bw":
                    out["bbr_bw_bps"] = _rate(v, line)
    if modern or "busy_ms" in out:
        for name in ("busy_ms", "rwnd_limited_ms", "sndbuf_limited_ms"):
            out.setdefault(name, 0)
    if modern:  # printed only when above zero, like busy
        for name in ("bytes_acked", "bytes_received"):
            out.setdefault(name, 0)
    pmtu = out.get("pmtu")
    if isinstance(pmtu, int):
        out["pmtu"] = numbers.mtu(pmtu)
    return out


def parse(text: str, os_name: str = "linux") -> list[FlowRecord]:
    """Every TCP socket in ``text``; raises ParseError on a line that is neither a header,
    a socket nor its tcp_info."""
    sockets: list[tuple[re.Match[str], list[str], str]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line:
            continue
        if line[0].isspace():
            if not sockets:
                raise ParseError(COMMAND, "tcp_info before any socket line", line)
            sockets[-1][1].extend(line.split())
            continue
        if _HEADER.match(line):
            continue
        m = _SOCKET.fullmatch(line)
        if not m:
            raise ParseError(COMMAND, "expected a socket line: queues, then local and peer address:port", line)
        sockets.append((m, m.group(5).split(), line))
    out = []
    for m, tokens, line in sockets:
        out.append(
            FlowRecord(
                local=m.group(3),
                remote=m.group(4),
                recv_q=numbers.integer(m.group(1), "Recv-Q", COMMAND, line),
                send_q=numbers.integer(m.group(2), "Send-Q", COMMAND, line),
                **_info(tokens, line),
            )
        )
    return out


COMMANDS = (
    Entry(
        r"ss -t[inHeO]{1,6}(?: state established)?",
        frozenset({"linux"}),
        parse,
        "TCP connections with tcp_info: rtt, minrtt, cwnd, pmtu, bytes acked/received, "
        "retrans, busy, rwnd_limited, sndbuf_limited, delivery_rate, BBR bw",
    ),
)
