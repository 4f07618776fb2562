"""The Linux sampler's tick section, read with what the tick before it left.

A tick is ``FILE:LINE`` lines: the uptime, /proc/net/dev, on a host of few links the sysfs
state, the TCP values. Most of them are the same tick after tick: a 602-link node's idle veths
print the same 600 rows, and only the clock, the TCP line and a few rows move. A
tick of as many lines as the last, whose lines that differ are only the clock, the TCP line
and interface rows still naming the same interface, is read from those lines alone: the rest
of what the last tick said (its rows' counters, as the same objects, and its sysfs lines)
stands. Anything else is read whole. Reading a tick either way gives the same ``Tick``
(tests/unit/platforms/test_linux_tick.py plays random streams both ways).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, count
from operator import ne
from typing import Mapping

from ..core.model import Counters
from ..parsers import numbers, proc_net_dev
from ..parsers.parse_error import ParseError

UPTIME = "/proc/uptime:"
NET_DEV = "/proc/net/dev:"
TCP = "tcp:"


@dataclass(frozen=True, slots=True)
class Tick:
    """What one tick section says."""

    time: float  # the host's uptime clock
    names: tuple[str, ...]  # every interface /proc/net/dev lists, in its order
    counters: Mapping[str, Counters]  # by name (a later row of a name wins); never written
    sysfs: str  # the sysfs lines, as sysfs_linux.parse reads them
    tcp: str | None  # the TCP counters' values, or None


def _split(lines: list[str]) -> tuple[list[str], list[str], list[int], str, str | None, dict[str, int]]:
    """A tick's lines by the file they come from: the uptime's, /proc/net/dev's (and where
    each stands in ``lines``), the sysfs lines as one text, the TCP values (the last such
    line), where the uptime line stands when there is one, and where the last TCP line does."""
    uptime: list[str] = []
    net_dev: list[str] = []
    net_dev_at: list[int] = []
    sysfs: list[str] = []
    tcp = None
    single: dict[str, int] = {}
    for index, line in enumerate(lines):
        if line.startswith(NET_DEV):
            net_dev.append(line[len(NET_DEV) :])
            net_dev_at.append(index)
        elif line.startswith(UPTIME):
            uptime.append(line[len(UPTIME) :])
            single[UPTIME] = index
        elif line.startswith(TCP):
            tcp = line[len(TCP) :]
            single[TCP] = index  # the last one is read
        elif line.startswith(("/proc/net/snmp:", "/proc/net/netstat:")):
            continue  # a protocol a newer kernel added, which the grep did not know to drop
        elif line:
            sysfs.append(line)  # anything else is for the sysfs parser to accept or name
    if len(uptime) != 1:
        single.pop(UPTIME, None)  # a clock of several lines is read from them all
    return uptime, net_dev, net_dev_at, "\n".join(sysfs) + "\n", tcp, single


def _clock(uptime: str) -> float:
    return numbers.decimal((uptime.split() or [""])[0], "the uptime", "/proc/uptime", uptime[:80] or "(nothing)")


@dataclass(slots=True)
class _Last:
    """The last tick read, its lines and where the lines that may move without a whole read
    stand: the clock, the TCP line, each interface row (its name and the header's columns)."""

    lines: list[str]
    tick: Tick
    uptime_at: int
    tcp_at: int
    rows: dict[int, tuple[str, proc_net_dev.Columns]]


class TickReader:
    """Reads one stream's ticks, each with what the one before it left."""

    def __init__(self) -> None:
        self._last: _Last | None = None

    def read(self, text: str) -> Tick:
        """The tick ``text`` says; ParseError for one it cannot read."""
        lines = text.splitlines()
        last = self._last
        if last is not None and len(lines) == len(last.lines):
            tick = _carried(last, lines)
            if tick is not None:
                last.lines, last.tick = lines, tick
                return tick
        self._last = None  # a tick read whole (or unreadable) is the base from now on
        uptime, net_dev, net_dev_at, sysfs, tcp, single = _split(lines)
        rows: dict[int, tuple[str, proc_net_dev.Columns]] = {}
        records = {}
        for index, rec, columns in proc_net_dev.rows(net_dev):
            records[rec.name] = rec
            rows[net_dev_at[index]] = (rec.name, columns)
        tick = Tick(
            time=_clock("\n".join(uptime)),
            names=tuple(records),
            counters={name: rec.counters for name, rec in records.items() if rec.counters is not None},
            sysfs=sysfs,
            tcp=tcp,
        )
        # A row moves alone only where each interface has one row (a name listed twice: the
        # later row wins, which only a whole read tells), the clock only where it is one line.
        if len(rows) == len(records):
            self._last = _Last(lines, tick, single.get(UPTIME, -1), single.get(TCP, -1), rows)
        return tick


def _carried(last: _Last, lines: list[str]) -> Tick | None:
    """The tick ``lines`` say, read from the lines that differ from ``last``'s; None when one
    of them is not a line that can move alone (then the tick is read whole)."""
    tick = last.tick
    changed = list(compress(count(), map(ne, lines, last.lines)))  # compared in C: most are equal
    if not changed:
        return tick
    time, tcp = tick.time, tick.tcp
    counters: dict[str, Counters] | None = None
    for index in changed:
        line = lines[index]
        if index == last.uptime_at:
            if not line.startswith(UPTIME):
                return None
            try:
                time = _clock(line[len(UPTIME) :])
            except ParseError:
                return None  # read whole, which says why
        elif index == last.tcp_at:
            if not line.startswith(TCP):
                return None
            tcp = line[len(TCP) :]
        else:
            place = last.rows.get(index)
            if place is None or not line.startswith(NET_DEV):
                return None
            name, columns = place
            read = proc_net_dev.row_counters(line[len(NET_DEV) :], columns)
            if read is None or read[0] != name:
                return None
            if counters is None:
                counters = dict(tick.counters)
            counters[name] = read[1]
    return Tick(
        time=time, names=tick.names, counters=tick.counters if counters is None else counters, sysfs=tick.sysfs, tcp=tcp
    )
