"""The host screen shows how the host resolved, as `linkdeck hosts` does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.lab import until
from tests.ui.test_ui_app import FAST, live_rates, mounted, synthetic_app, three_rates


async def test_the_host_screen_shows_the_hosts_resolution(tmp_path: Path):
    config = tmp_path / "ssh_config"
    config.write_text(
        "Host syn.invalid\n  HostName 192.0.2.99\n  Port 2299\n  User ops\n"
        "  ProxyJump jumper\nHost jumper\n  HostName 198.51.100.7\n  User hop\n"
    )
    app = synthetic_app(three_rates(), settings=dataclasses.replace(FAST, ssh_config=str(config)))
    async with app.run_test(size=(140, 45)) as pilot:
        await until(lambda: live_rates(app), "rates")
        app.table.select_key(("host", "syn"))
        await pilot.press("i")
        screen = await until(lambda: type(app.screen).__name__ == "HostScreen" and app.screen, "the host screen")
        shown = await until(
            lambda: (w := mounted(screen, "#host-connection")) and "connects to" in (t := w.content.plain) and t,
            "the resolution",
        )
        assert "resolved by     ssh -G" in shown
        assert "connects to     ops@192.0.2.99:2299" in shown
        assert "jump            hop@198.51.100.7 (jumper)" in shown
