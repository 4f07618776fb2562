"""The recording file: JSON Lines in one zstd stream, the first line a versioned header.

Written as it goes and flushed every ``FLUSH_EVERY_S`` seconds (a zstd block flush: what was
flushed is readable by any zstd reader even if the process dies right after), so a crash or
``kill -9`` loses at most those last seconds. The reader takes everything up to a cut: a file
truncated mid-block or mid-line reads up to its last whole line. docs/RECORDING.md documents
every line kind.
"""

from __future__ import annotations

import bisect
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

import zstandard

from .. import __version__
from .zstdframes import Lines, first_line, frame_offsets

# 2: a checkpoint every CHECKPOINT_S starts a new zstd frame with each host's state (`resume`),
# which a version 1 reader would replay as reconnects. Version 1 files still open.
FORMAT_VERSION = 2
CHECKPOINT = "checkpoint"
MAGIC = "linkdeck_recording"  # the header's key holding the format version
FLUSH_EVERY_S = 2.0
# zstd level 3 with a 4 MiB window: the window holds every host's previous slow-facts frame
# (facts_every ticks back) up to about 150 hosts, so each frame costs little more than the
# digits that changed; a higher level saves ~15 % of the bytes for 8x the CPU
# (bench/bench_record.py, bench/bench_ui.py --recorder).
LEVEL = 3
WINDOW_LOG = 22


class RecordingError(Exception):
    """A file that is not a recording this linkdeck can read; the message says why and what to
    do next."""


@dataclass
class Recording:
    """An open recording: its header and its index (where each checkpoint's frame starts and
    when), read without reading the events. ``events`` streams them from a checkpoint on."""

    path: Path
    header: dict
    checkpoints: list[tuple[float, int]]  # (time, file offset) of each frame one can start at
    truncated: bool  # it ends without its "end" line (a crash, kill -9, a cut copy)
    end: float  # the last event's time

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
        """``events`` with each one's line number in ``lines(checkpoint)``."""
        for number, line in enumerate(self.lines(checkpoint)):
            event = decode_event(line)
            if event is not None:
                yield number, event

    def lines(self, checkpoint: int = 0) -> Iterator[bytes]:
        """The raw lines from checkpoint ``checkpoint`` on, undecoded (the header's not among
        them); ``decode_event`` reads one."""
        offset = self.checkpoints[checkpoint][1]
        with self.path.open("rb") as raw:
            lines = iter(Lines(raw, offset))
            if checkpoint == 0:
                next(lines, None)
            yield from lines


class Writer:
    """Appends JSON lines to a new recording; ``write`` is cheap, ``flush`` makes everything
    written so far readable from the file."""

    def __init__(self, path: str | os.PathLike, header: dict) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = open(self.path, "xb")
        params = zstandard.ZstdCompressionParameters.from_level(LEVEL, window_log=WINDOW_LOG)
        self._zstd = zstandard.ZstdCompressor(compression_params=params).stream_writer(self._file, closefd=False)
        self._last_flush = time.monotonic()
        self.bytes_in = 0
        self.write({MAGIC: FORMAT_VERSION, "linkdeck": __version__, **header})
        self.flush()

    def write(self, event: dict) -> None:
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        self.bytes_in += len(line)
        self._zstd.write(line)
        if time.monotonic() - self._last_flush >= FLUSH_EVERY_S:
            self.flush()

    def flush(self) -> None:
        self._zstd.flush(zstandard.FLUSH_BLOCK)
        self._file.flush()
        self._last_flush = time.monotonic()

    def checkpoint(self, events: list[dict]) -> None:
        """End the zstd frame and start a new one with ``events`` (a checkpoint line first):
        a reader can start decompressing here, and find here by reading block headers."""
        self._zstd.flush(zstandard.FLUSH_FRAME)
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
        self._zstd.flush(zstandard.FLUSH_FRAME)
        self._zstd.close()
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
        if first is None:
            raise RecordingError(f"{path} is empty: a recording that was killed before its first flush holds nothing")
        header = _header(first, path)
        checkpoints = [(float(header.get("started") or 0.0), 0)]
        for offset in scan.offsets[1:]:
            event = decode_event(first_line(raw, offset) or b"")
            if event is not None and event.get("ev") == CHECKPOINT:
                checkpoints.append((float(event["t"]), offset))
        last, lines = None, Lines(raw, checkpoints[-1][1])
        for number, line in enumerate(lines):
            if number or len(checkpoints) > 1:
                last = decode_event(line) or last
    end = float(last["t"]) if last else checkpoints[0][0]
    truncated = scan.damaged or lines.damaged or lines.cut or last is None or last.get("ev") != "end"
    return Recording(path, header, checkpoints, truncated, end)


def decode_event(line: bytes) -> dict | None:
    """One event line; None for a line that is no event (a damaged line is skipped, as unknown
    kinds are: the lines around it still play)."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and isinstance(event.get("t"), (int, float)) else None


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
