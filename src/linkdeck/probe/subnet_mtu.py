"""Which MTU a subnet carries, measured before MTU_MISMATCH blames a side.

When hosts of one subnet use different MTUs, the two hosts with the largest ones ping each
other with don't-fragment (the path MTU probe, ``TestSession.path_mtu``): the largest packet
that crossed says whether the subnet carries what they use. Once per subnet and set of MTUs
(a changed MTU asks again), never twice within ``MIN_GAP_S``, one subnet at a time, as
linkdeck's own traffic. The answer goes to the Diagnoser (``learn``); the rule in
findings/mtu.py reads it.
"""

from __future__ import annotations

import ipaddress
import time
from operator import attrgetter
from typing import Callable, Iterable

from ..core.model import HostState, HostUpdate, Interface, SubnetMtu
from ..findings.helpers import Port
from ..findings.mtu import to_probe
from ..settings.config import HostSpec, Settings
from .session import TestSession

MIN_GAP_S = 30.0  # between two probes of one subnet (its MTUs changing back and forth)

Plan = tuple[str, tuple[int, ...], Port, Port]
_IFACE = attrgetter("iface")


def _address_in(port: Port, subnet: str) -> str | None:
    net = ipaddress.ip_network(subnet)
    for text in port.iface.addresses:
        try:
            ip = ipaddress.ip_interface(text.split("%", 1)[0]).ip
        except ValueError:
            continue
        if ip in net:
            return str(ip)
    return None


class SubnetProber:
    def __init__(self, session: TestSession, clock: Callable[[], float] = time.monotonic) -> None:
        self.session = session
        self.clock = clock
        self._asked: set[tuple[str, tuple[int, ...]]] = set()
        self._last: dict[str, float] = {}
        # the live hosts' interfaces the subnets to probe were last worked out from, and those
        self._mixed: tuple[list[tuple[str, str | None, tuple[Interface, ...]]], list[Plan]] = ([], [])

    def due(self, updates: Iterable[HostUpdate]) -> list[Plan]:
        """The subnets to probe now: their MTUs differ across live hosts and this set of MTUs
        has not been asked about."""
        live = [u for u in updates if u.state is HostState.LIVE and not u.stale]
        # asked with every findings pass: the rate tracker keeps each Interface while its facts
        # do not change, so the same ones (compared by identity first) give the same subnets
        key = [(u.host, u.os, tuple(map(_IFACE, u.interfaces))) for u in live]
        if key != self._mixed[0]:
            self._mixed = (key, to_probe(Port(u.host, u.os, v.iface) for u in live for v in u.interfaces))
        now = self.clock()
        plans = []
        for subnet, mtus, a, b in self._mixed[1]:
            if (subnet, mtus) in self._asked or now - self._last.get(subnet, -MIN_GAP_S) < MIN_GAP_S:
                continue
            self._asked.add((subnet, mtus))
            self._last[subnet] = now
            plans.append((subnet, mtus, a, b))
        return plans

    async def probe(self, plan: Plan) -> SubnetMtu:
        subnet, mtus, a, b = plan
        between = (a.host, b.host)
        missing = [p.host for p in (a, b) if p.host not in self.session.specs]
        if missing:
            return SubnetMtu(subnet, mtus, between, None, f"{missing[0]} is not watched over SSH: nothing to ping from")
        address = _address_in(b, subnet)
        outcome = await self.session.path_mtu(a.host, b.host, address, a.iface.name)
        path = outcome.path
        crossed = [v for v in (path.forward, path.reverse) if v is not None] if path else []
        if not crossed:
            return SubnetMtu(
                subnet, mtus, between, None, outcome.error or (path.note if path else None) or "no ping got an answer"
            )
        return SubnetMtu(subnet, mtus, between, min(crossed))

    async def run_due(self, updates: Iterable[HostUpdate]) -> list[SubnetMtu]:
        return [await self.probe(plan) for plan in self.due(updates)]


async def probe_once(hosts: Iterable[HostSpec], settings: Settings, updates: list[HostUpdate]) -> list[SubnetMtu]:
    """``linkdeck snapshot``'s probes: every subnet whose hosts' MTUs differ, once, over
    connections of its own (the snapshot's are closed by then)."""
    latest = {u.host: u for u in updates}
    session = TestSession({h.name: h for h in hosts}, settings, latest.get, lambda host, iface: ())
    try:
        return await SubnetProber(session).run_due(updates)
    finally:
        await session.close()
