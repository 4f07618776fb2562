"""THROUGHPUT_OUTLIER over constructed fleets (seed 001's ten blades; no real multi-host
rate capture exists): one busy interface far below the median of its peers."""

from __future__ import annotations

from hypothesis import given, strategies as st

from linkdeck.core.model import Severity
from linkdeck.findings.engine import Diagnoser
from tests.builders import codes, iface, settings, update, view


def blades(rates_mbps: list[float], ticks: int = 5, kind: str = "physical") -> Diagnoser:
    d = Diagnoser(settings(window_s=30))
    for t in range(ticks):
        for n, mbps in enumerate(rates_mbps):
            port = iface("e1000g0", kind=kind, speed_mbps=None, addresses=(f"192.168.10.{n + 10}/24",))
            d.observe(update(f"dace-{n}", float(t), view(port, rx_bps=mbps * 1e6, tx_bps=mbps * 1e4)))
    return d


def test_seed_001_one_blade_at_90_mbit_among_590_is_the_outlier():
    d = blades([590, 600, 90, 585, 610, 595, 580, 605, 590, 600])
    (f,) = d.findings()
    assert (f.code, f.severity, f.host, f.interface) == ("THROUGHPUT_OUTLIER", Severity.INFO, "dace-2", "e1000g0")
    assert (
        f.message
        == "e1000g0 carries 90.0 Mb/s, 15% of the median of its 9 physical peers in 192.168.10.0/24 (595 Mb/s)"
    )
    assert "(ratio 0.15 < 0.5)" in f.evidence


def test_idle_hosts_and_small_crowds_are_no_outliers():
    assert blades([590, 600, 0.2, 585, 610]).findings() == []  # idle, not slow
    assert blades([590, 90, 585]).findings() == []  # two peers are no crowd
    assert blades([300, 200, 250, 180, 320]).findings() == []  # spread, nothing below half


def test_peers_are_compared_only_within_one_kind():
    # Three busy VMs (virtual) and one slow physical port in one subnet: no crowd of its kind.
    d = Diagnoser(settings(window_s=30))
    for t in range(3):
        for n, (kind, mbps) in enumerate((("virtual", 900), ("virtual", 880), ("virtual", 910), ("physical", 50))):
            port = iface(f"eth{n}", kind=kind, speed_mbps=None, addresses=(f"10.8.0.{n + 1}/24",))
            d.observe(update(f"h{n}", float(t), view(port, rx_bps=mbps * 1e6, tx_bps=0.0)))
    assert d.findings() == []
    assert codes(blades([900, 880, 910, 40], kind="virtual").findings()) == [
        ("THROUGHPUT_OUTLIER", "dace-3", "e1000g0")
    ]


@given(st.lists(st.floats(min_value=0, max_value=1e12, allow_nan=False), min_size=2, max_size=40), st.data())
def test_median_without_is_the_median_of_the_others(values, data) -> None:
    from statistics import median

    from linkdeck.findings.outlier import median_without

    i = data.draw(st.integers(0, len(values) - 1))
    others = values[:i] + values[i + 1 :]
    assert median_without(sorted(values), values[i]) == median(others)
