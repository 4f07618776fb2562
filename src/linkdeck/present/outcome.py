"""The words and numbers linkdeck shows, built once: a test's report, a matrix cell (an
interface's cells are cells.py's).

The headless commands print them; the dashboard (ui/state/rows.py, ui/widgets/probe_texts.py) only styles
and lays them out. Remote text (host and interface names, iperf3's messages) is made printable
here, so no output can forget it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from ..core import units
from ..core.jsonfields import Field, write
from ..core.levels import Level, Status
from ..core.model import CAUSE_JSON, PATH_MTU_JSON, HostState
from ..probe.watched import address_toward
from ..verdict.goodput import cpu_pair, direction_pcts
from ..verdict.shared_path import beyond_noise, frame_factor

if TYPE_CHECKING:
    from ..core.model import EndState, HostUpdate, TestResult
    from ..probe import Outcome
    from ..probe.every_address import AddressRun, Tested
    from ..probe.session import MtuOutcome


def name(text: object) -> str:
    return units.printable(str(text))


def state_word(update: "HostUpdate") -> str:
    """The host's state, one word: ``stale`` for a live host whose frames stopped coming
    (freshness.as_seen marked it), else its state's own."""
    return "stale" if update.stale and update.state is HostState.LIVE else update.state.value


def stale_note(update: "HostUpdate") -> str | None:
    """What a host row adds after its state once its numbers are stale: how old they are."""
    if not update.stale or update.received is None:
        return None
    return f"data as of {time.strftime('%H:%M:%S', time.localtime(update.received))}"


def tcp_detail(update: "HostUpdate") -> str:
    """The host's TCP health over the last interval, for the host screen: what its OS counts,
    and says so when it counts nothing."""
    t = update.tcp
    if t is None:
        return "not known yet" if update.time is None else "not reported by this host"
    if t.out_segs_ps is None and t.in_segs_ps is None:
        return "unknown (stale)" if update.stale else "no interval measured yet"
    parts = [
        f"sent {units.per_second(t.out_segs_ps)}/s, retransmitted {units.percent(t.retrans_pct)}",
        f"received {units.per_second(t.in_segs_ps)}/s",
    ]
    pruned = units.sum_known(units.sum_known(t.rcv_pruned_ps, t.rcvq_drops_ps), t.backlog_drops_ps)
    for label, value in (
        ("timeouts", t.timeouts_ps),
        ("receive-buffer drops", pruned),
        ("bad checksums", t.in_csum_errs_ps),
    ):
        if value is not None:
            parts.append(f"{label} {units.per_second(value)}/s")
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class Report:
    """One outcome as text: a title, the verdict, labelled rows, the causes, and the
    interface counters beside iperf3's figures."""

    title: str
    status: Status
    summary: str
    rows: tuple[tuple[str, str], ...]  # (label, value)
    causes: tuple[tuple[str, str, str], ...]  # (code, message, evidence)
    counters: tuple[tuple[str, str], ...]  # (direction, value)


def counters_vs_iperf3(result: "TestResult", mtu: int | None = None) -> dict[str, dict[str, float | None]]:
    """The interface counters' view of each direction next to iperf3's goodput, for the panel.

    Interface counters see whole frames (Ethernet header, no preamble/FCS on Linux), so
    iperf3's figure is scaled by (MTU + 14) / (MTU − headers) before comparing; ``diff_pct``
    is how far the receiving end's counter is from that (ACKs of the other direction, ARP and
    the SSH session add a little).
    """
    framing = frame_factor(result.address, mtu)
    c = result.counters_bps
    out: dict[str, dict[str, float | None]] = {}
    for direction, goodput, tx_key, rx_key in (
        ("forward", result.forward_bps, "src_tx", "dst_rx"),
        ("reverse", result.reverse_bps, "dst_tx", "src_rx"),
    ):
        on_wire = goodput * framing if goodput is not None else None
        received = c.get(rx_key)
        diff = 100.0 * (received - on_wire) / on_wire if received is not None and on_wire else None
        out[direction] = {
            "iperf3_bps": goodput,
            "frames_bps": on_wire,
            "sender_tx_bps": c.get(tx_key),
            "receiver_rx_bps": received,
            "diff_pct": diff,
        }
    return out


