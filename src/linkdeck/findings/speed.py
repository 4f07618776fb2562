"""Speed rules: a port below what it supports, below its subnet's peers, or at half duplex.

A speed that is unknown (None) never produces a finding, and kinds whose speed is made up by
the driver (loopback, veth, bridge, tunnel, vnic) are not judged at all.
"""

from __future__ import annotations

from typing import Iterable

from ..core.codes import Code
from ..core.kinds import Kind, is_down
from ..core.levels import Severity
from ..core.model import Finding
from ..core.units import link_speed
from .helpers import SPEED_KINDS, Port, autoneg_hint, by_subnet


def _judged(port: Port) -> bool:
    return port.iface.kind in SPEED_KINDS and port.iface.speed_mbps is not None and not is_down(port.iface)


def below_capability(ports: Iterable[Port]) -> list[Finding]:
    out = []
    for port in ports:
        iface = port.iface
        if not _judged(port) or not iface.supported_speeds_mbps:
            continue
        best = max(iface.supported_speeds_mbps)
        if iface.speed_mbps is None or iface.speed_mbps >= best:
            continue
        modes = ", ".join(str(s) for s in sorted(iface.supported_speeds_mbps))
        out.append(
            Finding(
                code=Code.SPEED_BELOW_CAPABILITY,
                severity=Severity.WARNING,
                host=port.host,
                interface=iface.name,
                message=(
                    f"{iface.name} negotiated {link_speed(iface.speed_mbps, words=True)} "
                    f"but supports {link_speed(best, words=True)}"
                ),
                evidence=f"speed {iface.speed_mbps} Mb/s; supported {modes} Mb/s",
                hint=autoneg_hint(port, best),
            )
        )
    return out


def below_peers(ports: Iterable[Port]) -> list[Finding]:
    """A physical port slower than every other physical port in its subnet (one
    client at 100 Mbit among gigabit peers). Mixed fleets (a 10G NAS among 1G clients) stay
    quiet: only the single slowest, below all of its peers, is named."""
    out: dict[tuple[str, str], Finding] = {}
    physical = [p for p in ports if p.iface.kind == Kind.PHYSICAL and _judged(p)]
    for net, members in by_subnet(physical).items():
        if len(members) < 2:
            continue
        # The slowest of the others is the slowest of all, or the second slowest for the one
        # port holding the minimum (no per-port scan of the peers: subnets of thousands).
        speeds = {id(p): p.iface.speed_mbps or 0 for p in members}  # _judged: every one is known
        slowest, second = sorted(speeds.values())[:2]
        for port in members:
            speed = speeds[id(port)]
            slowest_peer = second if speed == slowest else slowest
            if speed >= slowest_peer:
                continue
            peers = [p for p in members if p is not port]
            listed = ", ".join(f"{p.label} {p.iface.speed_mbps}" for p in peers[:5])
            more = f" and {len(peers) - 5} more" if len(peers) > 5 else ""
            out.setdefault(
                (port.host, port.iface.name),
                Finding(
                    code=Code.SPEED_BELOW_PEERS,
                    # With one peer it is only "these two differ"; with more, this one is odd.
                    severity=Severity.WARNING if len(peers) >= 2 else Severity.INFO,
                    host=port.host,
                    interface=port.iface.name,
                    message=f"{port.iface.name} runs at {link_speed(port.iface.speed_mbps, words=True)}, "
                    f"slower than every other port in {net} (slowest {link_speed(slowest_peer, words=True)})",
                    evidence=f"{port.label} {port.iface.speed_mbps} Mb/s; peers in {net}: {listed}{more} Mb/s",
                    hint=autoneg_hint(port, slowest_peer),
                ),
            )
    return list(out.values())


def half_duplex(ports: Iterable[Port]) -> list[Finding]:
    out = []
    for port in ports:
        iface = port.iface
        if not _judged(port) or iface.duplex != "half":
            continue
        out.append(
            Finding(
                code=Code.HALF_DUPLEX,
                severity=Severity.ERROR,
                host=port.host,
                interface=iface.name,
                message=f"{iface.name} is up at half duplex ({link_speed(iface.speed_mbps, words=True)})",
                evidence=f"duplex half, speed {iface.speed_mbps} Mb/s, state {iface.oper}",
                hint="half duplex on a switched link is almost always an autonegotiation mismatch "
                "(one side forced): set both ends to auto; " + autoneg_hint(port, iface.speed_mbps),
            )
        )
    return out
