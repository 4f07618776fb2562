"""``cat /proc/net/dev``: per-interface cumulative counters on Linux.

The layout is two header lines, then one line per interface::

    Inter-|   Receive                                                |  Transmit
     face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets ...
        lo:   13222     152    0    0    0     0          0         0    13222 ...

The name is right-aligned and padded, and old kernels print ``%6s:%8lu``, so a counter wider
than the field runs into the colon (``eth0:1234567890``). Linux interface names cannot hold a
colon or whitespace, so everything before the first colon, stripped, is the name.
"""

from __future__ import annotations

from dataclasses import fields as dataclass_fields
from functools import lru_cache
from typing import Iterable, Iterator

from ..core.model import Counters, IfaceRecord
from . import numbers
from .parse_error import ParseError
from .registry import Entry

COMMAND = "cat /proc/net/dev"

# The columns of every kernel since 2.2, used when the header is missing (pasted rows only).
_DEFAULT_RX = ("bytes", "packets", "errs", "drop", "fifo", "frame", "compressed", "multicast")
_DEFAULT_TX = ("bytes", "packets", "errs", "drop", "fifo", "colls", "carrier", "compressed")

# Header column → Counters field; every other column goes to nic_counters as rx_/tx_<name>.
_COUNTER_COLUMNS = {"bytes": "bytes", "packets": "packets", "errs": "errors", "drop": "drops"}


Columns = tuple[tuple[str, ...], tuple[str, ...]]


def parse(text: str) -> list[IfaceRecord]:
    """Every interface in a /proc/net/dev dump, with its counters.

    Raises ParseError for a line with missing or non-numeric columns, or for text that has
    neither the header nor any interface line.
    """
    return [rec for _, rec, _ in rows(text.splitlines())]


def rows(lines: Iterable[str]) -> Iterator[tuple[int, IfaceRecord, Columns]]:
    """``parse`` line by line: each interface row's index in ``lines``, its record and the
    header's columns it was read with (a caller that keeps them can read a changed row again
    alone, with ``row``). Raises ParseError as ``parse`` does."""
    columns: Columns = (_DEFAULT_RX, _DEFAULT_TX)
    seen_header = found = False
    for index, line in enumerate(lines):
        kind = _kind(line)
        if kind is _ROW:
            found = True
            yield index, _parse_row(line, *columns), columns
        elif kind is not _BLANK:
            seen_header = True
            if kind is _COLUMNS:
                columns = _header_columns(line)
    if not found and not seen_header:
        raise ParseError(COMMAND, "no header and no interface lines; is this /proc/net/dev?")


def row(line: str, columns: Columns) -> IfaceRecord | None:
    """One line read as ``parse`` reads it under the header's ``columns``: its record, None
    when ``parse`` would not read it as an interface (a blank or header line); ParseError for
    a bad row."""
    return _parse_row(line, *columns) if _kind(line) is _ROW else None


def row_counters(line: str, columns: Columns) -> tuple[str, Counters] | None:
    """A row's name and counters as ``row`` reads them, without the rest of its record (a
    tick's moving rows need no more); None for anything ``row`` would not read as a plain row
    of digits (a blank or header line, a bad row), which ``row`` then reads or names."""
    if _kind(line) is not _ROW:
        return None
    name, sep, rest = line.partition(":")
    name = name.strip()
    fields = rest.split()
    places = _counter_places(*columns)
    if not sep or not name or len(fields) != places[0] or not numbers.DIGITS_ROW.fullmatch(rest):
        return None
    return name, Counters(*[None if at is None else int(fields[at]) for at in places[1]])


@lru_cache(maxsize=16)
def _counter_places(rx_cols: tuple[str, ...], tx_cols: tuple[str, ...]) -> tuple[int, tuple[int | None, ...]]:
    """(the columns a row has; for each Counters field in its order, the column _parse_row
    takes its value from, the last of a repeated one, or None)."""
    at: dict[str, int] = {}
    for index, (key, is_counter) in enumerate(_layout(rx_cols, tx_cols)):
        if is_counter:
            at[key] = index
    return len(rx_cols) + len(tx_cols), tuple(at.get(f.name) for f in dataclass_fields(Counters))


_BLANK, _TITLE, _COLUMNS, _ROW = "blank", "title", "columns", "row"


def _kind(line: str) -> str:
    if not line.strip():
        return _BLANK
    if line.lstrip().startswith("Inter-|"):
        return _TITLE
    if "|" in line and ":" not in line:
        return _COLUMNS
    return _ROW


def _header_columns(line: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    parts = line.split("|")
    if len(parts) != 3:
        raise ParseError(COMMAND, "header line does not have the 'face |receive|transmit' shape", line)
    rx, tx = tuple(parts[1].split()), tuple(parts[2].split())
    for needed in ("bytes", "packets"):
        if needed not in rx or needed not in tx:
            raise ParseError(COMMAND, f"header has no '{needed}' column", line)
    return rx, tx


# A node's idle interfaces print the same row every sample (590 of a 602-link node's): one
# parse per distinct row, shared (IfaceRecord is frozen and nothing writes its dicts). Bounded:
# a fleet's moving rows only cost a miss each.
@lru_cache(maxsize=4096)
def _parse_row(line: str, rx_cols: tuple[str, ...], tx_cols: tuple[str, ...]) -> IfaceRecord:
    name, sep, rest = line.partition(":")
    name = name.strip()
    if not sep or not name:
        raise ParseError(COMMAND, "expected 'NAME: counters…'", line)
    fields = rest.split()
    if len(fields) != len(rx_cols) + len(tx_cols):
        raise ParseError(COMMAND, f"{name}: expected {len(rx_cols) + len(tx_cols)} counters, found {len(fields)}", line)
    # One C-speed check of the whole row (a node's 600 interfaces every tick); a row it does
    # not pass is read field by field, for the error naming the field.
    if numbers.DIGITS_ROW.fullmatch(rest):
        values = [int(f) for f in fields]
    else:
        values = [numbers.integer(f, f"{name}: a counter", COMMAND, line) for f in fields]
    counters: dict[str, int] = {}
    nic: dict[str, int] = {}
    for (key, is_counter), val in zip(_layout(rx_cols, tx_cols), values):
        (counters if is_counter else nic)[key] = val
    return IfaceRecord(name=name, counters=Counters(**counters), nic_counters=nic)


@lru_cache(maxsize=16)
def _layout(rx_cols: tuple[str, ...], tx_cols: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    """Each column's key: a Counters field (``rx_bytes``) or a NIC counter (``rx_fifo``)."""
    out = []
    for direction, cols in (("rx", rx_cols), ("tx", tx_cols)):
        for col in cols:
            target = _COUNTER_COLUMNS.get(col)
            out.append((f"{direction}_{target}", True) if target else (f"{direction}_{col}", False))
    return tuple(out)


def _parse_entry(text: str, os_name: str) -> list[IfaceRecord]:
    return parse(text)


COMMANDS = (
    Entry(
        r"cat /proc/(?:\d+/|self/)?net/dev",
        frozenset({"linux"}),
        _parse_entry,
        "cumulative rx/tx bytes, packets, errors, drops (+ fifo, frame, colls… as NIC counters)",
    ),
)
