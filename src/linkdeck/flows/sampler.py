"""Reading a host's busiest TCP flows: the remote command, and its output cut into rounds.

On Linux one ``awk`` on the host runs ``ss -tinH state established`` every interval, joins each socket's two lines, keeps every flow's bytes from
the round before, ranks the flows by the bytes they moved since (a new flow by all it has
moved) and prints only the top N, each with its running totals from the round before: a host with
10,000 sockets sends N flows, and the rates need no state here. The loop runs only while
someone reads it (the flows screen, ``linkdeck flows``); when the reader goes, awk's next
write fails and it ends.

The script is fixed text, one line, without ``!`` or backslashes (a csh or fish login shell
passes it to ``sh -c`` unchanged); the interval, N and the addresses are checked and quoted.
"""

from __future__ import annotations

import ipaddress
import shlex
from dataclasses import dataclass, field
from typing import AsyncIterator, Callable, Iterable, Sequence

from ..core.oses import family
from ..core.tcpflow import FlowRecord
from ..parsers import connstat, ss_tcp
from ..parsers.parse_error import ParseError
from ..transport.runner import Runner

TOP_MAX = 200
ROUND = "@@LD FLOWS"
MISSING = "@@LD FLOWS-MISSING"

# Per OS family: why there is no per-flow view (None: there is one).
NO_FLOWS = {
    "bsd": "the BSDs and macOS report no per-connection window, RTT or rate to a shell "
    "(netstat -T gives retransmit counts only, sockstat and tcpdrop -l endpoints only)"
}
# What to install when the loop's command is missing, by the word the loop prints.
MISSING_HINT = {
    "ss": "ss not found: install iproute2 (`apt install iproute2`, `dnf install iproute`)",
    "connstat": "connstat not found: it ships with illumos since 2016 (SmartOS, OmniOS, OpenIndiana); Oracle Solaris has none",
}

# Ranks the round's flows by what they moved since the round before (a new one by all it has
# moved), prints the top n each with its record from the round before, and keeps this round's.
_FLUSH = (
    "function flush(   k, d, i, m) { m = 0; "
    "for (k in cur) { d = cur[k] - ((k in prev) ? prev[k] : 0); "
    "if (m < n) m++; else if (d <= best[m]) continue; "
    "for (i = m; i > 1 && best[i - 1] < d; i--) { best[i] = best[i - 1]; who[i] = who[i - 1] } best[i] = d; who[i] = k } "
    'print "' + ROUND + ' " (pt == "" ? "-" : pt) " " t " " total " " m; '
    'for (i = 1; i <= m; i++) { k = who[i]; print "C " line[k]; if (k in pline) print "P " brief(pline[k]) } '
    'print "' + ROUND + ' END"; fflush(); '
    'split("", prev); split("", pline); for (k in cur) { prev[k] = cur[k]; pline[k] = line[k] } '
    'split("", cur); split("", line); pt = t } '
)

_AWK = (
    # The round's time is the middle of ss's run (the host clock before and after it): a run
    # slowed by a busy host moves the reads' time, not the rates.
    'function now(   up, u) { getline up < "/proc/uptime"; close("/proc/uptime"); split(up, u, " "); return u[1] + 0 } '
    # The round before is needed for its running totals only: the rest of its line stays home.
    'function brief(s,   n, f, i, out) { n = split(s, f, " "); out = f[1] " " f[2] " " f[3] " " f[4]; '
    'for (i = 5; i <= n; i++) if (f[i] ~ /^(bytes_acked|bytes_received|segs_out|retrans|busy|rwnd_limited|sndbuf_limited|delivered):/) out = out " " f[i]; '
    "return out } "
    'function num(s, name,   i) { i = index(s, " " name ":"); if (i == 0) return 0; return substr(s, i + length(name) + 2) + 0 } '
    'function keep(ep,   a) { if (only == "") return 1; a = ep; sub(/:[^:]*$/, "", a); '
    'if (substr(a, 1, 1) == "[") a = substr(a, 2, length(a) - 2); sub(/%.*/, "", a); sub(/^::ffff:/, "", a); '
    'return index(only, " " a " ") > 0 } '
    'function endsock() { if (length(sk)) { cur[sk] = num(rec, "bytes_acked") + num(rec, "bytes_received"); line[sk] = rec; total++ } sk = "" } '
    'function take(   c) { if ($1 == "Recv-Q" || $1 == "State") return; c = substr($0, 1, 1); '
    'if (c == " " || c == tab) { if (length(sk)) { $1 = $1; rec = rec " " $0 } return } '
    'endsock(); if (keep($3)) { sk = $3 " " $4; $1 = $1; rec = $0 } } '
    + _FLUSH
    +  # The loop is awk itself (exec'd by sh): the process the runner starts is the one that
    # holds the output, so stopping it leaves nothing behind holding the pipe.
    'BEGIN { tab = sprintf("%c", 9); cmd = "ss -tinH state established 2>/dev/null || ss -tin state established"; '
    'while (1) { t0 = now(); total = 0; sk = ""; '
    'while ((cmd | getline) > 0) take(); close(cmd); t = sprintf("%.3f", (t0 + now()) / 2); endsock(); flush(); system(pause) } }'
)


