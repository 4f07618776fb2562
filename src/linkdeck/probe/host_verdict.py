"""Verdicts about one host rather than one path (pure): its ceiling against its own fastest
link, and its addresses tested one after another against each other.

A path's own verdict is ``verdict.judge``; these reuse its figures (goodput per bit on the
wire) so a link's expected rate is worked out in one place.
"""

from __future__ import annotations

import ipaddress

from ..core.codes import Code
from ..core.kinds import Kind, is_down
from ..core.levels import Status
from ..core.model import Cause, EndState, Interface, PathMtu, TestResult, Verdict
from ..core.units import arrow, link_speed, percent, rate, times
from ..findings.helpers import networks
from ..verdict.goodput import DEFAULT_MTU, cpu_pair, goodput_factor
from ..verdict.rules import BROKEN_RATIO, judge


def judge_ceiling(result: TestResult, links: tuple[Interface, ...]) -> Verdict:
    """Can this host fill its fastest link? A loopback test is CPU-bound by definition, so
    its CPU is no cause; its figure against that link's TCP goodput is. ``links`` are the
    host's interfaces; without a known speed the verdict is the figure alone."""
    bps = result.forward_bps
    if result.error or bps is None:
        return judge(result, EndState(result.src), EndState(result.dst))
    known = [(i.speed_mbps, i) for i in links if i.speed_mbps and i.kind != Kind.LOOPBACK and not is_down(i)]
    if not known:
        return Verdict(Status.OK, None, None, summary=f"ceiling {rate(bps)} over loopback; link speeds unknown")
    speed_mbps, fastest = max(known, key=lambda k: k[0])
    speed = link_speed(speed_mbps, words=True)
    mtu = fastest.mtu or DEFAULT_MTU
    expected = speed_mbps * 1e6 * goodput_factor(mtu)
    if bps >= expected:
        many = times(bps / (speed_mbps * 1e6))
        return Verdict(
            Status.OK,
            expected,
            None,
            summary=f"ceiling {rate(bps)}, {many} its fastest link ({speed}): the host is not the limit",
        )
    cause = Cause(
        Code.CEILING_LOW,
        f"this host cannot fill its {speed} link: {rate(bps)} over loopback",
        f"{result.src} {fastest.name} ({speed}, MTU {mtu}) carries {rate(expected)} of TCP; "
        f"iperf3 over loopback moved {rate(bps)}; CPU {cpu_pair(result)}",
    )
    return Verdict(Status.BAD, expected, 100.0 * bps / expected, (cause,), cause.message)


# One address below this share of the best address's figure (in either direction) is named.
PATH_DIFFERS_RATIO = 0.5
# Under a ten-thousandth of the best address's figure a ratio ("131169× slower") says less than the two rates do.
NEXT_TO_NOTHING = 0.0001

AddressTest = tuple[str, "str | None", TestResult]  # (address, the interface holding it, its test)


