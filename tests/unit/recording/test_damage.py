"""A damaged recording loses only what was damaged: each frame reads on its own, a reader goes
on past a bad one and says which bytes and which seconds it lost; lines it cannot use and
times out of order are counted, never silently dropped or used as the clock. The recordings
here are constructed: state events written through the real Writer, one frame per flush."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings, strategies as st

from linkdeck.recording import fileformat
from linkdeck.recording.fileformat import RecordingError, read
from linkdeck.recording.zstdframes import ZSTD_MAGIC, frame_offsets
from tests.builders import recording_file
from tests.cli import linkdeck

START = 1_800_000_000.0
FRAMES, PER_FRAME = 8, 10  # one event a second, a frame every 10 s


def event(i: int) -> dict:
    # digits that differ from line to line, so each frame holds bytes a flip can land in
    return {
        "t": START + 1 + i,
        "ev": "state",
        "h": "h1",
        "state": "live",
        "error": None,
        "detail": {"n": i * 7919 % 10007, "v": [i * k * 104729 % 99991 for k in range(1, 12)]},
    }


def written(path: Path, monkeypatch) -> tuple[Path, list[int]]:
    """A recording of FRAMES frames (the header's first) and where each frame starts."""
    monkeypatch.setattr(fileformat, "FRAME_EVERY_S", 0.0)
    writer = fileformat.Writer(path, {"started": START, "hosts": [{"name": "h1", "address": "h1", "os": "linux"}]})
    for i in range(FRAMES * PER_FRAME):
        writer.write(event(i))
        if i % PER_FRAME == PER_FRAME - 1:
            writer.flush()
    writer.write({"t": START + 1 + FRAMES * PER_FRAME, "ev": "end"})
    writer.close()
    data = path.read_bytes()
    starts, at = [], data.find(ZSTD_MAGIC)
    while at >= 0:
        starts.append(at)
        at = data.find(ZSTD_MAGIC, at + 1)
    return path, starts


def damaged(path: Path, at: int, zero: int = 0) -> Path:
    data = bytearray(path.read_bytes())
    if zero:
        data[at : at + zero] = bytes(len(data[at : at + zero]))
    else:
        data[at] ^= 0xFF
    out = path.with_name(f"damaged-{at}-{zero}.ldrec")
    out.write_bytes(bytes(data))
    return out


def ns(recording) -> list[int]:
    return [e["detail"]["n"] for e in recording.events() if e.get("ev") == "state"]


def test_each_flush_is_a_frame_with_a_checksum(tmp_path, monkeypatch) -> None:
    path, starts = written(tmp_path / "r.ldrec", monkeypatch)
    assert len(starts) >= FRAMES + 1
    for at in starts:
        assert zstandard.get_frame_parameters(path.read_bytes()[at : at + 18]).has_checksum


@pytest.mark.parametrize("zero", [0, 300], ids=["one byte flipped", "300 bytes zeroed"])
def test_damage_costs_only_the_frames_it_hits_and_says_where(tmp_path, monkeypatch, zero) -> None:
    path, starts = written(tmp_path / "r.ldrec", monkeypatch)
    hit = starts[4] + 100  # inside the frame of events 30..39 (about 500 bytes)
    rec = read(damaged(path, hit, zero))
    got = ns(rec)
    whole = [event(i)["detail"]["n"] for i in range(FRAMES * PER_FRAME)]
    assert set(got) <= set(whole)  # nothing changed
    kept = {i for i in range(FRAMES * PER_FRAME) if event(i)["detail"]["n"] in got}
    assert set(range(0, 30)) <= kept and set(range(40, 80)) <= kept  # every other frame
    assert len(kept) < FRAMES * PER_FRAME
    (note,) = rec.damage.notes()
    assert note.startswith("bytes ") and "unreadable" in note and " s lost at " in note, note
    assert not rec.truncated  # its end line is read: neither killed nor cut


def test_a_flipped_byte_that_still_decompresses_is_caught_by_the_checksum(tmp_path, monkeypatch) -> None:
    path, starts = written(tmp_path / "r.ldrec", monkeypatch)
    whole = [event(i)["detail"]["n"] for i in range(FRAMES * PER_FRAME)]
    caught = 0
    for at in range(starts[3] + 6, starts[4] - 4):  # every byte of one frame's blocks
        rec = read(damaged(path, at))
        got = ns(rec)
        assert [n for n in got if n not in whole] == [], f"byte {at}: a changed value was played"
        caught += bool(rec.damage.gaps)
    assert caught > 0


def test_the_cli_reads_past_the_damage_and_says_so(tmp_path, monkeypatch) -> None:
    path, starts = written(tmp_path / "r.ldrec", monkeypatch)
    bad = damaged(path, starts[4] + 20, 300)
    for args in (["report", str(bad), "-o", str(tmp_path / "r.md"), "--markdown"], ["snapshot", "--from", str(bad)]):
        done = linkdeck(*args)
        assert done.returncode == 0, done.stderr
        assert "is empty" not in done.stderr
        assert "unreadable" in done.stderr and " s lost at " in done.stderr, done.stderr
        assert "ends without its end mark" not in done.stderr, done.stderr  # its end line is there
    assert "unreadable" in (tmp_path / "r.md").read_text()


def test_damage_over_a_frame_boundary_is_not_called_a_cut(tmp_path, monkeypatch) -> None:
    path, starts = written(tmp_path / "r.ldrec", monkeypatch)
    rec = read(damaged(path, starts[4] - 150, 300))  # the end of one frame and the next one's start
    (note,) = rec.damage.notes()
    assert "unreadable" in note and not rec.truncated  # the end line is read: neither killed nor cut
    done = linkdeck("snapshot", "--from", str(damaged(path, starts[4] - 150, 300)))
    assert done.returncode == 0 and "unreadable" in done.stderr, done.stderr
    assert "ends without its end mark" not in done.stderr, done.stderr
    whole = path.read_bytes()
    # inside the last frame with lines (the one after it, which closes the file, holds none),
    # mid-file: cut
    for keep in (starts[-2] + 10, starts[4] + 100):
        part = tmp_path / f"cut-{keep}.ldrec"
        part.write_bytes(whole[:keep])
        assert read(part).truncated, keep


def test_skipped_lines_are_counted_and_named(tmp_path) -> None:
    good = [{"t": 101.0 + i, "ev": "state", "h": "h1", "state": "live", "error": None, "detail": {}} for i in range(5)]
    path = recording_file(tmp_path, [])
    text = zstandard.ZstdDecompressor().decompress(path.read_bytes()).decode()
    lines = [
        json.dumps(good[0]),
        "not json {",
        json.dumps([1, 2]),
        json.dumps({"ev": "state"}),
        *map(json.dumps, good[1:]),
        "{cut",
    ]
    path.write_bytes(zstandard.ZstdCompressor().compress((text + "\n".join(lines) + "\n").encode()))
    rec = read(path)
    assert len(list(rec.events())) == 5
    notes = rec.damage.notes()
    assert "2 lines skipped: not JSON (the first: line 2)" in notes
    assert "1 line skipped: JSON but not an event (no object) (the first: line 3)" in notes
    assert "1 line skipped: an event without a time (the first: line 4)" in notes


def test_a_time_far_ahead_or_back_is_flagged_and_not_the_clock(tmp_path) -> None:
    events = [
        {"t": 101.0 + i, "ev": "state", "h": "h1", "state": "live", "error": None, "detail": {"i": i}} for i in range(6)
    ]
    events[2]["t"] = 101.0 + 3 * 365 * 86400  # three years on
    events[4]["t"] = 50.0  # back before the start
    rec = read(recording_file(tmp_path, [*events, {"t": 107.0, "ev": "end"}]))
    assert rec.end == 107.0 and not rec.truncated
    played = [(e["detail"]["i"], e["t"]) for e in rec.events() if e["ev"] == "state"]
    assert played == [(0, 101.0), (1, 102.0), (2, 102.0), (3, 104.0), (4, 50.0), (5, 106.0)]
    (note,) = rec.damage.notes()
    assert note.startswith("2 lines with a time out of order"), note


def test_a_clock_that_really_jumps_is_followed(tmp_path) -> None:
    events = [
        {"t": t, "ev": "state", "h": "h1", "state": "live", "error": None, "detail": {}}
        for t in (101.0, 102.0, 9101.0, 9102.0)
    ]
    rec = read(recording_file(tmp_path, [*events, {"t": 9103.0, "ev": "end"}]))
    assert [e["t"] for e in rec.events()][:4] == [101.0, 102.0, 9101.0, 9102.0]
    assert rec.end == 9103.0 and not rec.damage


def test_an_older_recording_of_one_frame_reads_up_to_its_damage(tmp_path) -> None:
    events = [
        {"t": 101.0 + i, "ev": "state", "h": "h1", "state": "live", "error": None, "detail": {"n": i * 7919 % 10007}}
        for i in range(400)
    ]
    path = tmp_path / "old.ldrec"  # as linkdeck wrote format 2: one frame, a block a flush, no checksum
    with path.open("wb") as out, zstandard.ZstdCompressor().stream_writer(out) as z:
        for i, e in enumerate([{fileformat.MAGIC: 2, "linkdeck": "0.1.0", "started": 100.0, "hosts": []}, *events]):
            z.write(json.dumps(e).encode() + b"\n")
            if i % 20 == 0:
                z.flush(zstandard.FLUSH_BLOCK)
    rec = read(damaged(path, len(path.read_bytes()) * 2 // 3))
    got = [e for e in rec.events() if e["ev"] == "state"]
    assert 200 < len(got) < 400 and got == events[: len(got)]
    (note,) = rec.damage.notes()
    assert "unreadable" in note and "after" in note


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.integers(0, 1 << 16), st.sampled_from([0, 1, 17, 300])), min_size=1, max_size=4), st.data()
)
def test_any_damage_keeps_every_frame_it_did_not_touch(tmp_path_factory, monkeypatch, hits, data) -> None:
    path, starts = written(tmp_path_factory.mktemp("r") / "r.ldrec", monkeypatch)
    raw = bytearray(path.read_bytes())
    touched: set[int] = set()
    for at, zero in hits:
        at %= len(raw)
        span = range(at, min(len(raw), at + max(zero, 1)))
        if zero:
            raw[span.start : span.stop] = bytes(len(span))
        else:
            raw[at] ^= data.draw(st.integers(1, 255))
        touched |= {
            k
            for k, s in enumerate(starts)
            if any(s <= b < (starts[k + 1] if k + 1 < len(starts) else len(raw)) for b in span)
        }
    bad = path.with_name("bad.ldrec")
    bad.write_bytes(bytes(raw))
    try:
        rec = read(bad)
    except RecordingError as exc:
        assert "is empty" not in str(exc)
        assert len(touched) >= len(starts) - 1, str(exc)  # only when every frame with events is hit
        return
    got = set(ns(rec))
    whole = {event(i)["detail"]["n"] for i in range(FRAMES * PER_FRAME)}
    assert got <= whole
    for frame in range(1, FRAMES + 1):  # frame k holds events (k-1)*10 .. k*10-1
        if frame not in touched and frame - 1 not in touched:
            assert {event(i)["detail"]["n"] for i in range((frame - 1) * PER_FRAME, frame * PER_FRAME)} <= got, (
                frame,
                touched,
            )
    assert bool(rec.damage.notes()) == bool(touched) or not rec.damage.gaps