def iperf3_words(r: "TestResult") -> list[str]:
    """Each end's iperf3 in a test's title ("iperf3 h1 3.12, h2 3.21", or "iperf3 3.21" when
    both run the same) and the streams each way when more than one ("-P 4")."""
    words = []
    if r.src_iperf3 and r.dst_iperf3 and r.src_iperf3 != r.dst_iperf3:
        words.append(f"iperf3 {name(r.src)} {name(r.src_iperf3)}, {name(r.dst)} {name(r.dst_iperf3)}")
    elif r.iperf3_version:
        words.append(f"iperf3 {name(r.iperf3_version)}")
    return words + ([f"-P {r.streams}"] if r.streams > 1 else [])


def report(o: "Outcome") -> Report:
    r, v = o.result, o.verdict
    head = units.arrow(name(r.src), name(r.dst)) if r.src != r.dst else f"{name(r.src)} ceiling (loopback)"
    # a test that failed never measured for duration_s seconds: no duration in its title
    took = [] if r.error else [units.seconds(r.duration_s)]
    title = "   ".join(w for w in [head, name(r.address), *took, *iperf3_words(r)] if w)
    # what kept the test from measuring the path alone comes before any cause
    causes = tuple((name(c.code), name(c.message), name(c.evidence)) for c in (*v.conditions, *v.causes))
    if r.error:
        return Report(title, v.status, name(v.summary), path_mtu_rows(r), causes, ())
    rows = [
        *path_mtu_rows(r),
        (
            units.arrow(name(r.src), name(r.dst)),
            f"{units.rate(r.forward_bps):>12}   retransmits {units.count(r.forward_retransmits)}",
        ),
    ]
    if r.src != r.dst:  # a ceiling runs one way
        rows.append(
            (
                units.arrow(name(r.dst), name(r.src)),
                f"{units.rate(r.reverse_bps):>12}   retransmits {units.count(r.reverse_retransmits)}",
            )
        )
    rows.append(("RTT", f"{r.rtt_ms:.2f} ms" if r.rtt_ms is not None else "—"))
    rows.append(("CPU", cpu_pair(r) + ("   (single-threaded iperf3)" if r.single_threaded else "")))
    if r.alone:
        rows.append(("Each alone", (
            f"{units.rate(r.alone.get('forward_bps'))} / {units.rate(r.alone.get('reverse_bps'))}   "
            f"({units.seconds(r.alone.get('duration_s'))} each, after the test fell short both ways at once)"
        )))  # fmt: skip
    if r.src != r.dst:
        rows.append(("Expected", f"{units.rate(v.expected_bps)}   reached {units.percent(v.pct_of_expected)}"))
    else:  # a ceiling is measured against the host's fastest link
        rows.append(("Fastest link carries", units.rate(v.expected_bps)))
    counters = []
    mtu = o.src.iface.mtu if o.src.iface else None
    for direction, row in counters_vs_iperf3(r, mtu).items():
        if row["iperf3_bps"] is None:
            continue
        # only a discrepancy beyond the counters' own error says anything
        off = row["diff_pct"] is not None and beyond_noise(
            r, (row["receiver_rx_bps"] or 0.0) - (row["frames_bps"] or 0.0), direction, frame_factor(r.address, mtu)
        )
        diff = f"; receiver rx {units.percent(row['diff_pct'], signed=True)} vs iperf3's frames" if off else ""
        counters.append(
            (
                direction,
                (
                    f"sender tx {units.rate(row['sender_tx_bps'])}, receiver rx {units.rate(row['receiver_rx_bps'])}; "
                    f"iperf3 {units.rate(row['iperf3_bps'])} ({units.rate(row['frames_bps'])} in frames){diff}"
                ),
            )
        )
    return Report(title, v.status, name(v.summary), tuple(rows), causes, tuple(counters))


