"""Long recordings: checkpoints every CHECKPOINT_S start a new zstd frame with each host's
state, so a replay jumps to a time (``Player.at``) without parsing what comes before, and shows
exactly what playing from the start shows; ``report`` keeps at most MAX_POINTS per interface.

The recordings here are CONSTRUCTED: the two real sampler frames of
tests/fixtures/linux/linkdeck-sampler__netns-hostile-names.txt (one with the slow facts, one
tick) written through the real Recorder with a clock of our own, their counters and uptime
advanced every tick."""

from __future__ import annotations

import json
import re
from pathlib import Path

import zstandard

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.platforms.adapter import split_frames
from linkdeck.platforms.linux import LinuxAdapter
from linkdeck.recording import fileformat, recorder as recorder_module
from linkdeck.recording.fileformat import read
from linkdeck.recording.recorder import Recorder
from linkdeck.recording.replay import Player
from linkdeck.recording.timeline import MAX_POINTS, build
from linkdeck.settings.config import Settings

FIXTURE = Path(__file__).parents[2] / "fixtures" / "linux" / "linkdeck-sampler__netns-hostile-names.txt"
NUMBER = re.compile(r"(?<=[ :])(\d+)(?= |$)")
T0 = 1_795_400_000.0
STEP_BYTES = 125_000  # per second on every counter of every interface: 1 Mbit/s


def frames() -> tuple[dict, dict]:
    facts, tick = split_frames([ln for ln in FIXTURE.read_text().splitlines() if not ln.startswith("# ")])
    return facts, tick


def advanced(tick: str, n: int) -> str:
    out = []
    for line in tick.splitlines():
        if line.startswith("/proc/uptime:"):
            line = f"/proc/uptime:{2508.41 + n:.2f} 3570.60"
        elif line.startswith("/proc/net/dev:") and "|" not in line:
            line = NUMBER.sub(lambda m: str(int(m.group(1)) + n * STEP_BYTES), line)
        out.append(line)
    return "\n".join(out) + "\n"


class FakeOutcome:
    """What Recorder.test reads of a probe.Outcome (the recorder writes it as JSON)."""

    def __init__(self, n: int) -> None:
        self.result = type("R", (), {"src": "h1", "dst": "h2", "n": n})()
        self.src_iface, self.dst_iface = "vA", "vB"


def construct(
    path: Path,
    seconds: int,
    hosts=("h1", "h2"),
    reconnect_at: int | None = None,
    down: tuple[int, int] | None = None,
    test_at: int | None = None,
) -> None:
    facts, tick = frames()
    now = [T0]
    rec = Recorder(
        path,
        Settings(interval=1.0, local=False),
        [{"name": h, "address": h, "os": "linux", "os_detail": None} for h in hosts],
        clock=lambda: now[0],
    )
    for h in hosts:
        rec.opened(h, LinuxAdapter(None))
        rec.update(HostUpdate(host=h, os="linux", state=HostState.LIVE))
    for n in range(seconds):
        for i, h in enumerate(hosts):
            now[0] = T0 + n + i * 0.01
            if h == "h2" and n == reconnect_at:
                rec.update(HostUpdate(host=h, os="linux", state=HostState.RECONNECTING))
                rec.opened(h, LinuxAdapter(None))
            if h == "h2" and down and down[0] <= n < down[1]:
                if n == down[0]:
                    rec.update(HostUpdate(host=h, os="linux", state=HostState.UNREACHABLE, error="no route to host"))
                continue
            frame = dict(facts if n % 10 == 0 else tick)
            frame["tick"] = advanced(tick["tick"], n)
            rec.read(h, {"f": frame})
            rec.update(HostUpdate(host=h, os="linux", state=HostState.LIVE))
        if n == test_at:
            rec.test(FakeOutcome(n))
    rec.close()