def test_the_bytes_said_unreadable_hold_the_damaged_byte(tmp_path, monkeypatch) -> None:
    """A frame of several blocks (a block a flush): a flipped byte the reader meets lies in
    the bytes its note names, whether the frame's first block or a later one was hit."""
    monkeypatch.setattr(fileformat, "FRAME_EVERY_S", 1e9)  # a frame ends only at close here
    path = tmp_path / "blocks.ldrec"
    writer = fileformat.Writer(path, {"started": START, "hosts": [{"name": "h1", "address": "h1", "os": "linux"}]})
    for i in range(FRAMES * PER_FRAME):
        writer.write(event(i))
        if i % PER_FRAME == PER_FRAME - 1:
            writer.flush()
    writer.write({"t": START + 1 + FRAMES * PER_FRAME, "ev": "end"})
    writer.close()
    data = path.read_bytes()
    assert not any(data.startswith(ZSTD_MAGIC, at) for at in range(1, len(data)))  # one frame, ended at close
    frame_end = len(data)
    met = 0
    for at in range(400, frame_end - 4, 97):  # past the header's block
        rec = read(damaged(path, at))
        list(rec.events())
        gaps = [g for g, _, _ in rec.damage.gaps.values()]
        if gaps:
            met += 1
            assert any(g.start <= at < g.end for g in gaps), (at, gaps)
    assert met > 10


