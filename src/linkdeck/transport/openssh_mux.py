"""OpenSSH's multiplexing protocol (PROTOCOL.mux in OpenSSH's sources), spoken in this process
over a master's control socket: what ``ssh -O check`` and ``ssh -O exit`` ask, and the sessions
``ssh -S PATH HOST COMMAND`` opens, without an ssh process each time.

Every message is a uint32 length, then a uint32 type and its body. Both sides say hello first
(version 4); an answer of another shape raises MuxUnexpected, and the caller leaves the socket
to the ssh client, which knows whatever else it may speak.

A session (Session) hands the master three pipes of ours as the command's stdin, stdout and
stderr, one file descriptor per message (SCM_RIGHTS), as ssh hands its own: the master reads
and writes them itself, so a session's data goes through no other process. Its exit status
comes back over the socket, which the master closes once the session is over. Closing the
socket first ends the session, as killing ``ssh -S`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct

MUX_VERSION = 4
MUX_MSG_HELLO = 0x00000001
MUX_C_NEW_SESSION = 0x10000002
MUX_C_ALIVE_CHECK = 0x10000004
MUX_C_TERMINATE = 0x10000005
MUX_S_OK = 0x80000001
MUX_S_PERMISSION_DENIED = 0x80000002
MUX_S_FAILURE = 0x80000003
MUX_S_EXIT_MESSAGE = 0x80000004
MUX_S_ALIVE = 0x80000005
MUX_S_SESSION_OPENED = 0x80000006
NO_ESCAPE_CHAR = 0xFFFFFFFF
# ssh's own status when a session ends with no exit status (the master or the connection gone)
NO_EXIT_STATUS = 255
MUX_MAX_MESSAGE = 256 << 10  # a hello with extensions is far below; anything past it is not a master


class MuxUnexpected(Exception):
    """The control socket answered, but not as PROTOCOL.mux's version 4 master does."""


def mux_message(kind: int, *values: int | bytes) -> bytes:
    """A message of ``kind``: each int a uint32, each bytes a string (its uint32 length first)."""
    body = struct.pack(">I", kind) + b"".join(
        struct.pack(">I", v) if isinstance(v, int) else struct.pack(">I", len(v)) + v for v in values
    )
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


class SessionRefused(Exception):
    """The master would not open the session (MUX_S_FAILURE, MUX_S_PERMISSION_DENIED): the
    host refused another session (sshd's MaxSessions), or a ControlMaster ask was declined."""


def new_session_message(request_id: int, command: str) -> bytes:
    """MUX_C_NEW_SESSION as ``ssh -T -S PATH HOST COMMAND`` sends it with no SendEnv: no tty, no
    X11 or agent forwarding, no subsystem, no escape character, no terminal type."""
    no, reserved, term = 0, b"", b""
    return mux_message(MUX_C_NEW_SESSION, request_id, reserved, no, no, no, no, NO_ESCAPE_CHAR, term, command.encode())


