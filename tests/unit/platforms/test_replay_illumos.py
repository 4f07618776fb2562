"""A replayed SmartOS host over real SSH: sshd in a lab namespace whose login PATH starts with
tests/replay/illumos/ (uname → SunOS/joyent_…, dladm/ipadm → the seed 003 host's real captures,
kstat → the real SmartOS link statistics advancing by scripted amounts per call, snaptime by
exactly 1 s per call). linkdeck's Fleet connects, detects the OS, builds the vnic → aggr →
ports topology and shows rates equal to the scripted advance.
"""

from pathlib import Path

import pytest

from linkdeck.core.model import HostState
from linkdeck.fleet.collector import Fleet

pytestmark = pytest.mark.lab

REPLAY = Path(__file__).parents[2] / "replay" / "illumos"

# bytes per (replayed) second the kstat script adds, per link: rx, tx
SCRIPTED = {
    "aggr0": (12_500_000, 5_000_000),
    "i40e1": (3_125_000, 1_250_000),
    "admin0": (2_500_000, 625_000),
    "admin1": (1_250_000, 125_000),
}


async def test_replayed_smartos_host_live_over_ssh(make_lab, wait_for):
    lab = make_lab({"sun": {"replay_bin": REPLAY}})
    updates = []
    fleet = Fleet([lab.spec("sun")], lab.settings(interval=0.3, facts_every=3), updates.append)
    fleet.start()

    def live_with_rates():
        last = fleet.collectors["sun"].last
        views = {v.iface.name: v for v in last.interfaces}
        if last.state is HostState.LIVE and all(n in views and views[n].rates.rx_bps is not None for n in SCRIPTED):
            return last, views
        return None

    try:
        last, views = await wait_for(live_with_rates, timeout=40, message="replayed illumos host live with rates")
    finally:
        await fleet.stop()
    errors = [u.error for u in updates if u.error]
    assert not errors, errors
    assert last.os == "smartos"
    assert last.os_detail == "SmartOS 20240111T000000Z"
    assert set(views) == {"i40e0", "i40e1", "i40e2", "i40e3", "aggr0", "admin0", "admin1"}

    aggr = views["aggr0"].iface
    assert (aggr.kind, aggr.members, aggr.speed_mbps) == ("bond", ("i40e0", "i40e1", "i40e2", "i40e3"), 40000)
    assert aggr.addresses == ("172.30.115.32/24",)
    assert [n for n, v in views.items() if v.iface.default_route] == ["aggr0"]  # netstat -rn's default row
    for vnic in ("admin0", "admin1"):
        assert (views[vnic].iface.kind, views[vnic].iface.over) == ("vnic", "aggr0")
    assert views["admin1"].iface.addresses == ("172.30.115.47/24",)
    port = views["i40e3"].iface
    assert (port.kind, port.speed_mbps, port.duplex, port.driver) == ("physical", 10000, "full", "i40e")
    assert ("master", "aggr0") in port.extra

    for name, (rx, tx) in SCRIPTED.items():
        rates = views[name].rates
        assert rates.rx_bps == pytest.approx(rx * 8, rel=0.05), name
        assert rates.tx_bps == pytest.approx(tx * 8, rel=0.05), name
        assert rates.rx_pps == pytest.approx(rx // 1000, rel=0.05), name
    print(
        f"\nreplayed illumos: aggr0 rx {views['aggr0'].rates.rx_bps / 1e6:.1f} Mb/s "
        f"(scripted {SCRIPTED['aggr0'][0] * 8 / 1e6:.1f}), util {views['aggr0'].util_pct:.3f} %"
    )
