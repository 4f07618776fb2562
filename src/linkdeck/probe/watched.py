"""A test with both ends watched: one-shot counter reads just before and just after it give
the interface counters' view of the transfer and the errors and drops meanwhile; the
collectors' latest views (``latest(host) -> HostUpdate | None``, kept by the dashboard or the
headless commands' own fleet) give which interfaces carry it, their facts and findings; then
the verdict.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from ..core.addresses import routable
from ..core.codes import Code
from ..core.kinds import Kind, is_down
from ..core.model import (
    Cause,
    Counters,
    EndState,
    Finding,
    HostUpdate,
    Interface,
    InterfaceView,
    PathMtu,
    TestResult,
    Verdict,
)
from ..core.rates import bits_per_second, field_delta
from ..platforms.adapter import CountersUnavailable
from ..settings.limits import DEFAULT_IPERF3_PORT
from ..verdict.rules import judge
from .alone import needs_alone, run_alone, with_alone
from .busy import WAIT_S, wait_until_quiet
from .egress import Binding, binding, carrier, routed_elsewhere
from .failures import ProbeError
from .host_verdict import judge_ceiling
from .iperf import End, Live, Phase, iperf3_info, run_test
from .pmtu import probe_path
from .pmtu_udp import with_udp_fallback

Latest = Callable[[str], "HostUpdate | None"]
FindingsFor = Callable[[str, str], "tuple[Finding, ...]"]
_DROP_NIC_COUNTERS = ("drop", "discard", "out_of_buffer", "missed", "no_buf")


@dataclass(frozen=True, slots=True)
class Outcome:
    result: TestResult
    src: EndState
    dst: EndState
    verdict: Verdict
    src_iface: str | None = None
    dst_iface: str | None = None
    # (local monotonic) start, the counter reads done (counters_before, counters_after), the
    # iperf3 result, the verdict ready
    timings: dict[str, float] = field(default_factory=dict)


# --- addresses ----------------------------------------------------------------------------


def _ip_interfaces(iface: Interface):
    return routable(iface.addresses)


def pick_address(src_iface: Interface, dst_update: HostUpdate | None) -> str | None:
    """The peer's address in the same subnet as ``src_iface`` (IPv4 first), or None."""
    if dst_update is None:
        return None
    for mine in _ip_interfaces(src_iface):
        for view in dst_update.interfaces:
            for theirs in _ip_interfaces(view.iface):
                if theirs.version == mine.version and theirs.ip in mine.network and theirs.ip != mine.ip:
                    return str(theirs.ip)
    return None


def pick_route(src_update: HostUpdate | None, dst_update: HostUpdate | None) -> tuple[str, str] | None:
    """(src interface, dst address) for two hosts sharing a subnet: the first up interface of
    ``src`` with a peer address in its subnet."""
    if src_update is None:
        return None
    for view in src_update.interfaces:
        if view.iface.kind == Kind.LOOPBACK or is_down(view.iface):
            continue
        address = pick_address(view.iface, dst_update)
        if address:
            return view.iface.name, address
    return None


def _address_of(update: HostUpdate | None, address: str):
    """The address as an ip_address, or None when there is no host or it is not an address."""
    if update is None:
        return None
    try:
        return ipaddress.ip_address(address)
    except ValueError:
        return None


def _named(ifname: str | None) -> set[str]:
    return {ifname} if ifname is not None else set()


def iface_holding(update: HostUpdate | None, address: str) -> str | None:
    """The interface that has ``address`` (the server end of a test)."""
    wanted = _address_of(update, address)
    if update is None or wanted is None:
        return None
    if wanted.is_loopback:
        return _loopback(update)
    for view in update.interfaces:
        for text in view.iface.addresses:
            try:
                if ipaddress.ip_address(text.split("/", 1)[0].split("%", 1)[0]) == wanted:
                    return view.iface.name
            except ValueError:
                continue
    return None


def iface_toward(update: HostUpdate | None, address: str) -> str | None:
    """The interface whose subnet holds ``address`` (the client end of a test)."""
    wanted = _address_of(update, address)
    if update is None or wanted is None:
        return None
    if wanted.is_loopback:
        return _loopback(update)
    for view in update.interfaces:
        if any(wanted in n.network for n in _ip_interfaces(view.iface)):
            return view.iface.name
    return None