# illumos: connstat's own loop (-i) prints a block of -P lines after each `= TIME` line (-T u:
# whole seconds, too coarse for a rate, so a round spans the interval connstat was asked for);
# a block is complete when the next one's time line comes, so each round shows one interval
# late. No fflush in every illumos awk: system("") flushes (POSIX).
_AWK_ILLUMOS = (
    "function brief(s) { return s } " + _FLUSH.replace("fflush();", 'system("");') + 'BEGIN { FS = "," } '
    "/^= / { if (started) flush(); started = 1; t = substr($0, 3) + 0; if (length(pt)) pt = t - iv; total = 0; next } "
    'started && (only == "" || index(only, " " $1 " ") > 0) { k = $1 "," $2 "," $3 "," $4; cur[k] = ($5 + $6); line[k] = $0; total++ }'
)


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


def linux_script(interval: float, top: int, addresses: Sequence[str] = ()) -> str:
    """The loop for a Linux host: every ``interval`` s, the ``top`` flows that moved the most
    since the round before (only those whose local address is in ``addresses``, if any)."""
    _check(interval, top)
    only = " " + " ".join(check_addresses(addresses)) + " " if addresses else ""
    return (
        "PATH=$PATH:/usr/sbin:/sbin; export LC_ALL=C; "
        f"command -v ss >/dev/null 2>&1 || {{ echo '{MISSING} ss'; exit 0; }}; "
        f"exec awk -v n={int(top)} -v only={shlex.quote(only)} -v pause={shlex.quote(f'sleep {interval:.2f} >/dev/null')} {shlex.quote(_AWK)}"
    )


def illumos_script(interval: float, top: int, addresses: Sequence[str] = ()) -> str:
    """The loop for an illumos host: connstat every ``interval`` s (whole seconds, at least
    1), its ``top`` flows that moved the most since the round before."""
    _check(interval, top)
    only = " " + " ".join(check_addresses(addresses)) + " " if addresses else ""
    every = max(1, round(interval))
    return (
        "PATH=$PATH:/usr/bin:/usr/sbin; export LC_ALL=C; "
        f"command -v connstat >/dev/null 2>&1 || {{ echo '{MISSING} connstat'; exit 0; }}; "
        f"connstat -P -e -T u -o {','.join(connstat.FIELDS)} -i {every} | "
        f"awk -v n={int(top)} -v iv={every} -v only={shlex.quote(only)} {shlex.quote(_AWK_ILLUMOS)}"
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
    could not be read."""

    time: float
    prev_time: float | None
    total: int
    flows: tuple[tuple[FlowRecord, FlowRecord | None], ...]
    errors: tuple[str, ...] = field(default_factory=tuple)
    # the round's lines as the host printed them: what a recording keeps, so that a replay
    # reads them through the same parser (one fixed since reads them better)
    lines: tuple[str, ...] = field(default=(), compare=False)


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
        self._errors: list[str] = []
        self._lines: list[str] = []

    def feed(self, line: str) -> FlowRound | None:
        if line.startswith(MISSING):
            word = line[len(MISSING) :].strip()
            raise FlowsUnavailable(MISSING_HINT.get(word, f"{word[:40]} not found"))
        if line.startswith(ROUND):
            words = line.split()
            if words[2:3] == ["END"]:
                return self._end(line)
            self._head, self._flows, self._errors, self._lines = words[2:], [], [], [line]
            return None
        if self._head is None:
            return None
        self._lines.append(line)
        try:
            if line.startswith("C "):
                self._flows.append((self._read(line[2:]), None))
            elif line.startswith("P ") and self._flows:
                cur, _ = self._flows[-1]
                prev = self._read(line[2:])
                if prev.key == cur.key:
                    self._flows[-1] = (cur, prev)
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
        return FlowRound(now, _float(head[0]), total, tuple(self._flows), tuple(self._errors), (*self._lines, line))


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


async def read_rounds(runner: Runner, interval: float, top: int, addresses: Sequence[str] = (), os_name: str | None = "linux") -> AsyncIterator[FlowRound]:
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
        await stream.aclose()  # type: ignore[attr-defined]
