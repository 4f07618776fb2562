"""Another test already running through an end: found before a test starts, and waited for.

Two tests through one host measure each other. Inside one linkdeck the session queues them
(probe/session.py); across processes (two ``linkdeck test`` at once, someone's own iperf3)
each end is asked, with the same fixed socket listing the lingering check uses, whether a
connection on iperf3's ports carries traffic. A test waits a bounded while for it to end;
past that it runs anyway, and the counters around it say what else crossed the path.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable

from ..transport.runner import TransportError
from . import templates as cmd
from .iperf import PORT_TRIES, End
from .lingering import busy_states

WAIT_S = 30.0
POLL_S = 1.0


async def running_on(end: End, first_port: int) -> list[str]:
    """The states of connections on iperf3's ports at ``end`` (any address); [] when none or
    when the host cannot say."""
    try:
        res = await end.shell().run(["sh", "-c", cmd.SOCKETS_SCRIPT], timeout=10)
    except (TransportError, OSError):
        return []
    return busy_states(res.stdout, first_port, PORT_TRIES)


async def wait_until_quiet(
    ends: list[End],
    first_port: int,
    say: Callable[[str], None] | None = None,
    wait_s: float = WAIT_S,
    poll_s: float = POLL_S,
) -> list[str]:
    """Wait (at most ``wait_s``) until no end has another test's connections; the ends still
    busy after that, as "h2 (2 connections on iperf3's ports)"."""
    deadline = time.monotonic() + wait_s
    while True:
        found = await asyncio.gather(*(running_on(end, first_port) for end in ends))
        busy = [
            f"{end.name} ({len(states)} connection{'s' if len(states) != 1 else ''} on iperf3's ports)"
            for end, states in zip(ends, found)
            if states
        ]
        if not busy or time.monotonic() >= deadline:
            return busy
        if say is not None:
            say(f"waiting for another test to end: {', '.join(busy)}")
        await asyncio.sleep(poll_s)
