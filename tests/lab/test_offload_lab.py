"""A veth's offloads over real SSH (issue 23): the Linux sampler reads ethtool -k with the slow
facts, and a sender whose TSO/GSO makes its TX packet count a fraction of the wire's gets the
interface screen's explanation from a real iperf3 transfer; the same host with offload off
does not."""

from __future__ import annotations

import asyncio
import os

import pytest

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.fleet.collector import Fleet
from linkdeck.ui.screens.interface_screen import burst_notes
from tests.lab import wait_for

pytestmark = pytest.mark.lab

SEGMENTATION = ("tcp-segmentation-offload", "generic-segmentation-offload")


async def test_offload_read_over_ssh_and_bursts_explained_only_where_on(make_lab) -> None:
    with make_lab({"on": {}, "off": {"offload": False}, "rx": {}}) as lab:
        updates: list[HostUpdate] = []
        fleet = Fleet(
            [lab.spec(n) for n in ("on", "off", "rx")], lab.settings(interval=0.5, facts_every=2), updates.append
        )
        fleet.start()

        def eth0(host: str):
            for u in reversed(updates):
                if u.host == host and u.state == HostState.LIVE:
                    return next((v for v in u.interfaces if v.iface.name == "eth0"), None)
            return None

        try:
            await wait_for(
                lambda: all(eth0(h) is not None and eth0(h).iface.offload is not None for h in ("on", "off")),
                timeout=20,
                message="offloads read",
            )
            # the lab's veths as the kernel set them: TSO and GSO on, GRO off; `ethtool -K … off` all off
            assert eth0("on").iface.offload == SEGMENTATION
            assert eth0("off").iface.offload == ()
            rx = lab.hosts["rx"]
            notes: dict[str, list] = {"on": [], "off": []}
            for sender in ("on", "off"):
                server = rx.popen("iperf3", "-s", "-1", "-p", "5201", stdout=open(os.devnull, "w"))
                await asyncio.sleep(0.3)
                start = len(updates)
                await asyncio.to_thread(
                    lab.hosts[sender].exec, "iperf3", "-c", rx.address, "-p", "5201", "-t", "2", timeout=30
                )
                server.wait(10)
                busy = [
                    v
                    for u in updates[start:]
                    if u.host == sender
                    for v in u.interfaces
                    if v.iface.name == "eth0" and (v.rates.tx_bps or 0) > 50e6
                ]
                assert busy, f"no busy tick on {sender}"
                notes[sender] = [n for v in busy for n in burst_notes(v)]
            # TSO on: bursts of tens of kB counted as one packet, explained on every busy tick
            assert notes["on"] and all(
                label == "TX packets" and "TSO and GSO on (ethtool -k)" in text for label, text in notes["on"]
            )
            # offload off: packets are frames, nothing to explain
            assert notes["off"] == []
        finally:
            await fleet.stop()
