"""``netstat -i`` on the BSD family: per-interface counters, read by header name.

One table shape, many variants::

    Name     Mtu Network       Address            Ipkts Ierrs Idrop  Ibytes  Opkts Oerrs  Obytes  Coll  Drop
    vtnet0  1500 <Link#1>      fa:16:3e:ba:3e:25    579     0     0   46746    210     0   26242     0     0
    vtnet0     - 140.211.10.64 140.211.10.91        189     -     -   18998    159     -   18594     -     -

What differs between systems, and how it is read:

- Columns come and go with flags (``-b`` bytes, ``-d`` drops, FreeBSD's ``Idrop``, OpenBSD's
  ``Ifail``/``Ofail``, NetBSD/OpenBSD ``-b`` printing bytes *instead of* packets), so the
  numeric columns are mapped by their header names, never by position alone.
- An interface has one ``<Link#N>`` row (``<Link>`` on NetBSD/OpenBSD) plus one row per
  address. macOS repeats the link counters on address rows; FreeBSD prints each address's own
  (smaller) counts there. The link row is the interface's truth: only its counters are kept.
- The Address column may be empty (macOS link rows of lo0, gif0, utun0) and macOS ``-d`` link
  rows lack the trailing Drop value while address rows print ``-`` there. So a row's first
  token after Network is the address unless it is a counter (digits or ``-``), and missing
  trailing columns are unknown (None).
- A trailing ``*`` on the name means the interface is down. macOS prints names in a 5-char
  field (``bridg`` for bridge0, two ``vmnet`` rows for vmnet1/vmnet8): such rows are kept apart
  by their link index (``extra`` ``("link_index", "N")``); the adapter maps them back to full
  names with ``ifconfig`` output.
- Markdown emphasis around a number (``**5**``, as pasted in opnsense/core#3904) is read as the
  number: the value is still exact, and ``linkdeck parse`` exists for pasted output from bug
  reports. Any other non-numeric value (``-h`` humanized ``5.0k``) is a ParseError.
- Counters are unsigned; the width is only known when a value exceeds 32 bits (then 64).
"""

from __future__ import annotations

import re
from typing import Any

from ..core.model import Counters, IfaceRecord
from . import numbers
from .parse_error import ParseError
from .registry import Entry

# Header name → Counters field. "Drop"/"Drops" is the output-queue drop count everywhere it
# exists (FreeBSD oqdrops, macOS/NetBSD/OpenBSD ifq_drops).
_COLUMNS = {
    "ipkts": "rx_packets",
    "ierrs": "rx_errors",
    "ifail": "rx_errors",
    "idrop": "rx_drops",
    "idrops": "rx_drops",
    "ibytes": "rx_bytes",
    "opkts": "tx_packets",
    "oerrs": "tx_errors",
    "ofail": "tx_errors",
    "odrop": "tx_drops",
    "odrops": "tx_drops",
    "drop": "tx_drops",
    "drops": "tx_drops",
    "obytes": "tx_bytes",
}
# Columns kept as NIC-level counters rather than dropped.
_NIC_COLUMNS = {"coll": "collisions", "colls": "collisions"}
_KNOWN_EXTRA = {"time"}

_COUNTER = re.compile(r"-|\d+|\*\*\d+\*\*")
_MAC = re.compile(r"[0-9a-fA-F]{1,2}(?::[0-9a-fA-F]{1,2}){5,7}")
_HUMANIZED = re.compile(r"[\d.]+[kMGTPE]")
_LINK = re.compile(r"<Link(?:#(\d+))?>")
_U32_MAX = 2**32 - 1


