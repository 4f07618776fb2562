"""A test with both ends watched: the collector's views before and after it give the
interface counters' view of the transfer and what the counters did meanwhile; then the
verdict.

The views come from whatever keeps the latest HostUpdate per host (the dashboard, or the
headless commands' own fleet): ``latest(host) -> HostUpdate | None``. The "after" view is
the first sample a host sends once the client has its result, so the whole transfer falls
between the two samples; counters are divided by iperf3's own measured seconds.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass, field, replace
from typing import Callable

from ..model import Counters, EndState, Finding, HostState, HostUpdate, Interface, InterfaceView, TestResult, Verdict
from ..verdict import judge
from .errors import ProbeError
from .iperf import End, Phase, run_test

Latest = Callable[[str], "HostUpdate | None"]
FindingsFor = Callable[[str, str], "tuple[Finding, ...]"]
# How long to wait for each end's first sample after the test, in collector intervals.
AFTER_WAIT_INTERVALS = 2.5
_DROP_NIC_COUNTERS = ("drop", "discard", "out_of_buffer", "missed", "no_buf")


@dataclass(frozen=True, slots=True)
class Outcome:
    result: TestResult
    src: EndState
    dst: EndState
    verdict: Verdict
    src_iface: str | None = None
    dst_iface: str | None = None
    # (local monotonic) when the iperf3 result arrived and when the verdict was ready
    timings: dict[str, float] = field(default_factory=dict)


# --- addresses ----------------------------------------------------------------------------


def _ip_interfaces(iface: Interface) -> list[ipaddress.IPv4Interface | ipaddress.IPv6Interface]:
    """The interface's routable addresses with their prefixes, IPv4 first."""
    out = []
    for text in iface.addresses:
        addr, _, prefix = text.partition("/")
        addr = addr.split("%", 1)[0]  # fe80::1%eth0
        try:
            ip_if = ipaddress.ip_interface(f"{addr}/{prefix}" if prefix else addr)
        except ValueError:
            continue
        if ip_if.ip.is_loopback or ip_if.ip.is_link_local or ip_if.network.prefixlen == ip_if.max_prefixlen:
            continue
        out.append(ip_if)
    return sorted(out, key=lambda i: i.version)


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
        if view.iface.kind == "loopback" or view.iface.oper == "down":
            continue
        address = pick_address(view.iface, dst_update)
        if address:
            return view.iface.name, address
    return None


def iface_holding(update: HostUpdate | None, address: str) -> str | None:
    """The interface that has ``address`` (the server end of a test)."""
    if update is None:
        return None
    try:
        wanted = ipaddress.ip_address(address)
    except ValueError:
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
    if update is None:
        return None
    try:
        wanted = ipaddress.ip_address(address)
    except ValueError:
        return None
    if wanted.is_loopback:
        return _loopback(update)
    for view in update.interfaces:
        if any(wanted in n.network for n in _ip_interfaces(view.iface)):
            return view.iface.name
    return None


def _loopback(update: HostUpdate) -> str | None:
    return next((v.iface.name for v in update.interfaces if v.iface.kind == "loopback"), None)


def view_of(update: HostUpdate | None, ifname: str | None) -> InterfaceView | None:
    if update is None or ifname is None:
        return None
    return next((v for v in update.interfaces if v.iface.name == ifname), None)


# --- counters -----------------------------------------------------------------------------


def _delta(before: Counters, after: Counters, name: str) -> int | None:
    a, b = getattr(before, name), getattr(after, name)
    if a is None or b is None or b < a:
        return None
    return b - a


