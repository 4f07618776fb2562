"""The recording file: JSON Lines in one zstd stream, the first line a versioned header.

Written as it goes and flushed every ``FLUSH_EVERY_S`` seconds (a zstd block flush: what was
flushed is readable by any zstd reader even if the process dies right after), so a crash or
``kill -9`` loses at most those last seconds. The reader takes everything up to a cut: a file
truncated mid-block or mid-line reads up to its last whole line. docs/RECORDING.md documents
every line kind.
"""

from __future__ import annotations

import io
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import zstandard

from .. import __version__

FORMAT_VERSION = 1
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


@dataclass(frozen=True)
class Recording:
    path: Path
    header: dict
    events: list[dict]
    truncated: bool  # it ends without its "end" line (a crash, kill -9, a cut copy)

    @property
    def start(self) -> float:
        return float(self.header.get("started") or (self.events[0]["t"] if self.events else 0.0))

    @property
    def end(self) -> float:
        return float(self.events[-1]["t"]) if self.events else self.start


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
    """The whole recording; RecordingError for a file that is not one, or is from a newer
    linkdeck."""
    path = Path(path)
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise RecordingError(f"cannot open {path}: {exc.strerror or exc}") from None
    with raw:
        lines, truncated = _lines(raw, path)
    if not lines:
        raise RecordingError(f"{path} is empty: a recording that was killed before its first flush holds nothing")
    header = _header(lines[0], path)
    events = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            event = json.loads(line)
        except ValueError:
            raise RecordingError(f"{path}: line {number} is not JSON: the file is damaged") from None
        if isinstance(event, dict) and isinstance(event.get("t"), (int, float)):
            events.append(event)
    # A recording closed cleanly ends with its "end" line; without it, it was cut short.
    return Recording(path, header, events, truncated or not events or events[-1].get("ev") != "end")


def _lines(raw: IO[bytes], path: Path) -> tuple[list[bytes], bool]:
    """Every whole line up to the end or the first damage, and whether the file was cut.
    A zstd decompressor fed a cut file gives out every whole block before the cut."""
    dctx = zstandard.ZstdDecompressor()
    obj = dctx.decompressobj()
    data = io.BytesIO()
    damaged = False
    while chunk := raw.read(1 << 20):
        while chunk:
            try:
                data.write(obj.decompress(chunk))
            except zstandard.ZstdError as exc:
                if data.tell() == 0:
                    raise RecordingError(f"{path} is not a linkdeck recording (not zstd: {exc})") from None
                damaged, chunk = True, b""
                break
            chunk = obj.unused_data if obj.eof else b""
            if obj.eof:  # a file appended to after a clean close holds a second zstd frame
                obj = dctx.decompressobj()
        if damaged:
            break
    text = data.getvalue()
    cut = bool(text) and not text.endswith(b"\n")
    return text[: text.rfind(b"\n") + 1].splitlines(), damaged or cut


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
