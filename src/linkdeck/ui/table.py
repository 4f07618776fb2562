"""The interface table: a Line API widget that draws only the rows on screen.

Drawing is where a Python TUI spends its CPU, so this widget does as little of it as it can:
- ``render_line`` is asked only for visible lines; sparklines and cell text are computed only
  for those rows;
- each row's Strip is cached under its content (the cell texts, the selection, the base
  style), so a row whose numbers did not change is never rebuilt;
- after new rows arrive, only the screen lines whose content changed are refreshed; an update
  that changes nothing on screen draws nothing.
"""

from __future__ import annotations

from typing import Callable

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..model import HostState, Severity
from .bindings import TABLE_KEYS, to_bindings
from ..present import interface_cells
from .rows import RateHistory, Row, RowKey, clean, host_summary, name_cell
from .sparkline import spark

# (title, width, align, sort id that this column shows)
COLUMNS = (
    ("Interface", 20, "l", "name"),
    ("!", 4, "l", None),
    ("Kind", 8, "l", None),
    ("Oper", 7, "l", None),
    ("Speed", 5, "r", None),
    ("Dup", 4, "l", None),
    ("MTU", 5, "r", None),
    ("RX", 10, "r", "rx"),
    ("TX", 10, "r", "tx"),
    ("RX pps", 7, "r", None),
    ("TX pps", 7, "r", None),
    ("Err/s", 6, "r", "errors"),
    ("Drop/s", 6, "r", "errors"),
    ("Util", 5, "r", "util"),
    ("RX graph", 15, "l", None),  # the header names the span: "RX 60s"
    ("TX graph", 15, "l", None),
    ("Last test", 12, "l", None),
)
SPARK_WIDTH = COLUMNS[-2][1]
TOTAL_WIDTH = sum(c[1] for c in COLUMNS) + len(COLUMNS) - 1
_NAME_W, _BADGE_W = COLUMNS[0][1], COLUMNS[1][1]

_HEADER = Style(bold=True, underline=True)
_HOST = Style(bold=True)
_DIM = Style(dim=True)
_SPARK_RX = Style(color="cyan")
_SPARK_TX = Style(color="magenta")
_SEVERITY = {
    Severity.ERROR: Style(color="white", bgcolor="red", bold=True),
    Severity.WARNING: Style(color="black", bgcolor="yellow"),
    Severity.INFO: Style(color="white", bgcolor="blue"),
}
_OPER = {"up": Style(color="green"), "down": Style(color="red"), "lowerlayerdown": Style(color="red")}
_STATE = {
    HostState.LIVE: Style(color="green"),
    HostState.CONNECTING: Style(color="yellow"),
    HostState.RECONNECTING: Style(color="yellow"),
    HostState.UNREACHABLE: Style(color="red"),
    HostState.AUTH_FAILED: Style(color="red", bold=True),
    HostState.HOST_KEY_UNKNOWN: Style(color="yellow", bold=True),
    HostState.HOST_KEY_CHANGED: Style(color="red", bold=True),
    HostState.ERROR: Style(color="red"),
}
_SELECTED = Style(reverse=True)
_VERDICT_OK = Style(color="green", bold=True)
_VERDICT_BAD = Style(color="yellow", bold=True)
_HOT = Style(color="red", bold=True)  # non-zero errors/drops, utilisation ≥ 90 %


def _cell_style(title: str, text: str) -> Style | None:
    if title == "Oper":
        return _OPER.get(text)
    if title == "RX graph":
        return _SPARK_RX
    if title == "TX graph":
        return _SPARK_TX
    if title == "Last test":
        return None if not text.strip() else _VERDICT_OK if text.startswith("OK") else _VERDICT_BAD
    if text == "—":
        return _DIM
    if title in ("Err/s", "Drop/s") and text != "0":
        return _HOT
    if title == "Util" and text.endswith("%") and float(text[:-1]) >= 90:
        return _HOT
    return None


def _combine(base: Style, style: Style | None, selected: Style | None) -> Style:
    combined = base + style if style is not None else base
    return combined + selected if selected is not None else combined


def _fit(text: str, width: int, align: str) -> str:
    if len(text) > width:
        return set_cell_size(text[: width - 1] + "…", width)
    return set_cell_size(text.rjust(width) if align == "r" else text, width)


