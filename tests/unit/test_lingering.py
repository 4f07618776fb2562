"""A test's sockets after iperf3 has gone (issue 18 §5): which lines of `ss -tan` and of each
OS's `netstat -an` are the test's, and how a replay knows linkdeck's own traffic as live did."""

from __future__ import annotations

import math

from linkdeck.probe.lingering import busy_states, held_sockets
from linkdeck.recording.own import OwnTraffic

# Constructed in each tool's real layout (Linux ss from iproute2, Linux net-tools netstat,
# FreeBSD netstat -an, illumos netstat -an's TCP section); addresses from the lab.
SS = """\
State      Recv-Q Send-Q       Local Address:Port        Peer Address:Port Process
LISTEN     0      128                0.0.0.0:22               0.0.0.0:*
LISTEN     0      5                        *:5201                   *:*
ESTAB      0      0              10.77.0.17:22            10.77.0.1:40412
LAST-ACK   0      8948    [::ffff:10.77.0.17]:5201 [::ffff:10.77.0.16]:53870
TIME-WAIT  0      0              10.77.0.17:5201          10.77.0.16:53868
"""
NETSTAT_LINUX = "tcp        0   8948 10.77.0.16:53870        10.77.0.17:5201         FIN_WAIT1  \n"
NETSTAT_FREEBSD = """\
Active Internet connections (including servers)
Proto Recv-Q Send-Q Local Address          Foreign Address        (state)
tcp4       0   8948 10.77.0.17.5202        10.77.0.16.53870       LAST_ACK
tcp4       0      0 10.77.0.17.22          10.77.0.1.40412        ESTABLISHED
tcp4       0      0 *.5201                 *.*                    LISTEN
"""
NETSTAT_ILLUMOS = """\
TCP: IPv4
   Local Address        Remote Address    Swind Send-Q Rwind Recv-Q    State
-------------------- -------------------- ----- ------ ----- ------ -----------
10.77.0.16.53870     10.77.0.17.5201      64128   8948 128872      0 FIN_WAIT_1
10.77.0.16.22        10.77.0.1.40412      64128      0 128872      0 ESTABLISHED
"""


def test_only_the_tests_sockets_that_still_carry_traffic_count():
    # the listener (someone's iperf3 -s) and TIME-WAIT carry nothing; SSH is not the test's
    assert held_sockets(SS, "10.77.0.17", 5201) == ["LAST-ACK"]
    assert held_sockets(NETSTAT_LINUX, "10.77.0.17", 5201) == ["FIN-WAIT1"]
    assert held_sockets(NETSTAT_FREEBSD, "10.77.0.17", 5201) == ["LAST-ACK"]  # 5202: the next port tried
    assert held_sockets(NETSTAT_ILLUMOS, "10.77.0.17", 5201) == ["FIN-WAIT-1"]
    assert held_sockets(SS, "10.77.0.99", 5201) == [] and held_sockets(SS, "10.77.0.17", 6000) == []
    assert (
        held_sockets("", "10.77.0.17", 5201) == []
        and held_sockets("garbage \x1b[2J 1.2.3.4:5201", "1.2.3.4", 5201) == []
    )


def _test(t: float, src: str, dst: str, took: float = 4.0, own: bool = True) -> dict:
    event = {
        "t": t,
        "ev": "test",
        "outcome": {
            "result": {"src": src, "dst": dst, "duration_s": 2.0},
            "timings": {"start": 50.0, "verdict": 50.0 + took},
        },
    }
    return {**event, "own": True} if own else event


def test_a_replay_knows_own_traffic_from_the_tests_start_to_their_sockets_end():
    test = _test(100.0, "f", "g")
    own = OwnTraffic()
    # before the test's event is played, the player sees it ahead: running since 96 s
    assert own.at("f", 95.0, [test]) is None and own.at("f", 97.0, [test]) == math.inf
    own.play(test)
    assert own.at("f", 101.0, []) == math.inf  # announced: its sockets are still there
    own.play({"t": 100.5, "ev": "own", "h": "g", "ended": 100.5})
    assert own.at("g", 101.0, []) == 100.5 and own.at("f", 150.0, []) == math.inf
    own.play({"t": 190.0, "ev": "own", "h": "f", "ended": 190.0})
    assert own.at("f", 191.0, []) == 190.0
    # a recording made before "own" events: the test's own span, to its end
    old = OwnTraffic()
    old.play(_test(100.0, "f", "g", own=False))
    assert old.at("f", 101.0, []) == 100.0
    old.play({"t": 1, "ev": "test", "outcome": "garbage"})
    old.play({"t": "x", "ev": "own", "h": "f"})
    assert old.at("f", 101.0, []) == 100.0 and old.at("x", 1.0, [{"ev": "test", "t": "bad"}]) is None


def test_another_tests_connections_are_found_whatever_their_address() -> None:
    # a test toward another address of the host (or from another client) is still a test
    # running through it; listeners, TIME-WAIT, a finished test's closing tail (LAST-ACK,
    # FIN-WAIT) and other ports are not
    assert busy_states(SS, 5201) == busy_states(NETSTAT_FREEBSD, 5201) == busy_states(NETSTAT_LINUX, 5201) == []
    estab = SS + "ESTAB      0      0              10.77.1.5:5203          10.77.1.9:41000\n"
    assert busy_states(estab, 5201) == ["ESTAB"] and busy_states(estab, 5300) == []
    bsd = NETSTAT_FREEBSD + "tcp4       0      0 10.77.0.17.5201        10.77.0.99.53999       ESTABLISHED\n"
    assert busy_states(bsd, 5201) == ["ESTABLISHED"]
