"""A host's numbers stop being live from the first missed frame (issue 10.1): the rule in
freshness.py, the findings that need live rates, and snapshot's JSON."""

from __future__ import annotations

import time
from dataclasses import replace

from linkdeck.commands.snapshot_format import snapshot_json, snapshot_table
from linkdeck.core.freshness import as_seen, fresh_until, stale_since
from linkdeck.core.model import HostState
from linkdeck.findings.engine import Diagnoser
from linkdeck.ui.state.rows import host_summary
from tests.builders import Clock, codes, iface, settings, update, view


def live(received: float, interval: float = 1.0, **rates):
    u = update("h1", received, view(iface(), rx_bps=8e6, tx_bps=1e6, **rates))
    return replace(u, received=received, fresh_until=fresh_until(received, interval))


def test_a_frame_is_missed_half_an_interval_and_a_second_after_it_was_due():
    u = live(100.0, interval=2.0)
    assert stale_since(u, 104.0) is None  # due at 102, missed after 104
    assert stale_since(u, 104.01) == 100.0


def test_any_state_but_live_is_stale_at_once_and_nothing_shown_is_never_stale():
    u = live(100.0)
    assert stale_since(replace(u, state=HostState.RECONNECTING), 100.1) == 100.0
    assert stale_since(replace(u, state=HostState.ERROR), 100.1) == 100.0
    assert stale_since(replace(u, interfaces=()), 1e9) is None
    assert stale_since(replace(u, received=None, fresh_until=None), 1e9) is None


def test_a_stale_update_keeps_its_facts_and_loses_its_rates():
    u = live(100.0)
    assert as_seen(u, 100.5) is u
    seen = as_seen(u, 200.0)
    assert seen.stale and not u.stale
    (v,) = seen.interfaces
    assert (v.iface.mtu, v.iface.speed_mbps, v.iface.duplex) == (1500, 1000, "full")
    assert (v.rates.rx_bps, v.rates.tx_bps, v.util_pct) == (None, None, None)
    assert as_seen(seen, 300.0) is seen


def test_rising_drops_are_not_raised_from_a_host_that_stopped_sending():
    clock = Clock()
    d = Diagnoser(settings(window_s=10, drops_per_s=1.0), clock=clock)
    for t in range(12):  # a full 10 s window
        clock.now = 1000.0 + t
        d.observe(live(clock.now, rx_drops_ps=3.0, tx_drops_ps=0.0))
    assert codes(d.findings()) == [("DROPS_RISING", "h1", "eth0")]
    clock.now += 2.6  # the next frame is late: the window's drops are history, not news
    assert d.findings() == []


def test_snapshot_json_says_stale_and_how_old_the_last_sample_is():
    u = as_seen(live(100.0), 130.0)
    host = snapshot_json([u], now=130.0)["hosts"][0]
    assert host["stale"] is True and host["last_sample_age_s"] == 30.0
    assert host["interfaces"][0]["rx_bps"] is None and host["interfaces"][0]["mtu"] == 1500
    fresh = snapshot_json([live(100.0)], now=100.4)["hosts"][0]
    assert fresh["stale"] is False and fresh["last_sample_age_s"] == 0.4
    assert "(data as of " in snapshot_table([u]).splitlines()[0]


def test_a_stale_host_has_one_state_word_stale_and_says_how_old_its_data_is():
    when = time.strftime("%H:%M:%S", time.localtime(100.0))
    u = as_seen(live(100.0), 130.0)
    assert f"stale · data as of {when}" in host_summary(u)
    assert "live" not in host_summary(u)
    head = snapshot_table([u]).splitlines()[0]
    assert f"  stale  (data as of {when})" in head and "live" not in head
    # a host that is not live keeps its own state word; the age of its data follows it
    lost = as_seen(replace(live(100.0), state=HostState.RECONNECTING, error="channel closed"), 130.0)
    assert f"reconnecting: channel closed (trying now) · data as of {when}" in host_summary(lost)
    assert "stale" not in host_summary(lost)


def test_a_snapshot_with_errors_says_the_window_rules_need_more_than_one_interval():
    errs = live(100.0, rx_errors_ps=2.0, tx_errors_ps=0.0, rx_drops_ps=0.0, tx_drops_ps=0.0)
    text = snapshot_table([errs], window_s=30)
    assert text.rstrip().endswith(
        "ERRORS_RISING, DROPS_RISING and NIC_DROPS judge 30 s of samples: watch them with `linkdeck`."
    )
    quiet = live(100.0, rx_errors_ps=0.0, tx_errors_ps=0.0, rx_drops_ps=0.0, tx_drops_ps=0.0)
    assert "judge" not in snapshot_table([quiet], window_s=30)