class InterfaceTable(ScrollView, can_focus=True):
    """Rows of :class:`~linkdeck.ui.rows.Row` under a fixed header line."""

    BINDINGS = to_bindings(TABLE_KEYS)
    DEFAULT_CSS = "InterfaceTable { height: 1fr; }"

    class Selected(Message):
        def __init__(self, row: Row) -> None:
            super().__init__()
            self.row = row

    def __init__(self, history: RateHistory, *, annotate: Callable[[str, str], str | None] | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history = history
        self.annotate = annotate  # (host, interface) → the last test's short verdict, or None
        self.rows: list[Row] = []
        self.in_bytes = False
        self.sort = "name"
        self.cursor = 0
        self._index: dict[RowKey, int] = {}
        self._cells: dict[RowKey, tuple] = {}  # row key → (view/update object, flags, cells)
        self._strips: dict[RowKey, tuple] = {}  # row key → (content key, Strip)
        self._drawn: dict[int, object] = {}  # screen line → content key last drawn there
        self.lines_rendered = 0  # for tests and the benchmark: Strips actually built
        self._base: Style | None = None  # rich_style walks every ancestor: computed once

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None

    # -- data in -------------------------------------------------------------------------

    def set_rows(self, rows: list[Row]) -> None:
        old_key = self.rows[self.cursor].key if self.rows else None
        self.rows = rows
        self._index = {row.key: i for i, row in enumerate(rows)}
        if old_key in self._index:
            self.cursor = self._index[old_key]
        self.cursor = max(0, min(self.cursor, len(rows) - 1))
        live = self._index.keys()
        for cache in (self._cells, self._strips):
            for key in [k for k in cache if k not in live]:
                del cache[key]
        height = len(rows) + 1
        if self.virtual_size.height != height:
            self.virtual_size = Size(TOTAL_WIDTH, height)
        self._refresh_changed()

    def set_display(self, *, in_bytes: bool | None = None, sort: str | None = None) -> None:
        if in_bytes is not None:
            self.in_bytes = in_bytes
        if sort is not None:
            self.sort = sort
        self.refresh()

    @property
    def selected(self) -> Row | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def select_key(self, key: RowKey) -> bool:
        if key not in self._index:
            return False
        self._move_to(self._index[key])
        return True

    def row_text(self, index: int) -> str:
        """The plain text row ``index`` draws as (for tests)."""
        content = self._content_key(index)
        if content is None:
            return ""
        return self._build(self.rows[index], content[0], content[2], Style()).text

    def row_strip(self, index: int) -> Strip:
        content = self._content_key(index)
        return self._build(self.rows[index], content[0], content[2], Style())

    # -- what a line shows ---------------------------------------------------------------

    def _row_cells(self, row: Row) -> tuple:
        source = row.update if row.is_host else row.view
        verdict = self.annotate(row.host, row.view.iface.name) if self.annotate and row.view else None
        flags = (row.depth, row.badge, self.in_bytes, verdict)
        cached = self._cells.get(row.key)
        if cached is not None and cached[0] is source and cached[1] == flags:
            return cached[2]
        if row.is_host:
            cells: tuple = (name_cell(row), host_summary(row.update), row.update.state)
        else:
            rx, tx = self.history.get(row.host, row.view.iface.name)
            try:
                cells = (
                    name_cell(row),
                    *interface_cells(row.view, self.in_bytes),
                    spark(rx, SPARK_WIDTH),
                    spark(tx, SPARK_WIDTH),
                    clean(verdict or ""),
                )
            except (ValueError, OverflowError, TypeError) as exc:  # a value no formatter expected
                self.log.error(f"row {row.key!r} not formattable: {exc!r}")
                cells = (name_cell(row), *["?"] * (len(COLUMNS) - 2))
        self._cells[row.key] = (source, flags, cells)
        return cells

    def _content_key(self, index: int) -> object:
        if not 0 <= index < len(self.rows):
            return None
        row = self.rows[index]
        return (self._row_cells(row), row.badge, index == self.cursor and self.has_focus)

    def _refresh_changed(self) -> None:
        """Refresh only the screen lines whose content differs from what was drawn there."""
        top = int(self.scroll_offset.y)
        width = self.size.width
        start = None  # runs of adjacent changed lines become one region: fewer compositor cuts
        for y in range(1, self.size.height + 1):
            changed = y < self.size.height and self._content_key(top + y - 1) != self._drawn.get(y, ())
            if changed and start is None:
                start = y
            elif not changed and start is not None:
                self.refresh(Region(0, start, width, y - start))
                start = None

    # -- drawing -------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self._base
        if base is None:
            base = self._base = self.rich_style
        if y == 0:
            strip = self._header(base)
        else:
            index = scroll_y + y - 1
            content = self._content_key(index)
            self._drawn[y] = content
            if content is None:
                return Strip.blank(width, base)
            row = self.rows[index]
            key = (content, base)
            cached = self._strips.get(row.key)
            if cached is not None and cached[0] == key:
                strip = cached[1]
            else:
                strip = self._build(row, content[0], content[2], base)
                self._strips[row.key] = (key, strip)
                self.lines_rendered += 1
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _header(self, base: Style) -> Strip:
        segments = []
        for title, width, align, sort in COLUMNS:
            if sort == self.sort:
                title += "▲" if sort == "name" else "▼"
            if title in ("RX", "TX") and self.in_bytes:
                title += " B/s"
            if title.endswith(" graph"):
                title = f"{title[:2]} {self.history.span}"
            segments += [Segment(_fit(title, width, align), base + _HEADER), Segment(" ", base)]
        return Strip(segments[:-1])

    def _build(self, row: Row, cells: tuple, selected: bool, base: Style) -> Strip:
        # Adjacent cells with the same style are joined into one Segment: a row is ~8
        # segments instead of ~32, which every later stage (crop, filters, escape codes) sees.
        parts: list[tuple[str, Style | None]] = [(_fit(cells[0], _NAME_W, "l") + " ", _HOST if row.is_host else None)]
        badge = row.badge
        if badge:
            parts += [(_fit(badge.text, _BADGE_W, "l"), _SEVERITY[badge.severity]), (" ", None)]
        else:
            parts.append((" " * (_BADGE_W + 1), None))
        if row.is_host:
            parts.append((cells[1], _STATE.get(cells[2])))
        else:
            last = len(COLUMNS) - 3
            for n, ((title, width, align, _), text) in enumerate(zip(COLUMNS[2:], cells[1:])):
                parts.append((_fit(text, width, align), _cell_style(title, text)))
                if n != last:
                    parts.append((" ", None))
        sel = _SELECTED if selected else None
        segments: list[Segment] = []
        run: list[str] = []
        run_style = parts[0][1]
        for text, style in parts:
            if style is not run_style:
                segments.append(Segment("".join(run), _combine(base, run_style, sel)))
                run, run_style = [], style
            run.append(text)
        segments.append(Segment("".join(run), _combine(base, run_style, sel)))
        return Strip(segments)

    # -- cursor --------------------------------------------------------------------------

    def _move_to(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        self.cursor = index
        visible = max(1, self.size.height - 1)
        top = int(self.scroll_offset.y)
        if index < top:
            self.scroll_to(y=index, animate=False)
        elif index >= top + visible:
            self.scroll_to(y=index - visible + 1, animate=False)
        self._refresh_changed()

    def action_cursor(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, delta: int) -> None:
        self._move_to(self.cursor + delta * max(1, self.size.height - 2))

    def action_cursor_to(self, index: int) -> None:
        self._move_to(index if index >= 0 else len(self.rows) - 1)

    def action_select(self) -> None:
        if self.selected is not None:
            self.post_message(self.Selected(self.selected))

    def on_click(self, event) -> None:
        """A click selects the row; a double click, or a click on the row already selected,
        opens its details (as Enter does)."""
        if event.y < 1:
            return
        index = int(self.scroll_offset.y) + int(event.y) - 1
        if not 0 <= index < len(self.rows):
            return
        again = index == self.cursor and self.has_focus
        self._move_to(index)
        if again or event.chain >= 2:
            self.action_select()

    def on_focus(self) -> None:
        self._refresh_changed()

    def on_blur(self) -> None:
        self._refresh_changed()
