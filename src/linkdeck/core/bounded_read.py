"""Reading a whole file or answer with a size bound: a file that is not what it should be
(``/dev/zero``, a log named by mistake, a runaway server) costs at most the bound plus one
byte, never all memory, and is said in one line naming it, the bound and what to do.

The bounds are far above any real file of each kind (docs/CONFIG.md lists them)."""

from __future__ import annotations

import os
from typing import IO, AsyncIterable

MIB = 1 << 20

CONFIG_LIMIT = 4 * MIB  # linkdeck's config, and each file --ssh-config / Include reads
SSH_CONFIG_LIMIT = 4 * MIB
KNOWN_HOSTS_LIMIT = 16 * MIB  # tens of thousands of hosts' keys
KEY_LIMIT = 1 * MIB  # an ssh key, its .pub or its certificate; a token or password file
PROMETHEUS_ANSWER_LIMIT = 64 * MIB  # one query's answer
RECORDING_LINE_LIMIT = 64 * MIB  # one line of a recording (a checkpoint holds every host)
COMMAND_OUTPUT_LIMIT = 64 * MIB  # what `linkdeck parse` reads
STATE_LIMIT = 1 * MIB  # the dashboard's own state file (the column choice)


class TooLarge(Exception):
    """``name`` holds more than ``limit`` bytes, the bound for ``what`` ("a config file")."""

    def __init__(self, name: str, limit: int, what: str, advice: str = "is it the right file?") -> None:
        self.name, self.limit, self.what = name, limit, what
        self.reason = f"more than {size_words(limit)}, the bound for {what}: {advice}"
        super().__init__(f"{name}: {self.reason}")


def size_words(limit: int) -> str:
    """``limit`` bytes in the unit the bounds are set in: "4 MiB"."""
    if limit >= MIB:
        return f"{limit / MIB:g} MiB"
    return f"{limit / 1024:g} KiB" if limit >= 1024 else f"{limit} bytes"


def read_from(f: IO[bytes], name: str, limit: int, what: str, advice: str | None = None) -> bytes:
    """All of an open binary stream, or TooLarge once it passes ``limit`` (it reads one byte
    more than ``limit``, never to the end of an endless stream)."""
    data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(name, limit, what) if advice is None else TooLarge(name, limit, what, advice)
    return data


def read_bytes(path: str | os.PathLike[str], limit: int, what: str, advice: str | None = None) -> bytes:
    """The file at ``path`` whole; OSError as ``open`` raises it, TooLarge past ``limit``
    (its ``advice`` says what to do, when the reader knows better than the default)."""
    with open(path, "rb") as f:
        return read_from(f, str(path), limit, what, advice)


def read_text(
    path: str | os.PathLike[str], limit: int, what: str, errors: str = "strict", advice: str | None = None
) -> str:
    """``read_bytes`` decoded as UTF-8 (UnicodeDecodeError with ``errors="strict"``)."""
    return read_bytes(path, limit, what, advice).decode("utf-8", errors)


async def gather(chunks: AsyncIterable[bytes], name: str, limit: int, what: str, advice: str) -> bytes:
    """A streamed body whole, or TooLarge as soon as it passes ``limit``."""
    got = bytearray()
    async for chunk in chunks:
        got += chunk
        if len(got) > limit:
            raise TooLarge(name, limit, what, advice)
    return bytes(got)
