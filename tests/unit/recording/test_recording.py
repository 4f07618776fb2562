"""Recordings: `linkdeck record` on this machine and over real SSH in the lab, a real kill -9,
files cut short, a newer format, and a replay that shows what live showed."""

from __future__ import annotations

import datetime
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from linkdeck.commands.snapshot_format import snapshot_json
from linkdeck.core.freshness import as_seen
from linkdeck.core.model import HostState, HostUpdate
from linkdeck.core.tcpstats import TcpCounters
from linkdeck.findings.engine import diagnose
from linkdeck.fleet.collector import Fleet
from linkdeck.recording import fileformat
from linkdeck.recording.fileformat import RecordingError, read
from linkdeck.recording.recorder import Recorder
from linkdeck.recording.replay import Player, settings_from_json
from linkdeck.settings.config import MuteRule, Settings
from linkdeck.transport.choice import choose
from tests.builders import recording_file
from tests.cli import isolated_env, linkdeck
from tests.lab import loopback_running, wait_for


def played(path: Path) -> Player:
    player = Player(read(path))
    player.advance_to(player.recording.end)
    return player


def test_record_local_host_and_replay_its_rates(tmp_path) -> None:
    path = tmp_path / "local.ldrec"
    with loopback_running():
        out = linkdeck("record", str(path), "--duration", "3")
    assert out.returncode == 0, out.stderr
    assert "bytes per host-sample" in out.stderr
    rec = read(path)
    assert rec.header[fileformat.MAGIC] == fileformat.FORMAT_VERSION and not rec.truncated
    assert rec.header["hosts"] == [{"name": "local", "address": None, "os": "linux", "os_detail": None}]
    kinds = [e["ev"] for e in rec.events()]
    assert kinds[0] == "open" and kinds[-1] == "end" and kinds.count("read") >= 2
    update = played(path).tracks["local"].last
    assert update.state == HostState.LIVE and update.os == "linux"
    lo = next(v for v in update.interfaces if v.iface.name == "lo")
    assert lo.iface.kind == "loopback" and "127.0.0.1/8" in lo.iface.addresses
    assert lo.rates.rx_bps > 10e6  # the loopback traffic above, through the replayed counters
    # the host's TCP counters ride along: the same segments, as rates, from the recorded reads
    reads = [e for e in rec.events() if e["ev"] == "read"]
    (a, b) = (TcpCounters.from_json(reads[-2]["tcp"]), TcpCounters.from_json(reads[-1]["tcp"]))
    seconds = reads[-1]["m"] - reads[-2]["m"]
    assert update.tcp.out_segs_ps == pytest.approx((b.out_segs - a.out_segs) / seconds) and update.tcp.out_segs_ps > 100


def test_record_refuses_an_existing_file_and_a_bad_duration(tmp_path) -> None:
    path = tmp_path / "there.ldrec"
    path.write_text("precious")
    out = linkdeck("record", str(path), "--duration", "1")
    assert out.returncode == 2 and out.stderr.strip().endswith("name a new file (a recording is never overwritten)")
    assert path.read_text() == "precious"
    out = linkdeck("record", str(tmp_path / "new.ldrec"), "--duration", "0")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def test_a_replay_knows_the_address_the_session_came_in_on(tmp_path) -> None:
    # Constructed events: an `open` with and without reached_at, and one with garbage in it.
    opens = [
        {"t": 100.0, "ev": "open", "h": "a", "os": "linux", "via": "sh", "reached_at": "198.18.77.11"},
        {"t": 100.0, "ev": "open", "h": "b", "os": "linux", "via": "sh"},
        {"t": 100.0, "ev": "open", "h": "c", "os": "linux", "via": "sh", "reached_at": "$(reboot)"},
    ]
    player = played(recording_file(tmp_path, [*opens, {"t": 101.0, "ev": "end"}]))
    assert [player.tracks[h].last.reached_at for h in "abc"] == ["198.18.77.11", None, None]