def path_mtu_rows(r: "TestResult") -> tuple[tuple[str, str], ...]:
    """The "Path MTU" row: the largest packet each way, or why it was not probed (none for
    a host's ceiling, which crosses no path)."""
    p = r.path_mtu
    if p is None:
        return ()
    ways = [
        f"{units.arrow(name(a), name(b))} {v} bytes"
        for a, b, v in ((r.src, r.dst, p.forward), (r.dst, r.src, p.reverse))
        if v is not None
    ]
    text = ", ".join(ways) + ("; " if ways and p.note else "") + (name(p.note) if p.note else "")
    return (("Path MTU", text),)


def mtu_lines(o: "MtuOutcome") -> list[str]:
    """``linkdeck mtu``'s words, which the dashboard's path MTU screen shows too: a line per
    direction with the address it was sent to and what limits it, then PATH_MTU with its
    evidence, or why it could not run."""

    if o.error or o.path is None:
        return [f"path MTU not probed: {name(o.error or 'a host with itself')}"]
    back = address_toward(o.src_end.iface, o.address)
    lines = []
    for a, b, to, sender, receiver, got in (
        (o.src, o.dst, o.address, o.src_end, o.dst_end, o.path.forward),
        (o.dst, o.src, back, o.dst_end, o.src_end, o.path.reverse),
    ):
        head = units.arrow(name(a), name(b)) + (f" ({name(to)})" if to else "")
        lines.append(
            f"{head}: "
            + (f"{got} bytes get through — {mtu_limit(got, sender, receiver)}" if got is not None else "not probed")
        )
    if o.path.note:
        lines.append(name(o.path.note))
    cause = o.cause
    if cause is not None:
        lines += [f"{cause.code}: {name(cause.message)}", f"    {name(cause.evidence)}"]
    return lines


# Linux lets a frame this much over the receiving interface's MTU in (a VLAN tag's room):
# a veth (driver "veth", ethtool -i) at 1400 takes 1404-byte packets.
RECEIVE_SLACK = 4


def mtu_limit(got: int, sender: "EndState", receiver: "EndState") -> str:
    """What limits one direction, named only where the figures point: the sender's interface
    (the probe went up to its MTU), the receiver's (what got through is its MTU, or a few
    bytes over it), else a hop between them."""

    def label(end: "EndState") -> str | None:
        i = end.iface
        return f"{name(end.host)} {name(i.name)} MTU {i.mtu}" if i is not None and i.mtu else None

    ours, theirs = label(sender), label(receiver)
    if ours and sender.iface and sender.iface.mtu and got >= sender.iface.mtu:
        return ours
    if theirs and receiver.iface and receiver.iface.mtu and 0 <= got - receiver.iface.mtu <= RECEIVE_SLACK:
        over = got - receiver.iface.mtu
        kind = "veth" if receiver.iface.driver == "veth" else "receive"
        return theirs + (f" (+{over} {kind} slack)" if over else "")
    known = [w for w in (ours, theirs) if w]
    if len(known) == 2:
        return f"less than {known[0]} and {known[1]}: a hop between them carries no more"
    if known:
        return f"less than {known[0]}; the other end's MTU is not known"
    return "neither end's MTU is known"


def mtu_text(o: "MtuOutcome") -> str:
    head = f"{units.arrow(name(o.src), name(o.dst))}   {name(o.address)}"
    return "\n".join([head, *(f"  {line}" for line in mtu_lines(o))]) + "\n"


