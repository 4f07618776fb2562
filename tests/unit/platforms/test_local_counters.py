"""Issue #2: the LOCAL adapter's counters and rates, checked against real traffic.

Two namespaces joined by a veth cable; a TCP socket pushes a known number of bytes from one
end to the other (read to EOF by the receiver, so every byte crossed the cable — iperf3 -n
may end its test while the last bytes are still queued and drop them) while LocalAdapter + RateTracker run inside the
sending namespace (psutil and netlink read the namespace of the process that runs them) and print one JSON line per
tick.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.lab import scratch_namespaces, wait_until
from tests.lab.netns import listening, run

pytestmark = pytest.mark.lab

SENT = 32 * 1024 * 1024
INTERVAL = 0.2
# Shaping the sender to 250 Mbit/s stretches the transfer over ~1 s, so the rates are
# integrated over several ticks (and two shared cores are not saturated).
SHAPE = ["tbf", "rate", "250mbit", "burst", "400000", "latency", "50ms"]
MTU_A, MTU_B = 1400, 1500
ADDR_A, ADDR_B = "10.78.0.1", "10.78.0.2"  # only ever configured inside the two namespaces
PORT = 5201

_RECEIVER = r"""
import socket, sys
srv = socket.socket()
srv.bind(("0.0.0.0", int(sys.argv[1])))
srv.listen(1)
conn, _ = srv.accept()
total = 0
while chunk := conn.recv(1 << 20):
    total += len(chunk)
print(total, flush=True)
conn.close()
"""

_SENDER = r"""
import socket, sys
total = int(sys.argv[3])
block = b"\0" * (1 << 16)
with socket.create_connection((sys.argv[1], int(sys.argv[2]))) as s:
    for offset in range(0, total, len(block)):
        s.sendall(block[: total - offset])
    s.shutdown(socket.SHUT_WR)
    s.recv(1)  # the receiver closes after reading everything
"""

_MONITOR = r"""
import asyncio, json, sys
from linkdeck.platforms.psutil_adapter import LocalAdapter
from linkdeck.core.rates import RateTracker

async def main(ifname, interval, max_ticks):
    tracker = RateTracker()
    tick = 0
    async for sample in LocalAdapter(facts_every=1000).samples(interval):
        views = {v.iface.name: v for v in tracker.update(sample)}
        view, counters = views[ifname], sample.counters[ifname]
        i = view.iface
        print(json.dumps({
            "time": sample.time,
            "tx_bytes": counters.tx_bytes, "rx_bytes": counters.rx_bytes,
            "tx_bps": view.rates.tx_bps, "rx_bps": view.rates.rx_bps,
            "mtu": i.mtu, "kind": i.kind, "speed": i.speed_mbps, "oper": i.oper,
            "addresses": list(i.addresses), "duplex": i.duplex, "names": sorted(sample.interfaces),
        }), flush=True)
        tick += 1
        if tick == max_ticks:
            return