class Session:
    """A command run as a session of the master at a control socket, its pipes ours (the
    shape of an asyncio subprocess: ``stdin``, ``stdout``, ``stderr``, ``wait``, ``returncode``).
    ``returncode`` is the command's exit status, NO_EXIT_STATUS when it ended without one."""

    def __init__(self) -> None:
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self.returncode: int | None = None
        self._control: asyncio.StreamWriter | None = None
        self._ended: asyncio.Task[None] | None = None
        self._pipes: list[asyncio.BaseTransport] = []

    @classmethod
    async def open(cls, path: str, command: str, *, stdin: bool) -> Session:
        """Open ``command`` on the master at ``path``; with ``stdin`` its stdin is a pipe we
        write to, else /dev/null. OSError when nothing listens at ``path``; SessionRefused
        when the master says no; MuxUnexpected when what answers is no version 4 master."""
        session = cls()
        try:
            await session._open(path, command, stdin)
        except BaseException:
            session.stop()
            raise
        return session

    async def _open(self, path: str, command: str, stdin: bool) -> None:
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, path)
        except BaseException:
            sock.close()
            raise
        reader, self._control = await asyncio.open_unix_connection(sock=sock)
        await _hello(reader, self._control)
        theirs = [os.open(os.devnull, os.O_RDONLY)] if not stdin else []
        try:
            if stdin:
                ours, sent = os.pipe()[::-1]
                theirs.append(sent)
                self.stdin = await _writer(loop, ours)
            for name in ("stdout", "stderr"):
                got, sent = os.pipe()
                theirs.append(sent)
                setattr(self, name, await self._reader(loop, got))
            request_id = 0
            self._control.write(new_session_message(request_id, command))
            await _written(self._control)
            for fd in theirs:  # after the request, in order: stdin, stdout, stderr
                socket.send_fds(sock, [b"\0"], [fd])
        finally:
            for fd in theirs:  # the master holds its own copies now
                os.close(fd)
        kind, body = await _read_message(reader)
        if kind in (MUX_S_FAILURE, MUX_S_PERMISSION_DENIED) and body[:4] == struct.pack(">I", request_id):
            raise SessionRefused(_said(body[4:]))
        if kind != MUX_S_SESSION_OPENED or body[:4] != struct.pack(">I", request_id) or len(body) < 8:
            raise MuxUnexpected(f"new session: type {kind:#010x}")
        self._ended = asyncio.ensure_future(self._exit_status(reader, body[4:8]))

    async def _reader(self, loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamReader:
        stream = asyncio.StreamReader(limit=1 << 20, loop=loop)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream, loop=loop), os.fdopen(fd, "rb", buffering=0)
        )
        self._pipes.append(transport)
        return stream

    async def _exit_status(self, reader: asyncio.StreamReader, session_id: bytes) -> None:
        """The session's exit message, then the socket's end: the master closes it once the
        session is over, and a client that leaves before may cut its last output."""
        status = NO_EXIT_STATUS
        with contextlib.suppress(MuxUnexpected, OSError):
            while True:
                kind, body = await _read_message(reader)
                if kind == MUX_S_EXIT_MESSAGE and body[:4] == session_id and len(body) >= 8:
                    status = struct.unpack(">I", body[4:8])[0]
        self.returncode = status

    async def wait(self) -> int:
        """The exit status, once the master has closed the session."""
        if self._ended is not None:
            await asyncio.wait({self._ended})  # ended by stop() too: a cancelled read is no error
        if self.returncode is None:
            self.returncode = NO_EXIT_STATUS
        return self.returncode

    def stop(self) -> None:
        """End the session now (the master closes its channel when our socket goes, as when
        ``ssh -S`` is killed) and close our ends of its pipes."""
        if self._ended is not None and not self._ended.done():
            self._ended.cancel()
        if self.returncode is None:
            self.returncode = NO_EXIT_STATUS
        self.release()

    def release(self) -> None:
        """Close our socket and our ends of the pipes."""
        if self.stdin is not None:
            self.stdin.close()
        if self._control is not None:
            self._control.close()
        for pipe in self._pipes:
            pipe.close()


async def _writer(loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamWriter:
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop=loop), os.fdopen(fd, "wb", buffering=0)
    )
    return asyncio.StreamWriter(transport, protocol, None, loop)


async def _written(writer: asyncio.StreamWriter) -> None:
    """Until what was written left our buffer: the descriptors sent beside the socket's
    transport must follow the request on the wire, not pass it."""
    await writer.drain()
    while writer.transport.get_write_buffer_size():
        await asyncio.sleep(0.005)


def _said(body: bytes) -> str:
    """The reason string of a refusal, as text."""
    if len(body) < 4:
        return "no reason given"
    (size,) = struct.unpack(">I", body[:4])
    return body[4 : 4 + size].decode(errors="replace") or "no reason given"
