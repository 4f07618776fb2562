"""The path MTU search (pure), its command template, and the PATH_MTU cause (issue 10.2)."""

from __future__ import annotations

import os
import subprocess

import pytest

from linkdeck.core.model import EndState, PathMtu
from linkdeck.probe.failures import ProbeError
from linkdeck.probe.pmtu import COMMON_MTUS, Search
from linkdeck.probe.templates import ping_script
from linkdeck.verdict.rules import judge
from tests.builders import cause_codes, clean_gigabit, end


def rounds_to(path: int, top: int, floor: int = 576) -> tuple[int | None, int]:
    """(what the search settles on, rounds it took) against a path carrying ``path`` bytes."""
    s = Search(floor, top)
    s.learn({n: n <= path for n in s.first_sizes()})
    rounds = 1
    while sizes := s.next_sizes():
        s.learn({n: n <= path for n in sizes})
        rounds += 1
    return s.good, rounds


def test_jumbo_ends_over_a_1500_hop_are_pinned_in_the_first_round() -> None:
    assert rounds_to(1500, 9000) == (1500, 1)


@pytest.mark.parametrize("path", COMMON_MTUS[2:])
def test_another_common_path_mtu_is_pinned_in_the_second_round(path) -> None:
    assert rounds_to(path, 9000) == (path, 2)


def test_every_path_mtu_from_576_to_9000_is_found_exactly_within_five_rounds() -> None:
    wrong = [(path, got) for path in range(576, 9001) if (got := rounds_to(path, 9000))[0] != path or got[1] > 5]
    assert wrong == []


def test_the_interface_mtu_passing_ends_the_search_at_once() -> None:
    assert rounds_to(65535, 9000) == (9000, 1)


def test_a_lost_reply_below_a_size_that_passed_does_not_undo_it() -> None:
    s = Search(576, 9000)
    s.learn({1500: True, 1400: False, 1501: False})
    assert (s.good, s.bad, s.next_sizes()) == (1500, 1501, [])


def test_the_ping_script_runs_each_size_once_and_refuses_bad_values() -> None:
    script = ping_script("iputils", "127.0.0.1", [(548, 1.0), (1472, 0.2)])
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=10).stdout
    lines = sorted(line.split()[:3] for line in out.splitlines() if line.startswith("r "))
    assert lines in ([["r", "1472", "0"], ["r", "548", "0"]], [["noping"]]) or out.strip() == "noping"
    assert "-s 1472 -c 1 -W 0.200 127.0.0.1" in script and "-M do" in script
    assert "ping -D -s 1472 -c 1 -W 200 " in ping_script("bsd", "10.0.0.1", [(1472, 0.2)])
    for bad in (("127.0.0.1; reboot", [(548, 1.0)]), ("127.0.0.1", [(-1, 1.0)]), ("127.0.0.1", [(True, 1.0)])):
        with pytest.raises(ProbeError):
            ping_script("iputils", *bad)


def jumbo(host: str) -> EndState:
    return end(host, mtu=9000, speed_mbps=10000, addresses=(f"10.0.0.{1 if host == 'a' else 2}/24",))


def test_path_mtu_below_both_ends_comes_first_and_explains_the_drops_and_the_stall() -> None:
    r = clean_gigabit(
        forward_bps=0.0,
        reverse_bps=0.0,
        forward_retransmits=40,
        reverse_retransmits=40,
        path_mtu=PathMtu(1500, 1500, 9000, 9000),
    )
    a, b = jumbo("a"), jumbo("b")
    v = judge(r, EndState("a", a.iface, drops_during=300), EndState("b", b.iface, drops_during=200))
    assert cause_codes(v) == ["PATH_MTU"] and v.status == "bad"
    assert (
        v.summary
        == "the path carries 1500-byte packets; both ends use 9000: frames above 1500 are dropped between them"
    )
    assert "a → b 1500 bytes, b → a 1500 bytes" in v.causes[0].evidence


def test_no_path_mtu_cause_when_the_path_carries_the_ends_mtu_or_was_not_probed() -> None:
    clean = judge(clean_gigabit(path_mtu=PathMtu(9000, 9000, 9000, 9000)), jumbo("a"), jumbo("b"))
    assert "PATH_MTU" not in cause_codes(clean)
    unprobed = judge(
        clean_gigabit(path_mtu=PathMtu(None, None, 9000, 9000, note="path MTU not probed: ping not found on a")),
        jumbo("a"),
        jumbo("b"),
    )
    assert "PATH_MTU" not in cause_codes(unprobed)
    # 9000 against 1500 in one subnet, the path carrying 1500: the ends' mismatch says it
    mixed = judge(
        clean_gigabit(path_mtu=PathMtu(1500, 1500, 1500, 9000)),
        end("a", addresses=("10.0.0.1/24",)),
        end("b", mtu=9000, addresses=("10.0.0.2/24",)),
    )
    assert cause_codes(mixed) == ["MTU_MISMATCH"]


def test_a_failed_test_over_a_short_path_names_the_path() -> None:
    r = clean_gigabit(
        forward_bps=None,
        reverse_bps=None,
        error="the test a → b did not finish within 20 s",
        path_mtu=PathMtu(1500, None, 9000, 9000),
    )
    v = judge(r, jumbo("a"), jumbo("b"))
    assert v.status == "error" and cause_codes(v) == ["PATH_MTU"]
    assert v.summary.startswith("the path carries 1500-byte packets") and "did not finish" in v.summary


