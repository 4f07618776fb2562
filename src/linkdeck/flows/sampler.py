"""Reading a host's busiest TCP flows: the remote command, and its output cut into rounds.

On Linux one ``awk`` on the host runs ``ss -tinH state established`` every interval, joins each socket's two lines,
keeps every flow's bytes from the round before, ranks the flows by the bytes they moved since (a new flow by all it has
moved) and prints only the top N, each with its running totals from the round before: a host with 10,000 sockets sends N
flows, and the rates need no state here. The connection linkdeck's own session rides (the one ``$SSH_CONNECTION`` names)
is printed apart (``O``), never ranked: it is linkdeck's own traffic, not the host's. The loop runs only while someone
reads it (the flows screen, ``linkdeck flows``); when the reader goes, awk's next write fails and it ends.

The loops are script files (platforms/scripts/flows_*.sh, flows_*.awk) sent as one line
without ``!`` or backslashes (a csh or fish login shell passes it to ``sh -c`` unchanged);
the interval, N and the addresses are checked and filled in quoted.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import AsyncGenerator, Callable, Iterable, Sequence

from ..core.oses import family
from ..core.tcpflow import FlowRecord
from ..parsers import connstat, ss_tcp
from ..parsers.parse_error import ParseError
from ..platforms import script_text
from ..transport.runner import Runner

TOP_MAX = 200
ROUND = "@@LD FLOWS"
MISSING = "@@LD FLOWS-MISSING"
HELD = "@@LD FLOWS-HELD"  # one of linkdeck's own connections, by its ends (flows/held.py)
TEST = "@@LD FLOWS-TEST"  # a flow of a test linkdeck runs, by its ends (flows/own_tests.py)

# Per OS family: why there is no per-flow view (None: there is one).
NO_FLOWS = {
    "bsd": "the BSDs and macOS report no per-connection window, RTT or rate to a shell "
    "(netstat -T gives retransmit counts only, sockstat and tcpdrop -l endpoints only)"
}
# What to install when the loop's command is missing, by the word the loop prints.
MISSING_HINT = {
    "ss": "ss not found: install iproute2 (`apt install iproute2`, `dnf install iproute`)",
    "connstat": (
        "connstat not found: it ships with illumos since 2016 (SmartOS, OmniOS, OpenIndiana); Oracle Solaris has none"
    ),
}


def check_addresses(addresses: Iterable[str]) -> list[str]:
    """The addresses a flow's local end may have (one interface's), each a plain IP address."""
    out = []
    for a in addresses:
        out.append(str(ipaddress.ip_address(a.split("/", 1)[0].split("%", 1)[0])))
    return out


def _check(interval: float, top: int) -> None:
    if not 0.2 <= interval <= 3600:
        raise ValueError(f"interval {interval!r}: between 0.2 and 3600 s")
    if not 1 <= top <= TOP_MAX:
        raise ValueError(f"top {top!r}: between 1 and {TOP_MAX}")


def _program(name: str) -> str:
    """An OS's flows awk (scripts/NAME) with the ranking, as one line."""
    rank = script_text.fill(script_text.awk_line(script_text.source("flows_rank.awk")), {"ROUND": ROUND})
    return script_text.awk_line(script_text.source(name)) + " " + rank


def linux_script(interval: float, top: int, addresses: Sequence[str] = ()) -> str:
    """The loop for a Linux host (scripts/flows_linux.sh): every ``interval`` s, the ``top``
    flows that moved the most since the round before (only those whose local address is in
    ``addresses``, if any)."""
    _check(interval, top)
    only = " " + " ".join(check_addresses(addresses)) + " " if addresses else ""
    values: dict[str, str | int] = {"MISSING": MISSING, "TOP": int(top), "ONLY": only, "INTERVAL": f"{interval:.2f}"}
    return script_text.fill(
        script_text.sh_line(script_text.source("flows_linux.sh")), values, code={"PROGRAM": _program("flows_linux.awk")}
    )


def illumos_script(interval: float, top: int, addresses: Sequence[str] = ()) -> str:
    """The loop for an illumos host (scripts/flows_illumos.sh): connstat every ``interval`` s
    (whole seconds, at least 1), its ``top`` flows that moved the most since the round before."""
    _check(interval, top)
    only = " " + " ".join(check_addresses(addresses)) + " " if addresses else ""
    values: dict[str, str | int] = {
        "MISSING": MISSING,
        "TOP": int(top),
        "ONLY": only,
        "EVERY": max(1, round(interval)),
        "FIELDS": ",".join(connstat.FIELDS),
    }
    return script_text.fill(
        script_text.sh_line(script_text.source("flows_illumos.sh")),
        values,
        code={"PROGRAM": _program("flows_illumos.awk")},
    )


def script_for(os_name: str | None, interval: float, top: int, addresses: Sequence[str] = ()) -> str:
    """The flows loop for a host of this OS (only for one with a per-flow view)."""
    return (illumos_script if family(os_name or "") == "illumos" else linux_script)(interval, top, addresses)


def no_flows_reason(os_name: str | None) -> str | None:
    """Why a host of this OS has no per-flow view, or None when it has one."""
    fam = family(os_name) if os_name else None
    if fam in ("linux", "illumos"):
        return None
    return NO_FLOWS.get(fam or "", f"no per-flow reader for OS {os_name or 'unknown'}")


