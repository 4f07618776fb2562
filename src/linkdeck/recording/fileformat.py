"""The recording file: JSON Lines in zstd frames, the first line a versioned header.

Written as it goes and flushed every ``FLUSH_EVERY_S`` seconds (a zstd block flush: what was
flushed is readable by any zstd reader even if the process dies right after), so a crash or
``kill -9`` loses at most those last seconds. Every ``FRAME_EVERY_S`` the frame ends with its
content checksum and a new one starts: a damaged byte costs the frame it is in, and the reader
goes on at the next one. The reader takes everything up to a cut: a file truncated mid-block
or mid-line reads up to its last whole line. docs/RECORDING.md documents every line kind.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator

import zstandard

from .. import __version__
from ..core.bounded_read import size_words
from . import zstdframes
from .zstdframes import OVERLONG, Gap, Lines, first_line, frame_offsets

# 2: a checkpoint every CHECKPOINT_S starts a new zstd frame with each host's state (`resume`),
# which a version 1 reader would replay as reconnects. Version 1 files still open.
FORMAT_VERSION = 2
CHECKPOINT = "checkpoint"
MAGIC = "linkdeck_recording"  # the header's key holding the format version
FLUSH_EVERY_S = 2.0
# A frame holds no history from the one before, so each costs the window's head start afresh;
# a damaged byte loses the frame it is in (bench/bench_record.py).
FRAME_EVERY_S = 10.0
# zstd level 3 with a 4 MiB window: the window holds every host's previous slow-facts frame
# (facts_every ticks back) up to about 150 hosts, so each frame costs little more than the
# digits that changed; a higher level saves ~15 % of the bytes for 8x the CPU
# (bench/bench_record.py, bench/bench_ui.py --recorder).
LEVEL = 3
WINDOW_LOG = 22


class RecordingError(Exception):
    """A file that is not a recording this linkdeck can read; the message says why and what to
    do next."""


# An event this far after the one before, with the one after it back near the clock, is a
# bad timestamp, not time passing.
FAR_AHEAD_S = 3600.0
# A wall clock stepped back this little (NTP) is time still moving.
BACK_SLACK_S = 1.0


@dataclass
class Damage:
    """What a reader met that it could not use, said in notes (``notes``). Each thing is
    counted once however many times the recording is read."""

    gaps: dict[int, tuple[Gap, float | None, float | None]] = field(
        default_factory=dict
    )  # start -> (bytes, clock before, after)
    skipped: dict[str, set[tuple[int, int]]] = field(default_factory=dict)  # why -> (frame offset, line)
    first_skipped: dict[str, int] = field(default_factory=dict)  # why -> its first line's number
    clock: dict[tuple[int, int], tuple[float, float]] = field(
        default_factory=dict
    )  # (frame offset, line) -> (its t, the clock used)
    header_lost: bool = False  # the first line (hosts, settings) could not be read
    # The file was cut after its end line: (the frame it ends inside was to end with a checksum,
    # how many of its lines went unchecked: 0 when it held none). None: not cut there.
    cut_after_end: tuple[bool, int] | None = None

    def __bool__(self) -> bool:
        return bool(self.gaps or self.skipped or self.clock or self.header_lost or self.cut_after_end is not None)

    def notes(self) -> list[str]:
        """One line per kind of damage, saying where and what it cost."""
        out = (
            ["its header (the hosts and settings it was recorded with) is unreadable: default settings used"]
            if self.header_lost
            else []
        )
        for gap, before, after in sorted(self.gaps.values(), key=lambda g: g[0].start):
            where = f"bytes {gap.start:,}–{gap.end:,} unreadable"
            if before is not None and after is not None:
                out.append(f"{where}: {after - before:.0f} s lost at {_hms(before)}–{_hms(after)}")
            elif before is not None:
                out.append(f"{where}: what came after {_hms(before)} is lost")
            elif after is not None:
                out.append(f"{where}: what came before {_hms(after)} is lost")
            else:
                out.append(where)
        for why, lines in self.skipped.items():
            n = len(lines)
            out.append(
                f"{n} line{'s' if n != 1 else ''} skipped: {why} (the first: line {self.first_skipped[why] + 1:,})"
            )
        if self.clock:
            (t, used), n = next(iter(self.clock.values())), len(self.clock)
            more = f" ({n - 1} more)" if n > 1 else ""
            out.append(
                f"{n} line{'s' if n != 1 else ''} with a time out of order, not taken as the clock: "
                f"one says {_stamp(t)} when the clock stood at {_hms(used)}{more}"
            )
        if self.cut_after_end is not None:
            checksum, n = self.cut_after_end
            out.append(
                ("the last frame's checksum is missing: " if checksum else "")
                + "the file was cut after its last line"
                + (
                    f"; that frame's {n} line{'s' if n != 1 else ''} could not be checked"
                    if n
                    else ", and no line is lost"
                )
            )
        return out


def _hms(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))


def _stamp(when: float) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))
    except (OverflowError, OSError, ValueError):
        return f"{when:.0f} s after 1970"


@dataclass
class Recording:
    """An open recording: its header and its index (where each checkpoint's frame starts and
    when), read without reading the events. ``events`` streams them from a checkpoint on;
    ``damage`` gathers what the reading met that it could not use."""

    path: Path
    header: dict
    checkpoints: list[tuple[float, int]]  # (time, file offset) of each frame one can start at
    truncated: bool  # it ends without its "end" line (a crash, kill -9, a cut copy)
    end: float  # the last event's time
    damage: Damage = field(default_factory=Damage)
    # the last read through to the file's end: (it ends inside a frame, that frame was to end
    # with a checksum, its lines)
    ending: tuple[bool, bool, int] = (False, False, 0)

    @property
    def start(self) -> float:
        return float(self.header.get("started") or self.end)

    def checkpoint_before(self, when: float) -> int:
        """The index of the last checkpoint at or before ``when`` (0: the file's start)."""
        times = [t for t, _ in self.checkpoints]
        return max(0, bisect.bisect_right(times, when) - 1)

    def events(self, checkpoint: int = 0) -> Iterator[dict]:
        """Every event from checkpoint ``checkpoint`` on, one at a time, in bounded memory (the
        header line is not one)."""
        for _, event in self.numbered_events(checkpoint):
            yield event

    def numbered_events(self, checkpoint: int = 0) -> Iterator[tuple[int, dict]]:
        """``events`` with each one's line number in ``lines(checkpoint)``. A line that is no
        event is skipped and counted; an event whose time runs back is counted, one far ahead of
        the events around it is played at the clock before it and counted (``damage``)."""
        clock = self.checkpoints[checkpoint][0]
        offset = self.checkpoints[checkpoint][1]
        held: tuple[int, dict] | None = None  # an event far ahead, until the next says whether time jumped
        for number, line in self._numbered_lines(checkpoint):
            event, why = _decode(line)
            if event is None:
                self.damage.skipped.setdefault(why, set()).add((offset, number))
                self.damage.first_skipped.setdefault(why, number)
                continue
            t = float(event["t"])
            if held is not None:
                ahead = float(held[1]["t"])
                if t >= ahead - BACK_SLACK_S:
                    clock = ahead  # the clock did jump
                else:
                    self._misdated(offset, held, clock)
                yield held
                held = None
            if t > clock + FAR_AHEAD_S:
                held = (number, event)
                continue
            if t < clock - BACK_SLACK_S:
                # counted; played as written (a player's clock never runs back)
                self.damage.clock.setdefault((offset, number), (t, clock))
            else:
                clock = max(clock, t)
            yield number, event
        if held is not None:
            self._misdated(offset, held, clock)
            yield held

    def _misdated(self, offset: int, item: tuple[int, dict], clock: float) -> None:
        number, event = item
        self.damage.clock.setdefault((offset, number), (float(event["t"]), clock))
        event["t"] = clock

    def lines(self, checkpoint: int = 0) -> Iterator[bytes]:
        """The raw lines from checkpoint ``checkpoint`` on, undecoded (the header's not among
        them); ``decode_event`` reads one."""
        for _, line in self._numbered_lines(checkpoint):
            yield line

    def _numbered_lines(self, checkpoint: int) -> Iterator[tuple[int, bytes]]:
        """The numbered lines from a checkpoint on; the unreadable bytes met go into
        ``damage`` with the clock on each side of them."""
        with self.path.open("rb") as raw:
            lines = Lines(raw, self.checkpoints[checkpoint][1])
            noted, number = 0, 0
            last_t: float | None = self.checkpoints[checkpoint][0] or None
            skip_header = checkpoint == 0
            for line in lines:
                if skip_header and not lines.gaps and line.startswith(_HEADER_START):
                    skip_header = False
                    continue
                skip_header = False
                t = _time_of(line)
                for gap in lines.gaps[noted:]:
                    self._gap(gap, last_t, t)
                noted = len(lines.gaps)
                last_t = t if t is not None else last_t
                yield number, line
                number += 1
            for gap in lines.gaps[noted:]:
                self._gap(gap, last_t, None)
            self.ending = (lines.cut, lines.cut_checksum, lines.unchecked)

    def _gap(self, gap: Gap, before: float | None, after: float | None) -> None:
        self.damage.gaps.setdefault(gap.start, (gap, before, after))


_HEADER_START = b'{"' + MAGIC.encode() + b'"'
_TIME = re.compile(rb'^\{"t":(-?[0-9.eE+]+)[,}]')


def _time_of(line: bytes) -> float | None:
    m = _TIME.match(line)
    if m is None:
        return None
    try:
        return float(m.group(1))
    except ValueError:
        return None


class Writer:
    """Appends JSON lines to a new recording; ``write`` is cheap, ``flush`` makes everything
    written so far readable from the file."""

    def __init__(self, path: str | os.PathLike, header: dict) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = open(self.path, "xb")
        params = zstandard.ZstdCompressionParameters.from_level(LEVEL, window_log=WINDOW_LOG, write_checksum=True)
        self._zstd = zstandard.ZstdCompressor(compression_params=params).stream_writer(self._file, closefd=False)
        self._last_flush = self._last_frame = time.monotonic()
        # zstd ends a frame even when nothing was written since the last one ended, and an
        # empty frame after the end line would let a file cut at its start read as whole
        self._framed = True
        self.bytes_in = 0
        self.write({MAGIC: FORMAT_VERSION, "linkdeck": __version__, **header})
        self.flush()

    def write(self, event: dict) -> None:
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        self.bytes_in += len(line)
        self._zstd.write(line)
        self._framed = False
        if time.monotonic() - self._last_flush >= FLUSH_EVERY_S:
            self.flush()

    def flush(self) -> None:
        now = time.monotonic()
        if now - self._last_frame >= FRAME_EVERY_S:
            self._end_frame()
        else:
            self._zstd.flush(zstandard.FLUSH_BLOCK)
        self._file.flush()
        self._last_flush = now

    def _end_frame(self) -> None:
        if not self._framed:
            self._zstd.flush(zstandard.FLUSH_FRAME)
            self._framed = True
        self._last_frame = time.monotonic()

    def checkpoint(self, events: list[dict]) -> None:
        """End the zstd frame and start a new one with ``events`` (a checkpoint line first):
        a reader can start decompressing here, and find here by reading block headers."""
        self._end_frame()
        for event in events:
            self.write(event)
        self.flush()

    @property
    def bytes_out(self) -> int:
        """The file's size so far (what is flushed or closed)."""
        return self.path.stat().st_size

    def close(self) -> None:
        if self._file.closed:
            return
        self._end_frame()
        # not the stream writer's close: it ends one more frame, an empty one
        self._file.close()


def read(path: str | os.PathLike) -> Recording:
    """The recording's header and index; RecordingError for a file that is not one, or is
    from a newer linkdeck. Reads the frame headers, each checkpoint's first line and the last
    frame, not the whole file."""
    path = Path(path)
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise RecordingError(f"cannot open {path}: {exc.strerror or exc}") from None
    with raw:
        size = os.fstat(raw.fileno()).st_size
        scan = frame_offsets(raw, size)
        if not scan.offsets:
            if size:
                raise RecordingError(f"{path} is not a linkdeck recording (not zstd)")
            raise RecordingError(f"{path} is empty: a recording that was killed before its first flush holds nothing")
        first = first_line(raw, 0)
        header = _header(first, path) if first is not None else None
        checkpoints: list[tuple[float, int]] = [(float(header.get("started") or 0.0) if header else 0.0, 0)]
        for offset in scan.offsets[1:]:
            event = decode_event(first_line(raw, offset) or b"")
            if event is not None and event.get("ev") == CHECKPOINT:
                checkpoints.append((float(event["t"]), offset))
    recording = Recording(path, header or {MAGIC: FORMAT_VERSION}, checkpoints, False, checkpoints[0][0])
    if header is None:
        # the header's frame is damaged: the events after it still play, with default settings
        started = next((float(e["t"]) for e in recording.events()), None)
        if started is None:
            if not recording.damage.gaps:
                raise RecordingError(
                    f"{path} is empty: a recording that was killed before its first flush holds nothing"
                )
            where = "; ".join(recording.damage.notes())
            raise RecordingError(
                f"{path}: nothing in it could be read ({where}); a copy from where it was recorded may be whole"
            )
        recording.header["started"] = started
        recording.checkpoints[0] = (started, 0)
        recording.damage.header_lost = True
    last = None
    for _, event in recording.numbered_events(len(checkpoints) - 1):
        last = event
    recording.end = float(last["t"]) if last else checkpoints[0][0]
    # damage before the end is said in the damage notes; "cut" is only for an end that is missing
    recording.truncated = last is None or last.get("ev") != "end"
    cut, checksum, unchecked = recording.ending
    if not recording.truncated and (cut or scan.cut):
        # every line is there, the end line last, but the bytes that close the file are not
        recording.damage.cut_after_end = (checksum, unchecked if checksum else 0)
    return recording


def decode_event(line: bytes) -> dict | None:
    """One event line; None for a line that is no event (a damaged line is skipped, as unknown
    kinds are: the lines around it still play)."""
    return _decode(line)[0]


def _decode(line: bytes) -> tuple[dict | None, str]:
    """The event on a line, or None and why it is none."""
    if line == OVERLONG:
        return None, f"longer than {size_words(zstdframes.RECORDING_LINE_LIMIT)} (not read)"
    try:
        event = json.loads(line)
    except ValueError:
        return None, "not JSON"
    if not isinstance(event, dict):
        return None, "JSON but not an event (no object)"
    t = event.get("t")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
        return None, "an event without a time"
    return event, ""


def _header(line: bytes, path: Path) -> dict:
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or MAGIC not in header:
        raise RecordingError(f"{path} is not a linkdeck recording (its first line is no recording header)")
    version = header[MAGIC]
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise RecordingError(
            f"{path} is recording format {version} (written by linkdeck {header.get('linkdeck', '?')}); "
            f"this linkdeck {__version__} reads format {FORMAT_VERSION}: upgrade linkdeck to read it"
        )
    return header
