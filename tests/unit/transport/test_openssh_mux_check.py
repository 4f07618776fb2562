"""Asking a master whether it runs over its control socket (PROTOCOL.mux), in this process:
connect starts one ssh process (the master) and no ``ssh -O check``; a stale socket file, no
file and a socket that says nothing are "not running" without a hang; an answer that is not
a version 4 master's is left to ``ssh -O check``.

Constructed: the masters here are small servers in the test speaking the protocol (and its
deviations), and the ssh client is a script that logs how it was called and answers
``-O check`` as OpenSSH words it. The real master is tests/lab/test_openssh_lab.py's."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Awaitable, Callable

import pytest

from linkdeck.transport import openssh_master as master, openssh_mux as mux
from linkdeck.transport.runner import Unreachable
from tests.unit.transport.conftest import FAKE_PID, runner_for

pytestmark = pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client (ssh -G)")

HELLO = mux.mux_message(mux.MUX_MSG_HELLO, mux.MUX_VERSION)
MUX_S_FAILURE = 0x80000003

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_message(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    (size,) = struct.unpack(">I", await reader.readexactly(4))
    body = await reader.readexactly(size)
    return struct.unpack(">I", body[:4])[0], body[4:]


async def a_master(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """As OpenSSH's master answers: its hello on accept, then the client's hello, then the alive
    check with the request's id and the pid."""
    writer.write(HELLO)
    kind, body = await read_message(reader)
    assert (kind, body) == (mux.MUX_MSG_HELLO, struct.pack(">I", 4))
    kind, body = await read_message(reader)
    assert kind == mux.MUX_C_ALIVE_CHECK
    (request_id,) = struct.unpack(">I", body[:4])
    writer.write(mux.mux_message(mux.MUX_S_ALIVE, request_id, FAKE_PID))
    await writer.drain()
    writer.close()


async def serve(path: Path, handler: Handler) -> asyncio.AbstractServer:
    return await asyncio.start_unix_server(handler, str(path))


async def test_connect_starts_the_master_and_no_other_ssh_process(fake_ssh, tmp_path, short_dir) -> None:
    client, calls = fake_ssh
    path = short_dir / "m1"
    server = await serve(path, a_master)  # what `ssh -fN` leaves listening
    runner = runner_for(client, tmp_path, path)
    try:
        await runner.connect()
        assert runner.is_active and runner.master_pid == FAKE_PID
        started = calls()
        assert len(started) == 1, started  # the master: no `ssh -O check` after it
        assert "-N" in started[0] and "-f" in started[0] and "ControlMaster=yes" in started[0]
    finally:
        server.close()
        await server.wait_closed()
        master._started.pop(str(path), None)  # nothing to end: the fake master is this test's


async def test_a_master_just_started_may_answer_later_than_the_usual_check(
    fake_ssh, tmp_path, short_dir, monkeypatch
) -> None:
    # A box logging in a whole fleet at once reaches a new master's loop late: the check made
    # right after ssh -fN waits for it as long as the login may take, not the usual timeout.
    client, calls = fake_ssh
    monkeypatch.setattr(master, "MUX_TIMEOUT_S", 0.2)

    async def late_master(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.6)
        await a_master(reader, writer)

    path = short_dir / "m1"
    server = await serve(path, late_master)
    runner = runner_for(client, tmp_path, path)
    try:
        await runner.connect()
        assert runner.is_active and runner.master_pid == FAKE_PID
        assert len(calls()) == 1  # the master alone: no second login, no ssh -O check
    finally:
        server.close()
        await server.wait_closed()
        master._started.pop(str(path), None)


async def test_a_master_answers_with_its_pid_and_no_ssh_runs(fake_ssh, short_dir) -> None:
    client, calls = fake_ssh
    server = await serve(short_dir / "m", a_master)
    try:
        assert await master.running(client, str(short_dir / "m")) == FAKE_PID
    finally:
        server.close()
        await server.wait_closed()
    assert calls() == []


async def test_no_socket_and_a_stale_socket_file_are_not_running_at_once(fake_ssh, short_dir) -> None:
    client, calls = fake_ssh
    stale = short_dir / "stale"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(stale))  # a master killed before it could unlink its socket leaves this
    sock.close()
    assert stale.exists()
    started = time.monotonic()
    assert await master.running(client, str(stale)) is None
    assert await master.running(client, str(short_dir / "none")) is None
    assert time.monotonic() - started < 0.5
    assert stale.exists()  # asking removes nothing
    assert calls() == []


