"""Layout snapshot of the dashboard with deterministic data (pytest-textual-snapshot).

Regenerate after an intended layout change with ``pytest tests/test_ui_snapshot.py --snapshot-update``.
"""

from __future__ import annotations

import asyncio

from linkdeck.config import HostSpec, Settings
from linkdeck.model import Counters, Finding, HostState, HostUpdate, Interface, InterfaceView, Rates, Severity
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.messages import HostUpdated
from tests.synthetic import opener_for


def _view(name, rx, tx, **iface):
    iface.setdefault("oper", "up")
    i = Interface(name=name, **iface)
    util = None if not i.speed_mbps else 100 * max(rx, tx) / (i.speed_mbps * 1e6)
    return InterfaceView(i, Rates(rx, tx, rx / 8000, tx / 8000, 0.0, 0.0, 0.0, 0.0), Counters(), util)


def _updates(step: int) -> list[HostUpdate]:
    nas = HostUpdate(
        host="nas01",
        os="freebsd",
        os_detail="TrueNAS 13.0",
        state=HostState.LIVE,
        time=float(step),
        interfaces=(
            _view("lagg0", 900e6 + step * 1e6, 400e6, kind="bond", mtu=9000, speed_mbps=2000, duplex="full", members=("igb0", "igb1")),
            _view("igb0", 450e6, 200e6, kind="physical", mtu=9000, speed_mbps=1000, duplex="full"),
            _view("igb1", 450e6, 200e6, kind="physical", mtu=9000, speed_mbps=100, duplex="half"),
            _view("vlan10", 12e6 * (step % 5), 3e6, kind="vlan", mtu=9000, over="lagg0", default_route=True),
            _view("lo0", 0.0, 0.0, kind="loopback", mtu=16384),
        ),
    )
    return [
        nas,
        HostUpdate(host="edge", os=None, state=HostState.HOST_KEY_UNKNOWN, detail={"fingerprint": "SHA256:Zm9vYmFy"}),
        HostUpdate(host="db2", os="linux", state=HostState.RECONNECTING, error="Connection reset by peer", detail={"retry_in_s": "8"}),
    ]


class _FixedFindings:
    def __init__(self, settings):
        pass

    def observe(self, update):
        pass

    def findings(self):
        return [Finding("SPEED_BELOW_CAPABILITY", Severity.WARNING, "nas01", "igb1", "igb1 at 100M of 1G", "", "")]


def test_dashboard_layout(snap_compare, monkeypatch):
    import linkdeck.diagnose

    monkeypatch.setattr(linkdeck.diagnose, "Diagnoser", _FixedFindings, raising=False)
    hosts = [HostSpec(n, address=f"{n}.invalid") for n in ("nas01", "edge", "db2")]
    app = LinkdeckApp(Settings(), hosts, opener=opener_for({}))

    async def feed(pilot):
        for step in range(60):
            for update in _updates(step):
                app.post_message(HostUpdated(update))
        while app.table.rows[-1].host != "db2" or app.updates["nas01"].time != 59.0:
            await asyncio.sleep(0.02)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(160, 16), run_before=feed)
