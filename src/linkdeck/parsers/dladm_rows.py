"""Row readers shared by the dladm and ipadm parsers: parseable (``-p``) lines with escaped
colons, tabular output cut by header names, and the value conventions both tools share."""

from __future__ import annotations

import bisect
import re

from ..core.kinds import Kind
from . import numbers
from .parse_error import ParseError

# dladm class → model kind. etherstub/simnet are software switches and test NICs.
CLASS_KINDS = {
    "phys": Kind.PHYSICAL,
    "aggr": Kind.BOND,
    "vnic": Kind.VNIC,
    "vlan": Kind.VLAN,
    "etherstub": Kind.VIRTUAL,
    "simnet": Kind.VIRTUAL,
    "bridge": Kind.BRIDGE,
    "iptun": Kind.TUNNEL,
    "overlay": Kind.TUNNEL,
    "vxlan": Kind.TUNNEL,
    "part": Kind.VIRTUAL,
}
EMPTY = {"", "--", "?"}


# ---------------------------------------------------------------- shared row readers


def split_parseable(line: str) -> list[str]:
    """Split a ``-p`` line on unescaped ``:`` and drop the escaping backslashes."""
    fields: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            cur.append(line[i + 1])
            i += 2
            continue
        if ch == ":":
            fields.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    fields.append("".join(cur))
    return fields


def parseable_rows(text: str, command: str, fields: tuple[str, ...]) -> list[dict[str, str]]:
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        # A single field is printed unescaped: the whole line is the value.
        values = [line] if len(fields) == 1 else split_parseable(line)
        if len(values) != len(fields):
            raise ParseError(command, f"expected {len(fields)} ':'-separated fields, got {len(values)}", line)
        rows.append(dict(zip(fields, (v.strip() for v in values))))
    return rows


def table_rows(text: str, command: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    """Rows of a tabular listing as {lower-case column: value}; '' where a cell is blank."""
    lines = [ln.rstrip("\r") for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header_line = lines[0]
    tabbed = "\t" in header_line
    header = [h.lower() for h in (header_line.split("\t") if tabbed else header_line.split()) if h.strip()]
    missing = [c for c in required if c not in header]
    if missing:
        raise ParseError(command, f"no {'/'.join(c.upper() for c in missing)} column in the header", header_line)
    starts = [m.start() for m in re.finditer(r"\S+", header_line)]
    rows = []
    for line in lines[1:]:
        if tabbed:
            cells = [c.strip() for c in line.split("\t")][: len(header)]
            cells += [""] * (len(header) - len(cells))
        else:
            tokens = line.split()
            if len(tokens) == len(header):
                cells = tokens
            else:
                cells = _cut_at_offsets(line, starts)
        rows.append(dict(zip(header, cells)))
    return rows


def _cut_at_offsets(line: str, starts: list[int]) -> list[str]:
    """Give each token to the column whose header starts at or before it (blank cells stay '')."""
    cells: list[list[str]] = [[] for _ in starts]
    for m in re.finditer(r"\S+", line):
        # starts ascend: a bisection, not a scan of every column per token (2,000 columns
        # of garbage took seconds)
        col = max(0, bisect.bisect_right(starts, m.start()) - 1)
        cells[col].append(m.group())
    return [" ".join(c) for c in cells]


def int_field(value: str, command: str, line: str) -> int | None:
    if value in EMPTY:
        return None
    return numbers.integer(value, "the value", command, line)


def state_field(value: str) -> str | None:
    value = value.strip().lower()
    return value if value in ("up", "down") else None  # unknown / ? / '' say nothing


def duplex_field(value: str, speed: int | None) -> str | None:
    # A down port prints "0 half": duplex of a link that is not there means nothing.
    value = value.strip().lower()
    return value if speed is not None and value in ("full", "half") else None


def mac(value: str) -> str | None:
    """``2:8:20:f4:7d:62`` → ``02:08:20:f4:7d:62``; '--' or garbage → None."""
    parts = value.strip().lower().split(":")
    if len(parts) != 6 or not all(re.fullmatch(r"[0-9a-f]{1,2}", p) for p in parts):
        return None
    return ":".join(p.zfill(2) for p in parts)


def link_name(value: str, command: str, line: str) -> str:
    if value in EMPTY or any(ch.isspace() for ch in value):
        raise ParseError(command, f"bad link name {value!r}", line)
    return value


def row_text(row: dict[str, str]) -> str:
    return " ".join(row.values())
