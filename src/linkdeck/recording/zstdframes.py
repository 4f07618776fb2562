"""A recording's zstd frames, read without decompressing what is not wanted, and read past
damage.

The writer starts a new zstd frame every few seconds and at every checkpoint, each with a
content checksum, so each frame can be decompressed and checked on its own. ``frame_offsets``
finds where each frame starts by hopping over block headers (RFC 8878 §3.1.1.2: three bytes
each, giving the block's size), which reads a few bytes per block, not the data; ``Lines``
streams the whole lines from one offset on in bounded memory. Both go on past damage from
the next frame that reads (found by its magic number), and say which bytes they could not
read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, Iterator

import zstandard

from ..core.bounded_read import RECORDING_LINE_LIMIT as RECORDING_LINE_LIMIT  # patched by tests, read by fileformat

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# What ``Lines`` gives for a line longer than its bound: never read whole, counted as skipped.
OVERLONG = b"\x00a line past the bound\x00"
CHUNK = 1 << 16
PIECE = 1 << 9
_BLOCK_RLE, _BLOCK_RESERVED = 1, 3


@dataclass
class Gap:
    """Bytes ``start``..``end`` of the file could not be read; ``after`` lines were read
    before them (from where the reader started)."""

    start: int
    end: int
    after: int = 0


@dataclass
class Scan:
    offsets: list[int]  # where each whole-or-cut zstd frame starts
    damaged: bool  # something that is no zstd frame, or a frame cut short, was met
    gaps: list[Gap] = field(default_factory=list)  # what could not be walked over
    cut: bool = False  # the file ends inside its last frame (a crash, a partial copy)


def _skippable(magic: bytes) -> bool:
    return magic[1:] == b"\x2a\x4d\x18" and magic[0] & 0xF0 == 0x50


def next_magic(raw: IO[bytes], pos: int, size: int) -> int:
    """Where the next zstd frame magic at or after ``pos`` starts, or ``size``."""
    while pos < size:
        raw.seek(pos)
        chunk = raw.read(CHUNK + len(ZSTD_MAGIC) - 1)
        found = chunk.find(ZSTD_MAGIC)
        if found >= 0:
            return pos + found
        if len(chunk) < len(ZSTD_MAGIC):
            break
        pos += CHUNK
    return size


def _walk(raw: IO[bytes], pos: int) -> int | None:
    """The end of the frame starting at ``pos`` by its block headers; None where there is no
    frame header or a reserved block."""
    raw.seek(pos)
    head = raw.read(18)
    if head[:4] != ZSTD_MAGIC:
        return None
    try:
        header = zstandard.frame_header_size(head)
        checksum = zstandard.get_frame_parameters(head).has_checksum
    except zstandard.ZstdError:
        return None
    pos += header
    while True:
        raw.seek(pos)
        block = raw.read(3)
        if len(block) < 3:
            return pos + 3  # cut: past the end
        value = int.from_bytes(block, "little")
        kind, length = (value >> 1) & 3, value >> 3
        if kind == _BLOCK_RESERVED:
            return None
        pos += 3 + (1 if kind == _BLOCK_RLE else length)
        if value & 1:
            return pos + (4 if checksum else 0)


def frame_offsets(raw: IO[bytes], size: int) -> Scan:
    """Every frame's start in the file; reads only frame and block headers. A frame whose
    headers do not lead to another frame (or the end) is counted, and the scan goes on from
    the next frame magic after its start."""
    scan = Scan([], False)
    pos = 0
    while pos < size:
        raw.seek(pos)
        head = raw.read(8)
        if len(head) >= 8 and _skippable(head[:4]):
            pos += 8 + int.from_bytes(head[4:8], "little")
            continue
        end = _walk(raw, pos)
        if end is not None:
            scan.offsets.append(pos)
            if end == size or (end < size and _starts_frame(raw, end)):
                pos = end
                continue
            if end > size and next_magic(raw, pos + 1, size) == size:
                scan.damaged = scan.cut = True  # the last frame, cut short
                break
        scan.damaged = True
        following = next_magic(raw, pos + 1, size)
        if end is None:
            scan.gaps.append(Gap(pos, following))
        pos = following
    return scan


def _starts_frame(raw: IO[bytes], pos: int) -> bool:
    raw.seek(pos)
    magic = raw.read(4)
    return magic == ZSTD_MAGIC or _skippable(magic)


class Lines:
    """The whole lines from ``offset`` on, through every later frame. A frame that stops
    decompressing gives the lines before that point, one that fails its checksum none:
    ``gaps`` says which bytes, and reading goes on at the next frame that decompresses. ``cut`` is set when the file
    ends inside a frame or a line (a crash, a partial copy): its lines up to there are read."""

    def __init__(self, raw: IO[bytes], offset: int, size: int | None = None, line_limit: int | None = None) -> None:
        self.raw, self.offset = raw, offset
        self.line_limit = RECORDING_LINE_LIMIT if line_limit is None else line_limit
        if size is None:
            raw.seek(0, 2)
            size = raw.tell()
        self.size = size
        self.gaps: list[Gap] = []
        self.cut = False
        # The frame the file ends inside: whether it was to end with a checksum, and its lines,
        # given as read and never checked against it (0 when it held none, as the one that
        # closes a file)
        self.cut_checksum = False
        self.unchecked = 0
        self._count = 0

    @property
    def damaged(self) -> bool:
        return bool(self.gaps)

    def __iter__(self) -> Iterator[bytes]:
        dctx = zstandard.ZstdDecompressor()
        pos, rest = self.offset, _Partial(self.line_limit)
        while pos < self.size:
            frame = _Frame(self.raw, pos, self.size, dctx)
            lines, before = [], self._count
            for data in frame:
                whole = rest.feed(data)
                if frame.checked:
                    lines += whole  # held until the checksum agrees
                else:
                    for line in whole:
                        self._count += 1
                        yield line
            if frame.end is not None:
                for line in lines:
                    self._count += 1
                    yield line
                pos = frame.end
                continue
            # damage: what decoded before it stands (data refers only back), unless the whole
            # frame decoded and its checksum disagrees (then a byte anywhere in it is wrong)
            if not frame.checksum_failed:
                for line in lines:
                    self._count += 1
                    yield line
            following = next_magic(self.raw, pos + 1, self.size)
            if following == self.size and frame.reached_end:
                self.cut = True  # the file ends inside this frame: a crash or a cut copy
                self.cut_checksum, self.unchecked = frame.checked, self._count - before
                return
            self.gaps.append(Gap(pos if frame.checksum_failed else frame.lost_from, following, self._count))
            pos, rest = following, _Partial(self.line_limit)
        self.cut = bool(rest)


class _Partial:
    """The line being put together from decompressed pieces: kept as pieces (joined once,
    when its newline comes), and dropped once it passes ``limit``: it then stands as
    ``OVERLONG``, one line a reader counts as skipped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.pieces: list[bytes] = []
        self.length = 0
        self.overlong = False

    def __bool__(self) -> bool:
        return bool(self.pieces) or self.overlong

    def feed(self, data: bytes) -> list[bytes]:
        """The lines ``data`` completes."""
        first = data.find(b"\n")
        if first < 0:
            self._keep(data)
            return []
        self._keep(data[:first])
        out = [OVERLONG if self.overlong else b"".join(self.pieces)]
        last = data.rfind(b"\n")
        out += data[first + 1 : last].split(b"\n") if last > first else []
        self.pieces, self.length, self.overlong = [], 0, False
        out = [OVERLONG if len(line) > self.limit else line for line in out]
        self._keep(data[last + 1 :])
        return out

    def _keep(self, data: bytes) -> None:
        if self.overlong or not data:
            return
        self.length += len(data)
        if self.length > self.limit:
            self.pieces, self.overlong = [], True
        else:
            self.pieces.append(data)


