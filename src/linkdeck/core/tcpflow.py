"""One TCP connection as its host's kernel reports it at one read (``ss -ti`` on Linux):
running totals and instant figures, unknown as ``None``. Rates and the limiter come from two
reads an interval apart (``flows/``)."""

from __future__ import annotations

from dataclasses import dataclass

from .jsonfields import Field


@dataclass(frozen=True, slots=True)
class FlowRecord:
    local: str  # "address:port" as the host prints it, IPv6 in brackets
    remote: str
    cc: str | None = None  # congestion control: cubic, bbr, …
    rtt_ms: float | None = None  # smoothed round-trip time
    min_rtt_ms: float | None = None
    cwnd: int | None = None  # segments
    mss: int | None = None
    pmtu: int | None = None
    bytes_acked: int | None = None  # sent and acknowledged (running total)
    bytes_received: int | None = None
    bytes_retrans: int | None = None
    segs_out: int | None = None
    retrans_total: int | None = None  # segments retransmitted over the connection's life
    # Milliseconds the flow had data in flight, and the parts of that time the receiver's
    # window and this host's send buffer were what held it back (running totals).
    busy_ms: int | None = None
    rwnd_limited_ms: int | None = None
    sndbuf_limited_ms: int | None = None
    delivery_rate_bps: float | None = None
    bbr_bw_bps: float | None = None  # BBR's bottleneck bandwidth estimate
    app_limited: bool = False  # the kernel's last delivery-rate sample was application limited
    snd_wnd: int | None = None  # the window the peer advertises, bytes
    send_q: int | None = None  # bytes queued, not yet acknowledged
    recv_q: int | None = None  # bytes received, not yet read by the application

    @property
    def key(self) -> tuple[str, str]:
        return self.local, self.remote


# What each of a connection's figures is, in FlowRecord's order: (key, JSON types, meaning).
_FLOW_RECORD_KEYS = (
    ("local", ("string",), "this host's end, address:port as the host prints it (IPv6 in brackets)"),
    ("remote", ("string",), "the other end, address:port"),
    ("cc", ("string", "null"), "congestion control: cubic, bbr, …"),
    ("rtt_ms", ("number", "null"), "smoothed round-trip time, ms"),
    ("min_rtt_ms", ("number", "null"), "lowest round-trip time the connection has seen, ms"),
    ("cwnd", ("integer", "null"), "congestion window, segments"),
    ("mss", ("integer", "null"), "maximum segment size, bytes"),
    ("pmtu", ("integer", "null"), "the path MTU TCP uses, bytes"),
    ("bytes_acked", ("integer", "null"), "bytes sent and acknowledged, running total"),
    ("bytes_received", ("integer", "null"), "bytes received, running total"),
    ("bytes_retrans", ("integer", "null"), "bytes retransmitted, running total"),
    ("segs_out", ("integer", "null"), "segments sent, running total"),
    ("retrans_total", ("integer", "null"), "segments retransmitted over the connection's life"),
    ("busy_ms", ("integer", "null"), "ms it had data in flight, running total"),
    ("rwnd_limited_ms", ("integer", "null"), "ms of busy time the receiver's window held it back, running total"),
    ("sndbuf_limited_ms", ("integer", "null"), "ms of busy time the send buffer held it back, running total"),
    ("delivery_rate_bps", ("number", "null"), "the kernel's delivery rate, bit/s"),
    ("bbr_bw_bps", ("number", "null"), "BBR's bottleneck bandwidth estimate, bit/s"),
    ("app_limited", ("boolean",), "the kernel's last delivery-rate sample was application limited"),
    ("snd_wnd", ("integer", "null"), "the window the peer advertises, bytes"),
    ("send_q", ("integer", "null"), "bytes queued, not yet acknowledged"),
    ("recv_q", ("integer", "null"), "bytes received, not yet read by the application"),
)


def _record_field(key: str, types: tuple[str, ...], meaning: str) -> Field[FlowRecord]:
    return Field(key, types, meaning, lambda r: getattr(r, key))


# A connection's object in `parse --json` of an `ss -ti` or `connstat` output.
FLOW_RECORD_JSON: tuple[Field[FlowRecord], ...] = tuple(_record_field(*k) for k in _FLOW_RECORD_KEYS)


def split_endpoint(endpoint: str) -> tuple[str, str]:
    """``("10.0.0.1", "22")`` from ``10.0.0.1:22``, ``[fe80::1%eth0]:22`` or ``::1:22``;
    an IPv4-mapped IPv6 address comes back as the IPv4 one."""
    host, _, port = endpoint.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = host.split("%", 1)[0]
    if host.lower().startswith("::ffff:") and "." in host:
        host = host[7:]
    return host, port
