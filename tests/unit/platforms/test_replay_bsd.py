"""A replayed FreeBSD 14 host over real SSH: sshd in a lab namespace whose login PATH starts
with tests/replay/bsd/ (uname → FreeBSD; netstat → the real ohai FreeBSD 14 `netstat -ibdn`
capture whose vtnet0 counters advance by a scripted step per call; ifconfig → the real
`ifconfig -a` of the same machine). linkdeck's Fleet connects, detects FreeBSD, shows the
capture's interfaces with their MTU and media facts, and live rates equal to the step divided
by the time between samples.
"""

from pathlib import Path

import pytest

from linkdeck.core.model import HostState
from linkdeck.fleet.collector import Fleet

pytestmark = pytest.mark.lab

REPLAY = Path(__file__).parents[2] / "replay" / "bsd"

# What tests/replay/bsd/netstat adds to vtnet0's link row per call.
STEP_RX_BYTES, STEP_TX_BYTES = 1_250_000, 625_000
STEP_RX_PKTS, STEP_TX_PKTS = 1000, 500


async def test_replayed_freebsd_host_live_over_ssh(make_lab, wait_for):
    lab = make_lab({"bsd": {"replay_bin": REPLAY}})
    updates = []
    fleet = Fleet([lab.spec("bsd")], lab.settings(interval=1.0, facts_every=3), updates.append)
    fleet.start()

    def rated():
        return [
            u
            for u in updates
            if u.state is HostState.LIVE and u.interfaces and u.interfaces[0].rates.rx_bps is not None
        ]

    try:
        await wait_for(lambda: len(rated()) >= 4, timeout=40, message="replayed FreeBSD host live with 4 rated ticks")
    finally:
        await fleet.stop()
    errors = [u.error for u in updates if u.error]
    assert not errors, errors

    last = rated()[-1]
    assert last.os == "freebsd"
    assert last.os_detail == "FreeBSD 14.1-RELEASE"
    views = {v.iface.name: v for v in last.interfaces}
    assert set(views) == {"vtnet0", "lo0"}
    vtnet0 = views["vtnet0"].iface
    assert (vtnet0.kind, vtnet0.oper, vtnet0.mtu, vtnet0.mac) == ("virtual", "up", 1500, "fa:16:3e:ba:3e:25")
    assert vtnet0.speed_mbps is None  # virtio's "10Gbase-T" is not a link speed
    assert ("media", "Ethernet autoselect (10Gbase-T <full-duplex>)") in vtnet0.extra
    assert vtnet0.addresses[0] == "140.211.10.91/26"
    assert (views["lo0"].iface.kind, views["lo0"].iface.mtu) == ("loopback", 16384)
    # route -n get default answered with the same machine's capture: vtnet0 carries it.
    assert vtnet0.default_route and not views["lo0"].iface.default_route
    assert views["lo0"].rates.rx_bps == 0

    # Each tick the counters moved by exactly one step; the rate is that step over the time
    # between the two samples (the remote `date +%s.%N` here, GNU date in the lab).
    ticks = rated()
    for prev, cur in zip(ticks, ticks[1:]):
        dt = cur.time - prev.time
        rates = {v.iface.name: v.rates for v in cur.interfaces}["vtnet0"]
        assert rates.rx_bps == pytest.approx(STEP_RX_BYTES * 8 / dt, rel=1e-6)
        assert rates.tx_bps == pytest.approx(STEP_TX_BYTES * 8 / dt, rel=1e-6)
        assert rates.rx_pps == pytest.approx(STEP_RX_PKTS / dt, rel=1e-6)
        assert rates.tx_pps == pytest.approx(STEP_TX_PKTS / dt, rel=1e-6)
        # netstat -s -p tcp: 2000 segments sent and 20 retransmitted per call
        assert cur.tcp.out_segs_ps == pytest.approx(2000 / dt, rel=1e-6) and cur.tcp.retrans_pct == pytest.approx(1.0)
        assert (
            cur.tcp.in_segs_ps == 0 and cur.tcp.in_csum_errs_ps == 0 and cur.tcp.rcvq_drops_ps is None
        )  # not a BSD counter
    # At one call per 1 s interval that is ~10 Mb/s in and ~5 Mb/s out.
    rx = views["vtnet0"].rates.rx_bps
    assert rx == pytest.approx(10e6, rel=0.05)
    assert views["vtnet0"].rates.tx_bps == pytest.approx(5e6, rel=0.05)
    periods = [b.time - a.time for a, b in zip(ticks, ticks[1:])]
    print(
        f"\nreplayed FreeBSD: vtnet0 rx {rx / 1e6:.2f} Mb/s (scripted 10 Mb/s per 1 s), "
        f"tick periods {', '.join(f'{p:.3f}' for p in periods)} s"
    )
