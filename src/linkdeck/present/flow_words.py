"""The words of a host's flows and their limiters, built once for ``linkdeck flows`` (text and
JSON) and the dashboard's flows screen."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..core.jsonfields import Field, write
from ..core.tcpstats import TCP_RATES_JSON, TcpRates
from ..core.units import arrow, link_speed, per_second, percent, printable, rate
from ..flows.judge import EndLink, Flow, Limiter, Why
from ..flows.round_report import FlowReport
from ..recording.flows_seen import FlowSeen, HostFlows


def _speed(mbps: int) -> str:
    return link_speed(mbps, words=True)


def _ms(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def _link(end: EndLink) -> str:
    return f"{printable(end.host)} {printable(end.iface)}"


def _path(flow: Flow) -> str:
    """What the links at the two ends say about where the narrow point is."""
    local, remote = flow.local_link, flow.remote_link
    speeds = [e for e in (local, remote) if e is not None and e.speed_mbps]
    r = flow.rate_bps or flow.tx_bps
    if not speeds:
        return "no link speed is known at either end"
    slowest = min(speeds, key=lambda e: e.speed_mbps or 0)
    if local is not None and remote is not None and len(speeds) == 2:
        if local.speed_mbps == remote.speed_mbps:
            ends = f"both ends' links are {_speed(slowest.speed_mbps or 0)}"
        else:
            ends = (
                f"the ends' links are {_speed(local.speed_mbps or 0)} ({_link(local)}) "
                f"and {_speed(remote.speed_mbps or 0)} ({_link(remote)})"
            )
        if r is not None and r < 0.8 * (slowest.speed_mbps or 0) * 1e6:
            return f"{ends}, so the narrow point is between them"
        return f"{ends}: the slower link is the narrow point"
    only = speeds[0]
    side = "this end's" if only is local else "the other end's"
    words = f"{side} link ({_link(only)}) is {_speed(only.speed_mbps or 0)}"
    if r is not None and r < 0.8 * (only.speed_mbps or 0) * 1e6:
        return words + ", so the narrow point is beyond it" + ("" if remote else " (the other end is not watched)")
    return words + ": that link is the narrow point"


def _drops(flow: Flow) -> str:
    said = [
        f"{_link(e)} drops {e.drops_ps:.0f}/s"
        for e in (flow.local_link, flow.remote_link)
        if e is not None and e.drops_ps
    ]
    return ("; " + ", ".join(said)) if said else ""


def verdict(flow: Flow) -> tuple[str, str]:  # noqa: PLR0911 - one sentence per limiter
    """(what limits the flow, in a sentence; the figures it rests on)."""
    rtt = f"RTT {_ms(flow.rtt_ms)} ms (floor {_ms(flow.min_rtt_ms)} ms)"
    why = flow.why
    if why is Why.WINDOW:
        if flow.snd_wnd and flow.rtt_ms:
            cap = (
                f"at about {flow.snd_wnd // 1024} KB / {_ms(flow.rtt_ms)} "
                f"ms = {rate(flow.snd_wnd * 8 / (flow.rtt_ms / 1000))}"
            )
        else:
            cap = f"at about window / RTT, {rate(flow.tx_bps)} now"
        return (
            f"the receiver's window caps this flow {cap}: "
            "a receiving application that reads slowly or a small receive buffer",
            f"receive-window limited {percent(flow.rwnd_limited_pct)} of its busy time; {rtt}",
        )
    if why is Why.BUFFER:
        return (
            "this host's send buffer caps this flow: the sending application's socket buffer (SO_SNDBUF, "
            "net.ipv4.tcp_wmem) is smaller than what the path holds",
            f"send-buffer limited {percent(flow.sndbuf_limited_pct)} of its busy time; {rtt}",
        )
    if why in (Why.QUEUE, Why.LOSS):
        named = (
            f"near {rate(flow.rate_bps)} ({flow.rate_source})"
            if flow.rate_bps
            else f"near {rate(flow.tx_bps)} (its rate)"
        )
        head = (
            f"a queue builds in front of a bottleneck {named}"
            if why is Why.QUEUE
            else f"the path loses packets ({percent(flow.retrans_pct)} retransmitted)"
        )
        return (
            f"{head}; {_path(flow)}",
            f"{rtt}; retransmits {percent(flow.retrans_pct)} of segments; "
            f"receive-window limited {percent(flow.rwnd_limited_pct)}, "
            f"send-buffer limited {percent(flow.sndbuf_limited_pct)} of busy time{_drops(flow)}",
        )
    if why is Why.PMTU:
        mtus = ", ".join(
            f"{_link(e)} MTU {e.mtu}" for e in (flow.local_link, flow.remote_link) if e is not None and e.mtu
        )
        return (
            f"the path carries {flow.pmtu}-byte packets, less than the ends' MTU: "
            "more packets per byte, and larger ones are dropped on the way",
            f"path MTU {flow.pmtu}; {mtus}",
        )
    if why is Why.IDLE:
        return (
            "idle: the application is not sending; the network is not the limit",
            f"{rate(flow.tx_bps)} out, {rate(flow.rx_bps)} in",
        )
    if why is Why.NOT_BUSY:
        return (
            "the application is not sending faster; the network is not the limit",
            f"data in flight {percent(flow.busy_pct)} of the interval; {rtt}",
        )
    if why is Why.CLEAR:
        return (
            "the application is not sending faster; the network is not the limit",
            f"busy {percent(flow.busy_pct)} of the interval with no queue (RTT near its floor), "
            f"no loss and no window or buffer limit; {rtt}",
        )
    if why is Why.RECEIVING:
        sender = (
            f" ({printable(flow.remote_host)}: `linkdeck flows {printable(flow.remote_host)}`)"
            if flow.remote_host
            else ""
        )
        return (
            f"this host receives this flow: what holds it back is seen on the sender{sender}",
            f"{rate(flow.rx_bps)} in, {rate(flow.tx_bps)} out",
        )
    if why is Why.NEW:
        return ("new since the last read: judged at the next", "no earlier read to compare")
    return (
        "the OS does not report how long this flow was busy or window-limited",
        f"{rtt}; retransmits {percent(flow.retrans_pct)} of segments; no busy / rwnd_limited / sndbuf_limited time "
        "(Linux 4.10 and newer report them in tcp_info; illumos's connstat never does)",
    )


# A flow's object in `flows --json` (its `flows` and `own_ssh`).
FLOW_JSON: tuple[Field[Flow], ...] = (
    Field("local", ("string",), "this host's end, address:port", lambda f: printable(f.local)),
    Field("remote", ("string",), "the other end, address:port", lambda f: printable(f.remote)),
    Field(
        "remote_host",
        ("string", "null"),
        "the watched host holding the remote address; null when none does",
        lambda f: printable(f.remote_host) if f.remote_host else None,
    ),
    Field("tx_bps", ("number", "null"), "sent, bit/s over the interval", lambda f: f.tx_bps),
    Field("rx_bps", ("number", "null"), "received, bit/s over the interval", lambda f: f.rx_bps),
    Field("rtt_ms", ("number", "null"), "smoothed round-trip time, ms", lambda f: f.rtt_ms),
    Field(
        "min_rtt_ms", ("number", "null"), "lowest round-trip time the connection has seen, ms", lambda f: f.min_rtt_ms
    ),
    Field("cwnd", ("integer", "null"), "congestion window, segments", lambda f: f.cwnd),
    Field("retrans", ("integer", "null"), "segments retransmitted over the interval", lambda f: f.retrans),
    Field(
        "retrans_pct",
        ("number", "null"),
        "retransmitted ÷ sent segments over the interval, in %",
        lambda f: f.retrans_pct,
        digits=2,
    ),
    Field("pmtu", ("integer", "null"), "the path MTU TCP uses, bytes", lambda f: f.pmtu),
    Field(
        "rwnd_limited_pct",
        ("number", "null"),
        "% of its busy time held back by the receiver's window",
        lambda f: f.rwnd_limited_pct,
        digits=2,
    ),
    Field(
        "sndbuf_limited_pct",
        ("number", "null"),
        "% of its busy time held back by the send buffer",
        lambda f: f.sndbuf_limited_pct,
        digits=2,
    ),
    Field("busy_pct", ("number", "null"), "% of the interval it had data in flight", lambda f: f.busy_pct, digits=2),
    Field(
        "rate_bps",
        ("number", "null"),
        "the bottleneck rate TCP estimates (BBR's, else the delivery rate), bit/s; null when the kernel gives none",
        lambda f: f.rate_bps,
    ),
    Field("limiter", ("string",), "what limits it: " + ", ".join(m.value for m in Limiter), lambda f: f.limiter.value),
    Field(
        "own",
        ("boolean",),
        "the connection linkdeck's own SSH session to the host rides (listed only with --all)",
        lambda f: f.own,
    ),
    Field(
        "linkdeck_test",
        ("boolean",),
        "a connection of an iperf3 test linkdeck runs through the host (listed in flows only with --all)",
        lambda f: f.linkdeck_test,
    ),
    Field("verdict", ("string",), "what limits it, in words", lambda f: verdict(f)[0]),
    Field("evidence", ("string",), "the figures the verdict reads", lambda f: verdict(f)[1]),
)


def flow_json(flow: Flow) -> dict:
    return write(flow, FLOW_JSON)


def tcp_line(report: FlowReport) -> str:
    """The host's TCP health over its last sample, in one line."""
    t = report.tcp
    if t is None:
        return f"TCP on {printable(report.host)}: not read yet"
    overflow = None
    parts = [t.rcv_pruned_ps, t.rcvq_drops_ps, t.backlog_drops_ps]
    if any(p is not None for p in parts):
        overflow = sum(p or 0.0 for p in parts)
    return (
        f"TCP on {printable(report.host)}: {per_second(t.out_segs_ps)} segments/s out, {percent(t.retrans_pct)} "
        f"retransmitted, {per_second(t.timeouts_ps)} timeouts/s, {per_second(overflow)} receive-buffer overflows/s"
    )


