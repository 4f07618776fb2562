"""`linkdeck replay` of a damaged recording says which bytes and seconds it lost, as report and
snapshot --from do, and plays what is whole. The recording is a real one of this machine
(`linkdeck record`), written again through the real Writer a frame for each event, then one
frame's bytes zeroed (constructed)."""

from __future__ import annotations

from linkdeck.recording import fileformat
from linkdeck.recording.fileformat import read
from linkdeck.recording.zstdframes import ZSTD_MAGIC
from linkdeck.ui.replay_dashboard import ReplayApp
from tests.cli import linkdeck
from tests.lab import until


async def test_replay_of_a_damaged_recording_says_what_it_lost(tmp_path, monkeypatch) -> None:
    out = linkdeck("record", str(tmp_path / "local.ldrec"), "--duration", "4")
    assert out.returncode == 0, out.stderr
    recorded = read(tmp_path / "local.ldrec")
    events = list(recorded.events())
    monkeypatch.setattr(fileformat, "FRAME_EVERY_S", 0.0)  # each flush ends a frame
    header = {k: v for k, v in recorded.header.items() if k not in (fileformat.MAGIC, "linkdeck")}
    writer = fileformat.Writer(tmp_path / "framed.ldrec", header)
    for event in events:
        writer.write(event)
        writer.flush()
    writer.close()
    data = bytearray((tmp_path / "framed.ldrec").read_bytes())
    starts = [i for i in range(len(data)) if data.startswith(ZSTD_MAGIC, i)]
    assert len(starts) >= 6
    middle = starts[3]  # the third event's frame: events on both sides of it
    data[middle + 20 : middle + 60] = bytes(40)
    (tmp_path / "bad.ldrec").write_bytes(bytes(data))
    recording = read(tmp_path / "bad.ldrec")

    app = ReplayApp(recording)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(lambda: app.replay is not None, "the replay started")
        await pilot.press("space")  # paused: only the go-to below moves it
        app.go_to(recording.end)
        said = await until(
            lambda: [n.message for n in app._notifications if "unreadable" in n.message], "the damage said"
        )
        assert app.updates["local"].interfaces  # what is whole plays
    (message,) = said
    assert message.startswith(f"{recording.path}: bytes ") and " s lost at " in message, message
