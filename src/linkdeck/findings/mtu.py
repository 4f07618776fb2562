"""MTU rules: different MTUs inside one subnet across hosts, and one host with two interfaces
in one subnet (seed 000: kube05's onboard 1G NIC at MTU 1500 next to its 10G one at 9000).
And a test's PATH_MTU cause (verdict.py): a path that carries less than both ends' MTU."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from ..kinds import is_down
from ..levels import Severity
from ..model import BLACKHOLE_DETAIL, Cause, EndState, Finding, HostState, HostUpdate, PathMtu, TestResult
from ..units import arrow, rate, seconds
from .common import Network, Port, by_subnet


def _candidates(ports: Iterable[Port], need_mtu: bool) -> list[Port]:
    return [
        p for p in ports
        if p.iface.kind != "loopback" and not is_down(p.iface) and (p.iface.mtu is not None or not need_mtu)
    ]




def _mtu_command(port: Port, mtu: int) -> str:
    fam = port.family
    return f"`{port.command(fam.set_mtu, mtu=mtu)}`" if fam else f"set {port.iface.name}'s MTU to {mtu}"


def _reference_mtu(members: list[Port]) -> int:
    """The MTU most interfaces of the subnet use; on a tie the smaller one, since a larger MTU
    only works once every host and the switch carry it."""
    counts = Counter(p.iface.mtu for p in members if p.iface.mtu is not None)
    return max(counts, key=lambda mtu: (counts[mtu], -mtu))


def mtu_mismatch(ports: Iterable[Port]) -> list[Finding]:
    out: dict[tuple[str, str], Finding] = {}
    for net, members in by_subnet(_candidates(ports, need_mtu=True)).items():
        if len({p.host for p in members}) < 2 or len({p.iface.mtu for p in members}) < 2:
            continue
        ref = _reference_mtu(members)
        for port in members:
            if port.iface.mtu == ref:
                continue
            others = [p for p in members if p.host != port.host and p.iface.mtu == ref]
            if not others:  # only its own host disagrees: TWO_IFACES_ONE_SUBNET says that
                continue
            listed = "; ".join(f"{p.label} {p.iface.mtu}" for p in sorted(members, key=lambda p: (p.host, p.iface.name)))
            out.setdefault(
                (port.host, port.iface.name),
                Finding(
                    code="MTU_MISMATCH",
                    severity=Severity.ERROR,
                    host=port.host,
                    interface=port.iface.name,
                    message=f"MTU {port.iface.mtu} vs {ref} in one subnet ({net}): {port.iface.name} "
                    f"differs from {others[0].label}" + (f" and {len(others) - 1} more" if len(others) > 1 else ""),
                    evidence=f"MTUs in {net}: {listed}",
                    hint="every interface in one subnet needs the same MTU (and the switch must carry "
                    f"the largest): {_mtu_command(port, ref)}, or raise the others and the switch to "
                    f"{port.iface.mtu}",
                ),
            )
    return list(out.values())


def _root(port: Port, by_name: dict[str, Port]) -> str:
    """The link an interface finally sits on (vnic → aggr, vlan → port), for stacked setups."""
    name, seen = port.iface.name, set()
    while name in by_name and name not in seen:
        over = by_name[name].iface.over
        if not over:
            break
        seen.add(name)
        name = over
    return name


def _carries(port: Port) -> str:
    """What removing this interface would cut, in words ("" when nothing linkdeck knows of)."""
    held = [f"linkdeck's session ({port.reached_at})"] if port.session else []
    if port.iface.default_route:
        held.append("the default route")
    return " and ".join(held)


def _names(ports: list[Port], last: str = "and") -> str:
    names = [p.iface.name for p in ports]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def two_ifaces_one_subnet(ports: Iterable[Port]) -> list[Finding]:
    """A host with two interfaces in one subnet. Which one is the odd one out is read from that
    host alone — what carries linkdeck's session and the default route — so the advice is the
    same whoever else is watched (issue 18 §1), and never removes either of those."""
    candidates = _candidates(ports, need_mtu=False)
    by_host: dict[str, dict[str, Port]] = {}
    for port in candidates:
        by_host.setdefault(port.host, {})[port.iface.name] = port
    out: dict[tuple[str, str | None], Finding] = {}
    for net, members in by_subnet(candidates).items():
        per_host: dict[str, list[Port]] = {}
        for port in members:
            per_host.setdefault(port.host, []).append(port)
        for host, mine in per_host.items():
            if len(mine) < 2:
                continue
            mine.sort(key=lambda p: p.iface.name)
            found = _two_ifaces(host, net, mine, by_host[host])
            # A dual-stack pair shares an IPv4 and an IPv6 subnet: say it once, the worse way.
            old = out.get((host, found.interface))
            if old is None or found.severity.rank > old.severity.rank:
                out[(host, found.interface)] = found
    return list(out.values())


def _two_ifaces(host: str, net: Network, mine: list[Port], by_name: dict[str, Port]) -> Finding:
    mtus = {p.iface.mtu for p in mine if p.iface.mtu is not None}
    listed = ", ".join(f"{p.iface.name} (MTU {p.iface.mtu or '?'})" for p in mine)
    stacked = len({_root(p, by_name) for p in mine}) == 1
    if len(mtus) > 1:
        severity, why = Severity.ERROR, "with different MTUs: replies leave by whichever route wins"
    elif stacked:
        # VNICs over one aggr (seed 003) or macvlans over one port share the wire on purpose.
        severity, why = Severity.INFO, f"all stacked on {_root(mine[0], by_name)}"
    else:
        severity, why = Severity.WARNING, "traffic may enter on one and leave by the other"
    kept = sorted((p for p in mine if _carries(p)), key=lambda p: not p.session)  # the session first
    spare = [p for p in mine if not _carries(p)]
    kept_words = ", ".join(f"{p.iface.name} carries {_carries(p)}" if i == 0 else f"{p.iface.name} {_carries(p)}" for i, p in enumerate(kept))
    if kept and spare:
        focus: str | None = spare[0].iface.name if len(spare) == 1 else None
        why_keep = f"it carries {_carries(kept[0])}" if len(kept) == 1 else kept_words
        hint = (
            f"keep one interface per subnet: unplug or unaddress {_names(spare)}, or move "
            f"{'it' if len(spare) == 1 else 'them'} to another subnet; keep {_names(kept)}: {why_keep}"
        )
    elif kept:  # each one carries something: removing any cuts linkdeck off or the way out
        focus = None
        hint = f"keep one interface per subnet, but remove none of these from here: {kept_words}; move one to another subnet from a console"
    else:
        focus = None
        neither = "neither" if len(mine) == 2 else "none"
        where = (
            f"linkdeck reaches {host} at {mine[0].reached_at}, on {neither} of them" if mine[0].reached_at
            else f"linkdeck does not know which address it reaches {host} by"
        )
        hint = (
            f"keep one interface per subnet: unaddress {_names(mine, 'or')}, whichever {host} should not use, "
            f"or move it to another subnet; {neither} carries the default route, and {where}"
        )
    return Finding(
        code="TWO_IFACES_ONE_SUBNET",
        severity=severity,
        host=host,
        interface=focus,
        message=f"{host} has {len(mine)} interfaces in {net} {why}",
        evidence=f"{listed} in {net}",
        hint=hint,
    )


def path_mtu_cause(path: PathMtu | None, src: EndState, dst: EndState) -> Cause | None:
    """PATH_MTU when the largest packet that crossed (either way) is smaller than both ends'
    MTU: the ends send frames the path between them drops. (Smaller than one end's MTU only
    is MTU_MISMATCH's case.)"""
    if path is None:
        return None
    carried = [v for v in (path.forward, path.reverse) if v is not None]
    ends_at = [
        (end.host, end.iface.name if end.iface else None, (end.iface.mtu if end.iface else None) or fallback)
        for end, fallback in ((src, path.forward_mtu), (dst, path.reverse_mtu))
    ]
    mtus = [m for _, _, m in ends_at if m is not None]
    if not carried or len(mtus) < 2 or min(carried) >= min(mtus):
        return None
    least = min(carried)
    (a, a_if, _), (b, b_if, _) = ends_at
    a_mtu, b_mtu = mtus
    ends = f"both ends use {a_mtu}" if a_mtu == b_mtu else f"{a} uses {a_mtu}, {b} {b_mtu}"
    ways = ", ".join(f"{arrow(x, y)} {v} bytes" for x, y, v in ((a, b, path.forward), (b, a, path.reverse)) if v is not None)
    return Cause(
        "PATH_MTU",
        f"the path carries {least}-byte packets; {ends}: frames above {least} are dropped between them",
        f"largest packet through with don't-fragment (each end's ping, or iperf3's UDP without one): {ways}; {a} {a_if or '?'} MTU {a_mtu}, "
        f"{b} {b_if or '?'} MTU {b_mtu}; set both ends' MTU to {least} or raise every hop between them to {min(a_mtu, b_mtu)}",
    )


# A direction that moved less than this in a whole test has stalled: TCP connected, then its
# full-size segments never arrived (the lab's jumbo ends over a 1500 bridge: 0 bytes each way).
STALLED_BYTES = 100_000


def suspected_path_mtu(result: TestResult, src: EndState, dst: EndState) -> Cause | None:
    """PATH_MTU_SUSPECTED when the path MTU could not be probed either way, both ends' MTUs are
    above 1500, and the test connected and then moved (next to) nothing in a direction: the
    signature of frames bigger than the path carries. Never a bottleneck or drops."""
    path = result.path_mtu
    if result.error or (path is not None and (path.forward is not None or path.reverse is not None)):
        return None
    if src.iface is None or dst.iface is None:
        return None
    mtus = [src.iface.mtu, dst.iface.mtu]
    if any(m is None or m <= 1500 for m in mtus):
        return None
    moved = {arrow(src.host, dst.host): result.forward_bps, arrow(dst.host, src.host): result.reverse_bps}
    stalled = [way for way, bps in moved.items() if bps is not None and bps * result.duration_s / 8 < STALLED_BYTES]
    if not stalled:
        return None
    a, b = mtus
    ends = f"both ends use MTU {a}" if a == b else f"{src.host} uses MTU {a}, {dst.host} {b}"
    why = f" ({path.note.replace('path MTU not probed: ', '')})" if path is not None and path.note else ""
    return Cause(
        "PATH_MTU_SUSPECTED",
        f"a path MTU problem is suspected: the test connected, then {' and '.join(stalled)} moved next to nothing while {ends}",
        "; ".join(f"{way} {rate(bps)}" for way, bps in moved.items() if bps is not None)
        + f" over {seconds(result.duration_s)}; {src.host} {src.iface.name} MTU {a}, {dst.host} {dst.iface.name} MTU {b}; "
        f"the path MTU was not probed{why}: a hop that carries less than both ends' MTU drops their full-size frames "
        "without a word, so the connection opens and then stalls",
    )


def path_mtu_blackhole(updates: Iterable[HostUpdate]) -> list[Finding]:
    """A host that logged us in and then never answered a ~1.4 KB request (its sampler):
    packets near a path MTU vanish between here and there (seed 000's kube05, two NICs in one
    subnet at 1500 and 9000: the peer may send to the wrong one). Host level, from the
    collector's state, since no interface of that host has been read."""
    out = []
    for u in updates:
        size = u.detail.get(BLACKHOLE_DETAIL)
        if not size:
            continue
        now = "; since then linkdeck sends its requests in pieces under 512 bytes, and the host answers those" if u.state == HostState.LIVE else ""
        out.append(Finding(
            code="PATH_MTU_BLACKHOLE",
            severity=Severity.ERROR,
            host=u.host,
            interface=None,
            message=f"a path MTU black hole between here and {u.host}?",
            evidence=f"the SSH handshake and login succeeded, then a {size}-byte request (starting the sampler) got no answer{now}",
            hint=f"find where big packets stop: `ping -M do -s 1472 {u.host}` from here (-D on the BSDs); look for two "
            "interfaces of one host in one subnet with different MTUs, or a hop that carries less than the ends' MTU",
        ))
    return out
