"""The app's state (issue 22 §6): one view-state object the table reads, screens reading the app
only through ui/dashboard.py, a worker failure shown in one line (never "probing…" for ever),
and a replay's rewind resetting everything learnt from the updates through the app's reset()."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from linkdeck.probe.session import TestSession
from linkdeck.recording.fileformat import read
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.replay_dashboard import ReplayApp
from linkdeck.ui.screens import host_screen
from linkdeck.ui.screens.addresses_screen import AddressesScreen
from linkdeck.ui.screens.mtu_screen import MtuScreen
from linkdeck.ui.screens.probe_screens import MatrixScreen, TestScreen
from tests.cli import linkdeck
from tests.lab import until
from tests.synthetic import SyntheticAdapter, opener_for, physical

UI = Path(__file__).resolve().parents[2] / "src" / "linkdeck" / "ui"
FAST = Settings(interval=0.2)


def two_host_app() -> LinkdeckApp:
    adapters = {name: SyntheticAdapter([physical("eth0")], rate_bps={"eth0": 8e6}) for name in ("a", "b")}
    return LinkdeckApp(
        FAST, [HostSpec("a", address="a.invalid"), HostSpec("b", address="b.invalid")], opener=opener_for(adapters)
    )


async def test_an_unexpected_error_in_the_mtu_probe_is_one_line_on_the_screen_and_in_a_notice() -> None:
    app = two_host_app()

    async def broken(*args, **kw):
        raise RuntimeError("a bug nobody foresaw\nsecond line")

    app.tests.path_mtu = broken  # what TestSession.path_mtu did not catch before
    async with app.run_test(size=(120, 40)) as pilot:
        await app.push_screen(MtuScreen("a", "b", None, "eth0"))
        screen = app.screen

        def shown() -> str:
            return str(screen.query_one("#mtu-result").render())

        await until(lambda: "failed" in shown(), "the failure in place of probing…", timeout=10)
        assert "probing" not in shown()
        assert "the path MTU probe failed: RuntimeError: a bug nobody foresaw second line" in shown()
        notices = await until(lambda: [n.message for n in app._notifications], "the notice")
        assert len(notices) == 1 and notices[0].startswith(
            "the path MTU probe failed: RuntimeError: a bug nobody foresaw second line"
        )
        assert "\n" not in notices[0] and "linkdeck.log" in notices[0]  # where the traceback went
        assert app.is_running and isinstance(app.screen, MtuScreen)  # the dashboard stays up
        await pilot.press("escape")


async def test_an_unexpected_error_in_the_diagnosis_is_one_line_on_its_page() -> None:
    from linkdeck.ui.screens.diagnose_screen import DiagnoseScreen

    app = two_host_app()

    async def broken(*args, **kw):
        raise RuntimeError("a bug nobody foresaw")

    app.tests.run_pair = broken  # what TestSession.run_pair did not catch
    async with app.run_test(size=(120, 40)) as pilot:
        await until(lambda: all(app.updates[h].interfaces for h in ("a", "b")), "both hosts live")
        await app.push_screen(DiagnoseScreen("a", "b"))
        screen = app.screen

        def shown() -> str:
            return str(screen.query_one("#diagnose-page").render())

        await until(lambda: "failed" in shown(), "the failure in place of the page", timeout=10)
        assert shown().startswith("a → b\nthe diagnosis failed: RuntimeError: a bug nobody foresaw")
        assert app.is_running and isinstance(app.screen, DiagnoseScreen)
        await pilot.press("escape")


@pytest.mark.parametrize(
    "opened, where, worker",
    [
        (lambda: TestScreen("a", "b", None, "eth0"), "#probe-progress", "the test"),
        (lambda: MatrixScreen(["a", "b"]), "#matrix-status", "the matrix"),
        (lambda: AddressesScreen("a", "b", ["192.0.2.2"]), "#addresses-status", "the tests of every address"),
    ],
    ids=["test", "matrix", "addresses"],
)
async def test_an_unexpected_error_in_a_tests_worker_is_one_line_on_its_screen_and_in_a_notice(
    opened, where, worker
) -> None:
    app = two_host_app()

    async def broken(*args, **kw):
        raise RuntimeError("a bug nobody foresaw")

    app.tests.run_pair = broken  # what TestSession.run_pair did not catch
    line = f"{worker} failed: RuntimeError: a bug nobody foresaw"
    async with app.run_test(size=(160, 40)) as pilot:
        await app.push_screen(opened())
        screen = app.screen
        await until(
            lambda: line in str(screen.query_one(where).render()), "the failure in place of progress", timeout=10
        )
        notices = await until(lambda: [n.message for n in app._notifications], "the notice")
        assert len(notices) == 1 and notices[0].startswith(line)
        assert app.is_running and app.screen is screen
        await pilot.press("escape")


async def test_an_unexpected_error_resolving_a_host_is_one_line_in_its_connection_section(monkeypatch) -> None:
    def broken(*args):
        raise RuntimeError("a bug nobody foresaw")

    monkeypatch.setattr(host_screen, "connection_text", broken)
    app = two_host_app()
    line = "resolving the host failed: RuntimeError: a bug nobody foresaw"
    async with app.run_test(size=(120, 40)) as pilot:
        await app.push_screen(host_screen.HostScreen("a", app._host_data))
        screen = app.screen
        await until(lambda: line in str(screen.query_one("#host-connection").render()), "the failure", timeout=10)
        notices = await until(lambda: [n.message for n in app._notifications], "the notice")
        assert len(notices) == 1 and notices[0].startswith(line)
        assert app.is_running and app.screen is screen
        await pilot.press("escape")


async def test_the_path_mtu_probe_turns_an_unforeseen_error_into_its_outcome() -> None:
    spec = HostSpec("a", address="a.invalid")
    session = TestSession(
        {"a": spec, "b": HostSpec("b", address="b.invalid")}, FAST, lambda host: None, lambda h, i: ()
    )

    def plan(*args):
        raise KeyError("eth9")

    import linkdeck.probe.session as hosts

    original, hosts.plan_pair = hosts.plan_pair, plan
    try:
        outcome = await session.path_mtu("a", "b", "192.0.2.2", "eth0")
    finally:
        hosts.plan_pair = original
    assert outcome.path is None and outcome.error == "unreadable answer (KeyError: 'eth9')"


async def test_the_table_draws_from_the_apps_one_view_state() -> None:
    app = two_host_app()
    async with app.run_test(size=(200, 40)) as pilot:
        await until(lambda: app.table.rows, "rows")
        assert app.table.view is app.view  # one object, no copy to fall out of step
        assert app.table.screen_text(0).split()[:3] == ["Interface▲", "Oper", "Speed/dup"]
        await pilot.press("b", "s")
        assert app.view.in_bytes and app.view.sort == "rx"
        assert "▼RX B/s" in app.table.screen_text(0) and "Interface▲" not in app.table.screen_text(0)
        await pilot.press("g")
        assert not app.view.grouped and [r.is_host for r in app.table.rows].count(True) == 0


def test_screens_read_the_app_only_through_its_public_interface() -> None:
    """No ui module but the app itself (and ReplayApp, its subclass) reads a private field of the
    app or sets one of the app's fields from outside."""
    offences = []
    for path in sorted(UI.rglob("*.py")):
        if path.name in ("app.py", "replay_dashboard.py"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bapp\._[a-z]", line) or re.search(r"\bapp(\.\w+)+\s*=[^=]", line):
                offences.append(f"{path.name}:{n}: {line.strip()}")
    assert offences == []


async def test_going_back_in_a_replay_resets_every_field_reset_knows_including_one_added_later(
    tmp_path, monkeypatch
) -> None:
    path = tmp_path / "local.ldrec"
    out = linkdeck("record", str(path), "--duration", "3")
    assert out.returncode == 0, out.stderr
    recording = read(path)
    times = [float(e["t"]) for e in recording.events() if e["ev"] == "read"]
    assert len(times) >= 3

    # a field someone adds to the app later, filled from updates: it must not survive a rewind
    original = getattr(LinkdeckApp, "reset", lambda self: None)

    def reset_with_a_later_field(self) -> None:
        original(self)
        self.seen_later = []

    monkeypatch.setattr(LinkdeckApp, "reset", reset_with_a_later_field, raising=False)
    replay, fresh = ReplayApp(recording), ReplayApp(recording)
    async with replay.run_test(size=(160, 40)):
        await until(lambda: replay.replay is not None, "the replay started")
        replay.replay.paused = True
        replay.go_to(recording.end)
        replay.seen_later.append("an update from the end")
        replay.tests.last[("local", "lo")] = "a verdict from the end"
        replay.go_to(times[1])
        assert replay.seen_later == [] and replay.tests.last == {}
        rewound = (
            dict(replay.updates),
            {k: replay.history.get(*k) for k in [("local", v.iface.name) for v in replay.updates["local"].interfaces]},
        )
    async with fresh.run_test(size=(160, 40)):
        await until(lambda: fresh.replay is not None, "the replay started")
        fresh.replay.paused = True
        fresh.go_to(times[1])
        played = (
            dict(fresh.updates),
            {k: fresh.history.get(*k) for k in [("local", v.iface.name) for v in fresh.updates["local"].interfaces]},
        )
    assert rewound == played  # back in time is the same picture as played up to then


async def test_the_dashboards_recording_carries_its_subnet_probes_and_its_replay_learns_them(tmp_path) -> None:
    # CONSTRUCTED probes (no host pinged): one learnt before `r`, one while recording
    from linkdeck.core.model import SubnetMtu

    before = SubnetMtu("10.77.90.0/24", (1500, 9000), ("a", "b"), 1500)
    during = SubnetMtu("10.77.91.0/24", (1500, 9000), ("a", "b"), None, "no ping got an answer")
    app = two_host_app()
    app.recording.directory = tmp_path
    async with app.run_test(size=(120, 40)):
        await until(lambda: app.fleet is not None, "the fleet started")
        app.learn(before)
        app.recording.start()
        path = app.recording.path
        assert path is not None
        app.learn(during)
        app.recording.stop()
    recording = read(path)
    assert [e["subnet"] for e in recording.events() if e["ev"] == "subnet_mtu"] == [before.subnet, during.subnet]
    replay = ReplayApp(recording)
    async with replay.run_test(size=(120, 40)):
        await until(lambda: replay.replay is not None, "the replay started")
        replay.replay.paused = True
        replay.go_to(recording.end)
        assert replay.passes.diagnoser.subnet_mtu == {before.subnet: before, during.subnet: during}
