"""The dashboard's columns fitted to the terminal's width (what each one shows, means and how
wide it is: cells.py), their headers, and the column choice kept between runs.

Pure (no textual, no rich). The layout is computed when the width or the chosen columns
change, never per cell or per tick; the table then only slices each row at fixed offsets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...core import bounded_read, cells
from ...core.cells import NAME, Column
from .sparkline import SPARK_MAX_CELLS

BADGE_W = 3  # "✖2", "⚠12": the findings badge between the name and the first column
GRAPH_GAP = 1  # between the RX and the TX sparkline inside the graphs column
MORE_W = 1  # the header's → when columns are off to the right: the layout leaves it room


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

    def window(self, x: int, rest: int) -> tuple[int, int, bool, bool]:
        """What the scrolling part shows at scroll ``x`` in ``rest`` cells: the span
        [start, end) of the whole columns that fit (a cut column is never drawn, not even its
        header's tail), and whether columns are off to the left and to the right. While more
        columns follow, the last cell stays free for the header's →."""
        last = len(self.placed) - 1
        whole = [
            i
            for i, p in enumerate(self.placed)
            if p.x >= x and p.x + p.width <= x + rest - (0 if i == last else MORE_W)
        ]
        if not whole:  # no column fits whole (a tiny terminal): show what there is
            return x, x + rest, x > 0, x + rest < self.scroll_w
        first, final = self.placed[whole[0]], self.placed[whole[-1]]
        return max(x, first.x - 1), final.x + final.width, whole[0] > 0, whole[-1] < last

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
    width, off the right edge, and leaves the header a cell for its →."""
    columns = [cells.COLUMNS[c] for c in chosen if not cells.COLUMNS[c].host_only]
    for n in range(len(columns), -1, -1):
        shown = columns[:n]
        levels = [0] * n
        name_level = 0

        def total() -> int:
            name_w = NAME.widths[name_level]
            more = MORE_W if n < len(columns) else 0
            return name_w + 1 + BADGE_W + _width([c.widths[lv] for c, lv in zip(shown, levels)]) + more

        while total() > width and name_level < len(NAME.widths) - 1:
            name_level += 1
        for i in range(n - 1, -1, -1):
            while total() > width and levels[i] < len(shown[i].widths) - 1:
                levels[i] += 1
        if total() <= width or n == 0:
            break
    # the room left over goes to the graphs, up to a cell per sample each way
    spare = width - total() if n else 0
    placed, x = [], 0
    for i, column in enumerate(columns):
        level = levels[i] if i < n else 0
        w = column.widths[level]
        if column.id == "graphs" and i < n and spare > 0:
            w = min(max(w, 2 * SPARK_MAX_CELLS + GRAPH_GAP), w + spare)
        placed.append(Placed(column, w, level > 0, x + 1))
        x += w + 1
    return Layout(NAME.widths[name_level], tuple(placed), n)


def header_title(placed: Placed, in_bytes: bool, span: str, graph_scale: str | None = None) -> str:
    """The column's name as its header shows it at its width (the help lists the same); the
    graphs' header says what a full cell is when ``graph_scale`` is given ("RX 60s (peak)")."""
    c = placed.column
    title = c.short_title if placed.short and c.short_title else c.title
    if c.units_in_title:
        if in_bytes:  # the short title says b/s already; the full one says nothing in bits
            title = title.replace("b/s", "B/s") if placed.short else title + " B/s"
    if c.id == "graphs":
        half = (placed.width - GRAPH_GAP) // 2
        rx = f"RX {span} ({graph_scale})" if graph_scale else f"RX {span}"
        return f"{rx:<{half + GRAPH_GAP}}TX {span}"
    return title


def sort_mark(sort: str) -> str:
    return "▲" if sort == "name" else "▼"  # by name A→Z; every other sort biggest first


def header_text(
    placed: Placed, in_bytes: bool, span: str, sort: str, graph_scale: str | None = None
) -> tuple[str, str]:
    """(the gap before the column, its header). A sorted column keeps its whole name: its ▼
    goes before the name, into the gap when the name fills the width."""
    c = placed.column
    title = header_title(placed, in_bytes, span, graph_scale)
    if c.sort is None or c.sort.id != sort:
        return " ", title
    if len(title) + 1 > placed.width:
        return sort_mark(sort), title
    return " ", sort_mark(sort) + title


def header_names(column: Column, span: str) -> str:
    """Every name the column's header shows (full width, then narrow), for the help."""
    shown = (header_title(Placed(column, w, level > 0, 0), False, span) for level, w in enumerate(column.widths))
    names = [" ".join(name.split()) for name in shown]  # the graphs' RX and TX, one space apart
    return " · ".join(dict.fromkeys(names)) or column.title


# -- the column choice, kept between runs -----------------------------------------------------


def load_choice(path: Path | None, configured: tuple[str, ...]) -> tuple[str, ...]:
    """The columns picked with the column key last time, while the config's list is the one they
    were picked against; otherwise the config's. A broken state file is ignored (it is ours)."""
    if path is None:
        return configured
    try:
        data = json.loads(bounded_read.read_bytes(path, bounded_read.STATE_LIMIT, "the dashboard's state file"))
        picked = tuple(data["columns"])
        if tuple(data["configured"]) == configured and picked and all(c in cells.COLUMNS for c in picked):
            return picked
    except (OSError, ValueError, KeyError, TypeError, bounded_read.TooLarge):
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