def parse(text: str, command: str = "netstat -i") -> list[IfaceRecord]:
    """One record per interface (per link index where names were truncated), in output order.

    Raises ParseError when there is no ``Name Mtu Network Address …`` header, for rows with more
    values than the header has columns, and for values that are not counters.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ParseError(command, "no output")
    columns = _header(lines[0], command)
    groups: list[dict[str, Any]] = []
    for line in lines[1:]:
        row = _row(line, columns, command)
        current = groups[-1] if groups else None
        if row["link"] or current is None or current["name"] != row["name"]:
            groups.append({**row, "rows": 1})
        else:
            current["rows"] += 1
            current["down"] = current["down"] or row["down"]
            if current["mtu"] is None:
                current["mtu"] = row["mtu"]
    return [_record(g) for g in groups]


def _header(line: str, command: str) -> list[str]:
    names = line.split()
    if [n.lower() for n in names[:4]] != ["name", "mtu", "network", "address"]:
        if "input" in line and "output" in line:
            raise ParseError(
                command, "this is the interval form (netstat -i -w N); linkdeck reads the per-interface table", line
            )
        raise ParseError(command, "expected a 'Name Mtu Network Address …' header", line)
    columns = [n.lower() for n in names[4:]]
    for col in columns:
        if col not in _COLUMNS and col not in _NIC_COLUMNS and col not in _KNOWN_EXTRA:
            raise ParseError(command, f"unknown column {col!r} in header", line)
    return columns


def _row(line: str, columns: list[str], command: str) -> dict[str, Any]:
    tokens = line.split()
    if len(tokens) < 3:
        raise ParseError(command, "row has fewer than Name, Mtu and Network", line)
    raw_name, raw_mtu, network = tokens[0], tokens[1], tokens[2]
    rest = tokens[3:]
    address = None
    if rest and _HUMANIZED.fullmatch(rest[0]):
        raise ParseError(command, f"not a counter: {rest[0]!r} (humanized -h output is not supported)", line)
    if rest and not _COUNTER.fullmatch(rest[0]):
        address, rest = rest[0], rest[1:]
    # Only macOS's missing trailing Drop on link rows may be short; anything else is garbled.
    short_ok = 1 if columns and columns[-1] in ("drop", "drops") else 0
    if not len(columns) - short_ok <= len(rest) <= len(columns):
        raise ParseError(command, f"{len(rest)} values for {len(columns)} columns", line)
    values = [_value(tok, line, command) for tok in rest]
    values += [None] * (len(columns) - len(values))
    down = raw_name.endswith("*")
    name = raw_name.rstrip("*")
    if not name:
        raise ParseError(command, "empty interface name", line)
    link = _LINK.fullmatch(network)
    return {
        "name": name,
        "down": down,
        "mtu": _mtu(raw_mtu, line, command),
        "link": link is not None,
        "index": link.group(1) if link else None,
        "mac": address if link and address and _MAC.fullmatch(address) else None,
        "values": dict(zip(columns, values)),
    }


def _value(token: str, line: str, command: str) -> int | None:
    if token == "-":
        return None
    digits = token.strip("*")
    if not _COUNTER.fullmatch(token):
        hint = " (humanized -h output is not supported)" if _HUMANIZED.fullmatch(token) else ""
        raise ParseError(command, f"not a counter: {token!r}{hint}", line)
    return numbers.integer(digits, "a counter", command, line)


def _mtu(token: str, line: str, command: str) -> int | None:
    if token == "-":
        return None
    # macOS prints 0 for USB host controllers: unknown, not zero
    return numbers.mtu(numbers.integer(token, "the MTU", command, line))


def _record(group: dict[str, Any]) -> IfaceRecord:
    counters = None
    nic: dict[str, int] = {}
    if group["link"]:
        fields: dict[str, int] = {}
        for col, val in group["values"].items():
            if val is None:
                continue
            if col in _COLUMNS:
                fields.setdefault(_COLUMNS[col], val)
            elif col in _NIC_COLUMNS:
                nic[_NIC_COLUMNS[col]] = val
        if fields:
            bits = 64 if max(fields.values()) > _U32_MAX else None
            counters = Counters(**fields, bits=bits)
    extra = (("link_index", group["index"]),) if group["index"] else ()
    return IfaceRecord(
        name=group["name"],
        oper="down" if group["down"] else None,
        mtu=group["mtu"],
        mac=group["mac"],
        counters=counters,
        nic_counters=nic,
        extra=extra,
    )


def merge_counters(a: Counters | None, b: Counters | None) -> Counters | None:
    """Field-wise union of two counter sets for one interface (OpenBSD/NetBSD print bytes and
    packets in two separate ``netstat -i`` runs); ``a`` wins where both know a field."""
    if a is None or b is None:
        return a or b
    fields = {name: getattr(a, name) if getattr(a, name) is not None else getattr(b, name) for name in a.as_dict()}
    bits = a.bits or b.bits
    return Counters(**fields, bits=bits)


def _parse_entry(text: str, os_name: str) -> list[IfaceRecord]:
    return parse(text)


COMMANDS = (
    Entry(
        r"netstat(?=.* -[a-zA-Z]*i)(?: -[a-zA-Z]+)+(?: \d+)?",
        frozenset({"bsd"}),
        _parse_entry,
        "netstat -i with any of -b -d -n -l -W: per-interface counters from the <Link> rows",
    ),
)
