"""The replay's header and keys (issue 23) at 80×24 and 200×60: the footer leaves out the keys
a replay turns off, the header says where the replay stands in the recording ("00:01 / 00:03"),
and → / ← step one tick of the whole session — every host one sample — not one host's sample.

The recording is a real one of this machine (`linkdeck record`), with a second host made from
it: the same reads under the name "twin", half an interval later (constructed)."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from linkdeck.recording.fileformat import read
from linkdeck.ui.replay_dashboard import ReplayApp
from tests.builders import with_twin
from tests.cli import linkdeck
from tests.lab import until

SIZES = [(80, 24), (200, 60)]


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory):
    base = tmp_path_factory.mktemp("replay")
    out = linkdeck("record", str(base / "local.ldrec"), "--duration", "4")
    assert out.returncode == 0, out.stderr
    recording = read(base / "local.ldrec")
    path = with_twin(recording, base / "two.ldrec", shift=recording.header["settings"]["interval"] / 2)
    return read(path)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_replay_footer_header_and_a_step_of_the_whole_session(two_hosts, size) -> None:
    recording = two_hosts
    reads = {
        h: sorted(float(e["t"]) for e in recording.events() if e["ev"] == "read" and e["h"] == h)
        for h in ("local", "twin")
    }
    assert len(reads["local"]) >= 3 and len(reads["twin"]) >= 3
    app = ReplayApp(recording)
    async with app.run_test(size=size) as pilot:
        await until(lambda: app.replay is not None, "the replay started")
        await pilot.press("space")  # paused
        await pilot.pause()
        shown = [key.description for key in app.screen.query(FooterKey)]
        assert "Pause" in shown and "Step" in shown
        assert not {"Test", "Record", "Matrix", "Path MTU"} & set(shown)
        await pilot.press("t")
        assert type(app.screen).__name__ != "PeerScreen"  # still off, with its message

        # stand just after local's first sample: twin has sent none yet
        app.go_to(reads["local"][0] + 0.05)
        await pilot.pause()
        times = {h: app.updates[h].time for h in ("local", "twin")}
        await pilot.press("right")
        await pilot.pause()
        interval = app.settings.interval
        assert app.replay.player.now == pytest.approx(reads["local"][0] + 0.05 + interval, abs=1e-3)
        # one tick: each host one sample on, not only the next host to have sent one
        assert app.updates["local"].time != times["local"] and app.updates["twin"].time != times["twin"]
        assert (
            sum(t <= app.replay.player.now for t in reads["local"]) == 2
            and sum(t <= app.replay.player.now for t in reads["twin"]) == 1
        )
        await pilot.press("left")
        await pilot.pause()
        assert app.replay.player.now == pytest.approx(reads["local"][0] + 0.05, abs=1e-3)
        assert app.updates["local"].time == times["local"]

        # the header: where the replay stands and how long the recording is
        status = str(app.query_one("#status").render())
        position = int(app.replay.player.now - recording.start)
        length = int(recording.end - recording.start)
        assert f"▶ REPLAY 00:{position:02d} / 00:{length:02d}" in status


async def test_a_jump_forward_applies_what_play_posted_first_and_shows_the_newest(two_hosts) -> None:
    # A step posts each host's next sample through the app's queue; a jump forward right after
    # (the app not yet at them) applied its own at once and then the step's, older, over them.
    recording = two_hosts
    reads = sorted(float(e["t"]) for e in recording.events() if e["ev"] == "read" and e["h"] == "local")
    app = ReplayApp(recording)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app.replay is not None, "the replay started")
        await pilot.press("space")  # paused
        app.go_to(reads[0] + 0.05)
        await pilot.pause()
        app.action_step(1)  # reads[1] for local, queued
        assert len(app.inbox) == 2  # local and twin, one each
        app.go_to(reads[2] + 0.05)  # within the jump's lead: plays on from here, synchronously
        shown = app.updates["local"].time
        await pilot.pause()
        assert app.updates["local"].time == shown  # the step's older sample did not come after
        # the graph's samples in the order they were taken: its last is the sample shown
        lo = next(v for v in app.updates["local"].interfaces if v.iface.name == "lo")
        samples = app.history.get("local", "lo")[0]
        assert len(samples) == 3 and samples[-1] == lo.rates.rx_bps


async def test_a_replay_says_nothing_of_config_keys_that_match_nothing(two_hosts, tmp_path) -> None:
    """A replay's settings are the recording's: a [speed] key that matched nothing then is no
    mistake to fix now, so the replay raises no config notice (the live dashboard would)."""
    import json

    import zstandard

    from linkdeck.findings.engine import unmatched_keys

    header = dict(two_hosts.header)
    header["settings"] = dict(header["settings"], speed_overrides={"local/eht0": 1000, "lab-q/eth0": 1000})
    path = tmp_path / "keys.ldrec"
    lines = [header, *two_hosts.events()]
    path.write_bytes(zstandard.ZstdCompressor().compress("".join(json.dumps(e) + "\n" for e in lines).encode()))
    app = ReplayApp(read(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app.replay is not None and app.updates["local"].interfaces, "the replay's rows")
        assert len(unmatched_keys(app.settings, app.updates.values())) == 2  # wrong, as live would say
        now = app.replay.player.now
        await until(lambda: app.replay.player.now > now + 2 * app.settings.interval, "a few ticks replayed")
        await pilot.pause()
    assert [n for n in app._notifications if n.title == "config"] == []