# The ends' interface MTUs beside the path's (`mtu` of mtu --json).
_END_MTUS: tuple[Field[MtuOutcome], ...] = (
    Field(
        "src",
        ("integer", "null"),
        "MTU of SRC's interface toward DST; null when unknown",
        lambda o: o.src_end.iface.mtu if o.src_end.iface else None,
    ),
    Field(
        "dst",
        ("integer", "null"),
        "MTU of DST's interface holding the address; null when unknown",
        lambda o: o.dst_end.iface.mtu if o.dst_end.iface else None,
    ),
)
# The document of `mtu --json`.
MTU_JSON: tuple[Field[MtuOutcome], ...] = (
    Field("src", ("string",), "the host the probe ran from (SRC)", lambda o: o.src),
    Field("dst", ("string",), "the host it probed (DST)", lambda o: o.dst),
    Field(
        "address",
        ("string", "null"),
        "DST's address the probe was sent to; null when it failed before one was chosen (no --address given)",
        lambda o: o.address or None,
    ),
    Field(
        "path_mtu",
        ("object",),
        "the largest IP packet each end's ping got through with don't-fragment, each way",
        lambda o: o.path,
        of=PATH_MTU_JSON,
    ),
    Field("mtu", ("object",), "the ends' interface MTUs", lambda o: o, of=_END_MTUS),
    Field(
        "causes",
        ("array",),
        "PATH_MTU when it applies, else empty",
        lambda o: [cause] if (cause := o.cause) else [],
        of=CAUSE_JSON,
    ),
    Field(
        "error",
        ("string",),
        "why the probe could not run; only there when it could not",
        lambda o: o.error,
        when_set=True,
    ),
)


def mtu_json(o: MtuOutcome) -> dict:
    return write(o, MTU_JSON)


COUNTERS_TITLE = "Interface counters vs iperf3"
LABEL_WIDTH = 28


def report_text(o: "Outcome") -> str:
    """The plain-text report of one test, as ``linkdeck test`` prints it."""
    rep = report(o)
    lines = [rep.title, f"  verdict: {rep.status.upper()} — {rep.summary}"]
    lines += [f"  {label:<{LABEL_WIDTH}}{value}" for label, value in rep.rows]
    for code, message, evidence in rep.causes:
        lines += [f"  {code}: {message}", f"      {evidence}"]
    if rep.counters:
        lines.append(f"  {COUNTERS_TITLE}")
        lines += [f"    {direction:<{LABEL_WIDTH - 2}}{value}" for direction, value in rep.counters]
    return "\n".join(lines) + "\n"


def short_verdict(o: "Outcome") -> str:
    """The dashboard's "Last test" cell (12 characters): "OK 98%", or a ceiling's figure
    "ceil 16.1G"."""
    v, r = o.verdict, o.result
    if r.src == r.dst and r.forward_bps is not None:
        return "ceil " + units.rate(r.forward_bps, short=True)
    return (
        f"{v.status.upper()} {units.percent(v.pct_of_expected)}" if v.pct_of_expected is not None else v.status.upper()
    )


def test_end(o: "Outcome", host: str, iface: str) -> str | None:
    """Which end of ``o`` the interface was: "from" (the test ran from it, its sender), "to"
    (its receiver), None for a ceiling (both ends on one host) or an interface not in it."""
    r = o.result
    if r.src == r.dst:
        return None
    if (host, iface) == (r.src, o.src_iface):
        return "from"
    return "to" if (host, iface) == (r.dst, o.dst_iface) else None


def last_test_cell(o: "Outcome", host: str, iface: str) -> str:
    """The "Last test" cell on either end of a test: → on its sender, ← on its receiver
    ("→ OK 98%", "← OK 98%"); a ceiling has no direction ("ceil 16.1G")."""
    arrow = {"from": "→ ", "to": "← "}.get(test_end(o, host, iface) or "", "")
    return arrow + short_verdict(o)


def last_test_title(o: "Outcome", host: str, iface: str) -> str:
    """The interface screen's heading for its last test, saying which end it was: "Last test
    (from here to lab-b)", "Last test (to here from lab-a)", "Last test (ceiling, loopback)"."""
    r = o.result
    end = test_end(o, host, iface)
    if end == "from":
        return f"Last test (from here to {name(r.dst)})"
    if end == "to":
        return f"Last test (to here from {name(r.src)})"
    return "Last test (ceiling, loopback)" if r.src == r.dst else f"Last test ({units.arrow(name(r.src), name(r.dst))})"