def compare_addresses(tested: list[AddressTest], links: tuple[Interface, ...]) -> tuple[Cause, ...]:
    """One host tested through each of its addresses in turn. An address far below
    the best one (under half, either direction) is a PATH_DIFFERS cause naming it, its
    interface and the ratio; when another interface of the host shares its subnet, replies may
    leave by that one (an asymmetric path). ``links`` are the host's interfaces."""
    done = [(addr, ifname or "?", r) for addr, ifname, r in tested if not r.error]
    # An address broken one way ran the other way alone (both directions at once share the
    # hosts' CPU): its figure there is no yardstick for the other addresses.
    broken = broken_beside(tested)
    best = {}  # direction → (bps, address, interface) of the fastest address
    for direction in ("forward", "reverse"):
        figures = [
            (getattr(r, f"{direction}_bps"), addr, ifname)
            for addr, ifname, r in done
            if getattr(r, f"{direction}_bps") is not None and (addr not in broken or _broken_way(r, direction))
        ]
        if len(figures) >= 2:
            best[direction] = max(figures, key=lambda f: f[0])
    causes = []
    for addr, ifname, r in done:
        slow = [
            (getattr(r, f"{d}_bps") / top[0], d, top)
            for d, top in best.items()
            if top[0] > 0
            and getattr(r, f"{d}_bps") is not None
            and getattr(r, f"{d}_bps") < PATH_DIFFERS_RATIO * top[0]
        ]
        if not slow:
            continue
        ratio, direction, (top, top_addr, top_if) = min(slow)
        label = {d: arrow(r.src, r.dst) if d == "forward" else arrow(r.dst, r.src) for d in best}
        way = "to" if direction == "forward" else "from"
        there = f"{way} {top_addr} ({top_if})"
        if ratio <= 0:
            slower = f"carried nothing, {rate(top)} {there}"
        elif ratio < NEXT_TO_NOTHING:
            slower = f"moved next to nothing ({rate(ratio * top)}) against {rate(top)} {there}"
        else:
            slower = f"is {times(1 / ratio)} slower than {there}"
        short = _short_path(r.path_mtu)
        # a path MTU measured through this very address explains it; replies leaving by another
        # interface is only what might
        others = () if short else _sharing_a_subnet(links, ifname, addr)
        message = f"{label[direction]} {way} {addr} ({ifname}) {slower}" + (
            f": its path carries {short[0]}-byte packets where {short[1]}-byte ones are sent"
            if short
            else f": replies may leave by {', '.join(others)} (asymmetric path)"
            if others
            else ""
        )
        evidence = "; ".join(
            f"{label[d]} {rate(getattr(r, f'{d}_bps'))} via {addr} ({ifname}) "
            f"vs {rate(t[0])} via {t[1]} ({t[2]}), {percent(100 * q)}"
            for q, d, t in sorted(slow, key=lambda x: x[1])
        )
        if others:
            evidence += (
                f"; {r.dst} has {', '.join(others)} in the subnet of {ifname}: "
                f"its replies to {r.src} may go out by another interface than the one they came in by"
            )
        causes.append(Cause(Code.PATH_DIFFERS, message, evidence))
    return tuple(causes)


def _short_path(p: PathMtu | None) -> tuple[int, int] | None:
    """(what got through, what was sent) for the first direction whose probed path carried
    less than the sending interface's MTU; None when the probe found none or did not run."""
    if p is None:
        return None
    for carried, mtu in ((p.forward, p.forward_mtu), (p.reverse, p.reverse_mtu)):
        if carried is not None and mtu is not None and carried < mtu:
            return carried, mtu
    return None


def _broken_way(r: TestResult, direction: str) -> bool:
    """Whether ``direction`` is the one that broke (the slower of the two)."""
    other = "reverse" if direction == "forward" else "forward"
    mine, theirs = getattr(r, f"{direction}_bps"), getattr(r, f"{other}_bps")
    return theirs is None or (mine is not None and mine <= theirs)


def broken_beside(tested: list[AddressTest]) -> dict[str, str]:
    """Address → why its test is broken, for a direction that carried under a tenth of what
    the same hosts just did the same way over another address: ``bad`` with or without a
    link speed to compare with."""
    done = [(addr, r) for addr, _, r in tested if not r.error]
    out: dict[str, str] = {}
    for addr, r in done:
        for d in ("forward", "reverse"):
            mine = getattr(r, f"{d}_bps")
            others = [(getattr(o, f"{d}_bps"), a) for a, o in done if a != addr and getattr(o, f"{d}_bps") is not None]
            if mine is None or not others:
                continue
            top, top_addr = max(others)
            if mine < BROKEN_RATIO * top and addr not in out:
                way = arrow(r.src, r.dst) if d == "forward" else arrow(r.dst, r.src)
                out[addr] = f"{way} is broken via {addr}: {rate(mine)} against {rate(top)} via {top_addr}"
    return out


def _sharing_a_subnet(links: tuple[Interface, ...], ifname: str | None, address: str) -> list[str]:
    """The host's other up interfaces with an address in the subnet ``address`` is in."""
    mine = next((i for i in links if i.name == ifname), None)
    nets = [n for n in networks(mine) if _holds(n, address)] if mine is not None else []
    return [i.name for i in links if i.name != ifname and not is_down(i) and any(n in nets for n in networks(i))]


def _holds(net, address: str) -> bool:
    try:
        return ipaddress.ip_address(address) in net
    except ValueError:
        return False
