"""A host that is gone must not look alive (issue 10.1), over real SSH: its path cut (the
connection still open, frames stop) and its sshd killed and started again."""

from __future__ import annotations

import pytest

from linkdeck.core.model import HostState
from linkdeck.ui.app import LinkdeckApp
from tests.lab import wait_for

pytestmark = pytest.mark.lab


def rows(app) -> dict[str, str]:
    table = app.table
    return {(r.view.iface.name if r.view else "HOST"): table.row_text(i) for i, r in enumerate(table.rows)}


def rates_live(app) -> bool:
    u = app.updates["h1"]
    eth0 = next((v for v in u.interfaces if v.iface.name == "eth0"), None)
    return (
        u.state is HostState.LIVE
        and eth0 is not None
        and eth0.rates.rx_bps is not None
        and "stale" not in rows(app)["HOST"]
        and "b/s" in rows(app).get("eth0", "")  # the rows follow the update a moment later
    )


async def test_a_silent_host_and_a_dead_sshd_show_stale_rows_then_live_again(lab) -> None:
    h1 = lab.hosts["h1"]
    app = LinkdeckApp(lab.settings(interval=0.5), [lab.spec("h1")])
    async with app.run_test(size=(160, 40)):
        await wait_for(lambda: rates_live(app), 30, message="h1 live with rates")
        assert "b/s" in rows(app)["eth0"]  # the sampler's own SSH traffic

        # The path goes (a pulled cable): the connection stays open, frames stop coming.
        h1.ip("link", "set", "eth0", "down")
        try:
            await wait_for(lambda: "stale · data as of" in rows(app)["HOST"], 5, message="h1 stale")
            assert app.updates["h1"].state is HostState.LIVE  # not yet given up on: still stale
            eth0 = rows(app)["eth0"]
            assert "b/s" not in eth0 and "—" in eth0 and "1500" in eth0  # rates unknown, MTU kept
            assert app.passes.diagnoser._watched() == []  # no rate rule reads a silent host
        finally:
            h1.ip("link", "set", "eth0", "up")
        await wait_for(lambda: rates_live(app), 30, message="h1 live again after the path came back")

        # sshd and its sessions die: reconnecting, stale at once, live again when sshd is back.
        h1.stop_sshd()
        await wait_for(lambda: app.updates["h1"].state is not HostState.LIVE, 10, message="h1 not live")
        await wait_for(lambda: "data as of" in rows(app)["HOST"], 3, message="h1 stale")
        assert "b/s" not in rows(app)["eth0"]
        h1.start_sshd()
        await wait_for(lambda: rates_live(app), 60, message="h1 live again after sshd came back")
