"""This machine's adapter (platforms.detect.open_local): on the BSDs, macOS and illumos the
OS's own adapter through the local runner, on Linux and elsewhere psutil. The BSD and illumos
paths run here against the replay commands of tests/replay/ (real captures, put first on PATH),
exactly as they would run on such a machine; the psutil path runs with netlink hidden."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from linkdeck.platforms.bsd import BsdAdapter
from linkdeck.platforms.detect import open_local
from linkdeck.platforms.illumos import IllumosAdapter
from linkdeck.platforms.psutil_adapter import LocalAdapter
from linkdeck.settings.config import Settings
from linkdeck.transport.local_runner import LocalRunner

REPLAY = Path(__file__).parents[2] / "replay"


class ReplayRunner(LocalRunner):
    """The local runner with a replay directory first on PATH and HOME (the replay scripts'
    call counters) in a temporary directory."""

    def __init__(self, replay: Path, home: Path) -> None:
        self.env = [f"PATH={replay}:{os.environ['PATH']}", f"HOME={home}"]

    async def run(self, argv, timeout: float = 10.0):
        return await super().run(["/usr/bin/env", *self.env, *argv], timeout)

    def stream(self, argv, tick=None):
        return super().stream(["/usr/bin/env", *self.env, *argv], tick)


async def two_samples(adapter, interval: float = 0.2):
    got = []
    try:
        async with contextlib.aclosing(adapter.samples(interval)) as samples:  # stops the sampler
            async for sample in samples:
                got.append(sample)
                if len(got) == 2:
                    return got
    finally:
        await adapter.close()
    raise AssertionError("the sampler ended early")


async def test_local_freebsd_runs_the_bsd_adapter_through_the_local_runner(tmp_path) -> None:
    adapter = await open_local(Settings(facts_every=1), "freebsd", ReplayRunner(REPLAY / "bsd", tmp_path))
    assert isinstance(adapter, BsdAdapter) and adapter.os == "freebsd" and adapter.os_detail == "FreeBSD 14.1-RELEASE"
    first, second = await two_samples(adapter)
    vtnet0 = second.interfaces["vtnet0"]
    # what ifconfig says and psutil cannot: the media line, the address from the same capture
    assert dict(vtnet0.extra)["media"] == "Ethernet autoselect (10Gbase-T <full-duplex>)"
    assert vtnet0.addresses[0] == "140.211.10.91/26" and vtnet0.mtu == 1500
    assert vtnet0.speed_mbps is None  # a virtio NIC's 10G is made up
    # the replayed netstat adds 1,250,000 bytes in per call
    assert second.counters["vtnet0"].rx_bytes - first.counters["vtnet0"].rx_bytes == 1_250_000


async def test_local_smartos_runs_the_illumos_adapter_through_the_local_runner(tmp_path) -> None:
    adapter = await open_local(Settings(facts_every=1), "illumos", ReplayRunner(REPLAY / "illumos", tmp_path))
    assert isinstance(adapter, IllumosAdapter) and adapter.os == "smartos"
    _, second = await two_samples(adapter)
    aggr = second.interfaces["aggr0"]
    assert (aggr.kind, aggr.members, aggr.speed_mbps) == ("bond", ("i40e0", "i40e1", "i40e2", "i40e3"), 40000)
    port = second.interfaces["i40e3"]
    assert (port.kind, port.speed_mbps, port.duplex) == ("physical", 10000, "full")


async def test_local_linux_and_other_oses_read_psutil(monkeypatch) -> None:
    # netlink hidden (pyroute2 absent, as on a machine without it) and an OS with no adapter of
    # its own (Windows): psutil alone still gives every interface with counters and facts.
    monkeypatch.setitem(sys.modules, "pyroute2", None)
    for os_name in ("linux", "win32"):
        adapter = await open_local(Settings(), os_name)
        assert isinstance(adapter, LocalAdapter) and adapter.os == os_name
        async with contextlib.aclosing(adapter.samples(0.1)) as samples:
            sample = await samples.__anext__()
        lo = sample.interfaces["lo"]
        assert lo.kind == "loopback" and lo.speed_mbps is None and lo.mtu == 65536
        assert sample.counters["lo"].rx_bytes is not None
        await adapter.close()
