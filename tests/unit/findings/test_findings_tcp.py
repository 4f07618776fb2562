"""Findings from a host's TCP counters (issue 19 §1), over a full window_s, built from
constructed rates: TCP_RETRANSMITS naming the interfaces that carry the traffic and what they
counted, RECEIVER_PRUNING, TCP_CHECKSUM_ERRORS; own-traffic windows apply as to drops."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from linkdeck.core.model import Severity
from linkdeck.core.tcpstats import TcpRates, retrans_pct
from linkdeck.findings.engine import Diagnoser
from tests.builders import Clock, codes, iface, settings, update, view

QUIET = dict(rx_errors_ps=0.0, tx_errors_ps=0.0, rx_drops_ps=0.0, tx_drops_ps=0.0)


def tcp(out: float = 0.0, retrans: float = 0.0, **more: float) -> TcpRates:
    base = dict.fromkeys(
        ("in_segs_ps", "timeouts_ps", "lost_retrans_ps", "rcv_pruned_ps", "rcvq_drops_ps", "backlog_drops_ps",
         "ofo_drops_ps", "listen_drops_ps", "in_errs_ps", "in_csum_errs_ps"),
        0.0,
    )  # fmt: skip
    base.update(more)
    return TcpRates(out_segs_ps=out, retrans_segs_ps=retrans, retrans_pct=retrans_pct(out, retrans), **base)


def run(
    rates: TcpRates, ticks: int = 12, tests: dict | None = None, eth0: dict | None = None, **kw
) -> tuple[Clock, Diagnoser]:
    """One host, eth0 sending 95 Mb/s (and a quiet eth1 and the loopback), fed ``ticks``
    one-second ticks with these TCP rates; window 10 s."""
    clock = Clock()
    d = Diagnoser(settings(window_s=10, **kw), clock=clock, own_traffic=(tests or {}).get)
    for t in range(ticks):
        clock.now = 1000.0 + t
        d.observe(replace(
            update(
                "e", t,
                view(iface("eth0", ring_rx=256, ring_rx_max=4096), tx_bps=95e6, rx_bps=2e6,
                     **{**QUIET, **(eth0 or {})}),
                view(iface("eth1"), tx_bps=1e3, rx_bps=1e3, **QUIET),
                view(iface("lo", kind="loopback", speed_mbps=None), tx_bps=5e9, rx_bps=5e9, **QUIET),
            ),
            tcp=rates,
        ))  # fmt: skip
    return clock, d


def test_a_sender_retransmitting_two_percent_is_found_with_the_link_that_carries_it():
    _, d = run(tcp(out=8000, retrans=160, timeouts_ps=3))
    (f,) = [f for f in d.findings() if f.code == "TCP_RETRANSMITS"]
    assert f.host == "e" and f.interface is None and f.severity is Severity.WARNING
    assert "2.0% of the TCP segments e sends are retransmitted" in f.message
    assert "160/s retransmitted of 8.00 k/s sent over the last 10 s, 3.0 retransmission timeouts/s" in f.evidence
    # eth0 carries it, not the idle eth1 nor the loopback; it counted nothing: the loss is further on
    assert "carried by eth0 (no drops or errors counted, RX ring 256 of 4096)" in f.evidence
    assert "eth1" not in f.evidence and "lo (" not in f.evidence
    assert "the loss is further along the path" in f.evidence


def test_drops_on_the_carrying_link_are_named_as_the_evidence():
    _, d = run(tcp(out=8000, retrans=400), eth0=dict(rx_drops_ps=40.0))
    (f,) = [f for f in d.findings() if f.code == "TCP_RETRANSMITS"]
    assert "eth0 (drops 40.0/s, RX ring 256 of 4096)" in f.evidence and "further along" not in f.evidence


@pytest.mark.parametrize(
    ("rates", "why"),
    [
        (tcp(out=8000, retrans=40), "0.5 % is below 1 %"),
        (tcp(out=500, retrans=50), "10 % of 500 segments/s: too little sent to judge"),
        (tcp(out=8000, retrans=None), "retransmits not counted"),
    ],
)
def test_below_the_thresholds_no_finding(rates, why):
    _, d = run(rates)
    assert "TCP_RETRANSMITS" not in [f.code for f in d.findings()], why


def test_nothing_before_a_full_window():
    _, d = run(tcp(out=8000, retrans=400), ticks=10)  # 10 ticks cover 9 s of a 10 s window
    assert d.findings() == []
    _, d = run(tcp(out=8000, retrans=400), ticks=12)
    assert [f.code for f in d.findings()] == ["TCP_RETRANSMITS"]


def test_a_clean_host_at_full_speed_raises_nothing():
    _, d = run(tcp(out=80000, retrans=4))
    assert d.findings() == []


def test_a_test_s_retransmits_and_full_buffers_are_its_own_a_bad_checksum_is_not():
    rates = tcp(out=8000, retrans=400, rcv_pruned_ps=20, in_csum_errs_ps=5)
    _, d = run(rates, tests={"e": math.inf})
    assert codes(d.findings()) == [("TCP_CHECKSUM_ERRORS", "e", None)]
    clock, d = run(rates, tests={"e": 1011.0})  # the test ended as the window did
    assert "TCP_RETRANSMITS" not in [f.code for f in d.findings()]
    _, d = run(rates)
    assert sorted(f.code for f in d.findings()) == ["RECEIVER_PRUNING", "TCP_CHECKSUM_ERRORS", "TCP_RETRANSMITS"]


def test_receiver_pruning_names_the_counters_that_rose_and_the_host():
    _, d = run(tcp(rcv_pruned_ps=2.0, rcvq_drops_ps=3.0, backlog_drops_ps=0.0))
    (f,) = d.findings()
    assert f.code == "RECEIVER_PRUNING" and f.host == "e" and f.interface is None
    assert "5.0 segments/s dropped by the host itself" in f.message
    assert "pruned 2.0/s, receive queue full 3.0/s over the last" in f.evidence and "backlog" not in f.evidence
    assert "the host, not the path" in f.hint
    _, d = run(tcp(rcv_pruned_ps=0.5))  # under drops_per_s (1/s)
    assert d.findings() == []


def test_checksum_errors_are_an_error_and_unknown_counters_say_nothing():
    _, d = run(tcp(in_csum_errs_ps=4.0))
    (f,) = d.findings()
    assert f.code == "TCP_CHECKSUM_ERRORS" and f.severity is Severity.ERROR and "(4.0/s)" in f.message
    _, d = run(TcpRates())  # an OS that tells nothing
    assert d.findings() == []


def test_a_finding_never_changes_with_which_other_hosts_are_watched():
    _, alone = run(tcp(out=8000, retrans=400))
    clock, d = run(tcp(out=8000, retrans=400))
    d.observe(replace(update("other", 11, view(iface("eth0"), tx_bps=1e9, **QUIET)), tcp=tcp(out=90000, retrans=0)))
    assert [f for f in d.findings() if f.host == "e"] == alone.findings()