def matrix_cell(o: "Outcome") -> tuple[str, Level]:
    """A matrix cell: (text, level), the level the worse direction's. Each direction's rate
    with its own percentage of expected, sender → receiver first, then the retransmits each
    way: "927M 98% / 900M 96% r0/4"."""
    r, v = o.result, o.verdict
    if r.error:
        return "error", Level.ERROR
    pct = v.pct_of_expected
    level = Level.of_pct(pct)
    ways = [
        units.rate(bps, short=True) + (f" {units.percent(p)}" if p is not None else "")
        for bps, p in zip((r.forward_bps, r.reverse_bps), direction_pcts(r, v))
    ]
    text = " / ".join(ways)
    if r.forward_retransmits is not None or r.reverse_retransmits is not None:
        text += f" r{units.count(r.forward_retransmits)}/{units.count(r.reverse_retransmits)}"
    return text, level


def stack_text(t: "Tested") -> str:
    """What carries a tested address: "admin0 → aggr0 → i40e0, i40e1" (vnic → aggr → ports)."""
    text = " → ".join(name(part) for part in (t.interface or "?", *t.over))
    return text + (" → " + ", ".join(name(p) for p in t.ports) if t.ports else "")


def address_rows(run: "AddressRun") -> list[tuple[str, str, str, str, str, str]]:
    """The table of ``linkdeck test --all-addresses``, its header first: address, DST's
    interface (and what it runs over), forward, reverse, retransmits, verdict."""
    rows = [
        (
            "address",
            f"{name(run.dst)} interface",
            units.arrow(name(run.src), name(run.dst)),
            units.arrow(name(run.dst), name(run.src)),
            "retransmits",
            "verdict",
        )
    ]
    for t in run.tested:
        r, v = t.outcome.result, t.outcome.verdict
        retransmits = f"{units.count(r.forward_retransmits)} / {units.count(r.reverse_retransmits)}"
        rows.append(
            (
                name(t.address),
                stack_text(t),
                units.rate(r.forward_bps),
                units.rate(r.reverse_bps),
                retransmits,
                f"{v.status.upper()} — {name(v.summary)}",
            )
        )
    return rows


def addresses_text(run: "AddressRun") -> str:
    """The plain-text report of one host tested through each of its addresses."""
    durations = {units.seconds(t.outcome.result.duration_s) for t in run.tested}
    each = f", {durations.pop()} each" if len(durations) == 1 else ""
    lines = [f"{units.arrow(name(run.src), name(run.dst))}: {len(run.tested)} addresses, one test after another{each}"]
    rows = address_rows(run)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        lines.append(
            "  "
            + "   ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
            + "   "
            + row[-1]
        )
    for cause in run.causes:
        lines += [f"  {name(cause.code)}: {name(cause.message)}", f"      {name(cause.evidence)}"]
    return "\n".join(lines) + "\n"


def collection(update: "HostUpdate", age_ms: float | None) -> str:
    """What watching a host costs, in words: the sampler's CPU per sample on the host, the
    bytes per sample on the wire, and how old the sample was when shown."""
    cpu = f"{update.remote_cpu_ms:.2f} ms" if update.remote_cpu_ms is not None else "—"
    wire = units.size_bytes(update.wire_bytes) if update.wire_bytes is not None else "—"
    age = f"{age_ms:.0f} ms" if age_ms is not None else "—"
    return f"CPU {cpu}/sample on the host · {wire}/sample on the wire · age {age}"


# --- a test while it runs -------------------------------------------------------------------

# The seconds of a running test as a table that fits its width: the full one (both ends'
# counters each way), then without the senders' counters, then without cwnd, then iperf3's
# figures alone. Each step keeps what says most: iperf3's rates, then the receivers' counters.
LIVE_LAYOUTS = ("full", "receivers", "narrow", "iperf3")
_RATE_W = 9  # the widest rate: "99.9 Gb/s"


