"""Closing an SSH channel while its command is still printing (the output bound, a timeout, a
stream that ends) must never end the connection.

paramiko's Channel.close closes the channel's fileno() pipe without the buffers' locks, while
the transport thread may be feeding the channel: the feed writes a wake-up byte to that pipe.
When it lands between the pipe's read end closing and the pipe marking itself closed, the
write raises EPIPE in the transport thread, which ends the whole connection ("Socket
exception: Broken pipe (32)"; sshd: "Connection reset by peer"). Seen in CI when `yes` ran
past the output bound. The interleaving is made deterministic here: the transport thread's
next packet arrives right after the pipe's first fd is closed."""

from __future__ import annotations

import os
import threading

import paramiko
import paramiko.pipe

from linkdeck.transport.ssh_channel import close_channel


def drained_channel() -> paramiko.Channel:
    """A channel watched through its fd (as FdWatch does), its buffer read empty: the pipe is
    clear, so the next feed writes a byte to it."""
    chan = paramiko.Channel(0)
    chan.fileno()
    chan.in_buffer.feed(b"y\n")
    assert chan.recv(10) == b"y\n" and not chan.recv_ready()
    return chan


def test_data_arriving_while_the_channel_closes_never_touches_its_closed_pipe(monkeypatch) -> None:
    chan = drained_channel()
    real_close = os.close
    closed: list[int] = []

    def close_then_feed(fd: int) -> None:
        real_close(fd)
        if not closed:
            closed.append(fd)
            chan.in_buffer.feed(b"y\n" * 1000)  # the transport thread's next packet, at this instant
            chan.in_stderr_buffer.feed(b"e\n")

    monkeypatch.setattr(paramiko.pipe.os, "close", close_then_feed)
    close_channel(chan)  # paramiko's own close: BrokenPipeError from the feed
    assert closed and chan._pipe is None
    # what arrived is still in the buffers; nothing was written anywhere
    assert chan.in_buffer.read(1 << 20) == b"y\n" * 1000


def test_a_channel_never_watched_through_its_fd_closes_as_before() -> None:
    chan = paramiko.Channel(0)
    close_channel(chan)
    chan.in_buffer.feed(b"late\n")
    assert chan._pipe is None and chan.in_buffer.read(100) == b"late\n"


async def test_a_command_stopped_at_the_output_bound_leaves_the_loop_before_its_channel_closes(monkeypatch) -> None:
    """The reader's fd watch used to stop only when the abandoned generator was finalized,
    after the channel (and its pipe's fds) had closed: an fd number the loop still watched,
    free for the next channel's pipe to take."""
    import asyncio

    from linkdeck.transport import ssh
    from linkdeck.transport.runner import OutputTooLarge

    chan = paramiko.Channel(0)
    runner = ssh.SshRunner(None, name="h1")  # type: ignore[arg-type]  # run() never reads the target

    async def feed() -> None:  # as the transport thread does, a packet at a time: the reader waits in between
        while True:
            await asyncio.sleep(0.001)
            chan.in_buffer.feed(b"y\n" * (1 << 19))

    async def start(argv, timeout):
        return chan

    watched_at_close: list[bool] = []

    def spy(c: paramiko.Channel) -> None:
        watched_at_close.append(c.fileno() in asyncio.get_running_loop()._selector.get_map())  # type: ignore[attr-defined]
        close_channel(c)

    monkeypatch.setattr(runner, "_start", start)
    monkeypatch.setattr(ssh, "close_channel", spy)
    feeding = asyncio.create_task(feed())
    try:
        await runner.run(["yes"])
    except OutputTooLarge as exc:
        assert str(exc) == "h1: yes printed more than 16 MiB: stopped"
    else:
        raise AssertionError("the output bound did not stop yes")
    finally:
        feeding.cancel()
    assert watched_at_close == [False] and chan._pipe is None


class _Rekeying:
    """A transport in a key exchange: a window adjust waits in _send_user_message (as
    paramiko's waits for clear_to_send, up to 30 s) until ``done`` is set again after it
    started; anything else goes."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.adjust_waited: list[bool] = []  # per adjust: whether the exchange ended within 5 s

    def _send_user_message(self, m) -> None:
        if m.asbytes()[0] == 93:  # MSG_CHANNEL_WINDOW_ADJUST
            self.done.clear()
            self.adjust_waited.append(self.done.wait(5))

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


async def test_a_window_adjust_that_waits_for_a_key_exchange_never_holds_the_event_loop(monkeypatch) -> None:
    """paramiko's recv sends the channel's window adjust itself, from the caller's thread: on
    the event loop, a key exchange in progress held every host's loop until it ended (up to
    30 s for a peer that stalls in it). Here the exchange ends only when the loop runs."""
    import asyncio

    from linkdeck.transport import ssh

    transport = _Rekeying()
    chan = paramiko.Channel(0)
    chan.transport, chan.active = transport, True  # type: ignore[assignment]
    chan.in_window_threshold = 100_000
    runner = ssh.SshRunner(None, name="h1")  # type: ignore[arg-type]  # run() never reads the target

    async def start(argv, timeout):
        return chan

    async def command() -> None:  # prints 300 KB in 3 KB packets, then exits
        for _ in range(100):
            await asyncio.sleep(0.001)
            chan.in_buffer.feed(b"x" * 3000)
        chan.exit_status = 0
        chan.status_event.set()
        chan._handle_eof(None)

    async def ends_the_exchange() -> None:  # the loop's own work, which a blocked loop never does
        while True:
            await asyncio.sleep(0.01)
            transport.done.set()

    monkeypatch.setattr(runner, "_start", start)
    tasks = [asyncio.create_task(command()), asyncio.create_task(ends_the_exchange())]
    try:
        result = await runner.run(["cat", "big"], timeout=30)
    finally:
        for task in tasks:
            task.cancel()
    assert len(result.stdout) == 300_000 and result.status == 0
    assert transport.adjust_waited and all(transport.adjust_waited), transport.adjust_waited