def test_a_file_cut_in_its_last_bytes_says_so_and_what_it_could_not_check(tmp_path) -> None:
    """A real recording (`linkdeck record`, this machine) missing only bytes after its end line:
    every line is there, so it is no recording cut short, but the cut is said. A cut into the
    checksum of the frame its end line is in says that frame's lines could not be checked; a cut
    of the empty frame earlier linkdeck wrote after it (constructed here by appending one) says
    no line is lost."""
    path = tmp_path / "r.ldrec"
    done = linkdeck("record", str(path), "--duration", "1")
    assert done.returncode == 0, done.stderr
    whole = path.read_bytes()
    full = list(read(path).events())
    assert full[-1]["ev"] == "end" and not read(path).damage
    with path.open("rb") as raw:
        *_, last = frame_offsets(raw, len(whole)).offsets
    end_frame_lines = len(zstandard.ZstdDecompressor().decompressobj().decompress(whole[last:]).splitlines())
    older = whole + zstandard.ZstdCompressor(write_checksum=True).compress(b"")
    cases = [
        (whole, len(whole) - k, f"; that frame's {end_frame_lines} lines could not be checked") for k in range(1, 5)
    ]
    cases += [(older, len(older) - k, ", and no line is lost") for k in range(1, 5)]
    for data, keep, then in cases:
        cut = tmp_path / f"cut-{len(data)}-{keep}.ldrec"
        cut.write_bytes(data[:keep])
        rec = read(cut)
        assert list(rec.events()) == full and not rec.truncated, keep
        assert rec.damage.notes() == [
            f"the last frame's checksum is missing: the file was cut after its last line{then}"
        ], keep
    for data, keep in ((whole, len(whole) - 2), (older, len(older) - 4)):
        done = linkdeck("snapshot", "--from", str(tmp_path / f"cut-{len(data)}-{keep}.ldrec"))
        assert done.returncode == 0, done.stderr
        assert "the file was cut after its last line" in done.stderr, done.stderr
        assert "ends without its end mark" not in done.stderr, done.stderr  # its end line is there


