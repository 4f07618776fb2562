"""Linux's TCP counters: ``/proc/net/snmp`` (the ``Tcp:`` MIB) and ``/proc/net/netstat`` (the
``TcpExt:`` extensions), and the remote sampler's compact line of the same numbers.

Both files are pairs of lines, a header naming the counters and a line of values with the same
prefix (``Tcp: RtoAlgorithm … InSegs OutSegs …`` / ``Tcp: 1 200 … 148044 145504 …``). Which
counters exist depends on the kernel (InCsumErrors since 3.10, TCPRcvQDrop since 4.19 …): a
counter the header does not name stays unknown.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterable

from ..core.tcpstats import TcpCounters
from . import numbers
from .parse_error import ParseError
from .registry import Entry

COMMAND = "cat /proc/net/snmp"
# (section, kernel's name) → TcpCounters field
FIELDS = {
    ("Tcp", "OutSegs"): "out_segs",
    ("Tcp", "RetransSegs"): "retrans_segs",
    ("Tcp", "InSegs"): "in_segs",
    ("Tcp", "InErrs"): "in_errs",
    ("Tcp", "InCsumErrors"): "in_csum_errs",
    ("TcpExt", "TCPTimeouts"): "timeouts",
    ("TcpExt", "TCPLostRetransmit"): "lost_retrans",
    ("TcpExt", "RcvPruned"): "rcv_pruned",
    ("TcpExt", "TCPRcvQDrop"): "rcvq_drops",
    ("TcpExt", "TCPBacklogDrop"): "backlog_drops",
    ("TcpExt", "TCPOFODrop"): "ofo_drops",
    ("TcpExt", "ListenDrops"): "listen_drops",
}
# What the sampler picks (platforms/linux.py), by the kernel's names: no name is in both
# sections, so the section is left out.
SAMPLER_NAMES = tuple(name for _, name in FIELDS)


def sections(text: str, command: str = COMMAND) -> dict[str, dict[str, str]]:
    """Each ``Prefix:`` pair of lines → {counter name: value text}. ParseError on a header
    without its values, or values that do not line up with their names."""
    out: dict[str, dict[str, str]] = {}
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) % 2:
        raise ParseError(command, "a header line without its line of values", numbers.shown(lines[-1]))
    for header, values in zip(lines[::2], lines[1::2]):
        names, counts = header.split(), values.split()
        if not names or names[0] != counts[0] or not names[0].endswith(":"):
            raise ParseError(command, "a line of values that does not follow its header", numbers.shown(values))
        if len(names) != len(counts):
            raise ParseError(command, f"{len(names) - 1} names but {len(counts) - 1} values", numbers.shown(values))
        out[names[0][:-1]] = dict(zip(names[1:], counts[1:]))
    return out


def parse(text: str, command: str = COMMAND) -> TcpCounters:
    """The TCP counters in either file (or both, concatenated); ParseError when it holds
    neither a ``Tcp:`` nor a ``TcpExt:`` pair."""
    found = sections(text, command)
    if "Tcp" not in found and "TcpExt" not in found:
        raise ParseError(command, "no Tcp: or TcpExt: counters", numbers.shown(text[:80]) or "(nothing)")
    return counters(((n, found[s][n]) for s, n in FIELDS if n in found.get(s, {})), command)


def counters(named: Iterable[tuple[str, str]], command: str) -> TcpCounters:
    """TcpCounters from ("InSegs", "148044") pairs; names not in FIELDS are ignored."""
    values = {}
    for name, text in named:
        field = _FIELD_OF.get(name)
        if field is not None:
            values[field] = numbers.counter(text, name, command)
    return TcpCounters(**values)


_FIELD_OF = {name: field for (_, name), field in FIELDS.items()}


def sampler_line(names: Iterable[str], line: str, command: str = "linkdeck linux sampler") -> TcpCounters:
    """The sampler's tick line (its values, in the order of the names it printed with the
    slow facts); ParseError when they do not line up."""
    names, values = tuple(names), line.split()
    if len(names) != len(values):
        raise ParseError(command, f"{len(names)} TCP counter names but {len(values)} values", numbers.shown(line))
    # Every tick brings one: the whole line checked in one C call; a line it does not pass
    # (or a value too wide) is read value by value, for the error naming the value.
    if numbers.DIGITS_ROW.fullmatch(line):
        read = list(map(int, values))
        if max(read, default=0) < 2**64:
            args: list[int | None] = [None] * len(_COUNTER_ORDER)
            for at, value_at in _places(names):
                args[at] = read[value_at]
            return TcpCounters(*args)
    return counters(zip(names, values), command)


# TcpCounters' fields, in the order its __init__ takes them.
_COUNTER_ORDER = tuple(f.name for f in dataclasses.fields(TcpCounters))


@functools.lru_cache(maxsize=64)
def _places(names: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    """(field's place in TcpCounters, value's place in the line) for each name it keeps, in
    the line's order (of a name given twice, the later value wins): a host's names are the
    same every tick."""
    return tuple(
        (_COUNTER_ORDER.index(field), at) for at, name in enumerate(names) if (field := _FIELD_OF.get(name)) is not None
    )


def _parse_entry(text: str, os_name: str) -> TcpCounters:
    return parse(text)


COMMANDS = (
    Entry(
        r"cat /proc/(?:\d+/|self/)?net/(?:snmp|netstat)(?: /proc/(?:\d+/|self/)?net/(?:snmp|netstat))?",
        frozenset({"linux"}),
        _parse_entry,
        "TCP counters (segments sent, retransmitted, received in error; receive-buffer drops) — not interfaces",
    ),
)
