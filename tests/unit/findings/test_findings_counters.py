"""NIC-level drops with the ring to try, link flapping, and the window over driver counters.

The `ethtool -S` sequences are constructed (say so below): the corpus holds single dumps, not
a counter climbing tick after tick; the names and starting values come from the real dumps.
"""

from __future__ import annotations

from dataclasses import replace

from linkdeck.core.model import Severity
from linkdeck.findings.counters import suggested_ring
from linkdeck.findings.engine import Diagnoser
from linkdeck.parsers import ethtool
from linkdeck.settings.config import Settings
from tests.builders import codes, iface, settings, update, view
from tests.corpus import fixture

RINGS_512_OF_4096 = """Ring parameters for eth0:
Pre-set maximums:
RX:\t\t4096
RX Mini:\tn/a
RX Jumbo:\tn/a
TX:\t\t4096
Current hardware settings:
RX:\t\t512
RX Mini:\tn/a
RX Jumbo:\tn/a
TX:\t\t512
"""


def stats_text(out_of_buffer: int, missed: int = 0) -> str:
    return (
        "NIC statistics:\n"
        f"     rx_packets: {1000000 + out_of_buffer * 7}\n"
        f"     rx_out_of_buffer: {out_of_buffer}\n"
        f"     rx_missed_errors: {missed}\n"
        "     rx_steer_missed_packets: 1962570491\n"
    )


def edge_port(counters: dict[str, int], rings=RINGS_512_OF_4096):
    rx, rx_max, tx, tx_max = ethtool.parse_rings(rings)
    return iface(
        "fp-eth0",
        speed_mbps=10000,
        ring_rx=rx,
        ring_rx_max=rx_max,
        ring_tx=tx,
        ring_tx_max=tx_max,
        nic_counters=counters,
    )


def run_ticks(d: Diagnoser, host: str, ports) -> None:
    for t, port in enumerate(ports):
        d.observe(update(host, float(t), view(port)))


def test_constructed_rising_out_of_buffer_with_ring_512_of_4096_suggests_2048():
    # Constructed: seed 004's NSX edge (ring 512, rx_out_of_buffer climbing) as ethtool text.
    d = Diagnoser(settings(window_s=5))
    run_ticks(d, "edge01", [edge_port(ethtool.parse_stats(stats_text(990473555 + 400 * t))) for t in range(7)])
    (f,) = d.findings()
    assert (f.code, f.severity, f.host, f.interface) == ("NIC_DROPS", Severity.WARNING, "edge01", "fp-eth0")
    assert f.evidence == "rx_out_of_buffer +2000 in the last 5 s (400/s); RX ring 512 of 4096"
    assert f.message == "fp-eth0: the NIC is dropping received frames (400/s), RX ring 512 of 4096"
    assert f.hint == "try a larger RX ring: `ethtool -G fp-eth0 rx 2048`, then watch whether the counter stops"


