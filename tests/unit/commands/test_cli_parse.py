"""`linkdeck parse` through the real CLI (python3 -m linkdeck) on fixtures, header stripped."""

import json
import subprocess

import pytest

from tests.cli import linkdeck
from tests.corpus import fixture


def linkdeck_parse(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return linkdeck("parse", *args, stdin=stdin)


def as_json(*args: str, stdin: str | None = None) -> dict:
    out = linkdeck_parse(*args, "--json", stdin=stdin)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_file_argument_ethtool_rings_name_from_command(tmp_path):
    path = tmp_path / "rings.txt"
    path.write_text(fixture("linux/ethtool-g__insights-core-eth2-sosreport.txt"))
    doc = as_json("--os", "linux", "--command", "ethtool -g eth2", str(path))
    assert (doc["os"], doc["command"]) == ("linux", "ethtool -g eth2")
    (iface,) = doc["interfaces"]
    assert iface["name"] == "eth2"
    assert (iface["ring_rx"], iface["ring_rx_max"], iface["ring_tx"], iface["ring_tx_max"]) == (200, 2047, 511, 511)
    # What ethtool -g does not say is null, with the snapshot --json field names.
    assert iface["speed_mbps"] is None and iface["mtu"] is None and iface["kind"] is None
    assert iface["counters"] == dict.fromkeys(
        ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_drops", "tx_drops"]
    )


def test_stdin_ip_s_link_bond():
    doc = as_json(
        "--os",
        "linux",
        "--command",
        "ip -s link show bond1",
        stdin=fixture("linux/ip-s-link-show__ha-unraid-issue-13-bond1.txt"),
    )
    (iface,) = doc["interfaces"]
    assert (iface["name"], iface["kind"], iface["oper"], iface["mtu"]) == ("bond1", "bond", "up", 9000)
    assert iface["counters"]["rx_bytes"] == 770731719960 and iface["counters"]["rx_drops"] == 185979


def test_ip_json_members_over_and_addresses():
    doc = as_json(
        "--os", "linux", "--command", "ip -d -s -s -j link", stdin=fixture("linux/captured-ip-d-s-s-j-link.txt")
    )
    ifaces = {i["name"]: i for i in doc["interfaces"]}
    assert ifaces["br0"]["members"] == ["veth0", "vpeer2"] and ifaces["br0"]["kind"] == "bridge"
    assert ifaces["mv0"]["over"] == "br0" and ifaces["mv0"]["kind"] == "vnic"
    assert ifaces["veth0"]["counters"]["tx_bytes"] == 5140390
    doc = as_json("--os", "linux", "--command", "ip -j addr", stdin=fixture("linux/captured-ip-j-addr.txt"))
    assert {i["name"]: i["addresses"] for i in doc["interfaces"]}["br0"][0] == "192.0.2.1/24"


def test_ethtool_settings_and_stats():
    doc = as_json(
        "--os", "linux", "--command", "ethtool eth0", stdin=fixture("linux/ethtool__lolyu-aoi-tg3-debian11.txt")
    )
    (iface,) = doc["interfaces"]
    assert (iface["speed_mbps"], iface["duplex"], iface["supported_speeds_mbps"]) == (1000, "full", [10, 100, 1000])
    doc = as_json(
        "--os",
        "linux",
        "--command",
        "ethtool -S eth0",
        stdin=fixture("linux/ethtool-S__bpf-list-mlx5-kernel-5.15-filtered.txt"),
    )
    (iface,) = doc["interfaces"]
    assert iface["name"] == "eth0" and iface["nic_counters"]["rx_out_of_buffer"] == 990473555


def test_proc_net_dev_table_escapes_hostile_names():
    text = (
        fixture("linux/proc-net-dev__jc-linux-proc-fixture.txt")
        + " ev\x1b[31mil: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
    )
    out = linkdeck_parse("--os", "linux", "--command", "cat /proc/net/dev", stdin=text)
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout
    assert "ev\\x1b[31mil" in out.stdout
    header, *rows = out.stdout.splitlines()
    assert header.split()[:3] == ["IFACE", "KIND", "OPER"]
    ens33 = next(r for r in rows if r.startswith("ens33"))
    assert ens33.split()[6:10] == ["60600053", "44256546", "109378", "121425"]


def test_iperf3_prints_result_not_interfaces():
    doc = as_json(
        "--os", "linux", "--command", "iperf3 -c 192.0.2.1 --bidir -J -t 1", stdin=fixture("iperf3/captured-bidir.json")
    )
    assert "interfaces" not in doc
    r = doc["iperf3"]
    assert (r["mode"], r["version"], r["forward_retransmits"], r["reverse_retransmits"]) == ("bidir", "3.12", 37, 3)
    assert r["forward_received_bps"] == pytest.approx(16988086419.186161)
    assert r["streams"][1]["direction"] == "reverse"
    text = linkdeck_parse(
        "--os", "freebsd", "--command", "iperf3 -c h -J -R", stdin=fixture("iperf3/captured-reverse.json")
    )
    assert text.returncode == 0
    assert "reverse (server → client): sent 18.3 Gb/s, received 18.3 Gb/s, 11 retransmits" in text.stdout


def test_iperf3_json_stream_error():
    doc = as_json(
        "--os",
        "linux",
        "--command",
        "iperf3 -c h --json-stream",
        stdin=fixture("iperf3/iperf3-json-stream-error-server-busy__omnt-issue-34.txt"),
    )
    assert doc["iperf3"]["intervals"] == []
    assert doc["iperf3"]["result"]["error"] == "the server is busy running a test. try again later"


def test_other_os_parsers_are_reachable():
    doc = as_json(
        "--os",
        "smartos",
        "--command",
        "kstat -p link:0:",
        stdin=fixture("illumos/kstat-p-link0__datadog-fixture-smartos-zone.txt"),
    )
    net0 = {i["name"]: i for i in doc["interfaces"]}["net0"]
    assert net0["counters"]["rx_bytes"] == 113983614 and net0["speed_mbps"] == 10000


def assert_one_clean_line(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    return lines[0]


def test_garbage_exits_2_with_the_parsers_message():
    line = assert_one_clean_line(
        linkdeck_parse("--os", "linux", "--command", "ip -s -j link", stdin="<html>oops</html>")
    )
    assert line.startswith("linkdeck parse: ip -s -j link: not JSON")
    line = assert_one_clean_line(
        linkdeck_parse(
            "--os", "linux", "--command", "ethtool -g eth0", stdin=fixture("linux/captured-ethtool-g-veth0.txt")
        )
    )
    assert "ring settings not available: netlink error: Operation not supported" in line


def test_a_link_left_out_is_named_on_stderr_and_exits_1():
    # constructed: eth1's mtu is no number; eth0 and the ESC in eth2's name are read
    text = (
        '[{"ifname": "eth0", "mtu": 9000, "addr_info": [{"local": "198.18.77.4", "prefixlen": 24}]},'
        ' {"ifname": "eth1", "mtu": "big"}, {"ifname": "\x1b[31mRED", "mtu": 1500}]'
    )
    for command in ("ip -j addr", "ip -s -j link"):
        out = linkdeck_parse("--os", "linux", "--command", command, "--json", stdin=text)
        assert out.returncode == 1, out.stderr
        assert [i["name"] for i in json.loads(out.stdout)["interfaces"]] == ["eth0", "\x1b[31mRED"]
        assert out.stderr == f"linkdeck parse: {command}: eth1: 'mtu' is not a non-negative integer: 'big': left out\n"


def test_undecodable_bytes_are_data_not_a_crash(tmp_path):
    path = tmp_path / "bin"
    path.write_bytes(b"\xff\xfe\x00garbage\x80\n")
    line = assert_one_clean_line(linkdeck_parse("--os", "linux", "--command", "cat /proc/net/dev", str(path)))
    assert line.startswith("linkdeck parse: cat /proc/net/dev:")
    assert "\x00" not in line


def test_unknown_command_lists_known_commands_for_that_os():
    line = assert_one_clean_line(linkdeck_parse("--os", "linux", "--command", "dladm show-link"))
    assert "no parser for 'dladm show-link' on linux" in line
    assert "ethtool -S IFACE" in line and "cat /proc/[N/|self/]net/dev" in line
    line = assert_one_clean_line(linkdeck_parse("--os", "freebsd", "--command", "ethtool eth0"))
    assert "ethtool" not in line.split("commands known for freebsd:")[1]


def test_unknown_os_and_missing_file():
    line = assert_one_clean_line(linkdeck_parse("--os", "beos", "--command", "cat /proc/net/dev"))
    assert "unknown OS 'beos'" in line and "smartos" in line
    line = assert_one_clean_line(
        linkdeck_parse("--os", "linux", "--command", "cat /proc/net/dev", "/nonexistent/capture.txt")
    )
    assert "cannot read /nonexistent/capture.txt: No such file or directory" in line


def test_help_lists_accepted_os_and_command_values():
    out = linkdeck_parse("--help")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    for os_name in ("linux", "freebsd", "opnsense", "macos", "openbsd", "smartos", "omnios", "solaris"):
        assert os_name in text
    blocks = out.stdout.split("accepted --command values, by --os")[1]
    linux = blocks.split("\nlinux:\n")[1].split("\nfreebsd")[0]
    assert "ethtool -S IFACE" in linux and "ethtool -g IFACE" in linux and "[busybox] ifconfig [-a]" in linux
    assert "dladm" not in linux and "route -n get" not in linux
    bsd = blocks.split("freebsd, ")[1]
    assert "netstat -s -p tcp" in bsd.split("illumos")[0] and "route -n get" in bsd.split("illumos")[0]
    illumos = blocks.split("solaris:\n")[1]
    assert "dladm show-phys" in illumos and "kstat -p" in illumos and "ethtool" not in illumos
