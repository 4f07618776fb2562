"""Diagnoser mechanics: windows per host clock, stable findings newest first, mute rules, the
one-shot ``diagnose`` of ``linkdeck snapshot``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from linkdeck.core.model import Finding, HostState, HostUpdate, Severity
from linkdeck.findings.engine import Diagnoser, diagnose, key_of, muted, unmatched_keys
from linkdeck.settings.config import MuteRule
from tests.builders import Clock, codes, iface, quiet_window, settings, update, view


def test_errors_spike_then_stop_clears_after_the_window():
    d = Diagnoser(settings(window_s=5))
    e = iface()
    quiet_window(d, "h1", 1, e)
    d.observe(update("h1", 1, view(e, rx_errors_ps=40.0, tx_errors_ps=0.0)))
    assert codes(d.findings()) == [("ERRORS_RISING", "h1", "eth0")]
    found = d.findings()[0]
    assert found.severity is Severity.ERROR
    assert "mean 8.0/s over the last 5 s" in found.evidence and "peak 40.0/s" in found.evidence
    for t in range(2, 6):  # the spike tick (covering 0-1 s) is inside the 5 s window up to t=5
        d.observe(update("h1", t, view(e, rx_errors_ps=0.0, tx_errors_ps=0.0)))
        assert codes(d.findings()) == [("ERRORS_RISING", "h1", "eth0")], t
    d.observe(update("h1", 6, view(e, rx_errors_ps=0.0, tx_errors_ps=0.0)))
    assert d.findings() == []


def test_drops_below_threshold_stay_quiet_and_above_it_warn():
    d = Diagnoser(settings(window_s=10, drops_per_s=1.0))
    e = iface()
    for t in range(5):
        d.observe(update("h1", t, view(e, rx_drops_ps=0.5, tx_drops_ps=0.0)))
    assert d.findings() == []
    for t in range(5, 15):
        d.observe(update("h1", t, view(e, rx_drops_ps=3.0, tx_drops_ps=0.0)))
    (f,) = d.findings()
    assert (f.code, f.severity) == ("DROPS_RISING", Severity.WARNING)
    assert "mean 3.0/s over the last 10 s" in f.evidence and "threshold 1/s over 10 s" in f.evidence


def test_findings_keep_their_since_and_newest_come_first():
    clock = Clock()
    d = Diagnoser(settings(), clock=clock)
    slow = iface("eth0", speed_mbps=100, supported_speeds_mbps=(10, 100, 1000))
    d.observe(update("h1", 0, view(slow)))
    first = d.findings()
    assert codes(first) == [("SPEED_BELOW_CAPABILITY", "h1", "eth0")]
    clock.now = 1010.0
    half = iface("eth1", duplex="half", speed_mbps=100, supported_speeds_mbps=(100,))
    d.observe(update("h1", 1, view(slow), view(half)))
    found = d.findings()
    assert codes(found) == [("HALF_DUPLEX", "h1", "eth1"), ("SPEED_BELOW_CAPABILITY", "h1", "eth0")]
    assert d.since(found[0]) == 1010.0 and d.since(found[1]) == 1000.0
    # Fixed, then back: a new stretch starts.
    clock.now = 1020.0
    d.observe(update("h1", 2, view(replace(slow, speed_mbps=1000)), view(half)))
    assert codes(d.findings()) == [("HALF_DUPLEX", "h1", "eth1")]
    clock.now = 1030.0
    d.observe(update("h1", 3, view(slow), view(half)))
    found = d.findings()
    assert codes(found)[0] == ("SPEED_BELOW_CAPABILITY", "h1", "eth0") and d.since(found[0]) == 1030.0


def test_a_host_clock_going_back_empties_its_window():
    d = Diagnoser(settings(window_s=30))
    e = iface()
    quiet_window(d, "h1", 100, e)
    d.observe(update("h1", 100, view(e, rx_errors_ps=50.0)))
    assert codes(d.findings()) == [("ERRORS_RISING", "h1", "eth0")]
    d.observe(update("h1", 5, view(e, rx_errors_ps=0.0)))  # rebooted: uptime restarted
    d.observe(update("h1", 6, view(e, rx_errors_ps=0.0)))
    assert d.findings() == []


def test_repeated_time_and_non_live_updates_add_no_ticks():
    d = Diagnoser(settings(window_s=3))
    e = iface()
    quiet_window(d, "h1", 1, e)
    d.observe(update("h1", 1, view(e, rx_errors_ps=0.0)))
    d.observe(update("h1", 2, view(e, rx_errors_ps=9.0)))
    # The collector re-emits the last sample with a new state: counted once, and a host we
    # cannot hear is not judged on rates at all.
    d.observe(update("h1", 2, view(e, rx_errors_ps=9.0), state=HostState.RECONNECTING))
    assert d.findings() == []
    d.observe(update("h1", 3, view(e, rx_errors_ps=0.0)))
    (f,) = d.findings()
    assert "mean 3.0/s" in f.evidence  # (0 + 9 + 0) / 3 ticks


def test_mute_rules_match_code_host_and_interface_patterns():
    f = Finding("NIC_DROPS", Severity.WARNING, "nas01", "veth3a", "m", "e", "h")
    assert muted(f, [MuteRule(code="NIC_DROPS")])
    assert muted(f, [MuteRule(host="nas01", interface="veth*")])
    assert not muted(f, [MuteRule(host="nas02")])
    assert not muted(f, [MuteRule(code="NIC_DROPS", interface="eth*")])
    host_level = replace(f, interface=None)
    assert not muted(host_level, [MuteRule(interface="veth*")])

    s = replace(settings(), mute=(MuteRule(code="SPEED_BELOW_CAPABILITY", host="h1"),))
    slow = iface(speed_mbps=100, supported_speeds_mbps=(10, 100, 1000))
    assert codes(diagnose([update("h1", 0, view(slow)), update("h2", 0, view(slow))], s)) == [
        ("SPEED_BELOW_CAPABILITY", "h2", "eth0")
    ]


def test_one_shot_diagnose_judges_no_rule_stated_over_a_window():
    # `linkdeck snapshot` has one interval of rates: "DROPS_RISING mean 2.0/s over the last
    # 0 s, threshold over 30 s" was a window rule judged on no window (issue 10.6).
    e = iface()
    up = update("h1", 10, view(e, rx_errors_ps=5.0, tx_errors_ps=1.0, rx_drops_ps=2.0, tx_drops_ps=0.0))
    assert diagnose([up], settings()) == []
    slow = iface(speed_mbps=100, supported_speeds_mbps=(10, 100, 1000))
    assert codes(diagnose([update("h1", 10, view(slow, rx_errors_ps=5.0))], settings())) == [
        ("SPEED_BELOW_CAPABILITY", "h1", "eth0")
    ]
    # A host that never answered has no interfaces and no findings.
    assert diagnose([HostUpdate(host="h2", os=None, state=HostState.UNREACHABLE)], settings()) == []


def test_vanished_interfaces_leave_the_window():
    d = Diagnoser(settings(window_s=30))
    quiet_window(d, "h1", 1, iface("eth0"), iface("eth1"))
    d.observe(update("h1", 1, view(iface("eth0"), rx_errors_ps=50.0), view(iface("eth1"))))
    assert codes(d.findings()) == [("ERRORS_RISING", "h1", "eth0")]
    d.observe(update("h1", 2, view(iface("eth1"))))
    assert d.findings() == []
    d.forget("h1")
    assert d.evaluate() == []


def test_speed_and_mute_keys_that_match_nothing_are_named_with_what_exists():
    from linkdeck.settings.config import HostSpec, parse

    s = parse(
        '[speed]\n"lab-a/eht0" = 1000\n"lab-a/eth1" = 1000\n"lab-x/eth0" = 1000\n"lab-b/ix0" = 10000\n'
        '[[mute]]\nhost = "nas*"\n[[mute]]\nhost = "lab-*"\ninterface = "veht*"\n[[mute]]\ninterface = "eth1"\n'
        '[[hosts]]\nname = "lab-b"\naddress = "lab-b.example"\n'
    )
    a = update("lab-a", 1, view(iface("eth0")), view(iface("eth1")), view(iface("lo", kind="loopback")))
    b = HostUpdate(host="lab-b", os=None, state=HostState.CONNECTING)  # not heard from: its interfaces are not judged
    assert s.hosts == (HostSpec(name="lab-b", address="lab-b.example"),)
    assert unmatched_keys(s, [a, b]) == [
        "speed: lab-a/eht0 matches no interface of lab-a (eth0, eth1, lo)",
        "speed: lab-x/eth0 matches no host linkdeck or your ssh config knows (watched: lab-a, lab-b)",
        "mute: host = 'nas*' matches no host linkdeck or your ssh config knows (watched: lab-a, lab-b)",
        "mute: interface = 'veht*' matches no interface of lab-a (eth0, eth1, lo)",
    ]
    assert unmatched_keys(parse(""), [a]) == []
    # a host the ssh config knows, not watched right now: its keys are not a mistake
    assert unmatched_keys(s, [a, b], known={"lab-x"}.__contains__) == [
        "speed: lab-a/eht0 matches no interface of lab-a (eth0, eth1, lo)",
        "mute: host = 'nas*' matches no host linkdeck or your ssh config knows (watched: lab-a, lab-b)",
        "mute: interface = 'veht*' matches no interface of lab-a (eth0, eth1, lo)",
    ]
    # nor is a configured host that is not among those watched (named on the command line)
    assert [line.split(" (watched")[0] for line in unmatched_keys(s, [a])] == [
        line.split(" (watched")[0] for line in unmatched_keys(s, [a, b])
    ]


@pytest.mark.parametrize(
    "os, rx, tx, wanted, unwanted",
    [
        # issue 18 §5: the black-holed test's drops were on transmit and got a receive-ring hint
        (
            "linux",
            0.0,
            3.0,
            ["transmit drops", "`tc -s qdisc show dev eth0`", "a path that takes less than it sends"],
            ["receive"],
        ),
        (
            "linux",
            3.0,
            0.0,
            ["receive drops", "`ethtool -g eth0`", "`cat /proc/net/softnet_stat`"],
            ["transmit", "tc -s"],
        ),
        ("freebsd", 0.0, 3.0, ["transmit drops", "`netstat -I eth0 -d`"], ["receive", "ethtool"]),
        ("freebsd", 3.0, 0.0, ["receive drops", "`netstat -Q`"], ["transmit", "ethtool"]),
        ("omnios", 3.0, 0.0, ["receive drops", "`kstat -p link:0:eth0:norcvbuf`"], ["transmit", "ethtool"]),
        ("smartos", 0.0, 3.0, ["transmit drops", "`kstat -p link:0:eth0:noxmtbuf`"], ["receive", "ethtool"]),
        ("linux", 2.0, 2.0, ["receive drops", "transmit drops"], []),
    ],
)
def test_a_drops_hint_matches_the_direction_and_the_os(os, rx, tx, wanted, unwanted):
    d = Diagnoser(settings(window_s=10, drops_per_s=1.0))
    for t in range(12):
        d.observe(update("h1", t, view(iface(), rx_drops_ps=rx, tx_drops_ps=tx), os=os))
    (f,) = [f for f in d.findings() if f.code == "DROPS_RISING"]
    assert all(w in f.hint for w in wanted), f.hint
    assert not any(u in f.hint for u in unwanted), f.hint


def test_a_pass_over_kept_ports_finds_what_a_fresh_diagnoser_finds():
    """The Diagnoser keeps a host's ports and the static rules' answer while its updates carry
    the same Interface objects (as the Prometheus source sends them: one new object only when
    a fact changed). After every step, what it finds equals what a Diagnoser fed the same
    updates from scratch finds, and a changed fact is seen at once, then its repair."""
    nics = {
        h: [
            iface("eth0", addresses=(f"10.0.0.{h + 1}/24",), supported_speeds_mbps=(100, 1000)),
            iface("eth1", addresses=(f"10.1.0.{h + 1}/24",)),
        ]
        for h in range(6)
    }
    steps, seen = [], []
    live = Diagnoser(settings(window_s=3))
    for t in range(1, 10):
        if t == 3:
            nics[2][0] = replace(nics[2][0], speed_mbps=100)
        if t == 5:
            nics[4][1] = replace(nics[4][1], mtu=9000)
        if t == 7:
            nics[2][0] = replace(nics[2][0], speed_mbps=1000)
        step = [
            update(
                f"h{h}",
                t,
                *(
                    view(
                        i,
                        rx_bps=1.5e8 if h == 5 else 5e8,
                        tx_bps=0.0,
                        rx_errors_ps=9.0 if h == 1 and t >= 4 else 0.0,
                        tx_errors_ps=0.0,
                        rx_drops_ps=0.0,
                        tx_drops_ps=0.0,
                    )
                    for i in nics[h]
                ),
            )
            for h in range(6)
        ]
        steps.append(step)
        for u in step:
            live.observe(u)
        found = live.findings()
        fresh = Diagnoser(settings(window_s=3))
        for earlier in steps:
            for u in earlier:
                fresh.observe(u)
        assert sorted(found, key=key_of) == sorted(fresh.findings(), key=key_of), t
        seen.append(set(codes(found)))
    slow = ("SPEED_BELOW_CAPABILITY", "h2", "eth0")
    assert [slow in s for s in seen] == [False, False, True, True, True, True, False, False, False]
    assert ("MTU_MISMATCH", "h4", "eth1") in seen[4] and ("MTU_MISMATCH", "h4", "eth1") not in seen[3]
    assert ("ERRORS_RISING", "h1", "eth0") in seen[-1]
    assert ("THROUGHPUT_OUTLIER", "h5", "eth0") in seen[-1]


def test_a_mute_rule_for_an_unwatched_host_after_one_that_matched_is_judged():
    from linkdeck.settings.config import parse

    s = parse('[[mute]]\nhost = "lab-a"\ninterface = "eth0"\n[[mute]]\nhost = "nas"\n[[mute]]\nhost = "lab-z"\n')
    a = update("lab-a", 1, view(iface("eth0")))
    # the ssh config knows "nas", not "lab-z": only the second is a mistake
    assert unmatched_keys(s, [a], known={"nas"}.__contains__) == [
        "mute: host = 'lab-z' matches no host linkdeck or your ssh config knows (watched: lab-a)"
    ]
