"""What else crossed a test's path: the ends' interface counters against iperf3's own frames.

Both ends' counters are read just before and just after every test. What they carried beyond
iperf3's own frames in one direction is other traffic on the path (a transfer the user is
still running, another test), once it exceeds what the counters themselves get wrong: the
ACKs of the other direction, retransmitted segments iperf3 does not count, the sessions
linkdeck reads through. A test beside other traffic measured a share of the path, not the
path: its verdict says so first and judges the path on what it carried in all.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.model import EndState, TestResult
from ..core.units import link_speed, rate
from .goodput import COMMON_SPEEDS, DEFAULT_MTU, HEADERS_IPV4, HEADERS_IPV6

# The counters' own error, as shares of iperf3's frames: this direction's (its retransmitted
# segments, which the counters see and iperf3's goodput does not) and the other direction's
# (its ACKs, one 66-byte frame per one or two full ones), plus a floor for ARP, neighbour
# discovery and the SSH sessions the counters are read through.
OWN_SHARE = 0.05
ACK_SHARE = 0.08
# What the ACKs of the other direction usually add (a 66-byte ACK per two full frames):
# taken off before the rest is called other traffic.
ACKS = 66 / (2 * 1514)
FLOOR_BPS = 200e3
ETHERNET_HEADER = 14


@dataclass(frozen=True, slots=True)
class Crossing:
    """Other traffic seen at one end's interface in one direction of a test."""

    direction: str  # "forward" (src → dst) or "reverse"
    host: str
    iface: str
    other_bps: float  # what the counters carried beyond iperf3's frames and their ACKs
    iperf3_bps: float  # iperf3's goodput in frames on the wire
    total_bps: float  # what the path carried in all while the test ran

    def words(self) -> str:
        return f"another {rate(self.other_bps)} crossed {self.host} {self.iface} during the test: the path was shared"

    def in_all(self) -> str:
        looks = hop_like(self.total_bps)
        return (
            f"the path carried {rate(self.total_bps)} in all "
            f"(iperf3 {rate(self.iperf3_bps)} + other traffic {rate(self.other_bps)})" + (f": {looks}" if looks else "")
        )


def hop_like(frames_bps: float) -> str:
    """ "about what a 100 Mb/s hop carries" when the frames a full path carried in all sit at
    a common link speed (counted frames lack the preamble and gap a wire adds; a shaper
    counts a little generously)."""
    for mbps in COMMON_SPEEDS:
        if 0.85 * mbps * 1e6 <= frames_bps <= 1.05 * mbps * 1e6:
            return f"about what a {link_speed(mbps, words=True)} hop carries"
    return ""


def framing(result: TestResult, src: EndState, dst: EndState) -> float:
    """Bits on the wire per bit of iperf3's goodput at the smaller end's MTU."""
    mtus = [e.iface.mtu for e in (src, dst) if e.iface is not None and e.iface.mtu]
    return frame_factor(result.address, min(mtus, default=None))


def frame_factor(address: str, mtu: int | None) -> float:
    """Bits on the wire per bit of goodput at ``mtu``: counters see whole frames (with the
    Ethernet header, without preamble and FCS on Linux)."""
    size = mtu or DEFAULT_MTU
    headers = HEADERS_IPV6 if ":" in address else HEADERS_IPV4
    return (size + ETHERNET_HEADER) / (size - headers)


def noise_bps(own_frames: float, other_frames: float) -> float:
    """How far the counters may be from iperf3's frames with nothing else on the path."""
    return OWN_SHARE * own_frames + ACK_SHARE * other_frames + FLOOR_BPS


def crossings(result: TestResult, src: EndState, dst: EndState) -> tuple[Crossing, ...]:
    """Each direction's other traffic beyond the counters' own error, at the end where it was
    larger (the sender's tx or the receiver's rx), largest first; none for a test that failed,
    a host with itself, or counters that were not read."""
    if result.error or result.src == result.dst:
        return ()
    scale = framing(result, src, dst)
    frames = {
        d: bps * scale
        for d, bps in (("forward", result.forward_bps), ("reverse", result.reverse_bps))
        if bps is not None
    }
    c = result.counters_bps
    # the receiver first: it sees every sender's traffic toward it, and is named on a tie
    seen = {
        "forward": ((dst, c.get("dst_rx")), (src, c.get("src_tx"))),
        "reverse": ((src, c.get("src_rx")), (dst, c.get("dst_tx"))),
    }
    # other traffic ran over the whole window between the reads, iperf3 over its seconds
    window = result.counters_window_s
    spread = result.duration_s / window if window and window > result.duration_s else 1.0
    found = []
    for direction, own in frames.items():
        other = sum(v for d, v in frames.items() if d != direction)
        ends = [(end, bps) for end, bps in seen[direction] if bps is not None and end.iface is not None]
        if not ends:
            continue
        end, total = max(ends, key=lambda pair: pair[1])
        extra = (total - own - ACKS * other) * spread
        if extra > noise_bps(own, other):
            assert end.iface is not None
            found.append(Crossing(direction, end.host, end.iface.name, extra, own, own + extra))
    return tuple(sorted(found, key=lambda x: -x.other_bps))


def beyond_noise(result: TestResult, diff_bps: float, direction: str, scale: float) -> bool:
    """Whether a receiver's counter ``diff_bps`` away from iperf3's frames says more than the
    counters' own error (the test panel prints the discrepancy only then)."""
    frames = {d: (bps or 0.0) * scale for d, bps in (("forward", result.forward_bps), ("reverse", result.reverse_bps))}
    other = sum(v for d, v in frames.items() if d != direction)
    return abs(diff_bps) > noise_bps(frames[direction], other)