def test_a_newer_format_says_so_in_one_line(tmp_path) -> None:
    path = recording_file(tmp_path, [], version=fileformat.FORMAT_VERSION + 1)
    with pytest.raises(RecordingError) as err:
        read(path)
    assert str(err.value) == (
        f"{path} is recording format {fileformat.FORMAT_VERSION + 1} (written by linkdeck 9.9.9); "
        f"this linkdeck 0.1.0 reads format {fileformat.FORMAT_VERSION}: upgrade linkdeck to read it"
    )


def test_files_that_are_not_recordings_say_what_they_are(tmp_path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(RecordingError, match="is not a linkdeck recording"):
        read(text)
    empty = tmp_path / "empty.ldrec"
    empty.write_bytes(b"")
    with pytest.raises(RecordingError, match="is empty"):
        read(empty)
    with pytest.raises(RecordingError, match="cannot open"):
        read(tmp_path / "absent.ldrec")


# -- over real SSH -------------------------------------------------------------------------


class Seen:
    """A tap beside the recorder: the last update of each host the recorder was told of."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.last: dict[str, HostUpdate] = {}
        self.history: list[tuple[float, dict[str, HostUpdate]]] = []  # (when, every host's last)

    def opened(self, host, adapter) -> None:
        self.recorder.opened(host, adapter)

    def read(self, host, read, prime=False) -> None:
        self.recorder.read(host, read, prime)

    def update(self, update: HostUpdate) -> None:
        self.last[update.host] = update
        self.history.append((time.time(), dict(self.last)))
        self.recorder.update(update)


def test_a_recordings_settings_go_through_the_config_files_ranges() -> None:
    """A recording is input like a config file: a header that says facts_every 0, a negative
    interval or a 0 Mb/s speed override leaves those settings at their defaults."""
    good = settings_from_json(
        {
            "interval": 2.5,
            "facts_every": 3,
            "units": "bytes",
            "speed_overrides": {"h/eth0": 1000},
            "thresholds": {"window_s": 10},
        }
    )
    assert (good.interval, good.facts_every, good.units, good.speed_overrides, good.thresholds.window_s) == (
        2.5,
        3,
        "bytes",
        {"h/eth0": 1000},
        10.0,
    )
    bad = settings_from_json(
        {
            "interval": -1,
            "facts_every": 0,
            "units": "furlongs",
            "speed_overrides": {"h/eth0": 0, "h/eth1": 10**9, "h/eth2": True},
            "thresholds": {"window_s": 0, "drops_per_s": float("nan"), "outlier_ratio": 5},
            "mute": [{"code": 7, "host": "h"}],
        }
    )
    default = Settings()
    assert (bad.interval, bad.facts_every, bad.units, bad.speed_overrides, bad.thresholds) == (
        default.interval,
        default.facts_every,
        default.units,
        {},
        default.thresholds,
    )
    assert bad.mute == (MuteRule(code=None, host="h"),)


@pytest.mark.lab
async def test_replay_shows_the_rows_live_showed(lab, tmp_path) -> None:
    """Three hosts over SSH, recording started mid-stream (as the dashboard's r does): the
    replay's last rows equal the live ones, rates included, and so do the host facts."""
    fleet = Fleet([lab.spec(n) for n in lab.hosts], lab.settings(interval=0.3, facts_every=3), lambda u: None)
    fleet.start()
    try:
        await wait_for(
            lambda: all(c.samples_seen >= 4 for c in fleet.collectors.values()), timeout=30, message="hosts live"
        )
        seen = Seen(Recorder.for_fleet(tmp_path / "lab.ldrec", fleet))
        fleet.record(seen)
        mark = {n: c.samples_seen for n, c in fleet.collectors.items()}
        await wait_for(
            lambda: all(c.samples_seen >= mark[n] + 8 for n, c in fleet.collectors.items()),
            timeout=30,
            message="8 more samples",
        )
        fleet.record(None)
    finally:
        await fleet.stop()
    seen.recorder.close()
    player = played(tmp_path / "lab.ldrec")
    assert [h["os"] for h in player.recording.header["hosts"]] == ["linux"] * 3
    for name in lab.hosts:
        live, replayed = seen.last[name], player.tracks[name].last
        assert replayed.state == HostState.LIVE and live.state == HostState.LIVE
        assert replayed.time == live.time
        assert replayed.reached_at == live.reached_at == lab.hosts[name].address  # the findings read it
        # facts, rates and utilisation; totals count from the start of the recording
        assert [(v.iface, v.rates, v.util_pct) for v in replayed.interfaces] == [
            (v.iface, v.rates, v.util_pct) for v in live.interfaces
        ]
        assert replayed.tcp == live.tcp and live.tcp.out_segs_ps is not None  # the TCP counters ride in the frames
        # what watching costs: the sampler's `times` on the host, the frame's size
        # (`times` counts in 10 ms steps, so a few light samples can read 0: known, not unknown)
        assert live.remote_cpu_ms is not None and 0 <= live.remote_cpu_ms < 200
        assert replayed.remote_cpu_ms == live.remote_cpu_ms
        assert 50 < live.wire_bytes < 20000 and replayed.wire_bytes == live.wire_bytes  # a delta frame's bytes
        eth0 = next(v.iface for v in replayed.interfaces if v.iface.name == "eth0")
        assert eth0.mtu == 1500 and f"{lab.hosts[name].address}/{lab.hosts[name].prefix}" in eth0.addresses

    # `snapshot --from` prints what a live snapshot of those updates printed at that moment, at
    # the end and in the middle (between two updates the live side saw), within rounding
    def live_snapshot(updates: dict[str, HostUpdate], now: float) -> dict:
        ordered = [as_seen(updates[n], now) for n in lab.hosts]
        return snapshot_json(ordered, diagnose(ordered, lab.settings(), now), now)

    def same(replayed: dict, live: dict) -> None:
        assert replayed.pop("schema_version") == 1  # the printed document's envelope, not the snapshot
        for r, lv in zip(replayed["hosts"], live["hosts"]):
            # how the live session reached the host is not part of what it recorded
            assert lv["detail"].pop("transport") == choose(lab.settings()).name and lv["detail"].pop("transport_why")
            # the frame's receive time in the file is taken before parsing, live's just after
            assert abs(r.pop("last_sample_age_s") - lv.pop("last_sample_age_s")) <= 0.1
            assert abs(r["collection"].pop("sample_age_ms") - lv["collection"].pop("sample_age_ms")) <= 100
        assert replayed == live

    path = tmp_path / "lab.ldrec"
    out = linkdeck("snapshot", "--from", str(path), "--json")
    assert out.returncode == 0, out.stderr
    same(json.loads(out.stdout), live_snapshot(seen.last, read(path).end))
    # a moment just after an update, in a quiet stretch: the next frame's read (recorded when it
    # arrived, before parsing) comes well after it
    middle = next(
        i
        for i in range(len(seen.history) // 2, len(seen.history) - 1)
        if seen.history[i + 1][0] - seen.history[i][0] > 0.05
    )
    t0, then = seen.history[middle]
    at = datetime.datetime.fromtimestamp(t0 + 0.01)
    out = linkdeck("snapshot", "--from", str(path), "--at", at.isoformat(), "--json")
    assert out.returncode == 0, out.stderr
    same(json.loads(out.stdout), live_snapshot(then, at.timestamp()))
    assert json.loads(out.stdout) != live_snapshot(seen.last, read(path).end)


@pytest.mark.lab
def test_kill_9_loses_only_the_last_seconds(lab, tmp_path) -> None:
    path = tmp_path / "killed.ldrec"
    argv = [
        sys.executable,
        "-m",
        "linkdeck",
        "record",
        str(path),
        "--no-local",
        "--ssh-config",
        str(lab.ssh_config),
        *lab.hosts,
    ]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=isolated_env())
    try:
        assert "recording 3 hosts" in proc.stderr.readline()
        started = time.time()
        time.sleep(6)
        proc.send_signal(signal.SIGKILL)
        killed = time.time()
    finally:
        proc.kill()
        proc.wait()
    rec = read(path)
    assert rec.truncated  # no end mark, the zstd frame never closed
    assert list(rec.events())[-1]["ev"] != "end"
    assert killed - rec.end <= fileformat.FLUSH_EVERY_S + 1.5
    assert rec.end - started >= 6 - fileformat.FLUSH_EVERY_S - 1.5
    player = played(path)
    for name in lab.hosts:
        assert player.tracks[name].last.state == HostState.LIVE
        assert player.tracks[name].samples >= 3
        assert {v.iface.name for v in player.tracks[name].last.interfaces} == {"lo", "eth0"}


@pytest.mark.lab
def test_a_file_cut_anywhere_replays_up_to_the_cut(lab, tmp_path) -> None:
    path = tmp_path / "whole.ldrec"
    out = linkdeck("record", str(path), "--duration", "4", "--no-local", "--ssh-config", str(lab.ssh_config), "h1")
    assert out.returncode == 0, out.stderr
    whole = path.read_bytes()
    full = list(read(path).events())
    seen_counts = []
    for cut in [*range(1, len(whole), max(1, len(whole) // 40)), *range(len(whole) - 4, len(whole))]:
        part = tmp_path / "cut.ldrec"
        part.write_bytes(whole[:cut])
        try:
            rec = read(part)
        except RecordingError as exc:  # cut inside the header's block: nothing to play
            assert "is empty" in str(exc) or "not a linkdeck recording" in str(exc)
            continue
        events = list(rec.events())
        if events == full:  # only the bytes after the end line were cut: every line is there, and the cut is said
            assert not rec.truncated and "the file was cut after its last line" in " ".join(rec.damage.notes())
            continue
        assert rec.truncated and events == full[: len(events)] and len(events) < len(full)
        seen_counts.append(len(events))
        Player(rec).advance_to(rec.end)  # plays without a crash
    assert seen_counts == sorted(seen_counts) and seen_counts[-1] > 0


def test_snapshot_from_says_what_is_wrong_in_one_line(tmp_path) -> None:
    newer = recording_file(tmp_path, [], version=fileformat.FORMAT_VERSION + 1)
    out = linkdeck("snapshot", "--from", str(newer))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "upgrade linkdeck" in out.stderr
    made = recording_file(
        tmp_path, [{"t": 100.0, "ev": "open", "h": "x", "os": "linux", "via": "sh"}, {"t": 160.0, "ev": "end"}]
    )
    for at, says in (
        ("2h", "outside the recording"),
        ("soon", "give seconds from the start"),
        ("25:00", "give seconds"),
    ):
        out = linkdeck("snapshot", "--from", str(made), "--at", at)
        assert out.returncode == 2 and says in out.stderr and out.stderr.count("\n") == 1, out.stderr
    out = linkdeck("snapshot", "--at", "10")
    assert out.returncode == 2 and "--at needs --from FILE" in out.stderr
    out = linkdeck("snapshot", "--from", str(made), "--at", "30", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["hosts"][0]["name"] == "x"


def test_snapshot_at_a_time_from_the_end_is_read_as_written_in_the_help(tmp_path) -> None:
    made = recording_file(
        tmp_path, [{"t": 100.0, "ev": "open", "h": "x", "os": "linux", "via": "sh"}, {"t": 160.0, "ev": "end"}]
    )
    joined = linkdeck("snapshot", "--from", str(made), "--at=-30s", "--json")
    apart = linkdeck("snapshot", "--from", str(made), "--at", "-30s", "--json")
    assert apart.returncode == 0, apart.stderr
    assert apart.stdout == joined.stdout and json.loads(apart.stdout)["hosts"][0]["name"] == "x"
    past = linkdeck("snapshot", "--from", str(made), "--at", "-2h")
    assert past.returncode == 2 and "outside the recording" in past.stderr, past.stderr