def test_counters_collected_every_few_ticks_still_count():
    # facts_every=5: the same values repeat for five ticks, then jump.
    d = Diagnoser(settings(window_s=15))
    values = [1000 + 500 * (t // 5) for t in range(17)]
    run_ticks(d, "edge01", [edge_port({"rx_missed_errors": v}) for v in values])
    (f,) = d.findings()
    assert f.evidence.startswith("rx_missed_errors +1500 in the last 15 s (100/s)")


def test_ring_at_its_maximum_points_elsewhere_and_unknown_ring_says_how_to_look():
    full = RINGS_512_OF_4096.replace("RX:\t\t512", "RX:\t\t4096")
    d = Diagnoser(settings(window_s=3))
    run_ticks(d, "edge01", [edge_port({"rx_out_of_buffer": 100 * t}, rings=full) for t in range(5)])
    (f,) = d.findings()
    assert "RX ring 4096 of 4096" in f.evidence
    assert f.hint.startswith("the RX ring is already at its maximum") and "`ethtool -L fp-eth0 combined N`" in f.hint

    d = Diagnoser(settings(window_s=3))
    run_ticks(
        d,
        "edge01",
        [replace(edge_port({"rx_out_of_buffer": 100 * t}), ring_rx=None, ring_rx_max=None) for t in range(5)],
    )
    (f,) = d.findings()
    assert "RX ring size unknown" in f.evidence and "`ethtool -g fp-eth0`" in f.hint


def test_real_tg3_ring_200_of_511_caps_the_suggestion_at_the_maximum():
    rx, rx_max, _, _ = ethtool.parse_rings(fixture("linux/ethtool-g__lolyu-aoi-tg3-debian11.txt"))
    assert (rx, rx_max) == (200, 511)
    assert suggested_ring(rx, rx_max) == 511
    assert (
        suggested_ring(512, 4096) == 2048 and suggested_ring(4096, 4096) is None and suggested_ring(None, 4096) is None
    )


def test_real_mlx5_dump_standing_still_is_no_finding_and_a_reset_counts_nothing():
    # The real mlx5 dump (rx_out_of_buffer 990473555, rx_discards_phy 5.9e10) repeated: large
    # counters that do not move are history, not a finding.
    real = ethtool.parse_stats(fixture("linux/ethtool-S__bpf-list-mlx5-kernel-5.15-filtered.txt"))
    d = Diagnoser(Settings())
    run_ticks(d, "h1", [edge_port(real) for _ in range(5)])
    assert d.findings() == []
    # Driver reloaded: counters restart near zero. A drop in value is a reset, not drops.
    restarted = {k: (3 if k == "rx_out_of_buffer" else 0) for k in real}
    d = Diagnoser(Settings())
    d.observe(update("h1", 0.0, view(edge_port(real))))
    d.observe(update("h1", 1.0, view(edge_port(restarted))))
    assert d.findings() == []


def test_bsd_and_illumos_names_count_as_nic_drops():
    d = Diagnoser(settings(window_s=2))
    run_ticks(d, "nas", [iface("igb0", nic_counters={"mac_stats.missed_packets": 50 * t}) for t in range(4)])
    d2 = Diagnoser(settings(window_s=2))
    run_ticks(d2, "omni", [iface("e1000g0", nic_counters={"norcvbuf": 10 * t, "ierrors": 0}) for t in range(4)])
    assert codes(d.findings()) == [("NIC_DROPS", "nas", "igb0")]
    assert codes(d2.findings()) == [("NIC_DROPS", "omni", "e1000g0")]
    assert "norcvbuf +20 in the last 2 s" in d2.findings()[0].evidence


def test_link_flapping_from_carrier_changes_and_from_observed_state():
    d = Diagnoser(settings(window_s=30))
    run_ticks(d, "h1", [iface(carrier_changes=c) for c in (4, 4, 6, 6, 8)])
    (f,) = d.findings()
    assert (f.code, f.severity) == ("LINK_FLAPPING", Severity.ERROR)
    assert f.message == "eth0: link went down and up 2× in 4 s"
    # One bounce is a warning; a counter that went down (reboot) is no flap.
    d = Diagnoser(settings(window_s=30))
    run_ticks(d, "h1", [iface(carrier_changes=c) for c in (4, 6, 1, 1)])
    assert [(f.code, f.severity) for f in d.findings()] == [("LINK_FLAPPING", Severity.WARNING)]
    d = Diagnoser(settings(window_s=30))
    run_ticks(d, "h1", [iface(carrier_changes=c) for c in (9, 1, 1)])
    assert d.findings() == []
    # No counter (BSD): the up/down changes between ticks count.
    d = Diagnoser(settings(window_s=30))
    run_ticks(d, "fw", [iface("ix0", oper=o) for o in ("up", "down", "up", "up")])
    assert codes(d.findings()) == [("LINK_FLAPPING", "fw", "ix0")]


def test_a_steady_link_and_a_quiet_nic_give_nothing_over_many_windows():
    d = Diagnoser(settings(window_s=5))
    ports = [edge_port({"rx_out_of_buffer": 7, "rx_missed_errors": 0}) for _ in range(20)]
    for t, port in enumerate(ports):
        d.observe(update("h1", float(t), view(replace(port, carrier_changes=2), rx_errors_ps=0.0, rx_drops_ps=0.0)))
        assert d.findings() == []


def test_nic_drop_rate_is_measured_over_the_whole_window():
    # 40 ticks, 30 s window: the oldest kept tick's increase counts, and so does its interval.
    for per_tick, expected in ((1, None), (2, "rx_missed_errors +60 in the last 30 s (2.0/s)")):
        d = Diagnoser(Settings())
        run_ticks(d, "h1", [edge_port({"rx_missed_errors": per_tick * t}) for t in range(40)])
        found = d.findings()
        if expected is None:
            assert found == []  # 1.0/s is not above the 1/s threshold
        else:
            assert found[0].evidence.startswith(expected)