def _sum(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def counters_bps(before: InterfaceView | None, after: InterfaceView | None, seconds: float) -> dict[str, float | None]:
    """tx/rx bit/s of one interface over the test, from its running totals."""
    if before is None or after is None or seconds <= 0:
        return {"tx": None, "rx": None}
    tx = _delta(before.totals, after.totals, "tx_bytes")
    rx = _delta(before.totals, after.totals, "rx_bytes")
    return {"tx": tx * 8 / seconds if tx is not None else None, "rx": rx * 8 / seconds if rx is not None else None}


def end_state(host: str, before: InterfaceView | None, after: InterfaceView | None, findings: tuple[Finding, ...] = ()) -> EndState:
    """One end as the dashboard saw it: the interface's facts after the test and the errors
    and drops its counters (kernel and NIC-level) gained during it."""
    iface = (after or before).iface if (after or before) else None
    if before is None or after is None:
        return EndState(host=host, iface=iface, findings=findings)
    b, a = before.totals, after.totals
    errors = _sum(_delta(b, a, "rx_errors"), _delta(b, a, "tx_errors"))
    drops = _sum(_delta(b, a, "rx_drops"), _delta(b, a, "tx_drops"))
    nic = _nic_drops(before.iface, after.iface)
    if nic is not None:
        # The kernel's drop counters may already include some of the NIC's: take the larger.
        drops = max(drops or 0, nic)
    return EndState(host=host, iface=iface, errors_during=errors, drops_during=drops, findings=findings)


def _nic_drops(before: Interface, after: Interface) -> int | None:
    total = None
    for name, value in after.nic_counters.items():
        if not any(k in name.lower() for k in _DROP_NIC_COUNTERS):
            continue
        old = before.nic_counters.get(name)
        if old is not None and value >= old:
            total = (total or 0) + value - old
    return total


async def next_samples(latest: Latest, hosts: list[str], seen: dict[str, float | None], timeout: float) -> dict[str, HostUpdate | None]:
    """Each host's first live update with a sample time newer than ``seen[host]`` (its
    latest when the test ended); the latest one when none comes within ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    got: dict[str, HostUpdate | None] = {}
    while True:
        for host in hosts:
            if host in got:
                continue
            u = latest(host)
            if u is not None and u.state == HostState.LIVE and u.time is not None and (seen.get(host) is None or u.time > seen[host]):
                got[host] = u
        if len(got) == len(hosts) or loop.time() >= deadline:
            return {h: got.get(h) or latest(h) for h in hosts}
        await asyncio.sleep(0.02)


# --- the whole thing ----------------------------------------------------------------------


async def run_watched(
    src: End,
    dst: End,
    address: str,
    duration: float,
    latest: Latest,
    *,
    port: int = 5201,
    src_iface: str | None = None,
    interval: float = 1.0,
    findings_for: FindingsFor | None = None,
    timeout: float | None = None,
    on_phase: Phase | None = None,
    clock: Callable[[], float] | None = None,
    on_preliminary: Callable[[Outcome], None] | None = None,
) -> Outcome:
    """Run one test while the collectors watch both ends; never raises ProbeError (a failed
    test is an Outcome whose verdict is "error"). CancelledError kills both iperf3 first. A
    host with itself (its ceiling) is tested one way only.

    The counters' "after" view is each end's first sample once iperf3 has its result, so the
    final outcome comes up to one collector interval after the test; ``on_preliminary`` gets
    the outcome as it stands when iperf3 finishes."""
    loop = asyncio.get_running_loop()
    clock = clock or loop.time
    timings = {"start": clock()}
    hosts = list(dict.fromkeys([src.name, dst.name]))
    src_if = src_iface or iface_toward(latest(src.name), address)
    dst_if = iface_holding(latest(dst.name), address)
    before = {h: latest(h) for h in hosts}
    try:
        result = await run_test(src, dst, address, duration, port, timeout=timeout, on_phase=on_phase, both_ways=src.name != dst.name)
    except ProbeError as exc:
        result = TestResult(src=src.name, dst=dst.name, address=address, duration_s=float(duration), error=str(exc))
    timings["result"] = clock()
    find = findings_for or (lambda _h, _i: ())

    def outcome(after: dict[str, HostUpdate | None], stage: str) -> Outcome:
        b_src, a_src = view_of(before[src.name], src_if), view_of(after[src.name], src_if)
        b_dst, a_dst = view_of(before[dst.name], dst_if), view_of(after[dst.name], dst_if)
        res = result
        if not res.error:
            s, d = counters_bps(b_src, a_src, res.duration_s), counters_bps(b_dst, a_dst, res.duration_s)
            res = replace(res, counters_bps={"src_tx": s["tx"], "src_rx": s["rx"], "dst_tx": d["tx"], "dst_rx": d["rx"]})
        src_state = end_state(src.name, b_src, a_src, find(src.name, src_if) if src_if else ())
        dst_state = end_state(dst.name, b_dst, a_dst, find(dst.name, dst_if) if dst_if else ())
        verdict = judge(res, src_state, dst_state)
        timings[stage] = clock()
        return Outcome(res, src_state, dst_state, verdict, src_if, dst_if, dict(timings))

    now = {h: latest(h) for h in hosts}
    if result.error:
        return outcome(now, "verdict")
    if on_preliminary is not None:
        # iperf3's figures are final; the counters so far cover all but the last sample's
        # share of the test. The UI shows this at once and the final outcome a tick later.
        on_preliminary(outcome(now, "preliminary"))
    seen = {h: (u.time if u is not None else None) for h, u in now.items()}
    after = await next_samples(latest, hosts, seen, AFTER_WAIT_INTERVALS * interval)
    return outcome(after, "verdict")


LOOPBACK = "127.0.0.1"


def plan_pair(src: str, dst: str, latest: Latest, address: str | None = None, src_iface: str | None = None) -> tuple[str, str | None]:
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
        raise ProbeError(f"{src} and {dst} share no subnet that linkdeck can see: give the address to test (--address)")
    return route[1], route[0]


def _loopback_of(update: HostUpdate | None) -> str | None:
    return _loopback(update) if update is not None else None
