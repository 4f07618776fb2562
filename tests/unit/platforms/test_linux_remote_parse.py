"""The Linux sampler's frames → HostSamples, from a stream recorded here (hostile interface
names, bridge, veth, tun), plus the sysfs parser and kind rules on their own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from linkdeck.core.model import with_real_speed
from linkdeck.parsers import sysfs_linux
from linkdeck.parsers.parse_error import ParseError
from linkdeck.platforms.adapter import split_frames
from linkdeck.platforms.linux import LinuxAdapter, build_script

FIXTURE = Path(__file__).parents[2] / "fixtures" / "linux" / "linkdeck-sampler__netns-hostile-names.txt"
EVIL = "we$(id);x"
QUOTES = "sp'q\"`*"


def recorded_frames() -> list[dict[str, str]]:
    lines = [ln for ln in FIXTURE.read_text().splitlines() if not ln.startswith("# ")]
    return split_frames(lines)


@pytest.fixture
def samples():
    adapter = LinuxAdapter(runner=None, facts_every=10)
    return [adapter.parse_frame(f) for f in recorded_frames()]


def test_two_frames_with_remote_uptime_clock(samples) -> None:
    assert [s.time for s in samples] == [2508.41, 2509.42]


def test_names_including_hostile_ones_come_through_verbatim(samples) -> None:
    assert sorted(samples[0].interfaces) == sorted(["lo", "br0", "vA", "vB", "tun0", EVIL, QUOTES])
    evil = samples[0].interfaces[EVIL]
    assert evil.addresses[0] == "10.201.0.1/24"
    assert evil.mtu == 1500 and evil.kind == "virtual" and evil.oper == "unknown"
    assert samples[0].counters[EVIL].rx_bytes == 70 and samples[0].counters[EVIL].rx_drops == 1
    assert samples[0].interfaces[QUOTES].oper == "down"


def test_kinds_mtu_and_virtual_speeds(samples) -> None:
    s = samples[0].interfaces
    assert {n: s[n].kind for n in ("lo", "br0", "vA", "tun0")} == {
        "lo": "loopback",
        "br0": "bridge",
        "vA": "virtual",
        "tun0": "tunnel",
    }
    assert (s["vA"].mtu, s["vB"].mtu, s["lo"].mtu) == (9000, 1500, 65536)
    # veth and bridges report 10000 Mb/s; that is made up, not a link speed.
    assert s["vA"].speed_mbps is None and s["br0"].speed_mbps is None and s["vA"].duplex is None
    assert s["br0"].addresses[0] == "10.200.0.1/24"
    assert s["vA"].carrier_changes == 2


def test_slow_facts_are_cached_for_frames_without_them(samples) -> None:
    first, second = recorded_frames()
    assert "kinds" in first and "kinds" not in second
    assert samples[1].interfaces["br0"].kind == "bridge"
    assert samples[1].interfaces[EVIL].addresses[0] == "10.201.0.1/24"


def test_frame_missing_a_section_is_a_parse_error() -> None:
    frame = dict(recorded_frames()[0])
    del frame["tick"]
    with pytest.raises(ParseError, match="tick section"):
        LinuxAdapter(runner=None).parse_frame(frame)


def test_garbled_uptime_is_a_parse_error_naming_the_command() -> None:
    first = recorded_frames()[0]
    tick = "\n".join(
        "/proc/uptime:garbage" if ln.startswith("/proc/uptime:") else ln for ln in first["tick"].splitlines()
    )
    frame = dict(first, tick=tick)
    with pytest.raises(ParseError, match="/proc/uptime"):
        LinuxAdapter(runner=None).parse_frame(frame)


def test_sysfs_line_without_prefix_names_the_line() -> None:
    with pytest.raises(ParseError) as err:
        sysfs_linux.parse("/sys/class/net/eth0/mtu:1500\ngrep: warning\n")
    assert err.value.line == "grep: warning"


def test_non_numeric_mtu_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="mtu of 'eth0'"):
        sysfs_linux.records(sysfs_linux.parse("/sys/class/net/eth0/mtu:big\n"))


@pytest.mark.parametrize(
    "lines, kind",
    [
        (["type:1", "device/uevent:DRIVER=igb"], "physical"),
        (["type:1", "uevent:DEVTYPE=vlan", "device/uevent:DRIVER=igb"], "vlan"),
        (["type:1", "uevent:DEVTYPE=bond", "bonding/slaves:eth0 eth1"], "bond"),
        (["type:1", "uevent:DEVTYPE=wlan", "device/uevent:DRIVER=iwlwifi"], "wireless"),
        (["type:1"], "virtual"),
        (["type:65534", "tun_flags:0x1001"], "tunnel"),
        (["type:772"], "loopback"),
    ],
)
def test_kind_rules(lines: list[str], kind: str) -> None:
    attrs = sysfs_linux.parse("".join(f"/sys/class/net/x0/{ln}\n" for ln in lines))["x0"]
    assert sysfs_linux.kind_of("x0", attrs) == kind


def test_speed_sentinels_and_down_links_are_unknown() -> None:
    text = (
        "/sys/class/net/a/speed:-1\n/sys/class/net/a/operstate:up\n"
        "/sys/class/net/b/speed:4294967295\n/sys/class/net/b/operstate:up\n"
        "/sys/class/net/c/speed:1000\n/sys/class/net/c/operstate:down\n/sys/class/net/c/duplex:full\n"
        "/sys/class/net/d/speed:2500\n/sys/class/net/d/operstate:up\n/sys/class/net/d/duplex:full\n"
    )
    records = sysfs_linux.records(sysfs_linux.parse(text))
    got = {r.name: (r.speed_mbps, r.duplex) for r in map(with_real_speed, records)}
    assert got == {"a": (None, None), "b": (None, None), "c": (None, None), "d": (2500, "full")}
    # the parser says what the files say; the one speed rule drops a down link's last speed
    assert {r.name: r.speed_mbps for r in records}["c"] == 1000


def test_script_is_one_line_sh_that_other_login_shells_pass_through() -> None:
    script = build_script(10)
    assert "\n" not in script and "!" not in script and "\\\\" not in script
    subprocess.run(["sh", "-n", "-c", script], check=True)
    assert 'read_lines("/proc/uptime"); read_lines("/proc/net/dev")' in script
    assert "for file in $sys_net/*/operstate $sys_net/*/carrier_changes; do read_fast; done" in script
    assert "ticks_between_facts=2;" in build_script(3)
    # the tick waits for the client's newline, no sleep
    assert "read -r tick <&3 || break; done" in script and "sleep" not in script


def test_unreadable_ip_output_leaves_addresses_unknown_not_the_frame() -> None:
    first = dict(recorded_frames()[0], ip_addr='Option "-j" is unknown, try "ip -help".\n')
    sample = LinuxAdapter(runner=None).parse_frame(first)
    assert sample.interfaces["br0"].addresses == ()
    assert sample.interfaces["br0"].mtu == 1500 and sample.counters["br0"].tx_bytes is not None
    # and it says so, where the host's state is shown (the host screen, snapshot's detail)
    (said,) = sample.missing
    # the MTU is there (sysfs), so the note names only what is lost and where the MTU came from
    assert said.startswith("addresses and MAC unavailable: `ip -j addr` printed output linkdeck could not read (")
    assert said.endswith("); MTU from sysfs")
    from linkdeck.fleet.collector import Stream, sample_changes
    from linkdeck.settings.config import Settings

    assert sample_changes(sample, Stream(), "h", Settings(), 0.0)["detail"].as_json() == {"missing": said}
    # read again once it is readable: nothing left to say
    assert LinuxAdapter(runner=None).parse_frame(recorded_frames()[0]).missing == ()


def test_ethtool_sections_fill_nic_facts_and_errors_leave_them_unknown() -> None:
    first = dict(recorded_frames()[0])
    first["ethtool_g vA"] = (
        "Ring parameters for vA:\nPre-set maximums:\nRX:\t4096\n"
        "TX:\t4096\nCurrent hardware settings:\nRX:\t512\nTX:\t512\n"
    )
    first["ethtool_S vA"] = "netlink error: Operation not permitted\n"
    sample = LinuxAdapter(runner=None).parse_frame(first)
    va = sample.interfaces["vA"]
    assert (va.ring_rx, va.ring_rx_max, va.ring_tx, va.ring_tx_max) == (512, 4096, 512, 4096)
    assert va.nic_counters == {}


def test_an_up_loopback_reads_up_not_unknown():
    from linkdeck.parsers import sysfs_linux

    (lo, tun) = sysfs_linux.records({"lo": {"operstate": "unknown", "mtu": "65536"}, "tun0": {"operstate": "unknown"}})
    assert lo.oper == "up" and tun.oper == "unknown"  # only loopback is known to mean up


def test_route_sections_mark_the_default_interface_and_bad_ones_leave_it_off() -> None:
    route = (
        '[{"dst":"default","gateway":"10.77.0.1","dev":"br0","flags":[]},'
        '{"dst":"default","gateway":"10.78.0.1","dev":"veth0","metric":200,"flags":[]}]'
    )
    adapter = LinuxAdapter(runner=None)
    first, second = recorded_frames()
    sample = adapter.parse_frame(dict(first, route=route, route6="[]"))
    assert [n for n, i in sample.interfaces.items() if i.default_route] == ["br0"]  # metric 0 beats 200
    assert adapter.parse_frame(second).interfaces["br0"].default_route  # kept until the next slow facts
    garbled = adapter.parse_frame(dict(first, route='Option "-j" is unknown, try "ip -help".'))
    assert (
        not any(i.default_route for i in garbled.interfaces.values()) and garbled.counters["br0"].tx_bytes is not None
    )


def test_slow_facts_read_again_only_when_they_changed_and_samples_equal_reading_each() -> None:
    full, tick = recorded_frames()
    moved = {**full, "ip_addr": full["ip_addr"].replace('"local":"10.201.0.1"', '"local":"10.201.0.9"')}
    assert moved["ip_addr"] != full["ip_addr"]
    frames = [full, tick, full, moved, tick, moved, full, {**full, "tick": tick["tick"]}]
    memo, plain = LinuxAdapter(runner=None, facts_every=10), LinuxAdapter(runner=None, facts_every=10)
    reads = []
    read = memo._read_slow_facts
    memo._read_slow_facts = lambda sections: reads.append(sections) or read(sections)  # type: ignore[method-assign]
    for frame in frames:
        plain._slow_read = None  # the plain path: every slow-facts frame read
        assert memo.parse_frame(frame) == plain.parse_frame(frame)
    # read when they changed (first, moved, back); the same sections with another tick are not
    assert reads == [full, moved, full]
    assert memo.parse_frame(moved).interfaces[EVIL].addresses[0] == "10.201.0.9/24"


def test_a_host_without_ethtool_or_ss_says_what_that_costs_once() -> None:
    # a router's busybox: neither tool on the host; said on the host, and read again from the
    # kept full frame's list on every later slow-facts frame (not from the fixture's era,
    # which predates the list: no list, nothing said)
    frame = dict(recorded_frames()[0], tools="\n")
    adapter = LinuxAdapter(runner=None)
    sample = adapter.parse_frame(frame)
    assert sample.missing == (
        "no ethtool: no driver, rings, offloads or NIC counters (speed and duplex from sysfs)",
        "no ss: no per-flow view (w)",
    )
    assert sample.interfaces["br0"].mtu == 1500  # what sysfs gives stands
    assert adapter.parse_frame(recorded_frames()[1]).missing == sample.missing
    with_both = LinuxAdapter(runner=None).parse_frame(dict(recorded_frames()[0], tools="ethtool\nss\n"))
    assert with_both.missing == ()


def test_the_sampler_lists_the_tools_this_host_has() -> None:
    import shutil

    frames = split_frames(
        subprocess.run(
            ["sh", "-c", build_script(3)], input="\n", capture_output=True, text=True, timeout=30
        ).stdout.splitlines()
    )
    tools = next(f["tools"] for f in frames if "tools" in f).split()
    assert tools == [t for t in ("ethtool", "ss") if shutil.which(t, path="/usr/sbin:/sbin:/usr/bin:/bin")]
