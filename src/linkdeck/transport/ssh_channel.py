"""Waiting on and writing to an SSH channel without blocking the event loop: the stream's
reads (FdWatch) and its ticks (TickSender, for transport.base.Ticker)."""

from __future__ import annotations

import asyncio
import select
import socket
import threading
from concurrent.futures import Executor, Future
from typing import Callable

import paramiko


class TickSender:
    """Sends a stream's ticks without ever blocking the event loop: inline when paramiko's
    send provably returns at once (``can_send_now``), else from a pool thread, not awaited
    (no wake-up of the loop for its result). While a pooled one is in flight the next tick is
    skipped, so a stalled channel holds one thread, not one per tick; a dead channel fails
    the send quietly and the stream's own read reports it (EOF or its idle timeout).

    Inline saves the thread handoff, which at a hundred connections is a large share of
    linkdeck's own CPU per sample; an inline send that cannot block costs far less."""

    def __init__(self, chan: paramiko.Channel, pool: Executor) -> None:
        self.chan = chan
        self.pool = pool
        self.sending: Future | None = None

    def can_send_now(self) -> bool:
        """Whether chan.send(b"\\n") returns at once. paramiko's send waits in three places
        (the channel's own lock is only held briefly, with no I/O under it, off this thread):
        for the channel's send window (Channel._wait_for_send_window; only our sends shrink
        it, so send_ready() stays true until we send), for a key exchange to end
        (Transport._send_user_message waits up to 30 s while clear_to_send is clear, a rekey),
        and in Packetizer.write_all until the socket takes the whole packet, holding
        clear_to_send_lock meanwhile. So: no rekey, no other writer holding that lock (one
        stuck on a full buffer would be), and the socket itself writable now (poll: Linux
        reports POLLOUT only with a third of the buffer free, far more than a ~100-byte
        packet). Ticks cannot fill the buffer (one unanswered at a time); what else goes out
        here is small too: window adjusts (from chan.recv, on this same loop thread), the
        transport thread's 5 s keepalive and kex packets, other commands' exec requests
        (kilobytes). What is left is a writer starting in the microseconds between this check
        and our send and filling the buffer itself. Behind a jump host the "socket" is
        another transport's channel, with its own waits: the pool then."""
        chan, transport = self.chan, self.chan.transport
        if self.sending is not None and not self.sending.done():
            return False
        sock = transport.sock
        if not isinstance(sock, socket.socket) or not transport.clear_to_send.is_set():
            return False
        if transport.clear_to_send_lock.locked() or not chan.send_ready():
            return False
        return bool(select.select((), (sock,), (), 0)[1])

    def __call__(self) -> bool:
        if self.can_send_now():
            try:
                self.chan.send(b"\n")
            except Exception:  # a dead channel: the stream's read reports it, as for a pooled send
                pass
            return True
        if self.sending is not None and not self.sending.done():
            return False
        self.sending = self.pool.submit(self.chan.send, b"\n")
        return True


class FdWatch:
    """Waits for a paramiko channel's fd (readable while data is buffered, and for good after
    EOF or close; ``pending`` says whether the channel has something now) with a plain future,
    so cancelling the waiting task always cancels the wait.

    The fd stays registered between waits (two epoll_ctl calls per wait cost more than the
    rest of a frame's handling); if it turns readable while nobody waits, it is unregistered
    there and then, so a consumer that stops iterating never leaves the loop spinning.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, pending: Callable[[], bool]) -> None:
        self.loop, self.fd, self.pending = loop, fd, pending
        self.waiter: asyncio.Future | None = None
        self.registered = False
        # One timer that re-arms itself at the latest deadline, instead of a timer created
        # and cancelled for every wake-up.
        self.deadline = 0.0
        self.timer: asyncio.TimerHandle | None = None

    def _readable(self) -> None:
        if self.waiter is None or self.waiter.done():
            self.close()
            return
        # The selector saw the fd readable before the waiter's task, run first in the same
        # turn of the loop, read the channel: nothing waits there now, and waking the task
        # to find that cost a second wake-up every frame. paramiko's pipe byte is set, under
        # its lock, exactly while data (or EOF) waits, so the fd turns readable again when
        # more comes.
        if not self.pending():
            return
        self.waiter.set_result(True)

    def _check_deadline(self) -> None:
        self.timer = None
        if self.waiter is None or self.waiter.done():
            return
        if self.loop.time() >= self.deadline:
            self.waiter.set_result(False)
        else:
            self.timer = self.loop.call_at(self.deadline, self._check_deadline)

    async def wait(self, timeout: float) -> bool:
        """True when readable, False after ``timeout`` seconds."""
        if not self.registered:
            self.loop.add_reader(self.fd, self._readable)
            self.registered = True
        self.deadline = self.loop.time() + timeout
        if self.timer is not None and self.timer.when() > self.deadline:
            self.timer.cancel()  # a shorter timeout than the armed one
            self.timer = None
        if self.timer is None:
            self.timer = self.loop.call_at(self.deadline, self._check_deadline)
        self.waiter = waiter = self.loop.create_future()
        try:
            return await waiter
        finally:
            self.waiter = None

    def close(self) -> None:
        if self.registered:
            self.loop.remove_reader(self.fd)
            self.registered = False

    def stop(self) -> None:
        self.close()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def close_channel(chan: paramiko.Channel) -> None:
    """paramiko's Channel.close, safe while the command is still printing (stopped at the
    output bound, timed out, a stream ended).

    Channel.close closes the fileno() pipe (FdWatch's) without the buffers' locks, while the
    transport thread may be in BufferedPipe.feed writing the pipe's wake-up byte: landing
    between the read end's close and the pipe marking itself closed, that write raised EPIPE
    in the transport thread and ended the whole connection (paramiko#1157 and #1700, open
    since 2018). Giving each buffer a plain Event first, under the buffer's own lock
    (set_event), means no feed touches the pipe after."""
    for buffer in (chan.in_buffer, chan.in_stderr_buffer):
        buffer.set_event(threading.Event())
    chan.close()


def window_adjust_due(chan: paramiko.Channel, n: int) -> bool:
    """Whether reading ``n`` bytes makes paramiko's recv send a window adjust
    (Channel._check_add_window: once the bytes read since the last one pass the threshold)."""
    return (
        chan.active
        and not chan.closed
        and not chan.eof_received
        and chan.in_window_sofar + n > chan.in_window_threshold
    )
