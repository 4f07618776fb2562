"""A router or NAS in the namespace lab: host ``rtr`` whose SSH sessions see only busybox
applets (sh, awk, ip without -j, ping without -M) and iperf3; no ethtool, ss or iproute2.
Watched beside two ordinary hosts, it gives its addresses, MAC, MTU and default route from
what busybox has, says what it lacks, raises the MTU finding, and takes an iperf3 test."""

from __future__ import annotations

import json

import pytest

from tests.cli import linkdeck

pytestmark = pytest.mark.lab

NO_AGENT = ["SSH_AUTH_SOCK", "SSH_CONNECTION"]


def assert_only_busybox(lab, name: str) -> None:
    """The sampler on ``name`` really meets busybox: its shell, awk and ip are busybox, and
    there is no ethtool or ss to find (the ordinary host ``a`` has both)."""
    shell = lab.ssh(
        name, "readlink /proc/$$/exe; for t in /bin/awk /sbin/ip /bin/ping; do readlink $t; done"
    ).stdout.split()
    assert shell == ["/usr/bin/busybox", "busybox", "busybox", "busybox"]
    for tool in ("ethtool", "ss"):
        assert lab.ssh(name, f"command -v {tool}", check=False).returncode != 0
        assert lab.ssh("a", f"command -v {tool}").stdout.strip()


def test_a_busybox_router_at_9000_beside_two_1500_hosts(make_lab) -> None:
    with make_lab({"rtr": {"busybox": True, "mtu": 9000}, "a": {}, "b": {}}) as lab:
        rtr = lab.hosts["rtr"]
        rtr.ip("route", "add", "default", "via", lab.root_address, "dev", "eth0")
        mac = rtr.exec("cat", "/sys/class/net/eth0/address").stdout.strip()
        assert_only_busybox(lab, "rtr")
        out = linkdeck(
            "snapshot",
            "--json",
            "--interval",
            "0.5",
            "--ssh-config",
            str(lab.ssh_config),
            "--no-local",
            "rtr",
            "a",
            "b",
            drop_env=NO_AGENT,
        )
        test = linkdeck("test", "a", "rtr", "--time", "2", "--ssh-config", str(lab.ssh_config), drop_env=NO_AGENT)
    assert out.returncode == 0, out.stderr
    snap = json.loads(out.stdout)
    host = next(h for h in snap["hosts"] if h["name"] == "rtr")
    assert (host["state"], host["error"]) == ("live", None)
    missing = host["detail"]["missing"]
    assert missing.startswith("no ethtool: ") and "; no ss: " in missing
    eth0 = next(i for i in host["interfaces"] if i["name"] == "eth0")
    assert f"{rtr.address}/{lab.prefix}" in eth0["addresses"]  # from busybox `ip addr` text
    assert (eth0["mac"], eth0["mtu"], eth0["default_route"]) == (mac, 9000, True)

    found = [f for f in snap["findings"] if f["code"] == "MTU_MISMATCH"]
    assert [(f["host"], f["interface"]) for f in found] == [("rtr", "eth0")]
    assert found[0]["message"] == f"eth0 uses MTU 9000 in {lab.subnet}, which carries 1500"
    assert found[0]["evidence"].endswith(f"MTUs in {lab.subnet}: a eth0 1500; b eth0 1500; rtr eth0 9000")

    assert "Traceback" not in test.stderr and "share no subnet" not in test.stdout, test.stdout + test.stderr
    lines = test.stdout.splitlines()
    assert "  verdict: DEGRADED — MTU 9000 vs 1500 in one subnet" in lines
    path_mtu = next(line for line in lines if line.startswith("  Path MTU "))
    assert "cannot probe the path MTU from rtr: its ping has no don't-fragment option" in path_mtu
    # probed with iperf3's UDP up to what a's eth0 takes in (a frame a few bytes over an MTU
    # still arrives on Linux; no stream of the ends' sends one)
    assert "rtr → a 1500 bytes" in path_mtu and "1501" not in path_mtu, path_mtu
    directions = [line.split()[:3] for line in lines if line.startswith(("  a → rtr ", "  rtr → a ")) and "b/s" in line]
    assert directions == [["a", "→", "rtr"], ["rtr", "→", "a"]], test.stdout


def test_a_busybox_router_without_ip_gives_its_addresses_from_ifconfig(make_lab) -> None:
    """A busybox built without its ip applet (some NAS and switch firmware): eth0's address and
    MAC come from busybox's `ifconfig -a`, the default route from /proc/net/route, and the
    MTU finding is raised as with ip."""
    with make_lab({"rtr": {"busybox": True, "ip": False, "mtu": 9000}, "a": {}}) as lab:
        rtr = lab.hosts["rtr"]
        rtr.ip("route", "add", "default", "via", lab.root_address, "dev", "eth0")
        mac = rtr.exec("cat", "/sys/class/net/eth0/address").stdout.strip()
        assert lab.ssh("rtr", "command -v ip", check=False).returncode != 0
        assert lab.ssh("rtr", "readlink /sbin/ifconfig").stdout.split() == ["busybox"]
        out = linkdeck(
            "snapshot",
            "--json",
            "--interval",
            "0.5",
            "--ssh-config",
            str(lab.ssh_config),
            "--no-local",
            "rtr",
            "a",
            drop_env=NO_AGENT,
        )
    assert out.returncode == 0, out.stderr
    snap = json.loads(out.stdout)
    host = next(h for h in snap["hosts"] if h["name"] == "rtr")
    assert (host["state"], host["error"]) == ("live", None)
    assert "addresses" not in host["detail"]["missing"], host["detail"]["missing"]
    eth0 = next(i for i in host["interfaces"] if i["name"] == "eth0")
    assert f"{rtr.address}/{lab.prefix}" in eth0["addresses"]
    assert (eth0["mac"], eth0["mtu"], eth0["default_route"]) == (mac, 9000, True)
    found = [f for f in snap["findings"] if f["code"] == "MTU_MISMATCH"]
    assert [(f["host"], f["interface"]) for f in found] == [("rtr", "eth0")]