asyncio.run(main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3])))
"""


def _ip(ns: str, *args: str) -> None:
    run(["ip", "-n", ns, *args])


@pytest.fixture
def cable(require_root):
    """Namespaces a and b, veth ``vA`` (MTU 1400) in a cabled to ``vB`` (MTU 1500) in b."""
    with scratch_namespaces("cnt-a", "cnt-b") as (a, b):
        _ip(a, "link", "add", "vA", "mtu", str(MTU_A), "type", "veth", "peer", "name", "vB", "netns", b)
        _ip(b, "link", "set", "vB", "mtu", str(MTU_B))
        for ns, ifname, addr in ((a, "vA", ADDR_A), (b, "vB", ADDR_B)):
            _ip(ns, "addr", "add", f"{addr}/24", "dev", ifname)
            _ip(ns, "link", "set", ifname, "up")
            # Segmentation offload on (the veth default, made explicit): frames carry up to
            # 64 KB each, so per-packet header bytes stay far below the 5 % tolerance.
            run(["ip", "netns", "exec", ns, "ethtool", "-K", ifname, "tso", "on", "gso", "on"], check=False)
        # burst > 64 KB: tbf passes whole offloaded frames instead of re-segmenting them
        run(["ip", "netns", "exec", a, "tc", "qdisc", "replace", "dev", "vA", "root", *SHAPE])
        # The kernel's link watch reports "up" up to a second after the link comes up.
        for ns, ifname in ((a, "vA"), (b, "vB")):
            wait_until(lambda: _operstate(ns, ifname) == "up", 5, message=f"{ifname} operstate up")
        yield a, b


def _operstate(ns: str, ifname: str) -> str:
    return run(["ip", "netns", "exec", ns, "cat", f"/sys/class/net/{ifname}/operstate"]).stdout.strip()


def _read_tick(monitor: subprocess.Popen) -> dict:
    line = monitor.stdout.readline()
    if not line:
        raise AssertionError(f"monitor exited: {monitor.stderr.read()}")
    return json.loads(line)


def test_local_adapter_counts_and_rates_real_veth_traffic(cable):
    a, b = cable
    monitor = subprocess.Popen(
        ["ip", "netns", "exec", a, sys.executable, "-c", _MONITOR, "vA", str(INTERVAL), "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    receiver = subprocess.Popen(
        ["ip", "netns", "exec", b, sys.executable, "-c", _RECEIVER, str(PORT)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until(lambda: listening(receiver.pid, PORT), 10, message="receiver listening")
        ticks = [_read_tick(monitor), _read_tick(monitor)]
        started = time.monotonic()
        run(["ip", "netns", "exec", a, sys.executable, "-c", _SENDER, ADDR_B, str(PORT), str(SENT)], timeout=120)
        finished = time.monotonic()
        received = int(receiver.communicate(timeout=30)[0])
        # the tick that covers the end of the transfer, and one more that saw nothing leave
        while ticks[-1]["time"] < finished or ticks[-1]["tx_bps"] != 0:
            ticks.append(_read_tick(monitor))
    finally:
        for proc in (monitor, receiver):
            proc.terminate()
            proc.wait(10)
            proc.stdout.close()
            proc.stderr.close()

    assert received == SENT

    baseline = max(i for i, t in enumerate(ticks) if t["time"] < started)
    window = ticks[baseline:]
    counted = window[-1]["tx_bytes"] - window[0]["tx_bytes"]
    # Rates × elapsed, summed over the ticks, must give back the bytes (bits/s → bytes).
    integrated = sum(t["tx_bps"] * (t["time"] - prev["time"]) / 8 for prev, t in zip(window, window[1:]))
    print(f"sent {SENT} B; counters {counted} B ({counted / SENT - 1:+.2%}); "
          f"rates×time {integrated:.0f} B ({integrated / SENT - 1:+.2%}) over {len(window) - 1} ticks")  # fmt: skip

    assert len(window) >= 5  # baseline + several ticks while bytes flowed
    assert SENT <= counted <= SENT * 1.05
    assert integrated == pytest.approx(counted, rel=1e-6)
    assert SENT * 0.95 <= integrated <= SENT * 1.05
    # the direction is right: the sender's veth received only acknowledgements
    assert window[-1]["rx_bytes"] - window[0]["rx_bytes"] < counted * 0.05

    facts = ticks[-1]
    assert facts["mtu"] == MTU_A
    assert facts["kind"] == "virtual"
    assert facts["speed"] is None  # veth reports a made-up 10000 Mb/s
    assert facts["duplex"] is None
    assert facts["oper"] == "up"
    assert f"{ADDR_A}/24" in facts["addresses"]


def test_local_adapter_reads_the_namespace_it_runs_in(cable):
    _, b = cable
    out = run(["ip", "netns", "exec", b, sys.executable, "-c", _MONITOR, "vB", "0.1", "2"], timeout=30)
    last = json.loads(out.stdout.splitlines()[-1])
    assert last["names"] == ["lo", "vB"]  # vA and the machine's own NICs are elsewhere
    assert last["mtu"] == MTU_B
    assert f"{ADDR_B}/24" in last["addresses"]
    assert last["oper"] == "up"
    # the kernel makes up 10000 Mb/s for a veth; the adapter must not believe it
    assert run(["ip", "netns", "exec", b, "cat", "/sys/class/net/vB/speed"]).stdout.strip() == "10000"
    assert last["speed"] is None and last["kind"] == "virtual"
