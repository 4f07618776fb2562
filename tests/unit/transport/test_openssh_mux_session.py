"""Sessions opened on a master over its control socket in this process (PROTOCOL.mux's
MUX_C_NEW_SESSION): the command's pipes are handed over as ``ssh -S`` hands its own, its output
and exit status come back, a refusal is said with the master's words, and a socket that answers
as no version 4 master is left to ``ssh -S``.

Constructed: the masters here are small servers in a thread speaking the protocol as OpenSSH's
mux.c does (a hello each way, the request, three descriptors one per message, the reply, the
exit message, then the socket closed); the ssh client is tests/unit/transport/
conftest.py's logging script. The real master is in tests/lab/test_openssh_lab.py."""

from __future__ import annotations

import os
import socket
import struct
import threading
from pathlib import Path
from typing import Callable

import pytest

from linkdeck.transport import openssh_master as master, openssh_mux as mux
from linkdeck.transport.runner import ConnectionLost
from tests.unit.transport.conftest import runner_for

SESSION_ID = 3


def read_message(conn: socket.socket) -> tuple[int, bytes]:
    (size,) = struct.unpack(">I", _exactly(conn, 4))
    body = _exactly(conn, size)
    return struct.unpack(">I", body[:4])[0], body[4:]


def _exactly(conn: socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        chunk = conn.recv(size - len(got))
        if not chunk:
            raise EOFError
        got += chunk
    return got


def strings(body: bytes) -> list[bytes]:
    out = []
    while body:
        (size,) = struct.unpack(">I", body[:4])
        out.append(body[4 : 4 + size])
        body = body[4 + size :]
    return out


Serve = Callable[[socket.socket], None]


def a_master(path: Path, serve: Serve) -> threading.Thread:
    """A master listening at ``path`` that answers one connection with ``serve``."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def accept() -> None:
        conn, _ = listener.accept()
        listener.close()
        with conn:
            conn.sendall(mux.mux_message(mux.MUX_MSG_HELLO, mux.MUX_VERSION))
            assert read_message(conn) == (mux.MUX_MSG_HELLO, struct.pack(">I", 4))
            serve(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return thread


def new_session(conn: socket.socket) -> tuple[int, list[bytes], bytes, list[int]]:
    """The client's MUX_C_NEW_SESSION: its request id, the flags and strings, and the three
    descriptors that follow it, one per message."""
    kind, body = read_message(conn)
    assert kind == mux.MUX_C_NEW_SESSION
    request_id = struct.unpack(">I", body[:4])[0]
    reserved_size = struct.unpack(">I", body[4:8])[0]
    flags = list(struct.unpack(">5I", body[8 + reserved_size : 28 + reserved_size]))
    fds = []
    for _ in range(3):
        data, got, _flags, _addr = socket.recv_fds(conn, 1, 1)
        assert data == b"\0" and len(got) == 1
        fds.extend(got)
    return request_id, [str(f).encode() for f in flags], body[28 + reserved_size :], fds


async def test_a_session_hands_over_its_pipes_and_gets_the_exit_status(short_dir) -> None:
    path = short_dir / "m1"
    seen: dict[str, object] = {}

    def serve(conn: socket.socket) -> None:
        request_id, flags, rest, (stdin, stdout, stderr) = new_session(conn)
        seen["flags"], seen["strings"] = flags, strings(rest)
        conn.sendall(mux.mux_message(mux.MUX_S_SESSION_OPENED, request_id, SESSION_ID))
        os.write(stdout, b"out\n")
        os.write(stderr, b"err\n")
        with os.fdopen(stdin, "rb") as given:
            seen["stdin"] = given.read()
        os.close(stdout)
        os.close(stderr)
        conn.sendall(mux.mux_message(mux.MUX_S_EXIT_MESSAGE, SESSION_ID, 7))

    thread = a_master(path, serve)
    session = await mux.Session.open(str(path), "sh -c 'echo out'", stdin=True)
    assert session.stdin is not None and session.stdout is not None and session.stderr is not None
    session.stdin.write(b"ticks\n")
    session.stdin.close()
    assert await session.stdout.read() == b"out\n"
    assert await session.stderr.read() == b"err\n"
    assert await session.wait() == 7
    session.release()
    thread.join(5)
    # no tty, no X11, no agent, no subsystem, no escape character; no terminal type; the command
    assert seen["flags"] == [b"0", b"0", b"0", b"0", str(mux.NO_ESCAPE_CHAR).encode()]
    assert seen["strings"] == [b"", b"sh -c 'echo out'"]
    assert seen["stdin"] == b"ticks\n"


async def test_a_session_that_ends_with_no_exit_message_has_ssh_s_status(short_dir) -> None:
    path = short_dir / "m1"

    def serve(conn: socket.socket) -> None:
        request_id, _, _, fds = new_session(conn)
        conn.sendall(mux.mux_message(mux.MUX_S_SESSION_OPENED, request_id, SESSION_ID))
        for fd in fds:
            os.close(fd)

    thread = a_master(path, serve)
    session = await mux.Session.open(str(path), "true", stdin=False)
    assert session.stdout is not None and await session.stdout.read() == b""
    assert await session.wait() == mux.NO_EXIT_STATUS == 255
    session.release()
    thread.join(5)


async def test_a_refused_session_is_a_failed_command_in_the_masters_words_with_no_ssh(
    fake_ssh, tmp_path, short_dir
) -> None:
    client, calls = fake_ssh
    path = short_dir / "m1"

    def serve(conn: socket.socket) -> None:
        request_id, _, _, fds = new_session(conn)
        for fd in fds:
            os.close(fd)
        reason = b"Session open refused by peer"  # mux.c's words when sshd's MaxSessions is reached
        conn.sendall(mux.mux_message(mux.MUX_S_FAILURE, request_id, reason))

    thread = a_master(path, serve)
    runner = runner_for(client, tmp_path, path)
    runner._active = True
    result = await runner.run(["echo", "hi"])
    thread.join(5)
    assert result.status == 255 and "Session open refused by peer" in result.stderr
    assert calls() == []


async def test_a_socket_that_is_no_version_4_master_is_left_to_ssh_s(fake_ssh, tmp_path, short_dir) -> None:
    client, calls = fake_ssh
    path = short_dir / "m1"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(mux.mux_message(mux.MUX_MSG_HELLO, 5))
            read_message(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    runner = runner_for(client, tmp_path, path)
    runner._active = True
    try:
        result = await runner.run(["echo", "hi"])
        assert result.status == 0
        [argv] = calls()
        assert argv[argv.index("-S") + 1] == str(path) and argv[-1] == "echo hi"
        await runner.run(["echo", "again"])  # the socket is not asked again
        assert len(calls()) == 2
    finally:
        listener.close()
        thread.join(5)
        master._started.pop(str(path), None)


async def test_a_command_on_a_master_gone_is_a_lost_connection_with_no_ssh(fake_ssh, tmp_path, short_dir) -> None:
    client, calls = fake_ssh
    path = short_dir / "m1"  # nothing listens here: the master is gone
    runner = runner_for(client, tmp_path, path)
    runner._active = True
    with pytest.raises(ConnectionLost, match="its master no longer answers at"):
        await runner.run(["echo", "hi"])
    assert not runner.is_active and calls() == []