def _loopback(update: HostUpdate) -> str | None:
    return next((v.iface.name for v in update.interfaces if v.iface.kind == Kind.LOOPBACK), None)


def view_of(update: HostUpdate | None, ifname: str | None) -> InterfaceView | None:
    if update is None or ifname is None:
        return None
    return next((v for v in update.interfaces if v.iface.name == ifname), None)


# --- counters -----------------------------------------------------------------------------


def _sum(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def counters_bps(
    before: Counters | None, after: Counters | None, tx_seconds: float, rx_seconds: float
) -> dict[str, float | None]:
    """tx/rx bit/s of one interface over the test, from its running totals just before and
    just after it, each direction over the seconds of the iperf3 figure it stands beside."""

    def rate(name: str, seconds: float) -> float | None:
        if before is None or after is None or seconds <= 0:
            return None
        return bits_per_second(field_delta(before, after, name, seconds), seconds)

    return {"tx": rate("tx_bytes", tx_seconds), "rx": rate("rx_bytes", rx_seconds)}


def figure_seconds(result: TestResult) -> tuple[float, float]:
    """The seconds iperf3 divided by for its forward and reverse figures: the receiving
    side's (iperf3's figures are what arrived), which under load can end tens of ms after the
    sender's; the sender's, else the test's duration, when the receiver's are missing. A
    one-way test (a ceiling) has no reverse figure: its reverse seconds are the forward's."""

    def secs(end: object, received: str, sent: str, default: float) -> float:
        for key in (received, sent):
            part = end.get(key) if isinstance(end, Mapping) else None
            value = part.get("seconds") if isinstance(part, Mapping) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value)
        return default

    raw = result.raw_end
    if "forward" in raw and "reverse" in raw:  # a forward run, then a -R run
        forward = secs(raw["forward"], "sum_received", "sum_sent", result.duration_s)
        return forward, secs(raw["reverse"], "sum_received", "sum_sent", forward)
    forward = secs(raw, "sum_received", "sum_sent", result.duration_s)
    return forward, secs(raw, "sum_received_bidir_reverse", "sum_sent_bidir_reverse", forward)


def end_state(
    host: str,
    iface: Interface | None,
    before: Counters | None,
    after: Counters | None,
    nic_drops: int | None = None,
    findings: tuple[Finding, ...] = (),
    seconds: float = 60.0,
) -> EndState:
    """One end: the interface's facts and the errors and drops its counters (kernel and, from
    the collector's views, NIC-level) gained during the test."""
    if before is None or after is None:
        return EndState(host=host, iface=iface, findings=findings)
    speed = iface.speed_mbps if iface else None
    errors = _sum(*(field_delta(before, after, f, seconds, speed) for f in ("rx_errors", "tx_errors")))
    drops = _sum(*(field_delta(before, after, f, seconds, speed) for f in ("rx_drops", "tx_drops")))
    if nic_drops is not None:
        # The kernel's drop counters may already include some of the NIC's: take the larger.
        drops = max(drops or 0, nic_drops)
    return EndState(host=host, iface=iface, errors_during=errors, drops_during=drops, findings=findings)


def nic_drops(before: InterfaceView | None, after: InterfaceView | None) -> int | None:
    """Drops the NIC's own counters (ethtool -S) gained between two collector views. They
    are refreshed with the slow facts, so this is what the collector saw, not exact."""
    if before is None or after is None:
        return None
    total = None
    for name, value in after.iface.nic_counters.items():
        if not any(k in name.lower() for k in _DROP_NIC_COUNTERS):
            continue
        old = before.iface.nic_counters.get(name)
        if old is not None and value >= old:
            total = (total or 0) + value - old
    return total


async def read_ends(ends: dict[str, tuple[End, set[str]]]) -> dict[str, dict[str, Counters] | None]:
    """Every end's counters at once, one command each; an end that cannot be read is None
    (its counters view of the test is then unknown, the test itself still stands)."""

    async def one(end: End, names: set[str]) -> dict[str, Counters] | None:
        if end.adapter is None:
            return None
        try:
            return await end.adapter.read_counters(names)
        except CountersUnavailable:
            return None

    got = await asyncio.gather(*(one(end, names) for end, names in ends.values()))
    return dict(zip(ends, got))