def test_no_cut_of_a_closed_recording_goes_unsaid(tmp_path, monkeypatch) -> None:
    """A cut anywhere in a whole recording either loses lines the reader says are lost, or keeps
    every line and says the file was cut after the last: no cut leaves a file that reads as whole
    (an empty frame after the end line would, cut at its start)."""
    path, starts = written(tmp_path / "r.ldrec", monkeypatch)
    whole = path.read_bytes()
    full = list(read(path).events())
    cut = tmp_path / "cut.ldrec"
    for keep in sorted({*starts[1:], *range(len(whole) - 64, len(whole))}):
        cut.write_bytes(whole[:keep])
        rec = read(cut)
        events = list(rec.events())
        assert (
            rec.truncated or events != full or "the file was cut after its last line" in " ".join(rec.damage.notes())
        ), keep


def test_frames_hold_lines(tmp_path, monkeypatch) -> None:
    """A flush, a checkpoint or the close with nothing new written since the last frame ended
    adds no frame: an empty frame holds no line to check, and a file cut at its start reads as
    whole."""
    path, starts = written(tmp_path / "r.ldrec", monkeypatch)
    writer_path = tmp_path / "idle.ldrec"
    writer = fileformat.Writer(writer_path, {"started": START, "hosts": []})
    writer.write(event(0))
    writer.flush()
    writer.flush()
    writer.checkpoint([])
    writer.close()
    for data in (path.read_bytes(), writer_path.read_bytes()):
        bounds = [*frame_offsets_of(data), len(data)]
        for start, end in zip(bounds, bounds[1:]):
            assert zstandard.ZstdDecompressor().decompressobj().decompress(data[start:end]), (start, end)


def frame_offsets_of(data: bytes) -> list[int]:
    return frame_offsets(io.BytesIO(data), len(data)).offsets