def _num(key: str, where: Mapping[str, object]) -> float | None:
    value = where.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _rate_width(src: str, dst: str) -> int:
    """The rate columns' width: the widest rate, or the direction's name above it."""
    return max(12, len(units.arrow(name(src), name(dst))))


def _live_head(src: str, dst: str, cwnd: bool) -> str:
    fwd, rev, w = units.arrow(name(src), name(dst)), units.arrow(name(dst), name(src)), _rate_width(src, dst)
    return f"   s  {fwd:>{w}}  {rev:>{w}}  retr   RTT ms" + ("   cwnd     " if cwnd else " ")


def live_header(src: str, dst: str, src_if: str | None, dst_if: str | None, layout: str = "full") -> str:
    """The column header of ``layout`` (LIVE_LAYOUTS)."""
    s_if, d_if = name(f"{src} {src_if or '?'}"), name(f"{dst} {dst_if or '?'}")
    head = _live_head(src, dst, cwnd=layout in ("full", "receivers"))
    if layout == "full":
        return f"{head}│ counters: {s_if} tx / {d_if} rx, {d_if} tx / {s_if} rx"
    if layout in ("receivers", "narrow"):
        return f"{head}│ rx {d_if} / {s_if}"
    return head.rstrip()


def live_second(src: str, dst: str, s: Mapping[str, object], layout: str = "full") -> str:
    """One second of a running test as it arrives: iperf3's rate each way, the retransmits,
    RTT and congestion window of the streams the client sends on, then the two interfaces'
    counters at that moment (forward: the sender's tx, the receiver's rx), in ``layout``."""
    end, rtt, cwnd, retr = _num("end_s", s), _num("rtt_ms", s), _num("cwnd_bytes", s), _num("forward_retransmits", s)
    counters = s.get("counters_bps")
    c: Mapping[str, object] = counters if isinstance(counters, dict) else {}
    w = _rate_width(src, dst)
    line = (
        f"{end if end is not None else 0:4.0f}  {units.rate(_num('forward_bps', s)):>{w}}  "
        f"{units.rate(_num('reverse_bps', s)):>{w}}  {units.count(int(retr) if retr is not None else None):>4}  "
        f"{f'{rtt:.2f}' if rtt is not None else '—':>6}"
    )
    if layout in ("full", "receivers"):
        line += f"   {units.size_bytes(int(cwnd) if cwnd is not None else None):<9}"
    if layout == "full":
        return (
            f"{line}│ {units.rate(_num('src_tx', c))} / {units.rate(_num('dst_rx', c))}, "
            f"{units.rate(_num('dst_tx', c))} / {units.rate(_num('src_rx', c))}"
        )
    if layout in ("receivers", "narrow"):
        return (
            f"{line}{'' if layout == 'receivers' else ' '}│ "
            f"{units.rate(_num('dst_rx', c))} / {units.rate(_num('src_rx', c))}"
        )
    return line


def live_layout(src: str, dst: str, src_if: str | None, dst_if: str | None, width: int | None) -> str:
    """The fullest layout whose header and widest row fit ``width`` (None: any width)."""
    if width is None:
        return "full"
    widest = {"counters_bps": dict.fromkeys(("src_tx", "dst_rx", "dst_tx", "src_rx"), 99.9e9)}
    row = {
        "end_s": 9999,
        "forward_bps": 99.9e9,
        "reverse_bps": 99.9e9,
        "forward_retransmits": 9999,
        "rtt_ms": 999.99,
        "cwnd_bytes": 999e9,
        **widest,
    }
    for layout in LIVE_LAYOUTS:
        if max(len(live_header(src, dst, src_if, dst_if, layout)), len(live_second(src, dst, row, layout))) <= width:
            return layout
    return LIVE_LAYOUTS[-1]


def quiet_note(host: str, version: object) -> str:
    """Why a running test shows no seconds: the client's iperf3 reports only at its end."""
    return (
        f"iperf3 {name(version)} on {name(host)} reports only when the test ends (each second needs "
        "iperf3 ≥ 3.17 on the sending end): the interface counters below show the test meanwhile"
    )