# --- the whole thing ----------------------------------------------------------------------


async def run_watched(
    src: End,
    dst: End,
    address: str,
    duration: float,
    latest: Latest,
    *,
    port: int = DEFAULT_IPERF3_PORT,
    src_iface: str | None = None,
    findings_for: FindingsFor | None = None,
    timeout: float | None = None,
    on_phase: Phase | None = None,
    clock: Callable[[], float] | None = None,
    streams: int = 1,
    on_live: Live | None = None,
    bind: bool = False,
    bind_server: bool = False,
    on_port: Callable[[int], None] | None = None,
) -> Outcome:
    """Run one test (``streams`` parallel streams each way) with both ends watched; never raises ProbeError (a failed
    test is an Outcome whose verdict is "error"). CancelledError kills both iperf3 first. A host with itself (its
    ceiling) is tested one way only.

    Each end's counters are read once just before the test and once right after iperf3's
    result (:mod:`.counters`), so the outcome is final a few milliseconds after the test;
    interface facts and findings come from the collectors' latest views. ``on_live`` sees
    each second as iperf3 reports it, with both interfaces' latest rates beside it
    (``"counters_bps"``: src_tx, src_rx, dst_tx, dst_rx; None where not sampled or stale).

    ``bind``: ``src_iface`` was the user's choice: the client sends from it (probe/egress.py);
    ``bind_server``: ``address`` was, and the server listens on it alone. Whatever was asked, each end is judged on
    the interface its counters show carried the test, and the verdict says so first when
    that is not the one chosen. ``on_port`` is told the port each iperf3 server listens on (the
    flows view sets the test's flows apart by it)."""
    loop = asyncio.get_running_loop()
    clock = clock or loop.time
    timings = {"start": clock()}
    src_if = src_iface or iface_toward(latest(src.name), address)
    dst_if = iface_holding(latest(dst.name), address)
    ends: dict[str, tuple[End, set[str]]] = {src.name: (src, _named(src_if) | _candidates(latest(src.name)))}
    ends.setdefault(dst.name, (dst, set()))[1].update(_named(dst_if) | _candidates(latest(dst.name)))
    asked = await _binding(src, latest, src_if, address) if bind and src.name != dst.name else Binding()
    server_bind = address if bind_server and src.name != dst.name and dst_if is not None else None
    views_before = {h: latest(h) for h in ends}
    busy = await wait_until_quiet([src, dst], port, on_phase) if src.name != dst.name else []
    # Before the first counter read: a probe's dropped pings are not the test's drops.
    path = await probe_pair(src, dst, address, latest, src_if, dst_if, on_phase, port)
    timings["path_mtu"] = clock()
    before = await read_ends(ends)
    timings["counters_before"] = clock()
    try:
        result = await run_test(
            src,
            dst,
            address,
            duration,
            port,
            timeout=timeout,
            on_phase=on_phase,
            both_ways=src.name != dst.name,
            streams=streams,
            on_live=_with_counters(on_live, latest, (src.name, src_if), (dst.name, dst_if)) if on_live else None,
            bind=asked.options,
            server_bind=server_bind,
            on_port=on_port,
        )
    except ProbeError as exc:
        result = TestResult(
            src=src.name, dst=dst.name, address=address, duration_s=float(duration), error=str(exc), streams=streams
        )
    result = replace(result, path_mtu=path)
    timings["result"] = clock()
    after: dict[str, dict[str, Counters] | None] = (
        await read_ends(ends) if not result.error else {h: None for h in ends}
    )
    timings["counters_after"] = clock()
    find = findings_for or (lambda _h, _i: ())

    def counters(side: dict[str, dict[str, Counters] | None], host: str, ifname: str | None) -> Counters | None:
        got = side.get(host)
        return got.get(ifname) if got is not None and ifname is not None else None

    forward_s, reverse_s = figure_seconds(result)
    chosen = {src.name: src_if, dst.name: dst_if}
    if src.name != dst.name:
        carried = result.forward_bps * forward_s / 8 if result.forward_bps is not None else None
        src_if = carrier(before.get(src.name), after.get(src.name), src_if, "tx_bytes", carried) or src_if
        dst_if = carrier(before.get(dst.name), after.get(dst.name), dst_if, "rx_bytes", carried) or dst_if

    def end(host: str, ifname: str | None, tx_s: float, rx_s: float) -> tuple[EndState, dict[str, float | None]]:
        b, a = counters(before, host, ifname), counters(after, host, ifname)
        then, now = view_of(views_before[host], ifname), view_of(latest(host), ifname)
        seen = now or then
        iface = seen.iface if seen else None
        drops = nic_drops(then, now)
        state = end_state(host, iface, b, a, drops, find(host, ifname) if ifname else (), max(tx_s, rx_s))
        return state, counters_bps(b, a, tx_s, rx_s)

    # The source sends forward and receives reverse; the destination the other way round.
    src_state, s = end(src.name, src_if, forward_s, reverse_s)
    dst_state, d = end(dst.name, dst_if, reverse_s, forward_s)
    if not result.error:
        # Over iperf3's own measured seconds, not the window between the reads: the bytes
        # flowed during those, the reads add idle link around them (and a forward-then-reverse
        # test keeps each direction's bytes to its own run).
        result = replace(
            result,
            counters_bps={"src_tx": s["tx"], "src_rx": s["rx"], "dst_tx": d["tx"], "dst_rx": d["rx"]},
            counters_window_s=timings["counters_after"] - timings["counters_before"],
        )
    if src.name == dst.name:  # a ceiling: judged against the host's own links
        update = latest(src.name)
        verdict = judge_ceiling(result, tuple(v.iface for v in update.interfaces) if update else ())
    else:
        verdict = judge(result, src_state, dst_state)
        if needs_alone(result, verdict):
            try:
                result = replace(result, alone=await run_alone(src, dst, address, port, streams, on_phase, on_port))
                verdict = with_alone(result, verdict)
            except ProbeError:  # the test stands; only the check is missing
                pass
        verdict = _where_it_went(
            verdict, address, asked, (src.name, chosen[src.name], src_if), (dst.name, chosen[dst.name], dst_if)
        )
        if busy:
            verdict = _beside_another_test(verdict, busy)
    timings["verdict"] = clock()
    return Outcome(result, src_state, dst_state, verdict, src_if, dst_if, dict(timings))