async def test_a_socket_that_accepts_and_says_nothing_is_not_running_after_the_timeout(
    fake_ssh, short_dir, monkeypatch
) -> None:
    client, calls = fake_ssh
    monkeypatch.setattr(master, "MUX_TIMEOUT_S", 0.3)
    done = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await done.wait()
        writer.close()

    server = await serve(short_dir / "silent", silent)
    started = time.monotonic()
    try:
        assert await master.running(client, str(short_dir / "silent")) is None
        assert time.monotonic() - started < 1.5
    finally:
        done.set()
        server.close()
        await server.wait_closed()
    assert calls() == []


def version_5(reader, writer):
    return mux.mux_message(mux.MUX_MSG_HELLO, 5)


def failure(reader, writer):
    body = struct.pack(">III", MUX_S_FAILURE, 0, 11) + b"unsupported"
    return HELLO + struct.pack(">I", len(body)) + body


def not_mux(reader, writer):
    return b"SSH-2.0-OpenSSH_9.2\r\n"


def hello_then_closed(reader, writer):
    return HELLO


@pytest.mark.parametrize("answer", [version_5, failure, not_mux, hello_then_closed])
async def test_an_answer_not_a_version_4_masters_is_left_to_ssh_O_check(fake_ssh, short_dir, answer) -> None:
    client, calls = fake_ssh

    async def odd(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(answer(reader, writer))
        await writer.drain()
        await asyncio.sleep(0.05)  # the client's hello arrives; then the connection ends
        writer.close()

    server = await serve(short_dir / "odd", odd)
    try:
        assert await master.running(client, str(short_dir / "odd")) == FAKE_PID  # ssh -O check's answer
    finally:
        server.close()
        await server.wait_closed()
    asked = calls()
    assert len(asked) == 1 and asked[0][asked[0].index("-O") + 1] == "check"


def test_messages_are_framed_as_protocol_mux_says() -> None:
    assert mux.mux_message(mux.MUX_C_ALIVE_CHECK, 7) == bytes.fromhex("000000081000000400000007")
    assert HELLO == bytes.fromhex("000000080000000100000004")


def stale_socket(path: Path) -> None:
    """A socket file nobody listens on, as a master killed before it could unlink it leaves."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()


async def test_a_stale_socket_at_the_control_path_is_unlinked_and_a_master_started(
    fake_ssh, tmp_path, short_dir, monkeypatch
) -> None:
    client, calls = fake_ssh
    path = short_dir / "m1"
    stale_socket(path)
    real_running = master.running
    asked: list[str] = []

    async def running(client: str, where: str, timeout: float | None = None) -> int | None:
        asked.append(where)  # the first ask is real (the stale file); after ssh -fN the master answers
        return await real_running(client, where, timeout) if len(asked) == 1 else FAKE_PID

    monkeypatch.setattr(master, "running", running)
    runner = runner_for(client, tmp_path, path)
    runner.target = dataclasses.replace(runner.target, control_path=str(path))  # the user's ControlPath
    try:
        await runner.connect()
        assert runner.is_active and runner.master_pid == FAKE_PID and not runner.found_open
        started = calls()
        assert len(started) == 1 and "ControlMaster=yes" in started[0], started
        seen = [json.loads(line) for line in Path(str(tmp_path / "calls") + ".paths").read_text().splitlines()]
        assert seen == [[str(path), False]]  # unlinked before ssh ran, as ssh itself does
    finally:
        master._started.pop(str(path), None)


@pytest.mark.parametrize("what", ["regular file", "silent socket"])
async def test_a_file_in_the_way_that_is_no_master_is_left_and_no_ssh_runs(
    fake_ssh, tmp_path, short_dir, monkeypatch, what
) -> None:
    client, calls = fake_ssh
    monkeypatch.setattr(master, "MUX_TIMEOUT_S", 0.3)
    path = short_dir / "m1"
    done = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await done.wait()
        writer.close()

    server = None
    if what == "regular file":
        path.write_text("not a socket\n")
    else:
        server = await serve(path, silent)
    runner = runner_for(client, tmp_path, path)
    runner.target = dataclasses.replace(runner.target, control_path=str(path))
    try:
        with pytest.raises(Unreachable) as raised:
            await runner.connect()
        assert str(path) in str(raised.value) and "remove it or change ControlPath" in str(raised.value)
        assert path.exists() and not runner.is_active
        assert calls() == []  # no ssh that would log in without a control socket and stay
    finally:
        done.set()
        if server is not None:
            server.close()
            await server.wait_closed()


def test_only_the_exact_detached_argv_started_since_is_ended(short_dir) -> None:
    """Constructed: python sleepers stand in for a detached ``ssh -fN`` (this test's children, so
    it can reap them); ended is only the one with the very argv, started since the time given."""
    argv = [sys.executable, "-c", "import time; time.sleep(30)", "--", str(short_dir / "m1")]
    other = [*argv[:-1], str(short_dir / "m2")]
    since = time.time()
    target, bystander = subprocess.Popen(argv), subprocess.Popen(other)
    try:
        assert master.end_detached(argv, since + 5) == []  # started before: not this run's
        assert target.poll() is None
        assert master.end_detached(argv, since) == [target.pid]
        assert target.wait(timeout=5) is not None
        assert bystander.poll() is None
    finally:
        for proc in (target, bystander):
            proc.kill()
            proc.wait()


MUX_S_OK = 0x80000001
MUX_S_PERMISSION_DENIED = 0x80000002


def a_master_asked_to_end(answer: Callable[[int], bytes] | None, ended: list[int]) -> Handler:
    """A master that takes the client's hello, then a terminate request: ``answer(request_id)``
    is what it says (None: it closes the socket without a word, as a master exiting may)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(HELLO)
        kind, body = await read_message(reader)
        assert (kind, body) == (mux.MUX_MSG_HELLO, struct.pack(">I", 4))
        kind, body = await read_message(reader)
        (request_id,) = struct.unpack(">I", body[:4])
        ended.append(kind)
        if answer is not None:
            writer.write(answer(request_id))
            await writer.drain()
        writer.close()

    return handler


def ok(request_id: int) -> bytes:
    return mux.mux_message(MUX_S_OK, request_id)


def denied(request_id: int) -> bytes:
    body = struct.pack(">III", MUX_S_PERMISSION_DENIED, request_id, 7) + b"refused"
    return struct.pack(">I", len(body)) + body


async def ended(client: str, short_dir: Path, answer: Callable[[int], bytes] | None) -> list[int]:
    """What a master linkdeck started was asked when ended (master.end), answering ``answer``."""
    asked: list[int] = []
    path = str(short_dir / "m")
    server = await serve(short_dir / "m", a_master_asked_to_end(answer, asked))
    master.started(client, path)
    try:
        await master.end(path)
    finally:
        server.close()
        await server.wait_closed()
    assert path not in master._started
    return asked


@pytest.mark.parametrize("answer", [ok, None], ids=["ok", "closed"])
async def test_a_master_linkdeck_started_is_ended_over_its_socket_with_no_ssh(fake_ssh, short_dir, answer) -> None:
    client, calls = fake_ssh
    assert await ended(client, short_dir, answer) == [0x10000005]  # MUX_C_TERMINATE, what `ssh -O exit` sends
    assert calls() == []


async def test_a_master_that_refuses_to_end_is_left_to_ssh_O_exit(fake_ssh, short_dir) -> None:
    client, calls = fake_ssh
    assert await ended(client, short_dir, denied) == [0x10000005]
    said = calls()
    assert len(said) == 1 and said[0][said[0].index("-O") + 1] == "exit"


async def test_a_master_already_gone_is_not_asked_again(fake_ssh, short_dir) -> None:
    client, calls = fake_ssh
    path = str(short_dir / "gone")
    master.started(client, path)
    await master.end(path)
    assert calls() == []


def test_at_exit_masters_end_over_their_sockets(fake_ssh, short_dir) -> None:
    """end_all runs with no event loop (atexit): the same request, no ssh process."""
    client, calls = fake_ssh
    asked: list[int] = []
    paths = [str(short_dir / f"m{i}") for i in range(3)]
    ready = threading.Event()
    loop = asyncio.new_event_loop()

    async def masters() -> list[asyncio.AbstractServer]:
        return [await serve(Path(p), a_master_asked_to_end(ok, asked)) for p in paths]

    servers = loop.run_until_complete(masters())
    thread = threading.Thread(target=lambda: (ready.set(), loop.run_forever()), daemon=True)
    thread.start()
    ready.wait()
    for p in paths:
        master.started(client, p)
    try:
        master.end_all()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        for s in servers:
            s.close()
        loop.close()
    assert asked == [0x10000005] * 3
    assert calls() == []


def test_a_master_started_after_end_all_gets_a_socket_dir_that_exists() -> None:
    # end_all removes the socket dir; whatever runs after it in the process (the next test, a
    # command that ended its masters) gets a new one, not the path of the removed dir.
    master.control_dir()
    master.end_all()
    assert Path(master.socket_path()).parent.is_dir()