def test_checkpoints_are_found_without_reading_the_events(tmp_path) -> None:
    path = tmp_path / "long.ldrec"
    construct(path, 1000)
    rec = read(path)
    times = [t for t, _ in rec.checkpoints]
    assert rec.header[fileformat.MAGIC] == 2 and not rec.truncated
    assert len(times) == 1 + 999 // int(recorder_module.CHECKPOINT_S)  # the file's start, then one every CHECKPOINT_S
    assert all(b - a == recorder_module.CHECKPOINT_S for a, b in zip(times[1:], times[2:]))
    assert rec.end == T0 + 999 + 0.01
    # every frame decompresses on its own, and starts with its checkpoint line
    raw = path.read_bytes()
    for t, offset in rec.checkpoints[1:]:
        first = zstandard.ZstdDecompressor().decompressobj().decompress(raw[offset : offset + 4096]).split(b"\n")[0]
        assert json.loads(first) == {"t": t, "ev": "checkpoint"}


def test_a_jump_shows_what_playing_from_the_start_shows(tmp_path) -> None:
    path = tmp_path / "long.ldrec"
    # h2 reconnects at 300 s and is unreachable 500-560 s; a test runs at 100 s
    construct(path, 800, reconnect_at=300, down=(500, 560), test_at=100)
    rec = read(path)
    cp = [t for t, _ in rec.checkpoints]
    for when in (T0 + 5, cp[1] - 0.5, cp[1] + 0.005, cp[2] + 31, T0 + 301.5, T0 + 530, T0 + 561.5, cp[-1] + 3, rec.end):
        whole = Player(rec)
        whole.advance_to(when)
        jumped = Player.at(rec, when)
        assert jumped.updates() == whole.updates(), when
        assert jumped.diagnoser.findings() == whole.diagnoser.findings()
        assert jumped.read_times == whole.read_times
        if when > T0 + 100:
            assert [e["t"] for e in jumped.tests] == [e["t"] for e in whole.tests] == [round(T0 + 100.01, 3)]
    h1 = next(u for u in Player.at(rec, T0 + 700).updates() if u.host == "h1")
    assert h1.state == HostState.LIVE and {v.rates.rx_bps for v in h1.interfaces} == {8 * STEP_BYTES}
    h2 = next(u for u in Player.at(rec, T0 + 530).updates() if u.host == "h2")
    assert h2.state == HostState.UNREACHABLE and h2.error == "no route to host"


def test_a_version_1_file_still_opens_and_jumps(tmp_path) -> None:
    """A file written before checkpoints: one zstd frame, version 1; it opens, plays, and a
    jump plays it from its start."""
    facts, tick = frames()
    events = [{"t": T0, "ev": "open", "h": "h1", "os": "linux", "os_detail": None, "via": "sh"}]
    for n in range(40):
        frame = dict(facts if n % 10 == 0 else tick)
        frame["tick"] = advanced(tick["tick"], n)
        events.append({"t": T0 + n, "ev": "read", "h": "h1", "f": frame})
    events.append({"t": T0 + 40, "ev": "end"})
    header = {
        fileformat.MAGIC: 1,
        "linkdeck": "0.1.0",
        "started": T0,
        "hosts": [{"name": "h1", "address": "h1", "os": "linux", "os_detail": None}],
        "settings": {"interval": 1.0},
    }
    path = tmp_path / "v1.ldrec"
    path.write_bytes(
        zstandard.ZstdCompressor().compress("".join(json.dumps(e) + "\n" for e in [header, *events]).encode())
    )
    rec = read(path)
    assert rec.checkpoints == [(T0, 0)] and not rec.truncated and rec.end == T0 + 40
    assert len(list(rec.events())) == 42
    whole = Player(rec)
    whole.advance_to(T0 + 35)
    assert Player.at(rec, T0 + 35).updates() == whole.updates()
    assert {v.rates.rx_bps for v in whole.updates()[0].interfaces} == {8 * STEP_BYTES}


def test_a_long_report_keeps_at_most_max_points_each_the_mean_of_its_step(tmp_path) -> None:
    path = tmp_path / "long.ldrec"
    construct(path, 2 * MAX_POINTS + 200, hosts=("h1",))
    timeline = build(read(path))
    series = timeline.series[("h1", "vA")]
    assert MAX_POINTS - 1 <= len(series.times) <= MAX_POINTS + 1
    assert series.step > 2.0
    # every counter moves by the same bytes each second: each point's mean is that rate
    # (the first sample has nothing to compare to: its point is the mean of the rest)
    assert [round(v) for v in series.rx_bps] == [8 * STEP_BYTES] * len(series.times)
