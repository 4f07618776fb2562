"""A rate finding at its threshold holds: it rises above the threshold, clears only well
below it, and keeps one "since" while it holds; its hint follows the direction and the OS."""

from __future__ import annotations

import itertools

from linkdeck.findings.engine import Diagnoser
from tests.builders import Clock, codes, iface, quiet_window, settings, update, view

# Transmit errors counted at about one a second, read on ticks that do not line up with them:
# most ticks see one, some none, some two (a constructed sequence, mean 1.0/s).
AROUND_ONE = [1, 1, 2, 0, 1, 1, 0, 2, 1, 1, 1, 0, 2, 1]


def test_errors_at_their_threshold_are_one_finding_with_one_since() -> None:
    clock = Clock()
    d = Diagnoser(settings(window_s=30, errors_per_s=1.0), clock=clock)
    e = iface()
    quiet_window(d, "lab-x", 0, e)
    t = 0
    for t in range(1, 31):  # a window a little above the threshold: raised
        d.observe(update("lab-x", t, view(e, rx_errors_ps=0.0, tx_errors_ps=1.2)))
    clock.now += 1
    (first,) = d.findings()
    raised = d.since(first)
    held = []
    for t, n in zip(range(31, 151), itertools.cycle(AROUND_ONE)):
        clock.now += 1
        d.observe(update("lab-x", t, view(e, rx_errors_ps=0.0, tx_errors_ps=float(n))))
        found = d.findings()
        held += found
        assert codes(found) == [("ERRORS_RISING", "lab-x", "eth0")], (t, found)
        assert d.since(found[0]) == raised, t
    assert any("held until it falls below 0.5/s" in f.evidence for f in held)
    # Well below: cleared, once the window holds no more than half the threshold.
    for t in range(151, 182):
        clock.now += 1
        d.observe(update("lab-x", t, view(e, rx_errors_ps=0.0, tx_errors_ps=0.0)))
    assert d.findings() == []


def test_below_the_threshold_nothing_rises_however_long_it_stays() -> None:
    d = Diagnoser(settings(window_s=10, errors_per_s=1.0))
    e = iface()
    quiet_window(d, "h1", 0, e)
    for t in range(1, 60):
        d.observe(update("h1", t, view(e, rx_errors_ps=0.0, tx_errors_ps=0.9)))
        assert d.findings() == [], t


def test_drops_hold_too() -> None:
    d = Diagnoser(settings(window_s=10, drops_per_s=1.0))
    e = iface()
    quiet_window(d, "h1", 0, e)
    for t in range(1, 12):
        d.observe(update("h1", t, view(e, rx_drops_ps=2.0, tx_drops_ps=0.0)))
    assert codes(d.findings()) == [("DROPS_RISING", "h1", "eth0")]
    for t in range(12, 40):
        d.observe(update("h1", t, view(e, rx_drops_ps=0.8, tx_drops_ps=0.0)))
        assert codes(d.findings()) == [("DROPS_RISING", "h1", "eth0")], t


def _errors(os: str, rx: float, tx: float):
    d = Diagnoser(settings(window_s=5, errors_per_s=1.0))
    e = iface("em0" if os == "freebsd" else "eth0")
    quiet_window(d, "h1", 0, e)
    for t in range(1, 7):
        d.observe(update("h1", t, view(e, rx_errors_ps=rx, tx_errors_ps=tx), os=os))
    (f,) = d.findings()
    return f


def test_transmit_errors_point_at_the_sending_side_not_the_cable() -> None:
    f = _errors("linux", 0.0, 3.0)
    assert "transmit errors are frames this host failed to send" in f.hint
    assert "swap the cable" not in f.hint
    assert "`ethtool -S eth0`" in f.hint and "`ip -s -s link show dev eth0`" in f.hint


def test_receive_errors_point_at_the_cable() -> None:
    f = _errors("linux", 3.0, 0.0)
    assert f.hint.startswith("receive errors are frames that arrived damaged") and "swap the cable" in f.hint
    assert "transmit errors" not in f.hint


def test_errors_hints_follow_the_os() -> None:
    assert "`netstat -I em0 -d`" in _errors("freebsd", 0.0, 3.0).hint
    assert "`kstat -p link:0:eth0:oerrors`" in _errors("illumos", 0.0, 3.0).hint
    assert "ethtool" not in _errors("illumos", 3.0, 0.0).hint
