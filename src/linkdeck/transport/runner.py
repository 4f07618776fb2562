"""The Runner protocol and the errors a transport may raise.

Adapters never touch files or processes themselves: every read goes through a Runner, so the
local host, a remote host and a test replay take the same path.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from dataclasses import dataclass
from typing import Any, AsyncGenerator, Awaitable, Callable, ClassVar, Protocol, Sequence, TypeVar

T = TypeVar("T")

# What one command may print (stdout and stderr together, or one test program's whole output):
# linkdeck's commands print kilobytes; past this a host is not answering what was asked.
MAX_OUTPUT_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class CommandResult:
    stdout: str
    stderr: str
    status: int

    @property
    def ok(self) -> bool:
        return self.status == 0


class TransportError(Exception):
    """A host could not be reached or stopped answering. Retryable unless a subclass says not."""

    retryable = True


class Unreachable(TransportError):
    pass


class ConnectionLost(TransportError):
    pass


class CommandTimeout(TransportError):
    pass


# A command this long travels in a packet near a common path MTU (the samplers' kilobytes do):
# when one this big does not start on a connection that logged in, blame the path.
BIG_REQUEST_BYTES = 1000


class RequestUnanswered(CommandTimeout):
    """Logged in, but a request of ``size`` bytes got no answer: a path that drops packets
    that big is the likeliest reason (and on one TCP connection nothing after it gets through)."""

    def __init__(self, host: str, size: int) -> None:
        super().__init__(
            f"connected, but a {size / 1000:.1f} KB request got no answer: "
            f"a path MTU black hole between here and {host}?"
        )
        self.size = size


class OutputTooLarge(TransportError):
    """A command printed more than MAX_OUTPUT_BYTES; what it said is dropped."""


class AuthFailed(TransportError):
    retryable = False


class HostKeyUnknown(TransportError):
    retryable = False

    def __init__(self, message: str, fingerprint: str, key_type: str = "", key_b64: str = "", hop: str = "") -> None:
        super().__init__(message)
        self.fingerprint = fingerprint
        self.key_type = key_type
        self.key_b64 = key_b64
        self.hop = hop  # the known_hosts name of the host that offered the key (a jump host or the target)


class HostKeyChanged(TransportError):
    retryable = False

    def __init__(self, message: str, fingerprint: str) -> None:
        super().__init__(message)
        self.fingerprint = fingerprint


class StreamInput:
    """What a streamed command reads on its stdin besides its ticks: text sent once it runs
    (the sampler, sent to the stream whose first lines told which OS it needs). The runner
    binds it to the command's stdin when the command starts, and calls ``heard`` whenever the
    command prints: ``unanswered`` is what was sent since, so a stream that goes silent after
    a large send is told from one that went silent by itself (a path that drops packets that
    big, RequestUnanswered)."""

    def __init__(self) -> None:
        self._send: Callable[[bytes], Awaitable[None]] | None = None
        self.unanswered = 0

    def bind(self, send: Callable[[bytes], Awaitable[None]]) -> None:
        self._send = send

    def heard(self) -> None:
        self.unanswered = 0

    async def send(self, data: bytes) -> None:
        """Write ``data`` to the command's stdin. ConnectionLost when it is not running."""
        if self._send is None:
            raise ConnectionLost("the stream's command is not running: nothing to send to")
        self.unanswered += len(data)
        await self._send(data)


def unanswered_bytes(answered: bool, command: str, feed: StreamInput | None) -> int:
    """The request a stream that went silent leaves unanswered: its command while it has
    printed nothing, else what was sent to it since it last printed."""
    if not answered:
        return len(command)
    return feed.unanswered if feed is not None else 0


class Runner(Protocol):
    """Runs argv vectors on one host. Remote runners shell-quote every element."""

    name: str

    async def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        """Run to completion; raise CommandTimeout after ``timeout`` seconds."""
        ...

    def stream(
        self, argv: Sequence[str], tick: float | None = None, feed: StreamInput | None = None
    ) -> AsyncGenerator[str, None]:
        """Run and yield stdout line by line (without newlines) until it exits. With ``tick``,
        the command's stdin gets a newline every ``tick`` seconds (Ticker), and EOF when the
        stream ends. With ``feed``, what is sent through it goes to the command's stdin too.

        Raises ConnectionLost if the transport drops while streaming; RequestUnanswered when
        a remote command goes silent after a request (``argv``, or a send) that large.
        """
        ...

    async def close(self) -> None: ...


