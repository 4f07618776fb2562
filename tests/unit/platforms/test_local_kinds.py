"""This machine's Linux and a remote Linux give a link the same kind: the local adapter reads
the sysfs files the remote sampler reads (grep -Hs . /sys/class/net/*/ATTR) and judges them
by the same rule. The trees here are constructed, laid out as the kernel lays them out: a
Wi-Fi link (DEVTYPE=wlan, a device behind it), an Open vSwitch internal port (no DEVTYPE, no
device), a veth, a vlan, a bridge, a bond and a tun."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from linkdeck.parsers import sysfs_linux
from linkdeck.platforms.psutil_adapter import _linux_kind

TREE = {
    "wlp2s0": {"type": "1", "uevent": "DEVTYPE=wlan\nINTERFACE=wlp2s0\nIFINDEX=3", "device/uevent": "DRIVER=iwlwifi"},
    "ovs-br0": {"type": "1", "uevent": "INTERFACE=ovs-br0\nIFINDEX=4"},
    "veth0": {"type": "1", "uevent": "INTERFACE=veth0\nIFINDEX=5"},
    "eth0.10": {"type": "1", "uevent": "DEVTYPE=vlan\nINTERFACE=eth0.10"},
    "br0": {"type": "1", "uevent": "DEVTYPE=bridge\nINTERFACE=br0", "bridge/bridge_id": "8000.aabbccddeeff"},
    "bond0": {"type": "1", "uevent": "DEVTYPE=bond\nINTERFACE=bond0", "bonding/slaves": "eth1 eth2"},
    "tun0": {"type": "65534", "uevent": "DEVTYPE=tun\nINTERFACE=tun0", "tun_flags": "0x1001"},
    "enp3s0": {"type": "1", "uevent": "INTERFACE=enp3s0", "device/uevent": "DRIVER=igb\nPCI_ID=8086:1533"},
    "lo": {"type": "772", "uevent": "INTERFACE=lo"},
}
WANT = {
    "wlp2s0": "wireless",
    "ovs-br0": "virtual",
    "veth0": "virtual",
    "eth0.10": "vlan",
    "br0": "bridge",
    "bond0": "bond",
    "tun0": "tunnel",
    "enp3s0": "physical",
    "lo": "loopback",
}


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    root = tmp_path / "sys" / "class" / "net"
    for name, files in TREE.items():
        for attr, text in files.items():
            path = root / name / attr
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n")
    return root


def remote_kinds(root: Path) -> dict[str, str]:
    """What the remote sampler prints for these files, through the remote parser."""
    globs = [str(root / "*" / attr) for attr in sysfs_linux.KIND_ATTRS]
    out = subprocess.run(
        ["sh", "-c", "grep -Hs . $*; true", "sh", *globs], capture_output=True, text=True, check=True
    ).stdout
    values = sysfs_linux.parse(out.replace(str(root) + "/", sysfs_linux.PREFIX))
    return {name: sysfs_linux.kind_of(name, attrs) for name, attrs in values.items()}


def test_this_machine_and_a_remote_linux_agree_on_every_kind(sysfs):
    local = {
        name: _linux_kind(name, {"kind": "openvswitch" if name == "ovs-br0" else None, "arphrd": 1}, "", root=sysfs)
        for name in TREE
    }
    assert local == remote_kinds(sysfs) == WANT