# The document of `flows --json`; its `flows` are those a table lists (see report_json).
REPORT_JSON: tuple[Field[FlowReport], ...] = (
    Field("host", ("string",), "the host whose flows these are", lambda r: printable(r.host)),
    Field(
        "interface",
        ("string", "null"),
        "the interface the flows go through (--interface); null: every flow of the host",
        lambda r: printable(r.interface) if r.interface else None,
    ),
    Field(
        "tcp",
        ("object",),
        "the host's TCP health at its last sample, as in snapshot --json",
        lambda r: r.tcp or TcpRates(),
        of=TCP_RATES_JSON,
    ),
    Field(
        "interval_s",
        ("number", "null"),
        "seconds between the two reads; null on the first",
        lambda r: r.interval_s,
        digits=2,
    ),
    Field("established", ("integer",), "the host's established TCP flows (through the interface)", lambda r: r.total),
    Field(
        "flows",
        ("array",),
        "the busiest flows, busiest first (with --all, linkdeck's own SSH connection and test flows too)",
        lambda r: r.flows,
        of=FLOW_JSON,
    ),
    Field(
        "own_ssh",
        ("array",),
        "linkdeck's own SSH connection to the host (the one its session's SSH_CONNECTION names), never among flows "
        "unless --all; each item as in flows, with own true",
        lambda r: r.own,
        of=FLOW_JSON,
    ),
    Field(
        "linkdeck_tests",
        ("array",),
        "the flows of the iperf3 tests linkdeck runs through the host now (to the test server's address and port, "
        "from the test's client host), never among flows unless --all; each item as in flows, with linkdeck_test true",
        lambda r: r.tests,
        of=FLOW_JSON,
    ),
    Field(
        "unavailable",
        ("string", "null"),
        "why the host has no per-flow view; null when it has one",
        lambda r: r.unavailable,
    ),
    Field(
        "errors",
        ("array",),
        "what of the host's answer could not be read, one message each",
        lambda r: [printable(e) for e in r.errors],
        items="string",
    ),
)


