"""The dashboard's columns: what each one shows and means, its widths, and the layout fitted to
the terminal's width.

Pure (no textual, no rich). The layout is computed when the width or the chosen columns
change, never per cell or per tick; the table then only slices each row at fixed offsets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .. import units
from ..config import UI_COLUMNS
from ..model import InterfaceView
from ..present import interface_cells


@dataclass(frozen=True, slots=True)
class Column:
    id: str
    title: str
    widths: tuple[int, ...]  # widest first; a narrower width shows the column's short form
    align: str  # "l" or "r"
    sort: str | None  # the sort a click on the header picks
    legend: str  # what the column means, for the help screen and the README
    short_title: str | None = None  # the header at a narrower width


NAME = Column("name", "Interface", (20, 16, 14), "l", "name",
              "The host, then its interfaces; a vlan or vnic is indented under what it runs on, bond "
              "members under the bond. * marks the interface that carries the default route.")
BADGE_W = 3  # "✖2", "⚠12": the findings badge between the name and the first column
GRAPH_GAP = 1  # between the RX and the TX sparkline inside the graphs column

_ALL = (
    Column("oper", "Oper", (4,), "l", None, "Operational state: up, down, lldn (lower layer down), dorm (dormant), ? (unknown)."),
    Column("speed", "Speed/dup", (9, 6), "l", None, "Negotiated speed and duplex (full or half; F/H when narrow).", "Speed"),
    Column("mtu", "MTU", (5,), "r", None, "Largest IP packet the interface sends, in bytes."),
    Column("rx", "RX", (10, 6), "r", "rx", "Received per second over the last interval (bit/s, or bytes/s after b).", "RX b/s"),
    Column("tx", "TX", (10, 6), "r", "tx", "Sent per second over the last interval.", "TX b/s"),
    Column("errors", "Err/s", (6, 5), "r", "errors", "RX + TX errors per second (red when not 0)."),
    Column("drops", "Drop/s", (6, 5), "r", "errors", "RX + TX drops per second (red when not 0).", "Drp/s"),
    Column("util", "Util", (5, 4), "r", "util",
           "Percent of the negotiated speed: the busier direction on full duplex, RX + TX on half "
           "duplex; red from 90 %; — when the speed is unknown."),
    Column("pps", "RX pps TX pps", (13,), "r", None, "Packets per second received and sent."),
    Column("kind", "Kind", (8, 4), "l", None, "physical, bond, vlan, bridge, vnic, loopback, tunnel, wireless … (shortened when narrow)."),
    Column("graphs", "graphs", (31, 21), "l", None, "RX (cyan) and TX (magenta) over the last minute, each scaled to its own peak."),
    Column("test", "Last test", (12,), "l", None, "The verdict of the last throughput test from this interface (t)."),
)
COLUMNS = {c.id: c for c in _ALL}
# config.py holds the names (it validates [ui] columns); this module what they draw
assert tuple(COLUMNS) == UI_COLUMNS, "config.UI_COLUMNS and ui/columns.py list different columns"

_OPER_SHORT = {"lowerlayerdown": "lldn", "dormant": "dorm", "unknown": "?", "notpresent": "gone", "testing": "test"}
_KIND_SHORT = {"physical": "phys", "loopback": "lo", "bridge": "br", "wireless": "wifi", "tunnel": "tun", "virtual": "virt"}


@dataclass(frozen=True, slots=True)
class Placed:
    column: Column
    width: int
    short: bool
    x: int  # offset in the scrolling part of the row


@dataclass(frozen=True, slots=True)
class Layout:
    name_w: int
    placed: tuple[Placed, ...]
    fitted: int  # how many of ``placed`` fit the screen unscrolled; the rest are a scroll away

    @property
    def frozen_w(self) -> int:
        """Name, gap and badge: drawn at every horizontal scroll position (each column after
        them owns the one-cell gap before it)."""
        return self.name_w + 1 + BADGE_W

    @property
    def scroll_w(self) -> int:
        return self.placed[-1].x + self.placed[-1].width if self.placed else 0

    def at(self, x: int) -> Placed | None:
        """The column under scrolling-part offset ``x`` (gaps belong to the column before)."""
        for p in self.placed:
            if p.x <= x <= p.x + p.width:
                return p
        return None


def _width(widths: list[int]) -> int:
    return sum(widths) + len(widths)  # each column after a one-cell gap (the first after the badge)


def fit(width: int, chosen: tuple[str, ...]) -> Layout:
    """The columns ``chosen`` (in priority order) fitted to ``width`` cells: as many as fit, the
    name narrowed first, then the lowest-priority columns; whatever does not fit follows at full
    width, off the right edge."""
    columns = [COLUMNS[c] for c in chosen]
    for n in range(len(columns), -1, -1):
        shown = columns[:n]
        levels = [0] * n
        name_level = 0

        def total() -> int:
            name_w = NAME.widths[name_level]
            return name_w + 1 + BADGE_W + _width([c.widths[lv] for c, lv in zip(shown, levels)])

        while total() > width and name_level < len(NAME.widths) - 1:
            name_level += 1
        for i in range(n - 1, -1, -1):
            while total() > width and levels[i] < len(shown[i].widths) - 1:
                levels[i] += 1
        if total() <= width or n == 0:
            break
    placed, x = [], 0
    for i, column in enumerate(columns):
        level = levels[i] if i < n else 0
        w = column.widths[level]
        placed.append(Placed(column, w, level > 0, x + 1))
        x += w + 1
    return Layout(NAME.widths[name_level], tuple(placed), n)


def header_title(placed: Placed, in_bytes: bool, span: str, sort: str) -> str:
    c = placed.column
    title = c.short_title if placed.short and c.short_title else c.title
    if c.id in ("rx", "tx"):
        title = title.replace("b/s", "B/s") if placed.short else title + (" B/s" if in_bytes else "")
    if c.id == "graphs":
        half = (placed.width - GRAPH_GAP) // 2
        return f"{'RX ' + span:<{half + GRAPH_GAP}}TX {span}"
    if c.sort is not None and c.sort == sort:
        title += "▼"
    return title


def _short_rate(bits: float | None, in_bytes: bool) -> str:
    return units.rate(None) if bits is None else units.si(bits / 8 if in_bytes else bits, "").rstrip()


# positions in present.interface_cells: the words the snapshot table prints too
_KIND, _OPER, _SPEED, _DUPLEX, _MTU, _RX, _TX, _RX_PPS, _TX_PPS, _ERRORS, _DROPS, _UTIL = range(12)


def cell(placed: Placed, view: InterfaceView, in_bytes: bool, words: tuple[str, ...] | None = None) -> str:
    """Column ``placed``'s text for an interface (graphs and test come from the table):
    present.interface_cells' words (pass them in when drawing several columns of one row),
    shortened when the column is narrow."""
    words = words or interface_cells(view, in_bytes)
    c, r, short = placed.column.id, view.rates, placed.short
    if c == "oper":
        return _OPER_SHORT.get(words[_OPER], words[_OPER])
    if c == "speed":
        duplex = units.duplex(view.iface.duplex, short)
        return words[_SPEED] if duplex == units.duplex(None) else f"{words[_SPEED]} {duplex}"
    if c in ("rx", "tx") and short:
        return _short_rate(r.rx_bps if c == "rx" else r.tx_bps, in_bytes)
    if c == "pps":
        return f"{words[_RX_PPS]:>6} {words[_TX_PPS]:>6}"
    if c == "kind":
        return _KIND_SHORT.get(words[_KIND], words[_KIND][:4]) if short else words[_KIND]
    index = {"mtu": _MTU, "rx": _RX, "tx": _TX, "errors": _ERRORS, "drops": _DROPS, "util": _UTIL}.get(c)
    return "" if index is None else words[index]


# -- the column choice, kept between runs -----------------------------------------------------

def load_choice(path: Path | None, configured: tuple[str, ...]) -> tuple[str, ...]:
    """The columns picked with the column key last time, while the config's list is the one they
    were picked against; otherwise the config's. A broken state file is ignored (it is ours)."""
    if path is None:
        return configured
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        picked = tuple(data["columns"])
        if tuple(data["configured"]) == configured and picked and all(c in COLUMNS for c in picked):
            return picked
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return configured


def save_choice(path: Path | None, configured: tuple[str, ...], picked: tuple[str, ...]) -> str | None:
    """Keep the choice; the error text when it could not be written."""
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"configured": list(configured), "columns": list(picked)}), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        return f"could not keep the column choice in {path}: {exc.strerror or exc}"
    return None
