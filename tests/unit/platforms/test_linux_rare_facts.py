"""A host of few links (issue 20 §1, the 5-link host's remote CPU per sample): what rarely
changes — the offloads (`ethtool -k`, one per link), a NIC's driver (`ethtool -i`) and ring
sizes (`ethtool -g`) — is read on the first frame, when the set of links changes and every
RARE_FACTS-th slow-facts frame, and kept by the receiver in between; the NIC's speed and duplex
(`ethtool`) and its counters (`ethtool -S`, which the drops findings compare) stay in every
slow-facts frame.

The real sampler runs under sh in namespaces of its own over a CONSTRUCTED /sys/class/net
(see test_linux_large_host.py): `eth0` is a real veth whose sysfs directory says it is a NIC,
beside `lo` and `cali0` (3 links, at most FEW_LINKS)."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from linkdeck.platforms.linux import FEW_LINKS, RARE_FACTS, build_script
from tests.unit.platforms.test_linux_large_host import Sampler, _link, pytestmark  # noqa: F401

pytestmark = [pytestmark, pytest.mark.skipif(shutil.which("ethtool") is None, reason="needs ethtool")]

LINKS = ("lo", "eth0", "cali0")


@pytest.fixture
def net(tmp_path: Path) -> Path:
    net = tmp_path / "net"
    net.mkdir()
    _link(net, "lo", 1, "")
    _link(net, "eth0", 2, "1000", nic=True)
    _link(net, "cali0", 3, "10000")
    assert len(list(net.iterdir())) <= FEW_LINKS
    return net


def _ethtools(trace: str) -> Counter[str]:
    """The ethtool processes in an strace trace, by option ("" for `ethtool IF`)."""
    calls = re.findall(r'execve\("[^"]*/ethtool", \["ethtool", (?:"(-\w)", )?"[^"]+"\]', trace)
    return Counter(calls)


def _facts_run(net: Path, frames: int, trace: Path) -> Counter[str]:
    # every frame a slow-facts frame, the first alone a full one
    sampler = Sampler(net, build_script(1, 100_000), trace)
    try:
        assert len(sampler.frames(frames)) == frames
    finally:
        sampler.stop()
    return _ethtools(trace.read_text())


def test_a_small_hosts_facts_frames_read_the_rare_facts_every_few_frames(net: Path, tmp_path: Path) -> None:
    first = _facts_run(net, 1, tmp_path / "short")
    # the first frame: everything, the offloads of every link
    assert first == {"": 1, "-S": 1, "-g": 1, "-i": 1, "-k": len(LINKS)}, first
    more = 2 * RARE_FACTS
    run = _facts_run(net, 1 + more, tmp_path / "long")
    run.subtract(first)
    # 2 × RARE_FACTS more slow-facts frames: the NIC's speed and counters in each, its driver
    # and rings and every link's offloads in 2 of them (before: in each, 7 ethtools a frame)
    assert +run == {"": more, "-S": more, "-g": 2, "-i": 2, "-k": 2 * len(LINKS)}, run


def test_a_small_hosts_offloads_and_driver_come_on_the_first_frame_a_new_link_and_are_kept_between(net: Path) -> None:
    sampler = Sampler(net, build_script(1, 100_000))
    try:
        pairs = sampler.samples(RARE_FACTS + 2)
        assert all("attrs" in f for f, _ in pairs)  # every frame a slow-facts one
        assert [i for i, (f, _) in enumerate(pairs) if "ethtool_k eth0" in f] == [0, RARE_FACTS]
        assert [i for i, (f, _) in enumerate(pairs) if "ethtool_i eth0" in f] == [0, RARE_FACTS]
        assert [i for i, (f, _) in enumerate(pairs) if "ethtool_g eth0" in f] == [0, RARE_FACTS]
        assert all("ethtool eth0" in f and "ethtool_S eth0" in f for f, _ in pairs)
        # the receiver keeps them between: every sample knows the offloads (a veth's: TSO,
        # GSO, GRO on) and the driver's version (ethtool -i's), not only those of a reading
        for _, s in pairs:
            eth0, cali0 = s.interfaces["eth0"], s.interfaces["cali0"]
            assert eth0.offload is not None and "generic-segmentation-offload" in eth0.offload
            assert cali0.offload is not None
            assert eth0.driver_version == "1.0"
        # a link added: everyone's offloads come with the next frame, the rare facts' count
        # starting again from it
        _link(net, "veth70", 99, "10000")
        later = sampler.samples(2)
        assert "ethtool_k veth70" in later[0][0] and "ethtool_k eth0" in later[0][0]
        assert "ethtool_i eth0" in later[0][0]
        assert not any(k.startswith("ethtool_k ") for k in later[1][0])
        assert later[1][1].interfaces["eth0"].offload is not None
    finally:
        sampler.stop()