def report_json(report: FlowReport, show_all: bool = False) -> dict:
    """The report as JSON: ``flows`` the busiest (with linkdeck's own SSH connection and its
    tests' flows too when ``show_all``), ``own_ssh`` and ``linkdeck_tests`` linkdeck's own,
    always."""
    return write(replace(report, flows=listed(report, show_all, tests=show_all)), REPORT_JSON)


def listed(report: FlowReport, show_all: bool = False, tests: bool = True) -> tuple[Flow, ...]:
    """The flows a table lists: the busiest, linkdeck's own SSH connection when asked, and
    last the flows of linkdeck's own tests (with ``tests``)."""
    return report.flows + (report.own if show_all else ()) + (report.tests if tests else ())


def tests_line(report: FlowReport) -> str | None:
    """The flows of linkdeck's own tests in one line (None: none seen)."""
    if not report.tests:
        return None
    n = len(report.tests)
    return f"linkdeck test: {n} flow{'s' if n != 1 else ''}, listed last, not ranked or judged"


def own_line(report: FlowReport, show_all: bool = False, hint: str = " (--all lists it)") -> str | None:
    """linkdeck's own SSH connection to the host in one line (None: none seen); ``hint``
    says how to list it."""
    if not report.own:
        return None
    said = "; ".join(
        f"{arrow(printable(f.local), printable(f.remote))}: {rate(f.tx_bps)} out, {rate(f.rx_bps)} in"
        for f in report.own
    )
    return f"linkdeck's own SSH, {said}, " + ("listed, marked as its own" if show_all else f"not listed{hint}")


HEAD = ("local", "remote", "out", "in", "rtt ms", "min", "cwnd", "retr", "pmtu", "rwnd", "sndbuf", "limiter")


