"""MTU rules: different MTUs inside one subnet across hosts, and one host with two interfaces
in one subnet (a host's onboard 1G NIC at MTU 1500 next to its 10G one at 9000).
And a test's PATH_MTU cause (verdict.py): a path that carries less than both ends' MTU, which
stays a PATH_MTU finding on both ends once a probe has measured it (``path_mtu_measured``)."""

from __future__ import annotations

import time
from typing import Iterable, Mapping

from ..core.codes import Code
from ..core.kinds import Kind, is_down
from ..core.levels import Severity
from ..core.model import Cause, EndState, Finding, HostState, HostUpdate, MeasuredPath, PathMtu, SubnetMtu, TestResult
from ..core.units import arrow, rate, seconds
from .helpers import Network, Port, by_subnet


def _candidates(ports: Iterable[Port], need_mtu: bool) -> list[Port]:
    return [
        p
        for p in ports
        if p.iface.kind != Kind.LOOPBACK and not is_down(p.iface) and (p.iface.mtu is not None or not need_mtu)
    ]


def _mtu_command(port: Port, mtu: int) -> str:
    fam = port.family
    return f"`{port.command(fam.set_mtu, mtu=mtu)}`" if fam else f"set {port.iface.name}'s MTU to {mtu}"


def _mixed(ports: Iterable[Port]) -> list[tuple[Network, list[Port]]]:
    """Subnets where interfaces of different hosts use different MTUs (one host's own pair is
    TWO_IFACES_ONE_SUBNET's), IPv4 first: that is the one linkdeck probes."""
    out: list[tuple[Network, list[Port]]] = []
    for net, members in by_subnet(_candidates(ports, need_mtu=True)).items():
        if len({p.iface.mtu for p in members}) > 1 and len({p.host for p in members}) > 1:
            out.append((net, sorted(members, key=lambda p: (p.host, p.iface.name))))
    return sorted(out, key=lambda item: item[0].version)


def _differs(members: list[Port]) -> list[Port]:
    """The ports with another host's port at another MTU in the subnet."""
    hosts_at: dict[int | None, set[str]] = {}
    for p in members:
        hosts_at.setdefault(p.iface.mtu, set()).add(p.host)
    return [p for p in members if any(mtu != p.iface.mtu and hosts - {p.host} for mtu, hosts in hosts_at.items())]


def mtu_set(members: list[Port]) -> tuple[int, ...]:
    return tuple(sorted({p.iface.mtu for p in members if p.iface.mtu is not None}))


def probe_pair(members: list[Port]) -> tuple[Port, Port] | None:
    """The two hosts with the largest MTUs: the largest packet between them says whether the
    subnet carries what they use, or less."""
    ranked = sorted(members, key=lambda p: (-(p.iface.mtu or 0), p.host, p.iface.name))
    other = next((p for p in ranked[1:] if p.host != ranked[0].host), None)
    return (ranked[0], other) if other is not None else None


def to_probe(ports: Iterable[Port]) -> list[tuple[str, tuple[int, ...], Port, Port]]:
    """(subnet, its MTUs, the pair to probe) for each IPv4 subnet whose hosts' MTUs differ."""
    out: list[tuple[str, tuple[int, ...], Port, Port]] = []
    for net, members in _mixed(ports):
        pair = probe_pair(members)
        if net.version == 4 and pair is not None:
            out.append((str(net), mtu_set(members), *pair))
    return out


def _carried(largest: int, pair: tuple[Port, Port]) -> tuple[int, bool]:
    """(the MTU the subnet carries, whether the path rather than the hosts sets it)."""
    both = min(p.iface.mtu or 0 for p in pair)
    return (both, False) if largest >= both else (largest, True)