@dataclass(frozen=True, slots=True)
class FlowRound:
    """One round as the host printed it: its clock then and at the round before (None on
    the first), how many flows it has (through the chosen interface), the top flows each
    with its record from the round before (None for a flow new in this round), and what
    could not be read; ``own``: linkdeck's own SSH connection to the host, apart from the
    ranking (each with its record from the round before, likewise); ``tests``: the flows of
    the tests linkdeck runs through the host, out of the ranking too."""

    time: float
    prev_time: float | None
    total: int
    flows: tuple[tuple[FlowRecord, FlowRecord | None], ...]
    errors: tuple[str, ...] = field(default_factory=tuple)
    # the round's lines as the host printed them: what a recording keeps, so that a replay
    # reads them through the same parser (one fixed since reads them better)
    lines: tuple[str, ...] = field(default=(), compare=False)
    own: tuple[tuple[FlowRecord, FlowRecord | None], ...] = ()
    tests: tuple[tuple[FlowRecord, FlowRecord | None], ...] = ()


class FlowsUnavailable(Exception):
    """The host cannot list its flows (a command missing); the message says what to do."""


def _one(line: str) -> FlowRecord:
    got = ss_tcp.parse(line)
    if len(got) != 1:
        raise ParseError(ss_tcp.COMMAND, "expected one socket", line)
    return got[0]


def _line_reader(os_name: str | None) -> Callable[[str], FlowRecord]:
    """How one flow's line of this OS's loop is read."""
    return connstat.parse_line if family(os_name or "") == "illumos" else _one


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and value >= 0 else None


class RoundReader:
    """Turns the loop's lines into FlowRounds: ``feed`` each line, a round comes back when
    it ends."""

    def __init__(self, os_name: str | None = "linux") -> None:
        self._read = _line_reader(os_name)
        self._head: list[str] | None = None
        self._flows: list[tuple[FlowRecord, FlowRecord | None]] = []
        self._own: list[tuple[FlowRecord, FlowRecord | None]] = []
        self._last = self._flows  # the list whose last flow a P line belongs to
        self._held: set[tuple[str, ...]] = set()  # (local, remote) of HELD lines
        self._tests: set[tuple[str, ...]] = set()  # (local, remote) of TEST lines
        self._errors: list[str] = []
        self._lines: list[str] = []

    def feed(self, line: str) -> FlowRound | None:
        if line.startswith(MISSING):
            word = line[len(MISSING) :].strip()
            raise FlowsUnavailable(MISSING_HINT.get(word, f"{word[:40]} not found"))
        if line.startswith((HELD, TEST)):
            if self._head is not None:
                self._lines.append(line)
                (self._tests if line.startswith(TEST) else self._held).add(tuple(line.split()[2:4]))
            return None
        if line.startswith(ROUND):
            words = line.split()
            if words[2:3] == ["END"]:
                return self._end(line)
            self._head, self._flows, self._own, self._errors, self._lines = words[2:], [], [], [], [line]
            self._held, self._tests = set(), set()
            self._last = self._flows
            return None
        if self._head is None:
            return None
        self._lines.append(line)
        try:
            if line.startswith(("C ", "O ")):
                self._last = self._flows if line[0] == "C" else self._own
                self._last.append((self._read(line[2:]), None))
            elif line.startswith("P ") and self._last:
                cur, _ = self._last[-1]
                prev = self._read(line[2:])
                if prev.key == cur.key:
                    self._last[-1] = (cur, prev)
        except ParseError as exc:
            self._errors.append(str(exc))
        return None

    def _end(self, line: str) -> FlowRound | None:
        head, self._head = self._head, None
        if not head or len(head) < 3:
            return None
        now = _float(head[1])
        if now is None:
            return None
        total = int(head[2]) if head[2].isdigit() else len(self._flows)
        own = [*self._own, *(f for f in self._flows if (f[0].local, f[0].remote) in self._held)]
        tests = [f for f in self._flows if (f[0].local, f[0].remote) in self._tests - self._held]
        apart = self._held | self._tests
        flows = [f for f in self._flows if (f[0].local, f[0].remote) not in apart]
        return FlowRound(
            now,
            _float(head[0]),
            total,
            tuple(flows),
            tuple(self._errors),
            (*self._lines, line),
            tuple(own),
            tuple(tests),
        )


def round_of(lines: Iterable[object], os_name: str | None = "linux") -> FlowRound | None:
    """A recorded round read again (None: the lines hold no whole round). Lines that are not
    text are skipped: a recording is input like any host's output."""
    reader, got = RoundReader(os_name), None
    try:
        for line in lines:
            if isinstance(line, str):
                got = reader.feed(line) or got
    except FlowsUnavailable:
        return None
    return got


async def read_rounds(
    runner: Runner, interval: float, top: int, addresses: Sequence[str] = (), os_name: str | None = "linux"
) -> AsyncGenerator[FlowRound, None]:
    """The host's rounds, one per ``interval``, until the caller stops reading (which ends
    the loop on the host) or the connection fails (TransportError)."""
    reader = RoundReader(os_name)
    stream = runner.stream(["sh", "-c", script_for(os_name, interval, top, addresses)])
    try:
        async for line in stream:
            got = reader.feed(line)
            if got is not None:
                yield got
    finally:
        await stream.aclose()
