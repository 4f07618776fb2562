"""A test's sockets after iperf3 has gone: the kernel keeps a connection that could not
deliver its last segments (LAST-ACK, FIN-WAIT-1 …) and retransmits them for minutes, on a path
that drops big frames at every try. That traffic is still linkdeck's own; it ends when the
sockets are gone, which is asked of the host, never guessed.

One fixed command lists the host's TCP sockets (``ss -tan`` on Linux, ``netstat -an``
elsewhere: FreeBSD and the other BSDs, macOS, illumos); ``held_sockets`` picks the ones of a
test: an endpoint at the test's address on one of the ports its server may have used.
"""

from __future__ import annotations

import asyncio
import re
import time

from ..transport.runner import TransportError
from . import templates as cmd
from .iperf import PORT_TRIES, End

POLL_S = 2.0
# A LAST-ACK socket retransmits with backoff until tcp_orphan_retries gives up (a few minutes
# on Linux); past this linkdeck stops asking and counts the traffic as ended.
MAX_S = 600.0

# States that carry none of the test's traffic: a listener (someone's own iperf3 -s on the
# port) and TIME-WAIT, which only answers a stray segment.
_QUIET = {"LISTEN", "TIME_WAIT", "CLOSED", "BOUND", "IDLE"}
_STATES = {
    "ESTAB",
    "ESTABLISHED",
    "SYN_SENT",
    "SYN_RECV",
    "SYN_RCVD",
    "FIN_WAIT_1",
    "FIN_WAIT1",
    "FIN_WAIT_2",
    "FIN_WAIT2",
    "CLOSE_WAIT",
    "CLOSING",
    "LAST_ACK",
    *_QUIET,
}
_ENDPOINT = re.compile(r"^\[?(?P<host>[^\s\[\]]*?)\]?[.:](?P<port>[0-9]{1,5})$")


def held_sockets(text: str, address: str, first_port: int, tries: int = PORT_TRIES) -> list[str]:
    """The states of the sockets in ``ss -tan`` / ``netstat -an`` output ``text`` that belong to
    a test toward ``address`` on ports ``first_port`` … ``first_port + tries - 1`` and still
    carry traffic: ["LAST-ACK", …]."""
    ports = range(first_port, first_port + tries)
    want = address.split("%", 1)[0].lower()
    return [
        state for state, endpoints in _active(text) if any(port in ports and host == want for host, port in endpoints)
    ]


# A test running (not one's closing tail, which lingers for minutes on a lossy path)
_OPEN = {"ESTAB", "ESTABLISHED", "SYN-SENT", "SYN-RECV", "SYN-RCVD"}


def busy_states(text: str, first_port: int, tries: int = PORT_TRIES) -> list[str]:
    """The states of the open connections in ``ss -tan`` / ``netstat -an`` output ``text`` on
    ports ``first_port`` … ``first_port + tries - 1``, whatever their address: a test running."""
    ports = range(first_port, first_port + tries)
    return [
        state for state, endpoints in _active(text) if state in _OPEN and any(port in ports for _, port in endpoints)
    ]


def _active(text: str):
    """(state, [(host, port), …]) of each socket line that carries traffic."""
    for line in text.splitlines():
        tokens = line.split()
        states = [t for t in tokens if t.upper().replace("-", "_") in _STATES]
        if not states or states[0].upper().replace("-", "_") in _QUIET:
            continue
        endpoints = [(_host(m.group("host")), int(m.group("port"))) for m in map(_ENDPOINT.match, tokens) if m]
        yield states[0].upper().replace("_", "-"), endpoints


def _host(text: str) -> str:
    host = text.strip("[]").lower().split("%", 1)[0]
    return host.removeprefix("::ffff:")


async def sockets_of(end: End, address: str, first_port: int) -> list[str] | None:
    """The test's sockets still open on ``end``; None when the host cannot say (no ss or
    netstat, the connection gone)."""
    try:
        res = await end.shell().run(["sh", "-c", cmd.SOCKETS_SCRIPT], timeout=10)
    except (TransportError, OSError):
        return None
    if not res.stdout.strip():
        return None
    return held_sockets(res.stdout, address, first_port)


async def until_gone(end: End, address: str, first_port: int, poll_s: float = POLL_S, max_s: float = MAX_S) -> float:
    """Wait until the host holds none of the test's sockets (or cannot say, or ``max_s``
    passed); the wall-clock time they were last seen."""
    deadline = time.monotonic() + max_s
    while time.monotonic() < deadline:
        left = await sockets_of(end, address, first_port)
        if not left:
            break
        await asyncio.sleep(poll_s)
    return time.time()