def _hosts(ports: list[Port]) -> str:
    names = list(dict.fromkeys(p.label for p in ports))
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def mtu_mismatch(ports: Iterable[Port], probed: Mapping[str, SubnetMtu] | None = None) -> list[Finding]:
    """Different MTUs in one subnet across hosts. Which side is wrong follows from a probe of
    the subnet (``probed``, by subnet, for the MTUs it was probed under): until then every side
    is named with its MTU and no direction is given."""
    out: dict[tuple[str, str], Finding] = {}
    for net, members in _mixed(ports):
        listed = "; ".join(f"{p.label} {p.iface.mtu}" for p in members[:12]) + (
            f"; {len(members) - 12} more" if len(members) > 12 else ""
        )
        pair = probe_pair(members)
        found = (probed or {}).get(str(net))
        if found is not None and found.mtus != mtu_set(members):
            found = None  # probed under other MTUs: that answer no longer holds
        if found is None or found.largest is None or pair is None:
            why = (
                f"cannot probe which MTU it carries: {found.note}"
                if found is not None
                else "which MTU it carries is not probed yet"
            )
            probe = f" (`linkdeck mtu {pair[0].host} {pair[1].host}`)" if pair else ""
            for port in _differs(members):
                out.setdefault(
                    (port.host, port.iface.name),
                    Finding(
                        Code.MTU_MISMATCH,
                        Severity.WARNING,
                        port.host,
                        port.iface.name,
                        f"MTUs differ in {net}: {listed}",
                        f"{why}; MTUs in {net}: {listed}",
                        "every interface in one subnet needs the MTU the subnet carries; "
                        "linkdeck finds out which with don't-fragment pings between the two hosts "
                        f"with the largest MTUs{probe}, and until then does not say which side is wrong",
                    ),
                )
            continue
        carries, by_path = _carried(found.largest, pair)
        a, b = found.between
        evidence = (
            f"largest packet through with don't-fragment between {a} and {b}: "
            f"{found.largest} bytes; MTUs in {net}: {listed}"
        )
        for mtu in sorted({p.iface.mtu for p in members if p.iface.mtu is not None} - {carries}):
            wrong = [p for p in members if p.iface.mtu == mtu]
            one = len(wrong) == 1
            them, drop, lose = ("it", "drops", "loses") if one else ("them", "drop", "lose")
            if mtu > carries:
                others = "the switch" if by_path else "the others and the switch"
                hint = (
                    f"the subnet carries {carries}: {_hosts(wrong)} at {mtu} {lose} every large frame; "
                    f"set {them} to {carries} ({_mtu_command(wrong[0], carries)}) or raise {others} to {mtu}"
                )
            else:
                hint = (
                    f"the subnet carries {carries}: "
                    f"{_hosts(wrong)} at {mtu} {drop} every frame above {mtu} {'its' if one else 'their'} peers send; "
                    f"raise {them} to {carries} ({_mtu_command(wrong[0], carries)}) or lower the others to {mtu}"
                )
            for port in wrong:
                out.setdefault(
                    (port.host, port.iface.name),
                    Finding(
                        Code.MTU_MISMATCH,
                        Severity.ERROR,
                        port.host,
                        port.iface.name,
                        f"{port.iface.name} uses MTU {mtu} in {net}, which carries {carries}",
                        evidence,
                        hint,
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
    same whoever else is watched, and never removes either of those."""
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
        severity, why = Severity.ERROR, " with different MTUs: replies leave by whichever route wins"
    elif stacked:
        # VNICs over one aggr or macvlans over one port share the wire on purpose.
        severity, why = Severity.INFO, f", all stacked on {_root(mine[0], by_name)}"
    else:
        severity, why = Severity.WARNING, ": traffic may enter on one and leave by the other"
    kept = sorted((p for p in mine if _carries(p)), key=lambda p: not p.session)  # the session first
    spare = [p for p in mine if not _carries(p)]
    kept_words = ", ".join(
        f"{p.iface.name} carries {_carries(p)}" if i == 0 else f"{p.iface.name} {_carries(p)}"
        for i, p in enumerate(kept)
    )
    if kept and spare:
        focus: str | None = spare[0].iface.name if len(spare) == 1 else None
        why_keep = f"it carries {_carries(kept[0])}" if len(kept) == 1 else kept_words
        hint = (
            f"keep one interface per subnet: unplug or unaddress {_names(spare)}, or move "
            f"{'it' if len(spare) == 1 else 'them'} to another subnet; keep {_names(kept)}: {why_keep}"
        )
    elif kept:  # each one carries something: removing any cuts linkdeck off or the way out
        focus = None
        hint = (
            "keep one interface per subnet, but remove none of these from here: "
            f"{kept_words}; move one to another subnet from a console"
        )
    else:
        focus = None
        neither = "neither" if len(mine) == 2 else "none"
        where = (
            f"linkdeck reaches {host} at {mine[0].reached_at}, on {neither} of them"
            if mine[0].reached_at
            else f"linkdeck does not know which address it reaches {host} by"
        )
        hint = (
            f"keep one interface per subnet: unaddress {_names(mine, 'or')}, whichever {host} should not use, "
            f"or move it to another subnet; {neither} carries the default route, and {where}"
        )
    return Finding(
        code=Code.TWO_IFACES_ONE_SUBNET,
        severity=severity,
        host=host,
        interface=focus,
        message=f"{host} has {len(mine)} interfaces in {net}{why}",
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
    ways = ", ".join(
        f"{arrow(x, y)} {v} bytes" for x, y, v in ((a, b, path.forward), (b, a, path.reverse)) if v is not None
    )
    return Cause(
        Code.PATH_MTU,
        f"the path carries {least}-byte packets; {ends}: frames above {least} are dropped between them",
        "largest packet through with don't-fragment (each end's ping, or iperf3's UDP without one): "
        f"{ways}; {a} {a_if or '?'} MTU {a_mtu}, {b} {b_if or '?'} MTU {b_mtu}; "
        f"set both ends' MTU to {least} or raise every hop between them to {min(a_mtu, b_mtu)}",
    )


def _now_mtu(
    latest: Mapping[str, HostUpdate], host: str, name: str | None, then: int | None
) -> tuple[Port | None, int | None]:
    """An end's interface as its host reports it now, and its MTU (the one the probe went up
    to while the host reports none)."""
    update = latest.get(host)
    found = (
        next((v.iface for v in update.interfaces if v.iface.name == name), None)
        if update is not None and name
        else None
    )
    port = Port(host, update.os, found) if update is not None and found is not None else None
    return port, (found.mtu if found is not None and found.mtu is not None else then)


def path_mtu_measured(paths: Iterable[MeasuredPath], latest: Mapping[str, HostUpdate]) -> list[Finding]:
    """PATH_MTU on both ends of each probed path that carried less than both ends' MTU: what a
    test, ``u``, ``d`` or a subnet's probe proved, until a later probe between the same ends
    says otherwise or the ends' MTUs come down to it. Read from the two ends alone, whoever
    else is watched; the newest probe speaks for an interface probed toward several peers."""
    out: dict[tuple[str, str | None], Finding] = {}
    for m in sorted(paths, key=lambda m: -m.at):
        least = m.largest
        (a_port, a_mtu), (b_port, b_mtu) = (
            _now_mtu(latest, m.src, m.src_iface, m.src_mtu),
            _now_mtu(latest, m.dst, m.dst_iface, m.dst_mtu),
        )
        if least is None or a_mtu is None or b_mtu is None or least >= min(a_mtu, b_mtu):
            continue
        a, b = m.src, m.dst
        ends = f"both ends use {a_mtu}" if a_mtu == b_mtu else f"{a} uses {a_mtu}, {b} {b_mtu}"
        ways = ", ".join(
            f"{arrow(x, y)} {v} bytes" for x, y, v in ((a, b, m.path.forward), (b, a, m.path.reverse)) if v is not None
        )
        when = time.strftime("%H:%M:%S", time.localtime(m.at))
        evidence = (
            f"largest packet through with don't-fragment to {m.address}: {ways}; {a} {m.src_iface or '?'} MTU {a_mtu}, "
            f"{b} {m.dst_iface or '?'} MTU {b_mtu}; measured at {when}"
        )
        port = a_port or b_port
        set_it = f" ({_mtu_command(port, least)})" if port is not None and port.family else ""
        hint = f"set both ends' MTU to {least}{set_it} or raise every hop between {a} and {b} to {min(a_mtu, b_mtu)}"
        message = f"the path between {a} and {b} carries {least}-byte packets; {ends}"
        for host, name in ((a, m.src_iface), (b, m.dst_iface)):
            out.setdefault((host, name), Finding(Code.PATH_MTU, Severity.ERROR, host, name, message, evidence, hint))
    return list(out.values())


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
        Code.PATH_MTU_SUSPECTED,
        "a path MTU problem is suspected: "
        f"the test connected, then {' and '.join(stalled)} moved next to nothing while {ends}",
        "; ".join(f"{way} {rate(bps)}" for way, bps in moved.items() if bps is not None)
        + f" over {seconds(result.duration_s)}; {src.host} {src.iface.name} MTU {a}, "
        f"{dst.host} {dst.iface.name} MTU {b}; the path MTU was not probed{why}: a hop that carries less than "
        "both ends' MTU drops their full-size frames without a word, so the connection opens and then stalls",
    )


def path_mtu_blackhole(updates: Iterable[HostUpdate]) -> list[Finding]:
    """A host that logged us in and then never answered a request of kilobytes (the stream
    that carries its sampler):
    packets near a path MTU vanish between here and there (a host with two NICs in one
    subnet at 1500 and 9000: the peer may send to the wrong one). Host level, from the
    collector's state, since no interface of that host has been read."""
    out = []
    for u in updates:
        size = u.detail.blackhole_request_bytes
        if size is None:
            continue
        now = (
            "; since then linkdeck sends its requests in pieces under 512 bytes, and the host answers those"
            if u.state == HostState.LIVE
            else ""
        )
        out.append(
            Finding(
                code=Code.PATH_MTU_BLACKHOLE,
                severity=Severity.ERROR,
                host=u.host,
                interface=None,
                message=f"a path MTU black hole between here and {u.host}?",
                evidence=(
                    "the SSH handshake and login succeeded, "
                    f"then a {size}-byte request (starting the sampler) got no answer{now}"
                ),
                hint=(
                    f"find where big packets stop: `ping -M do -s 1472 {u.host}` from here (-D on the BSDs); "
                    "look for two interfaces of one host in one subnet with different MTUs, "
                    "or a hop that carries less than the ends' MTU"
                ),
            )
        )
    return out
