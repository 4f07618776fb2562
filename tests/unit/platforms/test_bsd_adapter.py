"""BsdAdapter: frames built from the real captures → HostSample; the sh loop run for real
against the replay commands in tests/replay/bsd/."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from linkdeck.core.model import Counters
from linkdeck.parsers.parse_error import ParseError
from linkdeck.platforms.adapter import FRAME_BEGIN, FRAME_END, SECTION, split_frames
from linkdeck.platforms.bsd import BsdAdapter, profile_for, resolve_names
from linkdeck.transport.runner import CommandResult
from tests.corpus import fixture
from tests.ticks import ticking

TESTS = Path(__file__).parents[2]
REPLAY = TESTS / "replay" / "bsd"


def frame(**sections: str) -> list[str]:
    """The lines the remote loop prints for one frame."""
    lines = [FRAME_BEGIN]
    for name, body in sections.items():
        lines.append(SECTION + name)
        lines.extend(body.splitlines())
    return lines + [FRAME_END]


def frames(*frame_lines: list[str]) -> list[dict[str, str]]:
    return split_frames([line for f in frame_lines for line in f])


FREEBSD_NETSTAT = "freebsd/netstat-ibdn__ohai-freebsd14-spec.txt"
FREEBSD_IFCONFIG = "freebsd/ifconfig-a__ohai-freebsd14-spec.txt"


def test_freebsd_frame_merges_counters_and_facts_with_remote_time():
    adapter = BsdAdapter(None, "freebsd", "FreeBSD 14.1-RELEASE")
    (f,) = frames(
        frame(time="1700000000.250000000", netstat=fixture(FREEBSD_NETSTAT), ifconfig=fixture(FREEBSD_IFCONFIG))
    )
    sample = adapter.parse_frame(f)
    assert sample.time == 1700000000.25
    assert list(sample.interfaces) == ["vtnet0", "lo0"]
    vtnet0 = sample.interfaces["vtnet0"]
    assert (vtnet0.kind, vtnet0.oper, vtnet0.mtu, vtnet0.speed_mbps, vtnet0.duplex) == (
        "virtual",
        "up",
        1500,
        None,
        None,
    )
    assert vtnet0.addresses[0] == "140.211.10.91/26"
    assert vtnet0.mac == "fa:16:3e:ba:3e:25"
    assert sample.counters["vtnet0"] == Counters(
        rx_bytes=46746, tx_bytes=26242, rx_packets=579, tx_packets=210, rx_errors=0, tx_errors=0, rx_drops=0, tx_drops=0
    )
    assert sample.interfaces["lo0"].kind == "loopback" and sample.interfaces["lo0"].mtu == 16384


def test_facts_are_kept_between_ifconfig_ticks_and_local_clock_without_fraction():
    adapter = BsdAdapter(None, "freebsd")
    first, second = frames(
        frame(time="1700000000.N", netstat=fixture(FREEBSD_NETSTAT), ifconfig=fixture(FREEBSD_IFCONFIG)),
        frame(time="1700000001.N", netstat=fixture(FREEBSD_NETSTAT)),
    )
    before = time.monotonic()
    s1 = adapter.parse_frame(first)
    s2 = adapter.parse_frame(second)
    # FreeBSD's date has no %N: the local monotonic clock at receipt stamps the samples.
    assert before <= s1.time <= s2.time <= time.monotonic()
    assert s2.interfaces["vtnet0"].addresses == s1.interfaces["vtnet0"].addresses
    assert s2.interfaces["vtnet0"].kind == "virtual"
    assert not s2.interfaces["vtnet0"].default_route  # no route section came: unknown, not marked


def test_default_route_from_route_get_and_unreadable_route_output_leaves_it_off():
    adapter = BsdAdapter(None, "freebsd")
    route = fixture("freebsd/route-n-get-default__ohai-freebsd14-spec.txt")
    good, garbled, ticked = frames(
        frame(time="1.5", netstat=fixture(FREEBSD_NETSTAT), ifconfig=fixture(FREEBSD_IFCONFIG), route=route),
        frame(
            time="2.5", netstat=fixture(FREEBSD_NETSTAT), ifconfig=fixture(FREEBSD_IFCONFIG), route="\x1b[2J garbage"
        ),
        frame(time="3.5", netstat=fixture(FREEBSD_NETSTAT)),
    )
    assert adapter.parse_frame(good).interfaces["vtnet0"].default_route
    assert not adapter.parse_frame(good).interfaces["lo0"].default_route
    after = adapter.parse_frame(garbled)  # the frame itself is fine: counters and facts
    assert after.counters["vtnet0"].rx_bytes == 46746 and not after.interfaces["vtnet0"].default_route
    assert not adapter.parse_frame(ticked).interfaces["vtnet0"].default_route


def test_macos_same_machine_captures_line_up():
    adapter = BsdAdapter(None, "macos")
    (f,) = frames(
        frame(
            time="x",
            netstat=fixture("macos/netstat-i-d-l-b-n__ohai-darwin-spec.txt"),
            ifconfig=fixture("macos/ifconfig-a__ohai-darwin-spec.txt"),
        )
    )
    sample = adapter.parse_frame(f)
    assert list(sample.interfaces) == ["lo0", "gif0", "stf0", "en1", "p2p0", "en0", "fw0", "utun0"]
    en1 = sample.interfaces["en1"]
    assert en1.oper == "up" and en1.mtu == 1500 and "10.20.10.144/24" in en1.addresses
    assert sample.counters["en1"].tx_bytes == 18228234970 and sample.counters["en1"].bits == 64
    assert sample.interfaces["fw0"].oper == "down" and sample.interfaces["fw0"].kind == "physical"
    assert sample.interfaces["en0"].speed_mbps is None  # media: autoselect (none)


def test_macos_truncated_names_resolve_to_ifconfig_names():
    adapter = BsdAdapter(None, "macos")
    (f,) = frames(
        frame(
            time="x",
            netstat=fixture("macos/netstat-i__jc-osx-10.14.6.txt"),
            ifconfig=fixture("macos/ifconfig__jc-osx-10.14.6.txt"),
        )
    )
    sample = adapter.parse_frame(f)
    bridge = sample.interfaces["bridge0"]  # netstat printed 'bridg'
    assert bridge.kind == "bridge" and bridge.members == ("en1", "en2", "en3", "en4")
    assert "bridg" not in sample.interfaces
    # The two 'vmnet' rows (Link#19, Link#20) are not in this ifconfig capture: both kept.
    assert sample.counters["vmnet"].rx_packets == 0
    assert sample.counters["vmnet#20"].rx_packets == 1853
    assert sample.interfaces["gif0"].oper == "down"


def test_resolve_names_by_ifconfig_index_then_prefix_order():
    from linkdeck.core.model import IfaceRecord

    rows = [
        IfaceRecord(name="vmnet", extra=(("link_index", "20"),)),
        IfaceRecord(name="vmnet", extra=(("link_index", "19"),)),
        IfaceRecord(name="bridg", extra=(("link_index", "17"),)),
        IfaceRecord(name="en0", extra=(("link_index", "4"),)),
    ]
    facts = [
        IfaceRecord(name="en0"),
        IfaceRecord(name="bridge0", extra=(("index", "17"),)),
        IfaceRecord(name="vmnet1"),
        IfaceRecord(name="vmnet8"),
    ]
    assert resolve_names(rows, facts) == ["vmnet8", "vmnet1", "bridge0", "en0"]


def test_opnsense_lagg_members_and_markdown_counter():
    adapter = BsdAdapter(None, "opnsense", "OPNsense 24.7")
    (f,) = frames(
        frame(
            time="x",
            netstat=fixture("opnsense/netstat-i__opnsense-core-issue-3904-lagg-before.txt"),
            ifconfig=fixture("opnsense/ifconfig-v-lagg0__checkmk-opnsense-agent-pr-59-partial.txt"),
        )
    )
    sample = adapter.parse_frame(f)
    lagg = sample.interfaces["lagg0"]
    assert lagg.kind == "bond" and lagg.members == ("ice0", "ice1")
    assert sample.counters["lagg0"].tx_errors == 5 and sample.counters["lagg0"].rx_bytes is None


def test_two_table_systems_merge_bytes_and_packets():
    # NetBSD/OpenBSD print bytes instead of packets with -b: the adapter reads both tables.
    # (FreeBSD 12 captures stand in here: the corpus has no NetBSD/OpenBSD netstat.)
    adapter = BsdAdapter(None, "netbsd")
    (f,) = frames(
        frame(
            time="x",
            netstat=fixture("freebsd/netstat-i__jc-freebsd12.txt"),
            netstat_packets=fixture("freebsd/netstat-ib__jc-freebsd12.txt"),
        )
    )
    em0 = adapter.parse_frame(f).counters["em0"]
    assert em0.rx_packets == 189449  # from the primary table
    assert em0.rx_bytes == 372538087  # only the second table has bytes


@pytest.mark.parametrize("sections", [{"time": "1.5"}, {"time": "1.5", "netstat": "garbage\n"}])
def test_unreadable_netstat_is_a_parse_error(sections):
    with pytest.raises(ParseError, match="netstat"):
        BsdAdapter(None, "freebsd").parse_frame(sections)


class RecordedRunner:
    """A Runner that streams recorded lines (the adapter must not care where they came from)."""

    name = "recorded"

    def __init__(self, lines):
        self.lines = lines
        self.argv = None

    async def run(self, argv, timeout=10.0):
        return CommandResult("", "", 0)

    async def stream(self, argv, tick=None):
        self.argv = list(argv)
        for line in self.lines:
            yield line

    async def close(self):
        pass


async def test_samples_turns_a_garbled_frame_into_a_sample_error_and_goes_on():
    netstat = fixture(FREEBSD_NETSTAT)
    runner = RecordedRunner(
        [
            "login banner",
            *frame(time="10.0", netstat=netstat, ifconfig=fixture(FREEBSD_IFCONFIG)),
            *frame(time="11.0", netstat="Name Mtu Network Address Ipkts\nvtnet0 1500 <Link#1> 5.0k\n"),
            *frame(time="12.0", netstat=netstat),
        ]
    )
    adapter = BsdAdapter(runner, "freebsd")
    got = [item async for item in adapter.samples(1.0)]
    assert runner.argv[:2] == ["sh", "-c"] and "netstat -i -b -d -n -W" in runner.argv[2]
    assert [type(g).__name__ for g in got] == ["HostSample", "SampleError", "HostSample"]
    assert "humanized" in got[1].message
    assert got[2].time == 12.0 and got[2].interfaces["vtnet0"].mtu == 1500


def test_profiles_per_os():
    assert profile_for("truenas").netstat[0] == "netstat -i -b -d -n -W"
    assert profile_for("macos").ifconfig[0] == "ifconfig -a -v"
    assert profile_for("openbsd").netstat_packets == ("netstat -i -d -n", "netstat -i -n")
    with pytest.raises(ValueError):
        profile_for("linux")


def test_script_runs_in_real_sh_against_the_replay_commands(tmp_path):
    """The loop itself, run by /bin/sh with the replay netstat/ifconfig first on PATH: frames
    arrive, ifconfig comes every 2nd tick, and the replayed counters advance per call."""
    adapter = BsdAdapter(None, "freebsd", facts_every=2)
    env = {**os.environ, "PATH": f"{REPLAY}:{os.environ['PATH']}", "HOME": str(tmp_path)}
    lines = []
    with ticking(["sh", "-c", adapter.script()], 0.1, text=True, env=env) as proc:
        assert proc.stdout is not None
        while lines.count(FRAME_END) < 3:
            line = proc.stdout.readline()
            assert line, "the loop ended early"
            lines.append(line.rstrip("\n"))
    got = split_frames(lines)
    assert ["ifconfig" in f for f in got] == [True, False, True]
    samples = [adapter.parse_frame(f) for f in got]
    rx = [s.counters["vtnet0"].rx_bytes for s in samples]
    assert rx == [46746 + 1_250_000, 46746 + 2_500_000, 46746 + 3_750_000]
    assert samples[2].interfaces["vtnet0"].addresses[0] == "140.211.10.91/26"
    # route -n get default (the replayed machine's real answer) marks vtnet0, on every tick.
    assert [[n for n, i in s.interfaces.items() if i.default_route] for s in samples] == [["vtnet0"]] * 3