class _Frame:
    """One frame's decompressed data, chunk by chunk, from ``pos``: ``end`` is where it ended
    once it did (checksum checked), None when it failed or the file ended first."""

    def __init__(self, raw: IO[bytes], pos: int, size: int, dctx: zstandard.ZstdDecompressor) -> None:
        self.raw, self.pos, self.size = raw, pos, size
        self.obj = dctx.decompressobj()
        raw.seek(pos)
        head = raw.read(18)
        try:
            self.checked = zstandard.get_frame_parameters(head).has_checksum
        except zstandard.ZstdError:
            self.checked = False
        self.end: int | None = None
        # Where the unreadable bytes may start: the piece whose data ended the last block that
        # decoded (a block's data comes out once the whole block is in), so a damaged byte in
        # the block after it lies past here; the frame's start while nothing decoded.
        self.lost_from = pos
        self.checksum_failed = False
        self.reached_end = False

    def __iter__(self) -> Iterator[bytes]:
        at = self.pos
        while at < self.size:
            self.raw.seek(at)
            # small pieces: what decodes before damage is kept
            chunk = self.raw.read(min(PIECE, self.size - at))
            if not chunk:
                break
            try:
                data = self.obj.decompress(chunk)
            except zstandard.ZstdError as exc:
                self.checksum_failed = "checksum" in str(exc)
                return
            if data:
                self.lost_from = at
            at += len(chunk)
            if self.obj.eof:
                self.end = at - len(self.obj.unused_data)
            if data:
                yield data
            if self.end is not None:
                return
        self.reached_end = True


def first_line(raw: IO[bytes], offset: int, limit: int = 1 << 16) -> bytes | None:
    """The first line of the frame at ``offset`` (decompressing only as far as it), or None.
    Fed in small pieces: damage later in the frame does not hide a line decoded before it."""
    obj = zstandard.ZstdDecompressor().decompressobj()
    raw.seek(offset)
    got = b""
    while len(got) < limit:
        chunk = raw.read(PIECE)
        if not chunk:
            return None
        try:
            got += obj.decompress(chunk)
        except zstandard.ZstdError:
            return None
        if b"\n" in got:
            return got[: got.index(b"\n")]
        if obj.eof:
            return None
    return None
