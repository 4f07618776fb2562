"""Each direction alone, after a bidirectional test that fell short without a named cause.

iperf3 --bidir can be far slower than each direction run alone (esnet/iperf#1836: two
pfSense boxes, 3.7 Gb/s each way alone, "dead slow" together): the ends, not the path, then
cannot carry both at once. So a degraded or bad --bidir result whose causes only describe
the shortfall (a plateau, one direction below the other) re-runs each direction alone for a
short while, and the verdict says which it was: "the ends cannot do both at once; the path is
fine", or "alone also slow: the path".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping

from ..core.codes import Code
from ..core.levels import OK_PCT, Status
from ..core.model import Cause, TestResult, Verdict
from ..core.units import arrow, rate, seconds
from ..verdict.goodput import pct_of
from .iperf import End, Phase, run_test

ALONE_S = 2  # seconds per direction alone: a check, not a second test
# Causes that say how a test fell short, not why: they leave the question open.
_SHAPE_ONLY = frozenset({Code.BOTTLENECK, Code.ASYMMETRY})


def needs_alone(r: TestResult, v: Verdict) -> bool:
    """A --bidir run (both directions at once) between two hosts, degraded or bad, with no
    cause named beyond its shape."""
    together = isinstance(r.raw_end, Mapping) and "sum_sent_bidir_reverse" in r.raw_end
    return (
        together and r.src != r.dst and r.error is None and v.expected_bps is not None and not v.conditions
        and v.status in (Status.DEGRADED, Status.BAD) and all(c.code in _SHAPE_ONLY for c in v.causes)
    )  # fmt: skip


async def run_alone(
    src: End,
    dst: End,
    address: str,
    port: int,
    streams: int,
    on_phase: Phase | None = None,
    on_port: Callable[[int], None] | None = None,
) -> dict[str, float | None]:
    """src → dst alone, then dst → src alone (iperf3 -R), ALONE_S each."""
    out: dict[str, float | None] = {"duration_s": float(ALONE_S)}
    for direction in ("forward", "reverse"):
        if on_phase is not None:
            on_phase(f"{direction} alone")
        one = await run_test(src, dst, address, ALONE_S, port, streams=streams, only=direction, on_port=on_port)
        out[f"{direction}_bps"] = one.forward_bps if direction == "forward" else one.reverse_bps
    return out


def with_alone(r: TestResult, v: Verdict) -> Verdict:
    """The verdict with what each direction alone showed as its first cause."""
    alone = r.alone or {}
    fwd, rev = alone.get("forward_bps"), alone.get("reverse_bps")
    if fwd is None or rev is None or r.forward_bps is None or r.reverse_bps is None:
        return v
    figures = (
        f"alone {rate(fwd)} / {rate(rev)}, together {rate(r.forward_bps)} / {rate(r.reverse_bps)} "
        f"({arrow(r.src, r.dst)} / {arrow(r.dst, r.src)}; each alone for {seconds(alone.get('duration_s'))})"
    )
    slow = [
        d
        for d, bps in ((arrow(r.src, r.dst), fwd), (arrow(r.dst, r.src), rev))
        if (pct_of(bps, v.expected_bps) or 0) < OK_PCT
    ]
    if not slow:
        cause = Cause(Code.BIDIR_ONLY, "the ends cannot do both directions at once; the path is fine", figures)
        return replace(v, causes=(cause, *v.causes), summary=cause.message)
    # the summary already says how the path falls short (a plateau, a broken direction): kept,
    # and its cause stays first; each direction alone is what comes with it
    cause = Cause(Code.ALONE_ALSO_SLOW, f"alone also slow ({', '.join(slow)}): the path", figures)
    return replace(v, causes=(*v.causes[:1], cause, *v.causes[1:]), summary=f"{v.summary}; {cause.message}")
