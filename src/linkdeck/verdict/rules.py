"""Test result + both ends' state → verdict (pure).

The expected figure is what TCP can carry on a clean path: the slower end's negotiated speed
times the share of each frame on the wire that is payload. A cause is named only when the
evidence supports it, with the numbers; without link speeds there is no expected figure and
the verdict says what was measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.codes import Code
from ..core.levels import BAD_PCT, OK_PCT, Status
from ..core.model import Cause, EndState, Interface, TestResult, Verdict
from ..core.units import arrow, link_speed, percent, rate, seconds, size_bytes
from ..findings.helpers import networks
from ..findings.mtu import path_mtu_cause, suspected_path_mtu
from .goodput import (
    DEFAULT_MTU,
    ETHERNET_HEADER,
    HEADERS_IPV4,
    HEADERS_IPV6,
    cpu_ceiling,
    cpu_help,
    cpu_pair,
    expected_bps,
    looks_like,
    pct_of,
    single_threaded,
)
from .shared_path import crossings, framing

ASYMMETRY_RATIO = 0.70
# Without a link speed the two directions of a --bidir run share the ends' CPUs, much of it in
# the kernel where iperf3's CPU figure does not see it: only a wider split is the path's.
ASYMMETRY_RATIO_NO_SPEED = 0.50
# Retransmitted share of segments worth naming: slow pairs in the field ran 0.07 %, clean
# 10G pairs 0.01 % or less. And at least this many, so a handful in a short test is no cause.
RETRANSMIT_PCT = 0.05
RETRANSMIT_MIN = 10
# iperf3 host_total / remote_total (% of one core) at which an end counts as CPU-bound.
CPU_BOUND_PCT = 90.0
# Without a link speed to compare with, both ends' iperf3 this busy (of CPU_BOUND_PCT's
# ceiling) say the hosts set the rate: a clean veth pair on two busy cores runs 70 % each.
CPU_BUSY_PCT = 50.0
# Retransmits the ends' CPUs explain: a receiver out of CPU drops a few segments at its
# socket (0.1-0.2 % on the lab's clean unshaped pairs). Above this share the path drops them.
RETRANSMIT_CPU_PCT = 0.5
# A broken direction, with or without an expected figure: one that carried less than this
# share of the other direction (or of what the same hosts just did over another address), or
# that retransmitted this share of the segments it sent (the lab's black-holed direction: 23.2
# kb/s against 958 Mb/s the other way, 93-100 % of its segments sent again).
BROKEN_RATIO = 0.10
BROKEN_RETRANSMIT_PCT = 20.0

# The order causes are listed (and the first one makes the summary): a path that drops the
# ends' frames, the link itself, its configuration, the ends, then what is left on the path.
_ORDER = (
    Code.PATH_MTU,
    Code.PATH_MTU_SUSPECTED,
    Code.SPEED_WRONG,
    Code.SPEED_SUSPECT,
    Code.SPEED_LOW,
    Code.MTU_MISMATCH,
    Code.ERRORS,
    Code.DROPS,
    Code.SENDER_CPU,
    Code.RECEIVER_CPU,
    Code.BOTTLENECK,
    Code.RETRANSMITS,
    Code.ASYMMETRY,
)
# Causes that are a fault even when the throughput looks fine.
_FAULTS = (Code.PATH_MTU, Code.MTU_MISMATCH, Code.ERRORS, Code.DROPS)
# Causes that, without an expected figure, still leave the path ok: the speed figure linkdeck
# was given is wrong, or the hosts' CPUs set the rate.
_NOT_THE_PATH = (Code.SPEED_WRONG, Code.SPEED_SUSPECT, Code.SENDER_CPU, Code.RECEIVER_CPU)
# What a path that drops big frames explains by itself: not named beside it.
_PATH_MTU_EXPLAINS = (Code.DROPS, Code.BOTTLENECK, Code.RETRANSMITS, Code.ASYMMETRY)


# Above this share of what the slower link lets through counted in frames (no preamble, no
# gap: what a shaper or an interface's counters count) the speed figure it came from is
# suspect. Up to there a shaper set to the link's speed, or a short test's edges, explain it.
SUSPECT_MARGIN = 1.01


@dataclass(frozen=True, slots=True)
class _Link:
    """An end whose interface reports its speed."""

    host: str
    iface: Interface
    speed: int  # Mb/s


def _link(end: EndState) -> _Link | None:
    return _Link(end.host, end.iface, end.iface.speed_mbps) if end.iface is not None and end.iface.speed_mbps else None


class _Judge:
    """One verdict's worth of working state; ``causes()`` collects what the evidence supports."""

    def __init__(self, result: TestResult, src: EndState, dst: EndState) -> None:
        self.r, self.src, self.dst = result, src, dst
        self.ipv6 = ":" in result.address
        self.dirs = {
            name: bps
            for name, bps in (("forward", result.forward_bps), ("reverse", result.reverse_bps))
            if bps is not None
        }
        # An end that reports less than the test carried has a wrong speed figure: no
        # expected figure (and no percentage above 100) comes from it.
        best = max(self.dirs.values(), default=0.0)
        self.links = (_link(src), _link(dst))
        self.overstated = [link for link in self.links if link is not None and best > link.speed * 1e6]
        self.expected = None if self.overstated else expected_bps(src.iface, dst.iface, self.ipv6)
        # Beside other traffic iperf3 measured its share of the path, not the path: no share
        # of the expected figure is read from it; the path is judged on what it carried in all.
        self.shared = crossings(result, src, dst)
        self.totals = dict(self.dirs)
        for crossing in self.shared:
            self.totals[crossing.direction] = crossing.total_bps / framing(result, src, dst)
        self.pcts = {name: None if self.shared else pct_of(bps, self.expected) for name, bps in self.dirs.items()}
        self.causes: list[Cause] = []
        self.speed_fault = False

    def label(self, direction: str) -> str:
        return arrow(self.r.src, self.r.dst) if direction == "forward" else arrow(self.r.dst, self.r.src)

    def short(self, direction: str) -> str:
        return f"{self.label(direction)} {rate(self.dirs[direction])}" + (
            f" ({percent(self.pcts[direction])} of expected)" if self.pcts[direction] is not None else ""
        )

    def measured(self) -> str:
        return ", ".join(self.short(d) for d in self.dirs)

    def underperforming(self) -> list[str]:
        """Directions below OK, or every direction when there is no expected figure."""
        return [d for d, p in self.pcts.items() if p is None or p < OK_PCT]

    def add(self, code: Code, message: str, evidence: str) -> None:
        self.causes.append(Cause(code, message, evidence))

    # --- the causes -------------------------------------------------------------------

    def speed(self) -> None:
        most = expected_bps(self.src.iface, self.dst.iface, self.ipv6, overhead=ETHERNET_HEADER)
        above = [
            d
            for d, p in self.pcts.items()
            if p is not None and most is not None and self.dirs[d] > SUSPECT_MARGIN * most
        ]
        if above:
            ends = ", ".join(
                f"{e.host} {e.iface.name} {link_speed(e.iface.speed_mbps, words=True)}"
                for e in (self.src, self.dst)
                if e.iface
            )
            self.add(
                Code.SPEED_SUSPECT,
                "measured above what a clean path at these link speeds carries: "
                "the configured or reported speed is suspect",
                f"{', '.join(self.short(d) for d in above)}; expected {rate(self.expected)} from {ends}, "
                f"at most {rate(most)} even counted without the wire's gaps; check `[speed]` or the driver",
            )
        for end in self.overstated:
            self.add(
                Code.SPEED_WRONG,
                f"measured above the {link_speed(end.speed, words=True)} {end.host} {end.iface.name} reports: "
                "the speed figure is wrong; check `[speed]` or the driver",
                f"{end.host} {end.iface.name}: speed {link_speed(end.speed, words=True)}; measured {self.measured()}",
            )
        linked = [(link, role) for link, role in zip(self.links, ("sender", "peer")) if link is not None]
        for end, role in linked:
            iface = end.iface
            duplex = " half duplex" if iface.duplex == "half" else ""
            top = max(iface.supported_speeds_mbps, default=0)
            if end.speed < top or duplex:
                self.speed_fault = True
                self.add(
                    Code.SPEED_LOW,
                    f"{role} negotiated {link_speed(end.speed, words=True)}{duplex}"
                    + (f" of {link_speed(top, words=True)}" if top > end.speed else ""),
                    f"{end.host} {iface.name}: speed {link_speed(end.speed, words=True)}{duplex}"
                    + (
                        ", supports "
                        f"{', '.join(link_speed(s, words=True) for s in sorted(iface.supported_speeds_mbps))}"
                        if top
                        else ""
                    ),
                )
        if len(linked) == 2 and not self.speed_fault:
            (a, ra), (b, rb) = linked
            slow, role, fast = (a, ra, b) if a.speed < b.speed else (b, rb, a)
            best = max(self.dirs.values(), default=0.0)
            # The slower link explains the result only when the test actually reached it.
            if slow.speed < fast.speed and self.expected and best >= self.expected * BAD_PCT / 100:
                self.add(
                    Code.SPEED_LOW,
                    f"{role} negotiated {link_speed(slow.speed, words=True)}",
                    f"{slow.host} {slow.iface.name} {link_speed(slow.speed, words=True)} vs {fast.host} "
                    f"{fast.iface.name} {link_speed(fast.speed, words=True)}; measured {self.measured()}",
                )

    def mtu(self) -> None:
        a, b = self.src.iface, self.dst.iface
        if a is None or b is None or not a.mtu or not b.mtu or a.mtu == b.mtu:
            return
        na, nb = set(networks(a)), set(networks(b))
        shared = na & nb
        if na and nb and not shared:
            return  # a routed path: the router fragments or sends "too big"; nothing wrong
        where = f" in one subnet ({sorted(shared, key=str)[0]})" if shared else ""
        self.add(
            Code.MTU_MISMATCH,
            f"MTU {max(a.mtu, b.mtu)} vs {min(a.mtu, b.mtu)}" + (" in one subnet" if shared else " on the two ends"),
            f"{self.src.host} {a.name} MTU {a.mtu}, {self.dst.host} {b.name} MTU {b.mtu}{where}; "
            "frames above the smaller MTU are dropped inside one subnet",
        )

    def counters(self) -> None:
        secs = seconds(self.r.duration_s)
        for end in (self.src, self.dst):
            name = end.iface.name if end.iface else "its interface"
            if end.errors_during:
                self.add(
                    Code.ERRORS,
                    f"errors rising on {end.host}",
                    f"{end.host} {name}: {end.errors_during} errors during the {secs} test",
                )
        retransmitted = any((self.r.forward_retransmits or 0, self.r.reverse_retransmits or 0))
        for end in (self.src, self.dst):
            if not end.drops_during or not (retransmitted or self.underperforming()):
                continue
            iface = end.iface
            ring = (
                f"; RX ring {iface.ring_rx} of {iface.ring_rx_max}"
                if iface and iface.ring_rx and iface.ring_rx_max
                else ""
            )
            name = iface.name if iface else "its interface"
            self.add(
                Code.DROPS,
                f"drops rising on {end.host}",
                f"{end.host} {name}: {end.drops_during} drops during the {secs} test{ring}",
            )

    def cpu(self) -> None:
        slow = self.underperforming()
        if not slow:
            return
        for code, role, host, pct, own in (
            (Code.SENDER_CPU, "sender", self.r.src, self.r.cpu_src_pct, self.r.src_iperf3),
            (Code.RECEIVER_CPU, "receiver", self.r.dst, self.r.cpu_dst_pct, self.r.dst_iperf3),
        ):
            single = single_threaded(self.r, own)
            ceiling = cpu_ceiling(self.r, single, CPU_BOUND_PCT)
            if pct is None or pct < ceiling:
                continue
            threads = "single-threaded iperf3" if single else "multi-threaded iperf3"
            label = own or self.r.iperf3_version
            version = f" {label}" if label else ""
            self.add(
                code,
                f"{role} CPU-bound",
                f"iperf3 on {host}: CPU {role} {percent(pct)} ({threads}{version}: {percent(ceiling)} is its "
                f"ceiling here); measured {', '.join(self.short(d) for d in slow)}; {cpu_help(self.r, single)}",
            )

    def bottleneck(self) -> None:
        if self.expected is None:
            return
        if self.shared:
            self._shared_bottleneck()
            return
        low = [d for d, p in self.pcts.items() if p is not None and p < BAD_PCT]
        if any(c.code in (Code.SENDER_CPU, Code.RECEIVER_CPU) for c in self.causes):
            # A CPU-bound iperf3 slows both directions alike; a direction far below the other
            # one (a shaper on one leg) is no CPU's doing.
            best = max(self.dirs.values())
            low = [d for d in low if self.dirs[d] < ASYMMETRY_RATIO * best]
        if not low:
            return
        # The plateau is the slowest direction (and any other close to it): a shaped leg at
        # 95 Mb/s next to a 4 Gb/s one is a bottleneck near 95 Mb/s, not near 2 Gb/s.
        floor = min(self.dirs[d] for d in low)
        low = [d for d in low if self.dirs[d] * ASYMMETRY_RATIO <= floor]
        near = sum(self.dirs[d] for d in low) / len(low)
        speeds = {link.speed for link in self.links if link is not None}  # both, with an expected figure
        links = f"both {link_speed(speeds.pop(), words=True)} links" if len(speeds) == 1 else "both links"
        where = "" if len(low) == len(self.dirs) else f" {self.label(low[0])}"
        looks = looks_like(near, self.ipv6)
        self.add(
            Code.BOTTLENECK,
            f"a bottleneck near {rate(near)}{where} below {links}",
            f"measured {self.measured()}; expected {rate(self.expected)}; "
            f"retransmits {self._retransmit_text()}; CPU {self._cpu_text()}{looks}",
        )

    def _shared_bottleneck(self) -> None:
        """The plateau of a shared path: what it carried in all, iperf3's and the rest."""
        assert self.expected is not None
        first = self.shared[0]
        total = self.totals[first.direction]
        if total >= self.expected * OK_PCT / 100:
            return
        speeds = {link.speed for link in self.links if link is not None}
        links = f"both {link_speed(speeds.pop(), words=True)} links" if len(speeds) == 1 else "both links"
        # the figure the evidence gives ("the path carried … in all"), in frames as counted
        self.add(
            Code.BOTTLENECK,
            f"a bottleneck near {rate(first.total_bps)} in all below {links}",
            f"{first.in_all()}; expected {rate(self.expected)}",
        )

    def retransmits(self) -> None:
        if self.shared:  # the other traffic on the path explains them: evidence, not a cause
            return
        slow = self.underperforming()
        for direction, count in (("forward", self.r.forward_retransmits), ("reverse", self.r.reverse_retransmits)):
            if not count or direction not in self.dirs or direction not in slow or count < RETRANSMIT_MIN:
                continue
            nbytes = self.dirs[direction] * self.r.duration_s / 8
            share = self._retransmit_pct(direction, count)
            # Without an expected figure nothing says the test was slow: a share the ends' own
            # sockets and CPUs produce on a clean path is no cause.
            quiet = self._cpu_explains() or self.expected is None
            if share is None or share < RETRANSMIT_PCT or (share < RETRANSMIT_CPU_PCT and quiet):
                continue
            self.add(
                Code.RETRANSMITS,
                f"retransmits {self.label(direction)}: {percent(share)} of segments",
                f"{count} retransmits while {size_bytes(round(nbytes))} arrived "
                f"({percent(share)} of the segments sent) {self.short(direction)}",
            )

    def _cpu_explains(self) -> bool:
        """The ends' CPUs, not the path, set the rate: an end is CPU-bound, or (with no link
        speed to compare with) both ends' iperf3 are busy."""
        if any(c.code in (Code.SENDER_CPU, Code.RECEIVER_CPU) for c in self.causes):
            return True
        ends = ((self.r.cpu_src_pct, self.r.src_iperf3), (self.r.cpu_dst_pct, self.r.dst_iperf3))
        busy = [cpu_ceiling(self.r, single_threaded(self.r, own), CPU_BUSY_PCT) for _, own in ends]
        return self.expected is None and all(p is not None and p >= b for (p, _), b in zip(ends, busy))

    def _mss(self) -> int:
        mtus = [e.iface.mtu for e in (self.src, self.dst) if e.iface and e.iface.mtu]
        return min(mtus, default=DEFAULT_MTU) - (HEADERS_IPV6 if self.ipv6 else HEADERS_IPV4)

    def _retransmit_pct(self, direction: str, count: int) -> float | None:
        """Retransmitted share of the segments sent: the ones that arrived (goodput over the
        MSS) plus the ones sent again, so a direction that moved next to nothing reads 97 %,
        not 1500 %."""
        sent = self.dirs[direction] * self.r.duration_s / 8 / self._mss() + count
        return 100.0 * count / sent if sent > 0 else None

    def _retransmit_text(self) -> str:
        parts = []
        for direction, count in (("forward", self.r.forward_retransmits), ("reverse", self.r.reverse_retransmits)):
            if count is not None and direction in self.dirs:
                share = self._retransmit_pct(direction, count)
                parts.append(f"{count}" + (f" ({percent(share)})" if share is not None else ""))
        return " / ".join(parts) or "unknown"

    def _cpu_text(self) -> str:
        return cpu_pair(self.r)

    def asymmetry(self) -> None:
        # With no link speed and the ends' CPUs setting the rate, a --bidir test's two
        # directions share those CPUs: how they split them is the scheduler's, not the path's.
        if len(self.dirs) < 2 or self.shared or (self.expected is None and self._cpu_explains()):
            return
        fwd, rev = self.dirs["forward"], self.dirs["reverse"]
        hi = max(fwd, rev)
        ratio = ASYMMETRY_RATIO if self.expected is not None else ASYMMETRY_RATIO_NO_SPEED
        if hi <= 0 or min(fwd, rev) >= ratio * hi:
            return
        slow, fast = ("forward", "reverse") if fwd < rev else ("reverse", "forward")
        self.add(
            Code.ASYMMETRY,
            f"{self.label(slow)} is {percent(100 * self.dirs[slow] / hi)} of {self.label(fast)}",
            f"{self.short(slow)} vs {self.short(fast)}",
        )

    def verdict(self) -> Verdict:
        cause = path_mtu_cause(self.r.path_mtu, self.src, self.dst) or suspected_path_mtu(self.r, self.src, self.dst)
        if cause is not None:
            self.causes.append(cause)
        self.speed()
        self.mtu()
        self.counters()
        self.cpu()
        self.bottleneck()
        self.retransmits()
        self.asymmetry()
        if cause is not None:
            self.causes = [c for c in self.causes if c.code not in _PATH_MTU_EXPLAINS]
        causes = tuple(sorted(self.causes, key=lambda c: _ORDER.index(c.code)))
        known = [p for p in self.pcts.values() if p is not None]
        pct = min(known) if known else None
        in_all = (
            [p for p in (pct_of(bps, self.expected) for bps in self.totals.values()) if p is not None]
            if self.shared
            else []
        )
        if in_all:
            status = Status.of_pct(min(in_all))
        elif pct is None:
            status = Status.DEGRADED if any(c.code not in _NOT_THE_PATH for c in causes) else Status.OK
        else:
            status = Status.of_pct(pct)
        if status is Status.OK and (self.speed_fault or any(c.code in _FAULTS for c in causes)):
            status = Status.DEGRADED
        summary = self.summary(causes)
        if any(c.code in (Code.PATH_MTU, Code.PATH_MTU_SUSPECTED) for c in causes):
            status = Status.BAD  # the ends' full-size frames do not arrive: a broken path, whatever got through
        elif (broken := self.broken()) is not None:
            status, summary = Status.BAD, broken
        conditions = self.conditions()
        if conditions:
            # a bottleneck in all is the figure the summary already gives
            summary = "; ".join(
                [
                    conditions[0].message,
                    self._in_all(),
                    *([summary] if causes and causes[0].code != Code.BOTTLENECK else []),
                ]
            )
        return Verdict(
            status=status,
            expected_bps=self.expected,
            pct_of_expected=pct,
            causes=causes,
            summary=summary,
            conditions=conditions,
        )

    def _in_all(self) -> str:
        return self.shared[0].in_all()

    def conditions(self) -> tuple[Cause, ...]:
        """What kept the test from measuring the path alone, said before any cause."""
        return tuple(
            Cause(
                Code.SHARED_PATH,
                crossing.words(),
                f"{self.label(crossing.direction)}: {crossing.in_all()}; retransmits {self._retransmit_text()}; "
                "no share of the expected figure, asymmetry or each-alone check is concluded from a shared path: "
                "test again when the other traffic has ended",
            )
            for crossing in self.shared
        )

    def broken(self) -> str | None:
        """Why a direction is broken, in one line, or None: it retransmitted a fifth of what it
        sent, or (without an expected figure to fall below) carried under a tenth of the other
        direction. A missing speed figure excuses neither."""
        for d in self.dirs:
            count = self.r.forward_retransmits if d == "forward" else self.r.reverse_retransmits
            share = self._retransmit_pct(d, count) if count and count >= RETRANSMIT_MIN else None
            other = [o for o in self.dirs if o != d]
            starved = (
                self.expected is None
                and not self.shared
                and other
                and self.dirs[d] < BROKEN_RATIO * self.dirs[other[0]]
            )
            if starved or (share is not None and share >= BROKEN_RETRANSMIT_PCT):
                against = f" against {rate(self.dirs[other[0]])} {self.label(other[0])}" if other else ""
                resent = f", {percent(share)} of its segments sent again" if share is not None else ""
                return f"{self.label(d)} is broken: {rate(self.dirs[d])}{against}{resent}"
        return None

    def summary(self, causes: tuple[Cause, ...]) -> str:
        if causes:
            return causes[0].message
        if self.shared:  # the conditions make the summary
            return ""
        if self.expected is not None:
            line = link_speed(min(link.speed for link in self.links if link is not None), words=True)
            return (
                f"{percent(min(p for p in self.pcts.values() if p is not None))} "
                f"of the {rate(self.expected)} a clean {line} path carries"
            )
        cpu = f"; iperf3 CPU {self._cpu_text()}: the hosts, not the path, set this rate" if self._cpu_explains() else ""
        return f"measured {self.measured()}{cpu}; link speeds unknown, so no expected figure"


def judge(result: TestResult, src: EndState, dst: EndState) -> Verdict:
    """The verdict on one bidirectional test between ``src`` (iperf3 client) and ``dst``."""
    if result.error:
        # A test that failed on a path dropping big frames (a stalled transfer, a timeout)
        # failed because of it: say so first.
        cause = path_mtu_cause(result.path_mtu, src, dst)
        if cause is not None:
            return Verdict(
                status=Status.ERROR,
                expected_bps=None,
                pct_of_expected=None,
                causes=(cause,),
                summary=f"{cause.message} (test failed: {result.error})",
            )
        return Verdict(
            status=Status.ERROR, expected_bps=None, pct_of_expected=None, summary=f"test failed: {result.error}"
        )
    if result.forward_bps is None and result.reverse_bps is None:
        return Verdict(
            status=Status.ERROR, expected_bps=None, pct_of_expected=None, summary="iperf3 reported no throughput"
        )
    return _Judge(result, src, dst).verdict()