def _candidates(update: HostUpdate | None) -> set[str]:
    """The interfaces a test could leave or arrive by: up, not loopback, with an address."""
    if update is None:
        return set()
    return {
        v.iface.name
        for v in update.interfaces
        if v.iface.kind != Kind.LOOPBACK and not is_down(v.iface) and _ip_interfaces(v.iface)
    }


async def _binding(src: End, latest: Latest, src_if: str | None, address: str) -> Binding:
    try:
        info = await iperf3_info(src)
    except ProbeError:  # the test itself will say so
        return Binding()
    view = view_of(latest(src.name), src_if)
    return binding(src.name, src.os, info, src_if, address_toward(view.iface if view else None, address))


def _where_it_went(
    verdict: Verdict, address: str, asked: Binding, *ends: tuple[str, str | None, str | None]
) -> Verdict:
    """The verdict headed by where the traffic really went, when an end's counters show
    another interface than the one chosen carried it."""
    causes = tuple(
        routed_elsewhere(host, chosen, used, address, sending, asked.limit if sending else None)
        for (host, chosen, used), sending in zip(ends, (True, False))
        if chosen and used and chosen != used
    )
    if not causes:
        return verdict
    return replace(
        verdict,
        causes=causes + verdict.causes,
        summary=f"{causes[0].message}; {verdict.summary}" if verdict.summary else causes[0].message,
    )


def _beside_another_test(verdict: Verdict, busy: list[str]) -> Verdict:
    """The verdict headed by the test that was still running through an end when this one
    had to start."""
    said = Cause(
        Code.ANOTHER_TEST,
        f"another test was running through {', '.join(busy)} when this one started",
        f"waited {WAIT_S:.0f} s for it to end; the counters beside this test say what it took of the path",
    )
    summary = f"{said.message}; {verdict.summary}" if verdict.summary else said.message
    return replace(verdict, conditions=(said, *verdict.conditions), summary=summary)


