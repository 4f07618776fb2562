"""transport.ssh_channel.TickSender (issue 20 §1): a tick goes inline on the event loop when
paramiko's send cannot wait (no rekey, no other writer on the transport, the channel's window
open, the socket writable), from the pool otherwise, and never a second one while a pooled
one is in flight. The channel stands in for paramiko's (its send's waits are what is decided
on); the socket, the rekey event and the writers' lock are the real kinds paramiko uses."""

from __future__ import annotations

import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from linkdeck.transport.ssh_channel import TickSender


class Transport:
    def __init__(self, sock) -> None:
        self.sock = sock
        self.clear_to_send = threading.Event()
        self.clear_to_send.set()
        self.clear_to_send_lock = threading.Lock()


class Channel:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.window_open = True
        self.sent: list[str] = []  # the thread each tick was written from
        self.release = threading.Event()
        self.release.set()

    def send_ready(self) -> bool:
        return self.window_open

    def send(self, data: bytes) -> int:
        assert data == b"\n"
        self.sent.append(threading.current_thread().name)
        self.release.wait(5)
        return 1


@pytest.fixture
def chan():
    a, b = socket.socketpair()
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tick-pool")
    yield Channel(Transport(a)), pool
    pool.shutdown(wait=True)
    a.close()
    b.close()


def _one_tick(chan: Channel, sender: TickSender) -> str:
    assert sender()
    if sender.sending is not None:
        sender.sending.result(5)
    return chan.sent[-1]


def test_inline_when_send_cannot_wait(chan):
    ch, pool = chan
    sender = TickSender(ch, pool)  # type: ignore[arg-type]
    here = threading.current_thread().name
    assert _one_tick(ch, sender) == here
    assert _one_tick(ch, sender) == here
    assert sender.sending is None  # the pool never used


@pytest.mark.parametrize("why", ["rekey", "another writer", "window shut", "jump host"])
def test_the_pool_when_send_could_wait(chan, why):
    ch, pool = chan
    sender = TickSender(ch, pool)  # type: ignore[arg-type]
    if why == "rekey":
        ch.transport.clear_to_send.clear()
    elif why == "another writer":
        ch.transport.clear_to_send_lock.acquire()
    elif why == "window shut":
        ch.window_open = False
    else:
        ch.transport.sock = object()  # a jump host's channel, not a socket
    assert _one_tick(ch, sender).startswith("tick-pool")


def test_the_pool_when_the_socket_buffer_is_full(chan):
    ch, pool = chan
    sock = ch.transport.sock
    sock.setblocking(False)
    with pytest.raises(BlockingIOError):
        while True:
            sock.send(b"x" * 65536)
    sender = TickSender(ch, pool)  # type: ignore[arg-type]
    assert _one_tick(ch, sender).startswith("tick-pool")


def test_one_pooled_send_in_flight_holds_back_the_next_even_once_clear(chan):
    ch, pool = chan
    sender = TickSender(ch, pool)  # type: ignore[arg-type]
    ch.transport.clear_to_send.clear()
    ch.release.clear()
    assert sender()  # pooled, stuck
    ch.transport.clear_to_send.set()
    assert not sender()  # not a second write behind the stuck one, inline or pooled
    assert not sender()
    ch.release.set()
    sender.sending.result(5)
    assert sender()
    assert ch.sent[-1] == threading.current_thread().name and len(ch.sent) == 2
