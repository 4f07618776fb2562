"""Verdicts about one host rather than one path (pure): its ceiling against its own fastest
link (seed 002).

A path's own verdict is ``verdict.judge``; these reuse its figures (goodput per bit on the
wire) so a link's expected rate is worked out in one place.
"""

from __future__ import annotations

from ..findings.common import speed_text
from ..model import Cause, EndState, Interface, TestResult, Verdict
from ..units import rate
from ..verdict import DEFAULT_MTU, cpu_pair, goodput_factor, judge


def judge_ceiling(result: TestResult, links: tuple[Interface, ...]) -> Verdict:
    """Can this host fill its fastest link? A loopback test is CPU-bound by definition, so
    its CPU is no cause; its figure against that link's TCP goodput is. ``links`` are the
    host's interfaces; without a known speed the verdict is the figure alone."""
    bps = result.forward_bps
    if result.error or bps is None:
        return judge(result, EndState(result.src), EndState(result.dst))
    known = [i for i in links if i.speed_mbps and i.kind != "loopback" and i.oper != "down"]
    if not known:
        return Verdict("ok", None, None, summary=f"ceiling {rate(bps)} over loopback; link speeds unknown")
    fastest = max(known, key=lambda i: i.speed_mbps)
    speed = speed_text(fastest.speed_mbps)
    mtu = fastest.mtu or DEFAULT_MTU
    expected = fastest.speed_mbps * 1e6 * goodput_factor(mtu)
    if bps >= expected:
        times = _times(bps / (fastest.speed_mbps * 1e6))
        return Verdict("ok", expected, None, summary=f"ceiling {rate(bps)}, {times} its fastest link ({speed}): the host is not the limit")
    cause = Cause(
        "CEILING_LOW",
        f"this host cannot fill its {speed} link: {rate(bps)} over loopback",
        f"{result.src} {fastest.name} ({speed}, MTU {mtu}) carries {rate(expected)} of TCP; "
        f"iperf3 over loopback moved {rate(bps)} using {cpu_pair(result)} CPU (sender / receiver)",
    )
    return Verdict("bad", expected, 100.0 * bps / expected, (cause,), cause.message)


def _times(x: float) -> str:
    return f"{x:.0f}×" if x >= 10 else f"{x:.1f}×"
