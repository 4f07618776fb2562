"""A host's TCP health, passively, in the namespace lab (issue 19 §3): transfers linkdeck did
not start (a plain Python socket sender and receiver inside the namespaces, CUBIC, no
iperf3), watched over real SSH by the Fleet feeding a Diagnoser as the dashboard does; and a
test linkdeck runs itself, which is its own traffic."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from dataclasses import replace
from typing import Iterator

import pytest

from linkdeck.core.model import Finding, HostState, HostUpdate
from linkdeck.findings import tcp
from linkdeck.findings.engine import Diagnoser
from linkdeck.fleet.collector import Fleet
from linkdeck.probe.session import TestSession
from tests.lab import wait_for

pytestmark = pytest.mark.lab

INTERVAL = 0.5
WINDOW_S = 4.0
PORT = 5411

_RECEIVER = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(4)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    while c.recv(1 << 16):
        pass
    c.close()
"""

_SENDER = """
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
s.connect((sys.argv[1], int(sys.argv[2])))
end = time.monotonic() + float(sys.argv[3])
chunk = b"x" * (1 << 16)
while time.monotonic() < end:
    s.sendall(chunk)
s.close()
"""


@contextlib.contextmanager
def transfer(lab, src: str, dst: str, seconds: float) -> Iterator[subprocess.Popen]:
    """A plain TCP transfer from ``src`` to ``dst`` that linkdeck knows nothing about."""
    receiver = lab.hosts[dst].popen(sys.executable, "-c", _RECEIVER, str(PORT), stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout.readline().strip() == "ready"
        sender = lab.hosts[src].popen(sys.executable, "-c", _SENDER, lab.hosts[dst].address, str(PORT), str(seconds))
        try:
            yield sender
        finally:
            sender.kill()
            sender.wait(5)
    finally:
        receiver.kill()
        receiver.wait(5)
        receiver.stdout.close()


class Watch:
    """A Fleet feeding a Diagnoser (own traffic from ``own_traffic``), keeping every update."""

    def __init__(self, lab, names: list[str], own_traffic=lambda host: None) -> None:
        settings = lab.settings(interval=INTERVAL, test_duration=5)
        self.settings = replace(settings, thresholds=replace(settings.thresholds, window_s=WINDOW_S))
        self.diagnoser = Diagnoser(self.settings, own_traffic=own_traffic)
        self.updates: list[HostUpdate] = []
        self.last: dict[str, HostUpdate] = {}
        self.fleet = Fleet([lab.spec(n) for n in names], self.settings, self.on_update)

    def on_update(self, update: HostUpdate) -> None:
        self.updates.append(update)
        self.last[update.host] = update
        self.diagnoser.observe(update)

    def tcp_findings(self) -> list[Finding]:
        return [
            f
            for f in self.diagnoser.findings()
            if f.code in ("TCP_RETRANSMITS", "RECEIVER_PRUNING", "TCP_CHECKSUM_ERRORS")
        ]

    async def live(self) -> None:
        self.fleet.start()
        await wait_for(
            lambda: (
                all(u.state is HostState.LIVE and u.tcp is not None for u in self.last.values())
                and len(self.last) == len(self.fleet.collectors)
            ),
            30,
            message="hosts live",
        )

    def seen(self, host: str) -> int:
        return self.fleet.collectors[host].samples_seen


def sending(watch: Watch, host: str) -> list:
    return [u.tcp for u in watch.updates if u.host == host and u.tcp is not None and u.tcp.out_segs_ps]


async def test_a_path_that_drops_shows_retransmits_and_tcp_retransmits_on_the_sender(make_lab) -> None:
    lab = make_lab({"e": {"offload": False}, "b": {"offload": False}})
    # the bridge sends into b at 50 Mbit/s with a queue of ~5 frames in front: CUBIC fills it
    lab.hosts["b"].shape_inbound("eth0", 50, queue_bytes=8000)
    watch = Watch(lab, ["e", "b"])
    try:
        await watch.live()
        with transfer(lab, "e", "b", seconds=30):
            await wait_for(lambda: any(f.host == "e" for f in watch.tcp_findings()), 25, message="TCP_RETRANSMITS on e")
            found = watch.tcp_findings()
    finally:
        await watch.fleet.stop()
    (f,) = found
    assert f.code == "TCP_RETRANSMITS" and f.host == "e" and f.interface is None
    # the sender's counters: thousands of segments a second, several per cent sent again
    busy = sending(watch, "e")
    assert (
        max(r.out_segs_ps for r in busy) > 2000 and max(r.retrans_pct for r in busy if r.retrans_pct is not None) >= 1.0
    )
    # it names e's link that carried the transfer; the loss was past it, on the bridge
    assert "carried by eth0 (no drops or errors counted" in f.evidence and "further along the path" in f.evidence
    # the receiver's ACKs are not retransmitted: no finding about b
    assert all(x.host != "b" for x in found)


async def test_a_clean_pair_at_full_speed_raises_no_tcp_finding(make_lab) -> None:
    lab = make_lab({"e": {}, "b": {}})
    watch = Watch(lab, ["e", "b"])
    try:
        await watch.live()
        with transfer(lab, "e", "b", seconds=30):
            mark = watch.seen("e")
            # a full window and more while the transfer runs
            await wait_for(
                lambda: watch.seen("e") >= mark + int(WINDOW_S / INTERVAL) + 4, 25, message="a window of samples"
            )
            found = watch.tcp_findings()
    finally:
        await watch.fleet.stop()
    assert found == []
    busy = sending(watch, "e")
    assert len(busy) >= WINDOW_S / INTERVAL and min(r.out_segs_ps for r in busy[2:]) > 1000  # judged, not idle
    assert all(r.retrans_pct < 1.0 for r in busy if r.retrans_pct is not None)


async def test_a_test_linkdeck_runs_itself_raises_no_tcp_finding(make_lab) -> None:
    lab = make_lab({"e": {"offload": False}, "b": {"offload": False}})
    lab.hosts["b"].shape_inbound("eth0", 50, queue_bytes=8000)  # the same lossy path
    session: TestSession | None = None
    watch = Watch(lab, ["e", "b"], own_traffic=lambda host: session.own_traffic(host) if session else None)
    session = TestSession(
        {n: lab.spec(n) for n in lab.hosts}, watch.settings, lambda h: watch.last.get(h), lambda h, i: ()
    )
    try:
        await watch.live()
        outcome = await session.run_pair("e", "b", duration=6)
        assert outcome.result.error is None and outcome.result.forward_retransmits, outcome.result.error
        found = watch.tcp_findings()
        # the test's retransmits are in e's window: read as the host's own, they would be found
        hosts = [
            (h, tcp.TcpWindow(*w), [x for x in watch.diagnoser._watched() if x[0].host == h])
            for h, w in watch.diagnoser._tcp.items()
        ]
        assert "e" in {f.host for f in tcp.retransmits(hosts, watch.settings.thresholds)}
    finally:
        await watch.fleet.stop()
        await session.close()
    assert found == []