class Ticker:
    """A streamed sampler's clock: one newline on its stdin per ``interval``
    seconds, so the host's loop waits in its shell's built-in ``read`` instead of forking a
    ``sleep`` every tick (platforms/delta.LOOP).

    Every ticker of one interval on one event loop shares one timer (``_Clock``): its hosts are
    asked in the same slot, so their answers come back together and the event loop wakes once
    for the lot rather than once per host. A ticker takes its first slot once half an interval
    has passed since it started (the sampler prints its first frame unasked), so a host that
    joins between two slots never gets two ticks in a row.

    A slot sends only when the command printed something since the last tick (``heard``, set
    by the runner) and ``send()`` could start a write (it returns False while the last one is in
    flight): a host slower than its interval, or a channel that does not take the byte, is never
    handed a queue of ticks. A slot the event loop reached late sends one tick, and the schedule
    goes on from the next slot ahead, with no burst of the ones missed."""

    def __init__(self, interval: float, send: Callable[[], bool]) -> None:
        self.loop = asyncio.get_running_loop()
        self.interval = interval
        self.send = send
        self.heard = False
        self.first = self.loop.time() + interval / 2
        self.clock = _Clock.joined(self)

    def slot(self, now: float) -> None:
        if now >= self.first and self.heard and self.send():
            self.heard = False

    def stop(self) -> None:
        self.clock.leave(self)


class _Clock:
    """The one timer behind every Ticker of an interval on an event loop; it ends with its last
    ticker."""

    _running: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, _Clock]]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, interval: float) -> None:
        self.loop = loop
        self.interval = interval
        self.tickers: dict[Ticker, None] = {}  # an ordered set: hosts are asked in the order they joined
        self.at = loop.time() + interval
        self.handle = loop.call_at(self.at, self._slot)

    @classmethod
    def joined(cls, ticker: Ticker) -> _Clock:
        clocks = cls._running.setdefault(ticker.loop, {})
        clock = clocks.get(ticker.interval)
        if clock is None:
            clock = clocks[ticker.interval] = cls(ticker.loop, ticker.interval)
        clock.tickers[ticker] = None
        return clock

    def leave(self, ticker: Ticker) -> None:
        self.tickers.pop(ticker, None)
        if not self.tickers:
            self.handle.cancel()
            clocks = self._running.get(self.loop, {})
            if clocks.get(self.interval) is self:
                del clocks[self.interval]

    def _slot(self) -> None:
        now = self.loop.time()
        for ticker in list(self.tickers):
            ticker.slot(now)
        self.at += self.interval * max(1, math.ceil((now - self.at) / self.interval))
        self.handle = self.loop.call_at(self.at, self._slot)


class Lines:
    """Cuts a stream's chunks into lines (bytes, without the newline). Only each new chunk is
    searched: what is pending never holds a newline, so a long line costs one pass, not one
    per chunk. ValueError once a line runs past ``limit`` bytes (give or take one chunk)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.pending = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        if b"\n" not in data:
            self.pending += data
            if len(self.pending) > self.limit:
                raise ValueError(f"a line ran past {self.limit} bytes")
            return []
        lines = data.split(b"\n")
        if self.pending:
            lines[0] = bytes(self.pending) + lines[0]
        self.pending = bytearray(lines.pop())
        return lines

    def rest(self) -> bytes:
        """What came after the last newline (the stream's end cut a line short)."""
        return bytes(self.pending)


def _drop_outcome(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()


async def bounded(awaitable: Awaitable[T], timeout: float) -> T:
    """Like asyncio.wait_for, minus its Python < 3.12 flaw: a cancel that arrives as the
    inner future completes is swallowed there, and a cancelled host loop then runs forever."""
    fut = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({fut}, timeout=timeout)
    except asyncio.CancelledError:
        # Like wait_for: a cancelled caller cancels what it waits on and lets its cleanup
        # (killing an iperf3, closing a channel) finish before the cancel goes on up.
        fut.cancel()
        await asyncio.wait({fut})
        raise
    if not done:
        fut.cancel()  # a thread already running its call finishes it; its result is dropped
        # and so is its end: unread, a gather's CancelledError is logged as "never retrieved"
        fut.add_done_callback(_drop_outcome)
        raise asyncio.TimeoutError
    return fut.result()
