"""One-shot reads of an end's interface counters, to bracket a test.

A read just before the test and one just after it see the whole transfer however the
collectors' 1 Hz ticks fall, so the counters' view of the transfer is ready a few
milliseconds after iperf3's result (one command on the already open connection), not after
each end's next tick.

Each OS family reads with the command its collector already runs, through the existing
parsers: ``cat /proc/net/dev`` (Linux), ``netstat -i … -I NAME`` (BSD family: ``-I`` keeps
the output to that interface, so macOS's 5-character names cannot be confused), the filtered
``kstat -p link:::`` (illumos/Solaris), the same commands for the local host, and psutil
for a local OS with none of these (Windows). Only the BSD command carries interface names;
they are validated and quoted.
"""

from __future__ import annotations

import re
import shlex
from typing import Collection

from ..model import Counters, IfaceRecord
from ..parsers import kstat, netstat_bsd, proc_net_dev
from ..parsers.errors import ParseError
from ..oses import family as os_family
from ..platforms.bsd import profile_for
from ..transport.base import TransportError
from ..transport.local import LocalRunner
from .errors import ProbeError
from .iperf import End

READ_TIMEOUT_S = 5.0
LINUX_ARGV = ("cat", "/proc/net/dev")
KSTAT_ARGV = tuple(shlex.split(kstat.FILTERED_COMMAND))
# BSD interface names: letters, digits and a few separators, at most IFNAMSIZ-1 characters.
_BSD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}")
_PACKETS = "@@LD SECTION packets"


class CounterReadError(ProbeError):
    """An end's counters could not be read; the test's counters view is then unknown."""


async def read_counters(end: End, names: Collection[str]) -> dict[str, Counters]:
    """The running totals of the interfaces ``names`` on ``end``, as of now. Interfaces the
    host does not list are left out. Raises CounterReadError saying why."""
    wanted = set(names)
    family = os_family(end.os)
    if family == "linux":
        text = await _run(end, LINUX_ARGV)
        return _pick(_parsed(proc_net_dev.parse, text), wanted)
    if family == "illumos":
        text = await _run(end, KSTAT_ARGV)
        return _pick(_parsed(lambda t: kstat.parse(t, end.os), text), wanted)
    if family == "bsd":
        out = {}
        for name in wanted:
            text = await _run(end, ("sh", "-c", bsd_script(end.os, name)))
            found = bsd_counters(end.os, name, text)
            if found is not None:
                out[name] = found
        return out
    if isinstance(end.runner, LocalRunner):
        from ..platforms.local import read_counters as local_counters

        return {n: c for n, c in local_counters().items() if n in wanted}
    raise CounterReadError(f"{end.name}: no counter reader for OS {end.os!r}")


def bsd_script(os_name: str, name: str) -> str:
    """``netstat`` restricted to one interface, with the profile's fallbacks; OpenBSD and
    NetBSD print bytes instead of packets with ``-b``, so their packet table follows."""
    if not _BSD_NAME.fullmatch(name):
        raise CounterReadError(f"not a BSD interface name: {name!r}")
    profile = profile_for(os_name)
    quoted = shlex.quote(name)

    def chain(commands: tuple[str, ...]) -> str:
        # Variants a release lacks fail quietly; the last one keeps its stderr for the user.
        tried = [f"{c} -I {quoted}" for c in commands]
        return " || ".join([f"{c} 2>/dev/null" for c in tried[:-1]] + tried[-1:])

    script = chain(profile.netstat)
    if profile.netstat_packets:
        script += f"; echo '{_PACKETS}'; " + chain(profile.netstat_packets)
    return script


def bsd_counters(os_name: str, name: str, text: str) -> Counters | None:
    """The interface's link-row counters from :func:`bsd_script`'s output (None when netstat
    has no such interface)."""
    profile = profile_for(os_name)
    main, _, packets = text.partition(_PACKETS + "\n")
    if not main.strip():
        return None  # every variant refused: no such interface (or no netstat)
    found = _link_row(_parsed(lambda t: netstat_bsd.parse(t, profile.netstat[0]), main), name)
    if found is not None and packets.strip():
        other = _link_row(_parsed(lambda t: netstat_bsd.parse(t, profile.netstat_packets[0]), packets), name)
        found = netstat_bsd.merge_counters(found, other)
    return found


def _link_row(records: list[IfaceRecord], name: str) -> Counters | None:
    """The named interface's counters; on macOS netstat cuts names to 5 characters, and with
    ``-I`` the only link row with that prefix is the interface asked for."""
    rows = [r for r in records if r.counters is not None]
    exact = [r for r in rows if r.name == name]
    cut = [r for r in rows if len(r.name) < len(name) and name.startswith(r.name)]
    chosen = exact or (cut if len(cut) == 1 else [])
    return chosen[0].counters if chosen else None


async def _run(end: End, argv: tuple[str, ...]) -> str:
    try:
        res = await end.runner.run(list(argv), timeout=READ_TIMEOUT_S)
    except TransportError as exc:
        raise CounterReadError(f"{end.name}: reading the counters: {exc}") from None
    if not res.ok and not res.stdout.strip():
        said = (res.stderr.strip().splitlines() or [f"exit status {res.status}"])[-1]
        raise CounterReadError(f"{end.name}: {shlex.join(argv)}: {said}")
    return res.stdout


def _parsed(parse, text: str) -> list[IfaceRecord]:
    try:
        return parse(text)
    except ParseError as exc:
        raise CounterReadError(str(exc)) from None


def _pick(records: list[IfaceRecord], wanted: set[str]) -> dict[str, Counters]:
    return {r.name: r.counters for r in records if r.name in wanted and r.counters is not None}
