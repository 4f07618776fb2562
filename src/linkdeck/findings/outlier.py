"""THROUGHPUT_OUTLIER: among busy interfaces of one kind in one subnet, one far below the
median of its peers (one client of ten identical ones at 11 MB/s)."""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterable

from ..core.codes import Code
from ..core.levels import Severity
from ..core.model import Finding
from ..core.units import link_speed, percent, rate
from .counters import Watched
from .helpers import Port, by_subnet
from .window import History

# Below this an interface is idle, not slow: an idle host is no outlier.
BUSY_BPS = 1e6
# The median needs a crowd: with fewer peers "the others" is one or two hosts.
MIN_PEERS = 3


def median_without(values: list[float], value: float) -> float:
    """The median of sorted ``values`` with one ``value`` taken out, without copying: a subnet
    of 5,000 hosts asks this 5,000 times per findings pass."""
    skip = bisect_left(values, value)
    n = len(values) - 1

    def at(k: int) -> float:
        return values[k] if k < skip else values[k + 1]

    return at(n // 2) if n % 2 else (at(n // 2 - 1) + at(n // 2)) / 2


def busy(watched: Watched) -> list[tuple[Port, History, float]]:
    """The interfaces busy enough to be compared with their peers, with their mean rate."""
    out = []
    for port, hist in watched:
        mean, _ = hist.mean("bps")
        if mean is not None and mean >= BUSY_BPS:
            out.append((port, hist, mean))
    return out


def throughput_outlier(watched: Watched, outlier_ratio: float) -> list[Finding]:
    return outliers(busy(watched), outlier_ratio)


def outliers(busy_ports: Iterable[tuple[Port, History, float]], outlier_ratio: float) -> list[Finding]:
    """THROUGHPUT_OUTLIER among ``busy_ports`` (``busy``'s answer, in the order of the ports)."""
    ports: list[Port] = []
    hist_of: dict[int, tuple[History, float]] = {}
    for port, hist, mean in busy_ports:
        ports.append(port)
        hist_of[id(port)] = (hist, mean)
    out: dict[tuple[str, str], Finding] = {}
    for net, members in by_subnet(ports).items():
        kinds: dict[str, list[Port]] = {}
        for port in members:
            kinds.setdefault(port.iface.kind, []).append(port)
        for kind, group in kinds.items():
            if len(group) < MIN_PEERS + 1:
                continue
            means = sorted(hist_of[id(p)][1] for p in group)
            for port in group:
                hist, mine = hist_of[id(port)]
                middle = median_without(means, mine)
                if mine >= outlier_ratio * middle:
                    continue
                speed = f"; negotiated {link_speed(port.iface.speed_mbps, words=True)}" if port.iface.speed_mbps else ""
                out.setdefault(
                    (port.host, port.iface.name),
                    Finding(
                        code=Code.THROUGHPUT_OUTLIER,
                        severity=Severity.INFO,
                        host=port.host,
                        interface=port.iface.name,
                        message=(
                            f"{port.iface.name} carries {rate(mine)}, {percent(100 * mine / middle)} of "
                            f"the median of its {len(means) - 1} {kind} peers in {net} ({rate(middle)})"
                        ),
                        evidence=f"mean {rate(mine)} over {hist.span_s:.0f} s vs peer median {rate(middle)} "
                        f"(ratio {mine / middle:.2f} < {outlier_ratio:g}){speed}",
                        hint="compare it with a peer: negotiated speed, errors and drops, CPU; then run a test "
                        "from it (`t`) to see whether the path or the host is slow",
                    ),
                )
    return list(out.values())
