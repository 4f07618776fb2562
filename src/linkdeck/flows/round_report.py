"""One round of a host's flows, judged against what the collectors know of the hosts: which
interface each end goes through (its MTU, speed and drops) and which watched host owns the
remote address."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field, replace
from typing import Iterable

from ..core.kinds import Kind
from ..core.model import HostUpdate
from ..core.tcpflow import FlowRecord, split_endpoint
from ..core.tcpstats import TcpRates
from .judge import EndLink, Flow, judge
from .sampler import FlowRound, round_of


@dataclass(frozen=True, slots=True)
class FlowReport:
    host: str
    interface: str | None  # the flows through this interface only, when one was chosen
    time: float | None  # the host's clock at the read
    interval_s: float | None  # since the read before (None on the first read)
    total: int  # established flows on the host (through the interface)
    flows: tuple[Flow, ...] = ()
    errors: tuple[str, ...] = ()
    unavailable: str | None = None  # why the host has no per-flow view
    tcp: TcpRates | None = None  # the host's TCP health at its last sample (None: not read)
    received: float | None = field(default=None, compare=False)  # this machine's clock when read
    own: tuple[Flow, ...] = ()  # linkdeck's own SSH connection to the host: never among flows
    tests: tuple[Flow, ...] = ()  # the flows of the tests linkdeck runs through the host: never among flows


def _ip(text: str):
    try:
        return ipaddress.ip_address(text.split("/", 1)[0].split("%", 1)[0])
    except ValueError:
        return None


def link_of(update: HostUpdate | None, address: str) -> EndLink | None:
    """The interface of ``update``'s host that holds ``address`` (loopback addresses: its
    loopback), as last sampled."""
    ip = _ip(address)
    if update is None or ip is None:
        return None
    for view in update.interfaces:
        iface = view.iface
        held = any(_ip(a) == ip for a in iface.addresses)
        if held or (ip.is_loopback and iface.kind == Kind.LOOPBACK):
            rates = view.rates
            drops = None
            if rates.rx_drops_ps is not None or rates.tx_drops_ps is not None:
                drops = (rates.rx_drops_ps or 0.0) + (rates.tx_drops_ps or 0.0)
            return EndLink(update.host, iface.name, iface.mtu, iface.speed_mbps, drops)
    return None


def owner_of(updates: Iterable[HostUpdate], address: str, local: str) -> EndLink | None:
    """The watched host (other than ``local``) whose interface holds ``address``."""
    ip = _ip(address)
    if ip is None or ip.is_loopback:
        return None
    for update in updates:
        if update.host != local:
            found = link_of(update, address)
            if found is not None:
                return found
    return None


def addresses_of(update: HostUpdate | None, iface: str) -> list[str]:
    """The addresses of one interface, for the remote filter."""
    for view in update.interfaces if update else ():
        if view.iface.name == iface:
            return [a.split("/", 1)[0] for a in view.iface.addresses]
    return []


def report(host: str, got: FlowRound, updates: dict[str, HostUpdate], interface: str | None = None) -> FlowReport:
    """``got`` judged with the hosts' latest ``updates`` (by host name)."""
    own = updates.get(host)
    interval = got.time - got.prev_time if got.prev_time is not None and got.time > got.prev_time else None

    def judged(cur: FlowRecord, prev: FlowRecord | None) -> Flow:
        local_ip, _ = split_endpoint(cur.local)
        remote_ip, _ = split_endpoint(cur.remote)
        remote_link = owner_of(updates.values(), remote_ip, host)
        return judge(
            cur, prev, interval, link_of(own, local_ip), remote_link, remote_link.host if remote_link else None
        )

    flows = tuple(judged(cur, prev) for cur, prev in got.flows)
    mine = tuple(replace(judged(cur, prev), own=True) for cur, prev in got.own)
    tests = tuple(replace(judged(cur, prev), linkdeck_test=True) for cur, prev in got.tests)
    return FlowReport(
        host,
        interface,
        got.time,
        interval,
        got.total,
        flows,
        got.errors,
        tcp=own.tcp if own else None,
        own=mine,
        tests=tests,
    )


def recorded(event: dict, updates: dict[str, HostUpdate]) -> FlowReport | None:
    """A recording's "flows" event judged with the hosts' updates as the replay has them at
    its time (None: the event holds no whole round). ``received`` is when it was recorded."""
    host = event.get("h")
    if not isinstance(host, str):
        return None
    own = updates.get(host)
    got = round_of(event.get("lines") or (), own.os if own is not None and own.os else "linux")
    if got is None:
        return None
    iface = event.get("iface") if isinstance(event.get("iface"), str) else None
    return replace(report(host, got, updates, iface), received=float(event["t"]))
