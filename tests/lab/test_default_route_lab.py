"""The default-route marker for a remote Linux host over real SSH (issue 10.6): h1's eth0
carries a default route the test adds, h2 has none; `snapshot --json` and the dashboard's name
cell say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linkdeck.core.model import HostState
from linkdeck.ui.app import LinkdeckApp
from tests.cli import linkdeck
from tests.lab import wait_for

pytestmark = pytest.mark.lab


@pytest.fixture
def h1_default(lab):
    h1 = lab.hosts["h1"]
    h1.ip("route", "add", "default", "via", lab.root_address, "dev", "eth0")
    try:
        yield h1
    finally:
        h1.ip("route", "del", "default", check=False)


def test_snapshot_json_marks_the_interface_with_the_default_route(lab, h1_default, tmp_path: Path) -> None:
    out = linkdeck(
        "snapshot",
        "--json",
        "--interval",
        "0.5",
        "--ssh-config",
        str(lab.ssh_config),
        "--no-local",
        "h1",
        "h2",
        drop_env=["SSH_AUTH_SOCK"],
    )
    assert out.returncode == 0, out.stderr
    hosts = {h["name"]: {i["name"]: i for i in h["interfaces"]} for h in json.loads(out.stdout)["hosts"]}
    assert hosts["h1"]["eth0"]["default_route"] is True
    assert hosts["h1"]["lo"]["default_route"] is False
    assert hosts["h2"]["eth0"]["default_route"] is False  # no default route there: no marker


async def test_dashboard_name_cell_shows_the_marker(lab, h1_default) -> None:
    app = LinkdeckApp(lab.settings(interval=0.5), [lab.spec("h1")])
    async with app.run_test(size=(160, 40)):

        def eth0_row() -> str | None:
            table = app.table
            for i, r in enumerate(table.rows):
                if r.view is not None and r.view.iface.name == "eth0":
                    return table.row_text(i)
            return None

        await wait_for(
            lambda: app.updates.get("h1") and app.updates["h1"].state is HostState.LIVE and eth0_row(),
            30,
            message="h1 live",
        )
        await wait_for(lambda: "*eth0" in (eth0_row() or ""), 10, message="eth0 marked *eth0")
        assert "*lo" not in "".join(app.table.row_text(i) for i in range(len(app.table.rows)))
