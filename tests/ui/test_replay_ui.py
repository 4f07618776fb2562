"""The dashboard's r over real SSH with a test in the middle, then `linkdeck replay` of that
file: the same rows, the test's verdict, pause/step/speed/go-to, and t/m/c off."""

from __future__ import annotations

import pytest

from linkdeck.core.freshness import as_seen
from linkdeck.recording.fileformat import read
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.replay_dashboard import ReplayApp
from linkdeck.ui.screens import peer_picker, probe_screens
from tests.cli import linkdeck
from tests.lab import until


async def more_samples(app, hosts, n: int) -> None:
    """Until each host has sent ``n`` more samples: what a fixed sleep only hoped for."""
    start = {h: app.updates[h].time for h in hosts}
    gap = (n - 0.5) * app.settings.interval  # host clocks: n samples are n intervals apart
    await until(lambda: all(app.updates[h].time >= start[h] + gap for h in hosts), f"{n} more samples from each host")


def rows(app) -> dict:
    """Every interface row as the replayed or live dashboard holds it at its own clock."""
    out = {}
    for host, update in app.updates.items():
        seen = as_seen(update, app.clock())
        for v in seen.interfaces:
            out[(host, v.iface.name)] = (v.iface.mtu, v.iface.addresses, v.iface.oper, v.rates)
    return out


@pytest.mark.lab
async def test_record_with_a_test_then_replay_shows_rows_and_verdict(lab, tmp_path) -> None:
    app = LinkdeckApp(lab.settings(interval=0.5, test_duration=2), [lab.spec(n) for n in ("h1", "h2", "h3")])
    app.recording.directory = tmp_path
    async with app.run_test(size=(180, 50)) as pilot:
        await until(lambda: all(app.updates[h].interfaces for h in ("h1", "h2", "h3")), "three hosts live")
        await pilot.press("r")
        await until(lambda: app.recording.on, "recording")
        assert "● REC" in str(app.query_one("#status").render())
        await more_samples(app, ("h1", "h2", "h3"), 4)  # a few recorded before the test
        assert app.table.select_key(("iface", "h1", "eth0"))
        await pilot.press("t")
        await until(lambda: isinstance(app.screen, peer_picker.PeerScreen), "the peer picker")
        await pilot.press("enter")
        screen = await until(lambda: isinstance(app.screen, probe_screens.TestScreen) and app.screen, "the test screen")
        await until(lambda: screen.outcome is not None, "the outcome")
        verdict = app.inline_verdict("h1", "eth0")
        await pilot.press("escape")
        await more_samples(app, ("h1", "h2", "h3"), 4)  # and some after it
        live_rows = {k: v for k, v in rows(app).items()}
        live_time = {h: u.time for h, u in app.updates.items()}
        await pilot.press("r")
        assert not app.recording.on
    (path,) = tmp_path.glob("linkdeck-*.ldrec")
    recording = read(path)
    assert not recording.truncated and sum(e["ev"] == "test" for e in recording.events()) == 1

    replay = ReplayApp(recording)
    async with replay.run_test(size=(180, 50)) as pilot:
        await until(lambda: replay.replay is not None, "the replay started")
        await pilot.press("g")
        await until(lambda: type(replay.screen).__name__ == "JumpScreen", "the go-to prompt")
        await pilot.press(*"-0s", "enter")
        await until(lambda: replay.replay.player.done, "played to the end")
        assert {h: u.time for h, u in replay.updates.items()} == live_time
        replayed = rows(replay)
        for key, (mtu, addresses, oper, _rates) in live_rows.items():
            assert replayed[key][:3] == (mtu, addresses, oper), key
        assert replay.inline_verdict("h1", "eth0") == verdict and verdict is not None
        assert "▶ REPLAY" in str(replay.query_one("#status").render())
        await pilot.press("t")
        assert not isinstance(replay.screen, peer_picker.PeerScreen)  # off, with a message
        # back one tick: the dashboard starts over and stops just before the last sample
        await pilot.press("left")
        assert replay.replay.paused and not replay.replay.player.done
        assert any(replay.updates[h].time < live_time[h] for h in live_time)
        await pilot.press("right")
        await pilot.press("plus", "plus")
        assert replay.replay.speed == 5


def test_replay_of_an_unreadable_file_is_one_line(tmp_path) -> None:
    bad = tmp_path / "bad.ldrec"
    bad.write_text("not a recording\n")
    out = linkdeck("replay", str(bad))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "is not a linkdeck recording" in out.stderr
