"""A host of more than FEW_LINKS links (a Kubernetes node's hundreds of veths, issue 20 §1):
its slow facts read sysfs only for the links whose speed means something, and what must stay
fresh still does.

The real sampler runs under sh in a network namespace of its own (real /proc/net/dev, real
`ip -j addr`) over a CONSTRUCTED /sys/class/net, bind-mounted in a mount namespace of its own:
no physical NIC can be moved into a test's namespace, so `eth0` is a real veth whose sysfs
directory says it is a NIC (a `device` with a driver) and whose speed and carrier_changes the
test writes, beside 70 veth directories (71 links in all, more than FEW_LINKS = 64)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from linkdeck.core.model import HostSample
from linkdeck.platforms.adapter import FRAME_END, split_frames
from linkdeck.platforms.linux import FEW_LINKS, OFFLOAD_FULLS, LinuxAdapter, build_script
from tests.unit.platforms.test_linux_tick_processes import _programs

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not (shutil.which("strace") and shutil.which("unshare") and shutil.which("ip")),
    reason="needs root (namespaces), strace, unshare and ip",
)

VETHS = [f"veth{i:02d}" for i in range(70)]  # sysfs only: not in /proc/net/dev, not in the model


def _link(net: Path, name: str, ifindex: int, speed: str, nic: bool = False) -> None:
    d = net / name
    d.mkdir()
    for attr, value in {
        "type": "772" if name == "lo" else "1",
        "uevent": f"INTERFACE={name}\nIFINDEX={ifindex}",
        "operstate": "unknown" if name == "lo" else "up",
        "carrier_changes": "2",
        "mtu": "1500",
        "speed": speed,
        "duplex": "full",
    }.items():
        (d / attr).write_text(value + "\n")
    if nic:
        (d / "device").mkdir()
        (d / "device" / "uevent").write_text("DRIVER=e1000e\nPCI_SLOT_NAME=0000:00:1f.6\n")


def _fake_sys(root: Path) -> Path:
    net = root / "net"
    net.mkdir()
    _link(net, "lo", 1, "")
    _link(net, "eth0", 2, "1000", nic=True)
    _link(net, "cali0", 3, "10000")
    for i, name in enumerate(VETHS):
        _link(net, name, 10 + i, "10000")
    assert len(list(net.iterdir())) > FEW_LINKS
    return net


class Sampler:
    """The sampler in its namespaces, read frame by frame; ``trace``: strace's file."""

    def __init__(self, net: Path, script: str, trace: Path | None = None) -> None:
        strace = f"strace -f -qq -e trace=execve,openat,exit_group -o {trace} " if trace else ""
        inner = (
            "ip link set lo up && ip link add eth0 type veth peer name cali0 && "
            "ip link set eth0 up && ip link set cali0 up"
            f' && mount --bind {net} /sys/class/net && exec {strace}sh -c "$1"'
        )
        self.proc = subprocess.Popen(
            ["unshare", "--net", "--mount", "sh", "-c", inner, "sh", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.ticks = 0  # asked for (the first frame comes unasked)
        self.lines: list[str] = []
        self.adapter = LinuxAdapter(runner=None)
        self.kept: dict[str, str] = {}  # what the receiver keeps between frames (KEPT_SECTIONS)

    def frames(self, count: int) -> list[dict[str, str]]:
        """The next ``count`` frames, whole (deltas expanded against everything read so far)."""
        assert self.proc.stdout is not None and self.proc.stdin is not None
        done = self.lines.count(FRAME_END)
        while self.ticks < done + count - 1:  # the client's ticks (transport.base.Ticker)
            self.proc.stdin.write("\n")
            self.ticks += 1
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if self.lines.count(FRAME_END) >= done + count:
                break
        return split_frames(self.lines)[done : done + count]

    def samples(self, count: int) -> list[tuple[dict[str, str], HostSample]]:
        """Each frame as sent, and its sample as the receiver makes it (with what it kept)."""
        out = []
        for sent in self.frames(count):
            self.kept, frame = self.adapter.with_kept(self.kept, sent)
            out.append((sent, self.adapter.parse_frame(frame)))
        return out

    def in_netns(self, *argv: str) -> None:
        subprocess.run(["nsenter", f"--net=/proc/{self.proc.pid}/ns/net", *argv], check=True)

    def stop(self) -> None:
        # the client gone, as a runner closes the stream: the loop meets EOF and ends, its
        # awk with it, and strace, their tracer, with them
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        finally:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def net(tmp_path: Path) -> Path:
    return _fake_sys(tmp_path)


def test_a_nics_renegotiated_speed_on_a_large_host_comes_with_the_next_facts_frame(net: Path) -> None:
    sampler = Sampler(net, build_script(3))
    try:
        first = sampler.samples(2)[-1][1]
        assert first.interfaces["eth0"].speed_mbps == 1000 and first.interfaces["eth0"].kind == "physical"
        # renegotiated without a carrier change (a driver that does it in place): the next
        # slow-facts frame, within facts_every (3) ticks, reads it
        (net / "eth0" / "speed").write_text("100\n")
        seen = [s.interfaces["eth0"].speed_mbps for _, s in sampler.samples(4)]
        assert seen[-1] == 100 and 100 in seen[:3], seen
    finally:
        sampler.stop()


def test_a_nics_carrier_change_on_a_large_host_brings_the_slow_facts_at_once(net: Path) -> None:
    # slow facts only on the first frame and when carrier_changes moves
    sampler = Sampler(net, build_script(100_000))
    try:
        assert sampler.samples(2)[-1][1].interfaces["eth0"].speed_mbps == 1000
        (net / "eth0" / "speed").write_text("100\n")
        assert [s.interfaces["eth0"].speed_mbps for _, s in sampler.samples(3)] == [1000] * 3  # no facts frame came
        # the link went down and up at 100 Mb/s: carrier_changes, read every tick for a NIC
        # (for every link only on a host of at most FEW_LINKS), moved
        (net / "eth0" / "carrier_changes").write_text("4\n")
        frames = sampler.samples(2)
        assert any("attrs" in f for f, _ in frames)
        assert frames[-1][1].interfaces["eth0"].speed_mbps == 100
        assert frames[-1][1].interfaces["eth0"].carrier_changes == 4
    finally:
        sampler.stop()


def test_a_veths_mtu_and_state_on_a_large_host_come_within_the_facts_cadence(net: Path) -> None:
    sampler = Sampler(net, build_script(3))
    try:
        sample = sampler.samples(2)[-1][1]
        assert sample.interfaces["cali0"].mtu == 1500 and sample.interfaces["cali0"].oper == "up"
        assert sample.interfaces["cali0"].kind == "virtual" and sample.interfaces["cali0"].speed_mbps is None
        sampler.in_netns("ip", "link", "set", "cali0", "mtu", "1400")
        sampler.in_netns("ip", "link", "set", "cali0", "down")
        seen = [(s.interfaces["cali0"].mtu, s.interfaces["cali0"].oper) for _, s in sampler.samples(4)]
        assert seen[-1] == (1400, "down") and (1400, "down") in seen[:3], seen
    finally:
        sampler.stop()


def test_a_new_link_on_a_large_host_has_its_kind_within_the_facts_cadence(net: Path) -> None:
    sampler = Sampler(net, build_script(3))
    try:
        assert "pod1" not in sampler.samples(2)[-1][1].interfaces
        _link(net, "pod1", 200, "10000")
        _link(net, "pod2", 201, "10000")
        sampler.in_netns("ip", "link", "add", "pod1", "type", "veth", "peer", "name", "pod2")
        pairs = sampler.samples(4)
        kinds = [s.interfaces["pod1"].kind if "pod1" in s.interfaces else None for _, s in pairs]
        assert kinds[-1] == "virtual" and "virtual" in kinds[:3], kinds
        # its full frame came (the kinds of every link, the new one's among them)
        assert any("/sys/class/net/pod1/type:1" in f.get("kinds", "") for f, _ in pairs)
    finally:
        sampler.stop()


def _net_dir_reads(trace: str) -> int:
    """How often the sampler listed /sys/class/net (a glob of its links)."""
    return len(re.findall(r'openat\(AT_FDCWD, "/sys/class/net/?", [^)]*O_DIRECTORY', trace))


def test_a_large_host_lists_its_links_on_slow_facts_ticks_only(net: Path, tmp_path: Path) -> None:
    reads = []
    for frames in (3, 13):
        sampler = Sampler(net, build_script(5), tmp_path / f"trace{frames}")
        try:
            sampler.frames(frames)
        finally:
            sampler.stop()
        reads.append(_net_dir_reads((tmp_path / f"trace{frames}").read_text()))
    # ten more ticks, two of them slow-facts ticks (on a host of few links: ten listings)
    assert 1 <= reads[1] - reads[0] <= 3, reads


def _opened(trace: str) -> Counter[str]:
    """The /sys/class/net files the sampler opened (successfully or not), by LINK/ATTR."""
    return Counter(m for m in re.findall(r'openat\(AT_FDCWD, "/sys/class/net/([^"]+)"', trace))


def _facts_run(net: Path, frames: int, trace: Path) -> tuple[list[str], Counter[str]]:
    # every frame a slow-facts frame, the first alone a full one
    sampler = Sampler(net, build_script(1, 100_000), trace)
    try:
        got = sampler.frames(frames)
        assert "kinds" in got[0] and all("attrs" in f and "kinds" not in f for f in got[1:])
    finally:
        sampler.stop()
    text = trace.read_text()
    return _programs(text), _opened(text)


def test_a_facts_frame_on_a_large_host_reads_the_nics_files_and_starts_no_grep(net: Path, tmp_path: Path) -> None:
    short_programs, short_files = _facts_run(net, 3, tmp_path / "short")
    long_programs, long_files = _facts_run(net, 13, tmp_path / "long")
    extra = Counter(long_programs)
    extra.subtract(short_programs)
    # ten more slow-facts frames: `ip` for the addresses and the two default routes, ethtool's
    # four for the NIC where it is installed; no sleep, no grep over 600 files
    assert extra["grep"] == 0, extra
    assert 27 <= extra["ip"] <= 33, extra
    assert set(+extra) <= {"ip", "ethtool"}, extra
    files = Counter(long_files)
    files.subtract(short_files)
    files = +files
    # sysfs: the NIC's state every tick, its speed and duplex every facts frame; not one of
    # the 70 veths' files (before: their speed, duplex and carrier_changes, 210 a frame)
    assert set(files) == {"eth0/operstate", "eth0/carrier_changes", "eth0/speed", "eth0/duplex"}, files
    assert all(9 <= n <= 11 for n in files.values()), files


@pytest.mark.skipif(shutil.which("ethtool") is None, reason="needs ethtool")
def test_a_large_hosts_offloads_come_on_its_first_frame_a_new_link_and_every_few_full_frames(net: Path) -> None:
    # every frame a full one (the kinds), so the frames the offloads (one ethtool per link)
    # ride in are counted in full frames
    sampler = Sampler(net, build_script(1, 1))
    try:
        pairs = sampler.samples(OFFLOAD_FULLS + 2)
        assert all("kinds" in f for f, _ in pairs)
        with_offloads = [i for i, (f, _) in enumerate(pairs) if "ethtool_k eth0" in f]
        assert with_offloads == [0, OFFLOAD_FULLS]
        assert sum(k.startswith("ethtool_k ") for k in pairs[0][0]) == 3 + len(VETHS)
        # the receiver keeps them between: a link's offloads are known in every sample
        assert all(s.interfaces["cali0"].offload is not None for _, s in pairs)
        # a link added: its offloads, everyone's, come with the frame that has it
        _link(net, "veth70", 99, "10000")
        later = sampler.frames(3)
        assert any("ethtool_k veth70" in f for f in later)
    finally:
        sampler.stop()
