"""A host's TCP counters → rates (issue 19 §1): the same rules as an interface's counters
(a fall is a reset, a stalled clock gives nothing), retransmitted ÷ sent, staleness."""

from __future__ import annotations

import pytest

from linkdeck.core.freshness import as_seen
from linkdeck.core.model import Counters, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.core.rates import TcpTracker
from linkdeck.core.tcpstats import TcpCounters, TcpRates, retrans_pct


def tcp(out: int, retrans: int, **more) -> TcpCounters:
    return TcpCounters(out_segs=out, retrans_segs=retrans, **more)


def test_rates_and_the_retransmitted_share():
    t = TcpTracker()
    assert t.update(10.0, tcp(1000, 10, rcv_pruned=5)) == TcpRates()  # nothing to compare with yet
    r = t.update(12.0, tcp(21000, 210, rcv_pruned=5))
    assert r.out_segs_ps == 10000 and r.retrans_segs_ps == 100 and r.retrans_pct == pytest.approx(1.0)
    assert r.rcv_pruned_ps == 0 and r.timeouts_ps is None  # not counted: unknown, not zero


def test_a_counter_that_falls_is_a_reset_never_a_spike_or_negative():
    t = TcpTracker()
    t.update(1.0, tcp(5_000_000, 900))
    r = t.update(2.0, tcp(100, 1))  # the stack's counters started again (a new netns, a module reload)
    assert r.out_segs_ps is None and r.retrans_segs_ps is None and r.retrans_pct is None
    assert t.update(3.0, tcp(1100, 1)).out_segs_ps == 1000  # and it goes on from the new reading


def test_a_stalled_clock_gives_no_rates_and_keeps_the_older_reading():
    t = TcpTracker()
    t.update(1.0, tcp(0, 0))
    assert t.update(1.0, tcp(500, 5)) == TcpRates()
    assert t.update(2.0, tcp(1000, 10)).out_segs_ps == 1000  # measured from t=1.0's first reading


def test_a_clock_that_goes_back_is_a_reboot():
    t = TcpTracker()
    t.update(100.0, tcp(10, 0))
    assert t.update(5.0, tcp(20, 0)) == TcpRates()
    assert t.update(6.0, tcp(30, 0)).out_segs_ps == 10


def test_an_os_that_does_not_tell_is_none_all_the_way():
    t = TcpTracker()
    assert t.update(1.0, None) is None and t.update(2.0, None) is None
    t.update(3.0, tcp(10, 0))
    assert t.update(4.0, None) is None
    assert t.update(5.0, tcp(20, 0)) == TcpRates()  # a gap restarts the comparison


@pytest.mark.parametrize(
    ("out", "retrans", "pct"), [(None, 1.0, None), (0.0, 0.0, None), (200.0, 1.0, 0.5), (10.0, None, None)]
)
def test_retrans_pct_is_unknown_when_nothing_was_sent(out, retrans, pct):
    assert retrans_pct(out, retrans) == pct


def test_stale_hosts_show_no_tcp_rates():
    eth0 = InterfaceView(iface=Interface(name="eth0"), rates=Rates(tx_bps=1e6), totals=Counters())
    live = HostUpdate(
        host="h",
        os="linux",
        state=HostState.LIVE,
        interfaces=(eth0,),
        received=0.0,
        fresh_until=1.0,
        tcp=TcpRates(out_segs_ps=5.0, retrans_pct=1.0),
    )
    seen = as_seen(live, now=50.0)
    assert seen.stale and seen.tcp == TcpRates()
    assert as_seen(live, now=0.5).tcp.out_segs_ps == 5.0


def test_recorded_counters_round_trip_and_bad_ones_are_refused():
    c = tcp(5, 1, timeouts=3)
    assert TcpCounters.from_json(c.to_json()) == c
    for bad in ([1] * 3, ["1"] * 12, [-1] * 12, [True] * 12, "x", None):
        with pytest.raises(ValueError):
            TcpCounters.from_json(bad)


def test_every_tcp_counter_gives_the_rate_frame_counter_delta_reckons():
    """The tracker's one pass (one ceiling for all twelve counters) gives, counter by counter,
    what frame_counter_delta gives alone: random streams (constructed) with rises, falls,
    jumps past any ceiling, unknown counters and uneven intervals."""
    import random

    from linkdeck.core.rates import frame_counter_delta
    from linkdeck.core.tcpstats import TCP_COUNTERS

    rng = random.Random(19)
    t, now, prev = TcpTracker(), 0.0, None
    values = dict.fromkeys(TCP_COUNTERS, 0)
    for _ in range(300):
        now += rng.choice((0.5, 1.0, 1.0, 2.0, 10.0))
        for name in TCP_COUNTERS:
            odd = rng.random()
            values[name] = (
                None
                if odd < 0.05
                else rng.randrange(10**6)
                if odd < 0.1
                else (values[name] or 0) + rng.choice((0, 0, 1, 50, 10**12))
                if odd < 0.9
                else values[name]
            )
        cur = TcpCounters(**values)
        rates = t.update(now, cur)
        if prev is not None:
            seconds = now - prev[0]
            for name in TCP_COUNTERS:
                old, new = getattr(prev[1], name), getattr(cur, name)
                delta = None if old is None or new is None else frame_counter_delta(old, new, seconds, None)
                assert getattr(rates, f"{name}_ps") == (None if delta is None else delta / seconds), name
            assert rates.retrans_pct == retrans_pct(rates.out_segs_ps, rates.retrans_segs_ps)
        prev = (now, cur)


def test_tcp_rates_fields_are_each_counters_rate_in_order_then_the_share():
    """The tracker builds TcpRates positionally: its fields are TCP_COUNTERS' rates in that
    order, then retrans_pct."""
    from dataclasses import fields

    from linkdeck.core.rates import _TCP_RATE_KEYS
    from linkdeck.core.tcpstats import TCP_COUNTERS

    assert _TCP_RATE_KEYS == tuple(f"{name}_ps" for name in TCP_COUNTERS)
    assert tuple(f.name for f in fields(TcpRates)) == (*_TCP_RATE_KEYS, "retrans_pct")
