"""What a clean path carries, and a test's figures against it (pure): TCP goodput per bit on
the wire, the expected figure of two interfaces, percentages of it, iperf3's CPU pair and
each end's CPU ceiling by its iperf3 version."""

from __future__ import annotations

from typing import Mapping

from ..core.model import Interface, TestResult, Verdict
from ..core.units import link_speed, percent

# Bytes on the wire around each frame's IP packet: preamble 8 + Ethernet header 14 + FCS 4 +
# inter-frame gap 12. And inside it, the IP + TCP headers with the timestamp option.
WIRE_OVERHEAD = 38
HEADERS_IPV4 = 52
HEADERS_IPV6 = 72
DEFAULT_MTU = 1500
ETHERNET_HEADER = 14  # what an interface's byte counters add to each IP packet (no preamble, no FCS)
# iperf3 3.16 runs each stream in its own thread; before, every stream shares one.
MULTITHREADED_SINCE = (3, 16)

# Speeds a hop commonly runs at, to say what a plateau looks like ("a 100 Mb/s hop").
COMMON_SPEEDS = (10, 100, 1000, 2500, 5000, 10_000, 25_000, 40_000, 100_000)


def goodput_factor(mtu: int, ipv6: bool = False, overhead: int = WIRE_OVERHEAD) -> float:
    """TCP payload per bit on the wire: 0.941 at MTU 1500, 0.990 at 9000 (IPv4, timestamps).
    With ``overhead=ETHERNET_HEADER``, per bit of frames as a shaper or a counter counts them."""
    headers = HEADERS_IPV6 if ipv6 else HEADERS_IPV4
    return (mtu - headers) / (mtu + overhead)


def expected_bps(
    src: Interface | None, dst: Interface | None, ipv6: bool = False, overhead: int = WIRE_OVERHEAD
) -> float | None:
    """TCP goodput of a clean path between these two interfaces, or None without both speeds.
    ``overhead=ETHERNET_HEADER`` gives the most any path at that speed lets through: a shaper
    counts frames without the wire's preamble and gap."""
    speeds = [i.speed_mbps for i in (src, dst) if i is not None and i.speed_mbps is not None]
    if len(speeds) < 2:
        return None
    mtus = [i.mtu for i in (src, dst) if i is not None and i.mtu]
    mtu = min(mtus) if mtus else DEFAULT_MTU
    return min(speeds) * 1e6 * goodput_factor(mtu, ipv6, overhead)


def pct_of(value: float | None, expected: float | None) -> float | None:
    """``value`` as a percentage of the expected goodput: the one base every percentage of a
    test uses (the verdict, each direction, the matrix cell, JSON and CSV)."""
    if value is None or not expected:
        return None
    return 100.0 * value / expected


def direction_pcts(result: TestResult, verdict: Verdict) -> tuple[float | None, float | None]:
    """Each direction's goodput as a percentage of the verdict's expected figure."""
    return pct_of(result.forward_bps, verdict.expected_bps), pct_of(result.reverse_bps, verdict.expected_bps)


def looks_like(bps: float, ipv6: bool) -> str:
    """ "; what a 100 Mb/s link carries" when a plateau sits just under a common link speed."""
    for mbps in COMMON_SPEEDS:
        clean = mbps * 1e6 * goodput_factor(DEFAULT_MTU, ipv6)
        if 0.85 * clean <= bps <= 1.02 * clean:
            return f"; about what a {link_speed(mbps, words=True)} hop carries"
    return ""


def cpu_pair(r: TestResult) -> str:
    """iperf3's CPU on each end, written one way wherever a test's CPU shows (the result
    panel, the causes' evidence) after the word "CPU": "sender 71%, receiver 72%"."""
    return f"sender {percent(r.cpu_src_pct)}, receiver {percent(r.cpu_dst_pct)}"


def single_threaded(r: TestResult, own: str | None) -> bool:
    """Whether an end's iperf3 (``own``: its version, "3.12") runs every stream on one
    thread; the test's combined answer when the end's own version is unknown (an older
    recording)."""
    version = tuple(int(p) for p in own.split(".") if p.isdigit()) if own else ()
    if version:
        return version < MULTITHREADED_SINCE
    return r.single_threaded is not False


def cpu_ceiling(r: TestResult, single: bool, per_thread_pct: float) -> float:
    """One core per thread: iperf3 < 3.16 runs everything on one; newer ones one per stream
    (each direction's streams of a --bidir run, -P of them each way)."""
    if single:
        return per_thread_pct
    streams = r.raw_end.get("streams") if isinstance(r.raw_end, Mapping) else None
    return per_thread_pct * max(len(streams) if isinstance(streams, list) else r.streams, 1)


def cpu_help(r: TestResult, single: bool) -> str:
    """What helps a CPU-bound end, on its iperf3 version."""
    if single:
        return "this iperf3 runs every stream on one thread (upgrade to ≥ 3.16, or run several iperf3 processes)"
    return f"one stream is one core: try `-P {max(4, r.streams * 2)}`"