async def test_a_script_sent_in_pieces_runs_as_sent_and_no_command_reaches_512_bytes() -> None:
    import shlex

    from linkdeck.platforms.adapter import run_uploaded, upload_in_pieces
    from linkdeck.transport.local_runner import LocalRunner

    class Recording(LocalRunner):  # this machine's real shell, every command's size noted
        sizes: list[int] = []

        async def run(self, argv, timeout=10.0):
            self.sizes.append(len(shlex.join(argv)))
            return await super().run(argv, timeout)

    script = "".join(f'echo \'line {i}: "$HOME" it\'"\'"\'s\'; x=$((1 + {i})); echo "$x"\n' for i in range(60))
    runner = Recording()
    path = await upload_in_pieces(runner, script)
    argv = ["sh", "-c", run_uploaded(path)]
    assert len(script) > 2000 and len(runner.sizes) > 5 and max(runner.sizes) < 512
    assert len(shlex.join(argv)) < 512
    direct, pieces = (await LocalRunner().run(["sh", "-c", script])).stdout, (await LocalRunner().run(argv)).stdout
    assert pieces == direct and "line 59" in pieces
    assert not os.path.exists(path)  # the file went once read


def test_iperf3_udp_probe_reads_the_servers_receiver_line():
    """The client's -J with --get-server-output: the server's text report says how many
    datagrams arrived (its receiver lines as captured in the lab: 20 of 20 at 1472 bytes of
    payload, none at 1473; the JSON around them constructed)."""
    import json as _json

    from linkdeck.probe.pmtu_udp import _arrived
    from linkdeck.probe.templates import udp_probe_script

    def doc(line: str) -> str:
        return _json.dumps(
            {"end": {"sum": {"packets": 20, "lost_packets": 0}}, "server_output_text": f"Accepted connection\n{line}\n"}
        )

    assert _arrived(doc("[  5]   0.00-0.11   sec  28.8 KBytes  2.09 Mbits/sec  0.046 ms  0/20 (0%)  receiver")) == 20
    # the client's own sum says 20 sent and none lost even when nothing arrived: only the server knows
    assert _arrived(doc("[  5]   0.00-0.68   sec  0.00 Bytes  0.00 bits/sec  0.000 ms  0/0 (0%)  receiver")) == 0
    assert _arrived("iperf3: error - unable to connect") == 0 and _arrived("{garbage") == 0
    script = udp_probe_script("10.0.0.2", 5201, 1472, 20)
    assert script.endswith(
        "iperf3 -c 10.0.0.2 -p 5201 -u --dont-fragment -l 1472 -k 20 -b 2M -J --get-server-output 2>&1"
    )
    for bad in (("10.0.0.2; reboot", 5201, 1472, 20), ("10.0.0.2", 5201, 0, 20), ("10.0.0.2", 5201, 1472, True)):
        with pytest.raises(ProbeError):
            udp_probe_script(*bad)


async def test_a_ping_without_dont_fragment_cannot_probe_and_says_so_not_a_path_verdict(tmp_path, monkeypatch) -> None:
    """busybox's ping (OpenWrt, Alpine) refuses `-M do`: that is the host's tool, not the path."""
    import shutil

    from linkdeck.probe.iperf import End
    from linkdeck.probe.pmtu import one_way
    from linkdeck.transport.local_runner import LocalRunner

    busybox = shutil.which("busybox")
    if busybox is None:
        pytest.skip("busybox is not installed")
    (tmp_path / "ping").symlink_to(busybox)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    got = await one_way(End("rel-a", LocalRunner(), "linux"), "127.0.0.1", 1500)
    assert got.largest is None
    assert got.note == "cannot probe the path MTU from rel-a: its ping has no don't-fragment option"


async def test_a_ping_without_dont_fragment_hands_its_direction_to_the_iperf3_udp_probe(monkeypatch) -> None:
    """Which directions go to iperf3's UDP probe (itself run for real in the lab): the one
    whose ping has no don't-fragment option, not the one ping measured."""
    from linkdeck.probe import pmtu_udp
    from linkdeck.probe.iperf import End
    from linkdeck.probe.pmtu import OneWay
    from linkdeck.transport.local_runner import LocalRunner

    asked = []

    async def udp_one_way(sender, receiver, address, mtu, port, receiver_mtu=None):
        asked.append((sender.name, mtu, receiver_mtu))
        return OneWay(1500, 1500, "probed with iperf3 UDP --dont-fragment: 1500 bytes get through")

    monkeypatch.setattr(pmtu_udp, "udp_one_way", udp_one_way)
    note = "cannot probe the path MTU from rel-a: its ping has no don't-fragment option"
    path = PathMtu(forward=None, reverse=1500, forward_mtu=1500, reverse_mtu=1500, note=note, seconds=1.0)
    a, b = End("rel-a", LocalRunner(), "linux"), End("rel-b", LocalRunner(), "linux")
    got = await pmtu_udp.with_udp_fallback(path, a, b, "192.0.2.2", "192.0.2.1", 9000, 1500, 5201)
    # up to the sender's MTU and what the receiver takes in
    assert asked == [("rel-a", 9000, 1500)] and got.forward == 1500 and got.reverse == 1500
    assert got.note == note + ": probed with iperf3 UDP --dont-fragment: 1500 bytes get through"
