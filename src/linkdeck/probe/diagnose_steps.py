"""``linkdeck diagnose SRC DST``'s steps, in the order troubleshooting goes ("solve the
local problems first"; then matrix, CPU, MTU, the hosts' own interfaces;
each address): both ends alone (their state, findings, interfaces, TCP health and own
ceiling over loopback), then the path (the bidirectional test, which probes the path MTU
both ways first and re-runs each direction alone when it falls short without a named
cause), then every address of DST in SRC's subnets when there are several. What they found
is a ``Diagnosis``; ranking it is ``present.diagnose_page.rank``'s (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..core.model import Finding, HostUpdate
from .every_address import AddressRun, reachable_addresses, run_addresses
from .failures import ProbeError
from .subnet_mtu import SubnetProber
from .watched import Outcome

# Seconds of each host's loopback ceiling: a check of the host, not a second test.
CEILING_S = 1

Step = Callable[[str, "Diagnosis"], None]  # told the name of each step as it finishes


@dataclass(slots=True)
class Diagnosis:
    src: str
    dst: str
    updates: dict[str, HostUpdate | None] = field(default_factory=dict)
    findings: dict[str, tuple[Finding, ...]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # host → why it has no sample
    ceilings: dict[str, Outcome] = field(default_factory=dict)
    test: Outcome | None = None
    addresses: AddressRun | None = None
    addresses_error: str | None = None


async def run_diagnosis(
    watch,
    session,
    src: str,
    dst: str,
    duration: float,
    streams: int | None = None,
    on_step: Step | None = None,
    on_live=None,
    src_iface: str | None = None,
) -> Diagnosis:
    """Every step through ``watch`` and ``session`` (its TestSession). ``watch`` is anything
    with ``latest(host)``, ``failed(host)`` and ``findings()``: probe.hosts.Watch for the
    command, ui/diagnose_screen.AppWatch for the dashboard (its own findings, judged over
    its windows). ``src_iface``: the path's test sends from that interface or address."""
    d = Diagnosis(src, dst)

    def done(step: str) -> None:
        if on_step is not None:
            on_step(step, d)

    learn = getattr(watch, "learn", None)  # the dashboard probes its subnets itself
    if learn is not None:
        # which MTU a mixed subnet carries, before MTU_MISMATCH names a side (as snapshot)

        seen = [u for u in (watch.latest(h) for h in dict.fromkeys((src, dst))) if u is not None]
        for found in await SubnetProber(session).run_due(seen):
            learn(found)
    every = watch.findings()
    for host in dict.fromkeys((src, dst)):
        d.updates[host] = watch.latest(host)
        d.findings[host] = tuple(f for f in every if f.host == host)
        why = watch.failed(host)
        if why:
            d.failed[host] = why
    done("ends")
    for host in dict.fromkeys((src, dst)):
        if host not in d.failed:
            d.ceilings[host] = await session.run_pair(host, host, duration=CEILING_S, streams=streams)
    done("ceilings")
    d.test = await session.run_pair(src, dst, src_iface=src_iface, duration=duration, streams=streams, on_live=on_live)
    done("test")
    several = reachable_addresses(watch.latest(src), watch.latest(dst)) if src != dst else []
    if len(several) > 1:
        try:
            d.addresses = await run_addresses(session, src, dst, several)
        except ProbeError as exc:
            d.addresses_error = str(exc)
        done("addresses")
    return d