def flow_cells(flow: Flow) -> tuple[str, ...]:
    remote = (
        printable(flow.remote)
        + (f" ({printable(flow.remote_host)})" if flow.remote_host else "")
        + (" (linkdeck's own SSH)" if flow.own else "")
        + (" (linkdeck test)" if flow.linkdeck_test else "")
    )
    return (
        printable(flow.local),
        remote,
        rate(flow.tx_bps),
        rate(flow.rx_bps),
        _ms(flow.rtt_ms),
        _ms(flow.min_rtt_ms),
        "—" if flow.cwnd is None else str(flow.cwnd),
        percent(flow.retrans_pct),
        "—" if flow.pmtu is None else str(flow.pmtu),
        percent(flow.rwnd_limited_pct),
        percent(flow.sndbuf_limited_pct),
        "—" if flow.linkdeck_test else flow.limiter.value,  # the test's own result says what limits it
    )


def title(report: FlowReport, top: int, show_all: bool = False) -> str:
    """What the table lists, counted: with ``show_all`` linkdeck's own connections are rows
    too, named here so that the count matches the rows."""
    where = f" through {printable(report.interface)}" if report.interface else ""
    every = f", over {report.interval_s:.1f} s" if report.interval_s else ""
    mine = len(report.own) if show_all else 0
    own = "" if not mine else " and linkdeck's own SSH" if mine == 1 else f" and linkdeck's {mine} own SSH connections"
    tests = f" and {len(report.tests)} of linkdeck's test" if report.tests else ""
    return (
        f"{printable(report.host)}: "
        f"the {min(top, len(report.flows))} busiest of {report.total} established TCP flows{own}{tests}{where}{every}"
    )


def unavailable_line(report: FlowReport) -> str | None:
    """Why the host has no per-flow view, as one line for stderr, or None when it has one."""
    return (
        f"{printable(report.host)}: no per-flow view: {printable(report.unavailable)}" if report.unavailable else None
    )


def report_text(report: FlowReport, top: int, show_all: bool = False) -> str:
    """The flows as a table (linkdeck's own SSH connection said in one line, listed only when
    ``show_all``); for a host with no per-flow view, what it has (its TCP health): the reason
    is ``unavailable_line``, for stderr."""
    if report.unavailable:
        return f"{tcp_line(report)}\n"
    flows = listed(report, show_all)
    rows = [HEAD, *(flow_cells(f) for f in flows)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
    lines = [title(report, top, show_all), tcp_line(report)]
    mine = own_line(report, show_all)
    lines += [mine] if mine else []
    ours = tests_line(report)
    lines += [ours] if ours else []
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    for f in flows:
        if f.linkdeck_test:
            continue
        if f.limiter is not Limiter.APPLICATION or f.why is not Why.IDLE:
            said, evidence = verdict(f)
            lines.append(f"{arrow(printable(f.local), printable(f.remote))}: {f.limiter.value}: {said} ({evidence})")
    lines += [f"unreadable: {printable(e)}" for e in report.errors]
    return "\n".join(lines) + "\n"


SEEN_HEAD = ("flow", "seen", "reads", "peak out", "peak in", "limiter", "verdict", "evidence")


def seen_cells(seen: FlowSeen, at: Callable[[float], str]) -> tuple[str, ...]:
    """One flow of a recording, as a report lists it (``at`` words a time)."""
    remote = printable(seen.remote) + (f" ({printable(seen.remote_host)})" if seen.remote_host else "")
    main = seen.limiter
    judged = seen.named[main]  # 0: seen in its first read only, which judges nothing yet
    named = f"{main.value} ({judged} of {seen.rounds} reads)" if judged else f"{main.value} (first read only)"
    others = [f"{k.value} {n}" for k, n in sorted(seen.named.items(), key=lambda kn: -kn[1]) if k is not main and n]
    said, evidence = verdict(seen.flow)
    return (
        arrow(printable(seen.local), remote),
        f"{at(seen.first)}–{at(seen.last)}",
        str(seen.rounds),
        rate(seen.peak_tx_bps),
        rate(seen.peak_rx_bps),
        named + (f"; also {', '.join(others)}" if others else ""),
        said,
        evidence,
    )


def seen_line(host: str, flows: HostFlows | None, at: Callable[[float], str]) -> str:
    """What a recording holds of a host's flows, in one line."""
    if flows is None or flows.first is None or flows.last is None:
        return "TCP flows: none recorded (the flows screen, w, was not open on this host while recording)"
    where = ", ".join(
        f"through {printable(i)}" if i else "the whole host" for i in sorted(flows.interfaces, key=lambda i: i or "")
    )
    more = f"; {flows.not_kept} more flows not kept" if flows.not_kept else ""
    return (
        f"TCP flows: {flows.rounds} reads from {at(flows.first)} to {at(flows.last)} ({where}), "
        f"{len(flows.flows)} flows seen{more}"
    )