async def probe_pair(
    src: End,
    dst: End,
    address: str,
    latest: Latest,
    src_if: str | None,
    dst_if: str | None,
    on_phase: Phase | None = None,
    port: int = DEFAULT_IPERF3_PORT,
) -> PathMtu | None:
    """The path MTU both ways between the ends of a test (None for a host with itself)."""
    wanted = _address_of(latest(src.name), address) or _address_of(latest(dst.name), address)
    if src.name == dst.name or (wanted is not None and wanted.is_loopback):
        return None
    if on_phase is not None:
        on_phase("path MTU")
    src_view, dst_view = view_of(latest(src.name), src_if), view_of(latest(dst.name), dst_if)
    back = address_toward(src_view.iface if src_view else None, address)
    mtus = (src_view.iface.mtu if src_view else None, dst_view.iface.mtu if dst_view else None)
    path = await probe_path(src, dst, address, back, *mtus)
    # no ping at an end: iperf3's UDP with don't-fragment, where both ends have 3.10 or later
    return await with_udp_fallback(path, src, dst, address, back, *mtus, port)


def address_toward(iface: Interface | None, address: str) -> str | None:
    """``iface``'s own address in the subnet of ``address`` (else of its IP version): where
    the far end sends back to."""
    try:
        wanted = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    mine = [n for n in (_ip_interfaces(iface) if iface else ()) if n.version == wanted.version]
    inside = [n for n in mine if wanted in n.network]
    return str((inside or mine)[0].ip) if (inside or mine) else None


LOOPBACK = "127.0.0.1"


def plan_pair(
    src: str, dst: str, latest: Latest, address: str | None = None, src_iface: str | None = None
) -> tuple[str, str | None]:
    """(address to test, src interface) for a pair: loopback for a host with itself (its
    ceiling), else the given address, else the peer's address in a subnet the sender shares
    (from ``src_iface`` when the user picked one). ProbeError when there is none."""
    if src == dst:
        return address or LOOPBACK, src_iface or _loopback_of(latest(src))
    if address:
        return address, src_iface or iface_toward(latest(src), address)
    if src_iface:
        view = view_of(latest(src), src_iface)
        found = pick_address(view.iface, latest(dst)) if view else None
        if found:
            return found, src_iface
        raise ProbeError(f"{dst} has no address in the subnet of {src} {src_iface}: give the address to test")
    route = pick_route(latest(src), latest(dst))
    if route is None:
        raise ProbeError(
            f"{src} and {dst} share no subnet that linkdeck can see{unread_addresses(latest, src, dst)}: "
            "give the address to test (--address)"
        )
    return route[1], route[0]


def unread_addresses(latest: Latest, *hosts: str) -> str:
    """What the hosts say they could not read (" (b: addresses and MAC unavailable: …)"), for a
    "no subnet" message: a subnet linkdeck cannot see may be one it could not read."""
    said = []
    for host in hosts:
        update = latest(host)
        for item in (update.detail.missing or ()) if update is not None else ():
            if not item.startswith("no "):  # a missing tool's note ("no ss: …") is about other facts
                said.append(f"{host}: {item}")
    return f" ({'; '.join(said)})" if said else ""


def _loopback_of(update: HostUpdate | None) -> str | None:
    return _loopback(update) if update is not None else None


def _with_counters(on_live: Live, latest: Latest, src: tuple[str, str | None], dst: tuple[str, str | None]) -> Live:
    def live(kind: str, data) -> None:
        if kind == "interval":
            rates = {}
            for side, (host, ifname) in (("src", src), ("dst", dst)):
                update = latest(host)
                view = view_of(update, ifname) if update is not None and not update.stale else None
                rates[f"{side}_tx"] = view.rates.tx_bps if view else None
                rates[f"{side}_rx"] = view.rates.rx_bps if view else None
            data = {**data, "counters_bps": rates, "src_if": src[1], "dst_if": dst[1]}
        on_live(kind, data)

    return live
