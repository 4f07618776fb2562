"""OpenSSH's multiplexing protocol (PROTOCOL.mux in OpenSSH's sources), spoken in this process
over a master's control socket: what ``ssh -O check`` and ``ssh -O exit`` ask, without an ssh
process each time.

Every message is a uint32 length, then a uint32 type and its body. Both sides say hello first
(version 4); an answer of another shape raises MuxUnexpected, and the caller leaves the socket
to the ssh client, which knows whatever else it may speak.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct

MUX_VERSION = 4
MUX_MSG_HELLO = 0x00000001
MUX_C_ALIVE_CHECK = 0x10000004
MUX_C_TERMINATE = 0x10000005
MUX_S_OK = 0x80000001
MUX_S_ALIVE = 0x80000005
MUX_MAX_MESSAGE = 256 << 10  # a hello with extensions is far below; anything past it is not a master


class MuxUnexpected(Exception):
    """The control socket answered, but not as PROTOCOL.mux's version 4 master does."""


def mux_message(kind: int, *values: int) -> bytes:
    body = struct.pack(f">{1 + len(values)}I", kind, *values)
    return struct.pack(">I", len(body)) + body


async def _read_message(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    try:
        (size,) = struct.unpack(">I", await reader.readexactly(4))
        if not 4 <= size <= MUX_MAX_MESSAGE:
            raise MuxUnexpected(f"a message of {size} bytes")
        body = await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise MuxUnexpected("the socket closed mid-exchange") from None
    return struct.unpack(">I", body[:4])[0], body[4:]


async def _hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(mux_message(MUX_MSG_HELLO, MUX_VERSION))
    kind, body = await _read_message(reader)
    if kind != MUX_MSG_HELLO or body[:4] != struct.pack(">I", MUX_VERSION):
        raise MuxUnexpected(f"hello: type {kind:#010x}, body {body[:8].hex()}")


async def alive_check(path: str) -> int:
    """The pid a master at ``path`` reports (PROTOCOL.mux: hello, MUX_C_ALIVE_CHECK, MUX_S_ALIVE),
    the exchange ``ssh -O check`` makes. OSError when nothing listens there; MuxUnexpected when
    what answers is not such a master."""
    reader, writer = await asyncio.open_unix_connection(path)
    try:
        request_id = 0
        await _hello(reader, writer)
        writer.write(mux_message(MUX_C_ALIVE_CHECK, request_id))
        kind, body = await _read_message(reader)
        if kind != MUX_S_ALIVE or len(body) < 8:
            raise MuxUnexpected(f"alive check: type {kind:#010x}")
        answered_id, pid = struct.unpack(">II", body[:8])
        if answered_id != request_id or pid <= 1:
            raise MuxUnexpected(f"alive check: request {answered_id}, pid {pid}")
        return pid
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def terminate(path: str) -> None:
    """Ask the master at ``path`` to exit (PROTOCOL.mux: hello, MUX_C_TERMINATE, MUX_S_OK), the
    exchange ``ssh -O exit`` makes; a master that closes the socket instead of answering is
    exiting too, as ssh takes it. OSError when nothing listens there; MuxUnexpected when what
    answers refuses or is not such a master."""
    reader, writer = await asyncio.open_unix_connection(path)
    try:
        request_id = 0
        await _hello(reader, writer)
        writer.write(mux_message(MUX_C_TERMINATE, request_id))
        try:
            kind, body = await _read_message(reader)
        except MuxUnexpected:
            if reader.at_eof():
                return
            raise
        if kind != MUX_S_OK or body[:4] != struct.pack(">I", request_id):
            raise MuxUnexpected(f"terminate: type {kind:#010x}")
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
