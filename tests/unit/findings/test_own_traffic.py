"""linkdeck's own test traffic is not a finding (issue 10.5): while a test runs through a host
and for a findings window after it, that host's drops and its place among its peers are the
test's doing; its errors still count."""

from __future__ import annotations

import math

import pytest

from linkdeck.findings.engine import Diagnoser
from tests.builders import Clock, codes, iface, settings, update, view
from tests.lab import wait_for

BUSY = 1.0e9


def fleet_tick(d: Diagnoser, t: float, slow_bps: float = 3e6, **h1_rates) -> None:
    """Five hosts in one subnet: h1–h4 carry a test's gigabit, h5 a few Mb/s of its own."""
    for n in range(1, 6):
        rates = dict(
            rx_bps=BUSY if n < 5 else slow_bps,
            tx_bps=0.0,
            rx_errors_ps=0.0,
            tx_errors_ps=0.0,
            rx_drops_ps=0.0,
            tx_drops_ps=0.0,
        )
        if n == 1:
            rates.update(h1_rates)
        d.observe(update(f"h{n}", t, view(iface(addresses=(f"10.0.0.{n}/24",)), **rates)))


def run(tests: dict[str, float], **h1_rates) -> tuple[Clock, Diagnoser]:
    clock = Clock()
    d = Diagnoser(settings(window_s=10, drops_per_s=1.0), clock=clock, own_traffic=tests.get)
    for t in range(12):  # a full 10 s window
        clock.now = 1000.0 + t
        fleet_tick(d, t, **h1_rates)
    return clock, d


def test_without_a_test_a_slow_peer_is_an_outlier():
    _, d = run({})
    assert ("THROUGHPUT_OUTLIER", "h5", "eth0") in codes(d.findings())


def test_the_peers_of_a_running_test_make_no_outlier_of_a_host_outside_it():
    _, d = run({f"h{n}": math.inf for n in range(1, 5)})
    assert [c for c in codes(d.findings()) if c[0] == "THROUGHPUT_OUTLIER"] == []


def test_after_the_test_its_traffic_leaves_the_window_and_the_rules_are_back():
    clock, d = run({f"h{n}": 1011.0 for n in range(1, 5)})
    assert [c for c in codes(d.findings()) if c[0] == "THROUGHPUT_OUTLIER"] == []
    clock.now = 1011.0 + 10.5  # a window after the test ended (the fleet still busy, as fed)
    fleet_tick(d, 12)
    assert ("THROUGHPUT_OUTLIER", "h5", "eth0") in codes(d.findings())


def test_a_test_s_drops_are_its_own_but_its_errors_are_found():
    _, d = run({"h1": math.inf, "h2": math.inf}, rx_drops_ps=50.0, rx_errors_ps=5.0)
    found = codes(d.findings())
    assert ("ERRORS_RISING", "h1", "eth0") in found
    assert ("DROPS_RISING", "h1", "eth0") not in found
    _, d = run({}, rx_drops_ps=50.0)
    assert ("DROPS_RISING", "h1", "eth0") in codes(d.findings())


@pytest.mark.lab
async def test_right_after_tests_in_the_dashboard_an_idle_peer_is_no_outlier(make_lab) -> None:
    from linkdeck.core.model import HostState
    from linkdeck.findings import outlier
    from linkdeck.settings.config import Thresholds
    from linkdeck.ui.app import LinkdeckApp

    lab = make_lab(5)
    h4, h5 = lab.hosts["h4"], lab.hosts["h5"]
    settings = lab.settings(interval=0.5, test_duration=2, thresholds=Thresholds(window_s=15))
    app = LinkdeckApp(settings, [lab.spec(n) for n in lab.hosts])
    async with app.run_test(size=(160, 40)):
        await wait_for(lambda: all(u.state is HostState.LIVE for u in app.updates.values()), 30, message="all live")
        # h5 has a few Mb/s of its own; h1–h4 are about to carry linkdeck's tests.
        h4.popen("iperf3", "-s", "-p", "5301")
        await wait_for(lambda: h4.pgrep("iperf3 -s -p 5301"), 5, message="h4's own iperf3 server")
        h5.popen("iperf3", "-c", h4.address, "-p", "5301", "-u", "-b", "5M", "-t", "60")
        for src, dst in (("h1", "h2"), ("h3", "h4")):
            outcome = await app.tests.run_pair(src, dst)
            assert outcome.result.error is None and outcome.result.forward_bps > 1e8, outcome.result.error
        await wait_for(lambda: all(app.tests.own_traffic(h) is not None for h in ("h1", "h2", "h3", "h4")), 5)
        # the tests' traffic is still in every window: read as fleet traffic, h5 would stand out
        raw = outlier.throughput_outlier(app.passes.diagnoser._watched(), settings.thresholds.outlier_ratio)
        assert ("h5", "eth0") in {(f.host, f.interface) for f in raw}
        app.passes.now_due()
        app.passes.update()
        assert [f for f in app.findings if f.code == "THROUGHPUT_OUTLIER"] == []
