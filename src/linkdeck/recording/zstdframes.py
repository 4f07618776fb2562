"""A recording's zstd frames, read without decompressing what is not wanted.

The writer starts a new zstd frame at every checkpoint, so each frame can be decompressed on
its own. ``frame_offsets`` finds where each frame starts by hopping over block headers
(RFC 8878 §3.1.1.2: three bytes each, giving the block's size), which reads a few bytes per
block, not the data; ``lines`` streams the whole lines from one offset on, up to the end or the
first damage, in bounded memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Iterator

import zstandard

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
CHUNK = 1 << 20
_BLOCK_RLE, _BLOCK_RESERVED = 1, 3


@dataclass
class Scan:
    offsets: list[int]  # where each whole-or-cut zstd frame starts
    damaged: bool  # something that is no zstd frame, or a frame cut short, was met


def _skippable(magic: bytes) -> bool:
    return magic[1:] == b"\x2a\x4d\x18" and magic[0] & 0xF0 == 0x50


def frame_offsets(raw: IO[bytes], size: int) -> Scan:
    """Every frame's start in the file; reads only frame and block headers."""
    offsets: list[int] = []
    pos = 0
    while pos < size:
        raw.seek(pos)
        head = raw.read(18)
        if len(head) < 4:
            return Scan(offsets, True)
        if _skippable(head[:4]):
            pos += 8 + int.from_bytes(head[4:8], "little")
            continue
        if head[:4] != ZSTD_MAGIC:
            return Scan(offsets, True)
        try:
            header = zstandard.frame_header_size(head)
            checksum = zstandard.get_frame_parameters(head).has_checksum
        except zstandard.ZstdError:
            return Scan(offsets, True)
        offsets.append(pos)
        pos += header
        while True:
            raw.seek(pos)
            block = raw.read(3)
            if len(block) < 3:
                return Scan(offsets, True)
            value = int.from_bytes(block, "little")
            kind, length = (value >> 1) & 3, value >> 3
            if kind == _BLOCK_RESERVED:
                return Scan(offsets, True)
            pos += 3 + (1 if kind == _BLOCK_RLE else length)
            if value & 1:
                break
        pos += 4 if checksum else 0
        if pos > size:
            return Scan(offsets, True)
    return Scan(offsets, False)


class Lines:
    """The whole lines from ``offset`` on, through every later frame; ``damaged`` is set when
    the stream ended at damage or a cut rather than at the file's end."""

    def __init__(self, raw: IO[bytes], offset: int) -> None:
        self.raw, self.offset = raw, offset
        self.damaged = False
        self.cut = False

    def __iter__(self) -> Iterator[bytes]:
        dctx = zstandard.ZstdDecompressor()
        obj = dctx.decompressobj()
        self.raw.seek(self.offset)
        rest = b""
        while chunk := self.raw.read(CHUNK):
            while chunk:
                try:
                    data = obj.decompress(chunk)
                except zstandard.ZstdError:
                    self.damaged = True
                    break
                if data:
                    data = rest + data
                    end = data.rfind(b"\n") + 1
                    rest = data[end:]
                    if end:
                        yield from data[:end].splitlines()
                # a file appended to after a clean close, or a checkpoint, starts a new frame
                chunk = obj.unused_data if obj.eof else b""
                if obj.eof:
                    obj = dctx.decompressobj()
            if self.damaged:
                break
        self.cut = bool(rest)


def first_line(raw: IO[bytes], offset: int, limit: int = 1 << 16) -> bytes | None:
    """The first line of the frame at ``offset`` (decompressing only as far as it), or None."""
    obj = zstandard.ZstdDecompressor().decompressobj()
    raw.seek(offset)
    got = b""
    while len(got) < limit:
        chunk = raw.read(1 << 14)
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
