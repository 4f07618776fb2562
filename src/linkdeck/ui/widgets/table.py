"""The interface table: a Line API widget that draws only the rows on screen.

Drawing is where a Python TUI spends its CPU, so this widget does as little of it as it can:
- ``render_line`` is asked only for visible lines; sparklines and cell text are computed only
  for those rows;
- each row's Strip is cached under its content (the cell texts, the selection, the base
  style), so a row whose numbers did not change is never rebuilt;
- after new rows arrive, only the screen lines whose content changed are refreshed; an update
  that changes nothing on screen draws nothing;
- the columns are fitted to the width (columns.fit) when the width or the chosen columns
  change, never per tick; a row is two strips, the frozen name and badge and the part that
  scrolls sideways, joined at the current scroll position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core import cells as registry  # the columns (a test adds one there
from ...core.cells import NAME
from ...core.levels import Status
from ...core.model import HostUpdate
from ...present.outcome import last_test_cell
from ..bindings import TABLE_KEYS, to_bindings
from ..state.rows import FOLD_NOTE, Badge, RateHistory, Row, RowKey, clean, host_summary, name_cell
from ..state.view_state import ViewState
from .columns import BADGE_W, GRAPH_GAP, Placed, fit, header_text, sort_mark
from .marks import (
    DIM,
    HEADER,
    HOST,
    SELECTED,
    SPARK_RX,
    SPARK_TX,
    STATE_STYLE,
    cell_style,
    fit_text,
    join_strip,
    word_style,
)
from .sparkline import spark, spark_top

if TYPE_CHECKING:
    from ...probe import Outcome


# what a row line is drawn from: its cells, its badge, whether it is selected, whether it is stale
Content = tuple[tuple, Badge | None, bool, bool]


class _KeptCells(NamedTuple):
    """A row's cells, kept while what they are made of is the same (_row_cells)."""

    source: object  # the view, the host's views, None for a fold: compared by identity
    flags: tuple  # everything else the cells read but the graphs: compared by value
    graphs: tuple  # what an interface row's graphs cell reads: its history, its host's peak
    cells: tuple


class _KeptStrips(NamedTuple):
    """A row's drawn line, kept while its content and the widget's style are the same."""

    key: tuple  # (Content, the base Style)
    frozen: Strip
    scrolling: Strip


MORE = Style(bold=True)  # the header's ← and →: not underlined like a column's name


def _blanked(strip: Strip, style: Style | None) -> Strip:
    """The cells of ``strip`` as spaces, in ``style`` or each in its own."""
    return Strip([Segment(" " * seg.cell_length, style or seg.style) for seg in strip if seg.text])


def _summary_facts(update: HostUpdate) -> tuple:
    """What rows.host_summary reads of a host's update besides its views (kept by identity)."""
    return (
        update.host,
        update.os,
        update.os_detail,
        update.state,
        update.error,
        update.detail,
        update.stale,
        update.received if update.stale else None,  # "data as of" once stale
    )


class InterfaceTable(ScrollView, can_focus=True):
    """Rows of :class:`~linkdeck.ui.state.rows.Row` under a fixed header line; the name and badge
    stay put while the other columns scroll sideways (host rows do not scroll at all)."""

    BINDINGS = to_bindings(TABLE_KEYS)
    DEFAULT_CSS = "InterfaceTable { height: 1fr; scrollbar-size-vertical: 1; }"

    class Selected(Message):
        def __init__(self, row: Row) -> None:
            super().__init__()
            self.row = row

    class SortBy(Message):
        """A click on a column header."""

        def __init__(self, sort: str) -> None:
            super().__init__()
            self.sort = sort

    def __init__(
        self,
        history: RateHistory,
        view: ViewState,
        *,
        annotate: Callable[[str, str], "Outcome | None"] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.history = history
        self.view = view  # the app's: sort, units, folds and columns are read from it, never copied
        self.annotate = annotate  # (host, interface) → the last test from there, or None
        self.rows: list[Row] = []
        self.cursor = 0
        self.column_layout = fit(80, view.columns)  # until the first Resize gives the real width
        self._fitted_to: tuple | None = None  # (width, columns) the layout was computed for
        self.layouts_computed = 0  # for tests and the benchmark
        self._index: dict[RowKey, int] = {}
        self._cells: dict[RowKey, _KeptCells] = {}
        self._strips: dict[RowKey, _KeptStrips] = {}
        self._drawn: dict[int, Content | None] = {}  # screen line → content key last drawn there
        self.lines_rendered = 0  # for tests and the benchmark: Strips actually built
        self._base: Style | None = None  # rich_style walks every ancestor: computed once

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None

    # -- layout: once per width or column change -------------------------------------------

    def _relayout(self) -> None:
        width = self.view_width
        columns = self.view.columns
        if (width, columns) == self._fitted_to or width <= 0:
            return
        self._fitted_to = (width, columns)
        self.column_layout = fit(width, columns)
        self.layouts_computed += 1
        self._cells.clear()
        self._strips.clear()
        self._drawn.clear()
        self._size_virtual()
        self.refresh()

    def _size_virtual(self) -> None:
        # wide enough that the last column stop is reachable: its columns start right after the name
        rest = self.view_width - self.column_layout.frozen_w
        wide = max(self.column_layout.scroll_w, self._column_stops()[-1] + rest)
        size = Size(self.column_layout.frozen_w + wide, len(self.rows) + 1)
        if self.virtual_size != size:
            self.virtual_size = size

    def on_resize(self) -> None:
        self._relayout()

    def watch_show_vertical_scrollbar(self) -> None:
        # rows outgrew the screen (or fit again): the columns get one cell less (or more),
        # and no Resize says so
        self.call_after_refresh(self._relayout)

    def view_changed(self) -> None:
        """The app changed the view: new columns need a new layout; units and sort redraw."""
        self._relayout()
        self.refresh()

    # -- data in -------------------------------------------------------------------------

    def set_rows(self, rows: list[Row]) -> None:
        old_key = self.rows[self.cursor].key if self.rows else None
        self.rows = rows
        self._index = {row.key: i for i, row in enumerate(rows)}
        if old_key in self._index:
            self.cursor = self._index[old_key]
        elif old_key is not None and ("host", old_key[1]) in self._index:  # its host was folded
            self.cursor = self._index[("host", old_key[1])]
        self.cursor = max(0, min(self.cursor, len(rows) - 1))
        live = self._index.keys()
        for cache in (self._cells, self._strips):
            for key in [k for k in cache if k not in live]:
                del cache[key]
        self._size_virtual()
        self._refresh_changed()

    @property
    def selected(self) -> Row | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def select_key(self, key: RowKey) -> bool:
        if key not in self._index:
            return False
        self._move_to(self._index[key])
        return True

    def row_text(self, index: int) -> str:
        """The plain text row ``index`` draws as, all columns (for tests)."""
        content = self._content_key(index)
        if content is None:
            return ""
        return self.row_strip(index).text

    def row_strip(self, index: int) -> Strip:
        """Row ``index`` as drawn unscrolled, all columns (for tests)."""
        content = self._content_key(index)
        if content is None:
            raise IndexError(f"no row {index}")
        return Strip.join(self._build(self.rows[index], content[0], content[2], Style()))

    def screen_text(self, y: int) -> str:
        """The plain text screen line ``y`` shows now, at the current scroll (for tests)."""
        return self.render_line(y).text

    # -- what a line shows ---------------------------------------------------------------

    def _row_cells(self, row: Row) -> tuple:
        # Cells are kept while what they are made of is the same: an interface row's view (the
        # rate tracker hands on an unchanged one) and its graph's history, the graph alone
        # redrawn when only the history moved (an idle link's graph fills over the first
        # minute); a host row's views and what its summary reads of the update (a new update
        # every sample, most of it the same); a fold row's names.
        source: object = row.view
        verdict: tuple[str, Status] | None = None
        in_bytes = self.view.in_bytes
        inputs: tuple = ()
        graphs: tuple = ()
        said: list = []
        if row.view is not None:
            name = row.view.iface.name
            outcome = self.annotate(row.host, name) if self.annotate else None
            if outcome:
                verdict = (last_test_cell(outcome, row.host, name), outcome.verdict.status)
            if "graphs" in self.view.columns:  # they move with the history under a view kept as it was
                graphs = (self.history.get(row.host, name), self.history.host_peak(row.host))
        elif row.fold is None:
            source = row.update.interfaces
            said = registry.host_cells(row.update, in_bytes, (registry.COLUMNS[c] for c in self.view.columns))
            inputs = (_summary_facts(row.update), tuple(said))
        folded = row.host in self.view.folded
        flags = (row.depth, row.flat, row.badge, in_bytes, verdict, folded, row.fold, self.view.graph_scale, inputs)
        cached = self._cells.get(row.key)
        if cached is not None and cached.source is source and cached.flags == flags:
            if cached.graphs == graphs:
                return cached.cells
            cells = self._new_graphs(cached.cells, row, graphs)
        elif row.fold is not None:
            cells = (name_cell(row), FOLD_NOTE, None)
        elif row.is_host:
            # what the shown columns say about the whole host follows its summary
            summary = host_summary(row.update, in_bytes) + "".join(f" · {c.title} {text}" for c, text in said)
            cells = (name_cell(row, folded), summary, row.update.state)
        else:
            try:
                cells = (name_cell(row), *(self._cell(p, row, verdict, graphs) for p in self.column_layout.placed))
            except (ValueError, OverflowError, TypeError) as exc:  # a value no formatter expected
                self.log.error(f"row {row.key!r} not formattable: {exc!r}")
                cells = (name_cell(row), *[("?", None)] * len(self.column_layout.placed))
        self._cells[row.key] = _KeptCells(source, flags, graphs, cells)
        return cells

    def _new_graphs(self, cells: tuple, row: Row, graphs: tuple) -> tuple:
        """``cells`` of an interface row whose view is the same, with its graphs drawn anew."""
        out = list(cells)
        for i, placed in enumerate(self.column_layout.placed, start=1):
            if placed.column.id == "graphs":
                out[i] = self._graphs_cell(placed, row, graphs)
        return tuple(out)

    def _cell(self, placed: Placed, row: Row, verdict: tuple[str, Status] | None, graphs: tuple) -> tuple:
        """(text, style) of one cell; the graphs' text is the (RX, TX) sparklines."""
        view = row.view
        assert view is not None, "only an interface row has cells"  # _row_cells draws the others whole
        if placed.column.id == "graphs":
            return self._graphs_cell(placed, row, graphs)
        if placed.column.id == "test":
            return clean(verdict[0]) if verdict else "", word_style(verdict[1]) if verdict else None
        text = placed.column.text(view, self.view.in_bytes, placed.short)
        return text, cell_style(placed.column, view, text)

    def _graphs_cell(self, placed: Placed, row: Row, graphs: tuple) -> tuple:
        """The (RX, TX) sparklines of an interface row, from its history and its host's peak."""
        assert row.view is not None
        (rx, tx), host_peak = graphs
        half = (placed.width - GRAPH_GAP) // 2
        own = max((v for v in (*rx, *tx) if v is not None), default=None)
        top = spark_top(row.view.iface.speed_mbps, host_peak, own, self.view.graph_scale)
        size = self.history.size
        return (spark(rx, half, top, size), spark(tx, half, top, size)), None

    def _content_key(self, index: int) -> Content | None:
        if not 0 <= index < len(self.rows):
            return None
        row = self.rows[index]
        return (self._row_cells(row), row.badge, index == self.cursor and self.has_focus, row.update.stale)

    def _refresh_changed(self) -> None:
        """Refresh only the screen lines whose content differs from what was drawn there."""
        top = int(self.scroll_offset.y)
        width = self.view_width  # the scrollbar beside the lines has not changed
        start = None  # runs of adjacent changed lines become one region: fewer compositor cuts
        for y in range(1, self.size.height + 1):
            changed = y < self.size.height and self._content_key(top + y - 1) != self._drawn.get(y, ())
            if changed and start is None:
                start = y
            elif not changed and start is not None:
                self.refresh(Region(0, start, width, y - start))
                start = None

    # -- drawing -------------------------------------------------------------------------

    @property
    def view_width(self) -> int:
        """The cells the columns get: the width beside the vertical scrollbar, when it shows."""
        return self.scrollable_content_region.width or self.size.width

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.view_width
        base = self._base
        if base is None:
            base = self._base = self.rich_style
        if y == 0:
            frozen, scrolling = self._header(base)
            is_host = False
        else:
            index = scroll_y + y - 1
            content = self._content_key(index)
            self._drawn[y] = content
            if content is None:
                return Strip.blank(width, base)
            row = self.rows[index]
            is_host = row.view is None  # a host's or a fold's summary does not scroll
            key = (content, base)
            cached = self._strips.get(row.key)
            if cached is not None and cached.key == key:
                frozen, scrolling = cached.frozen, cached.scrolling
            else:
                frozen, scrolling = self._build(row, content[0], content[2], base)
                self._strips[row.key] = _KeptStrips(key, frozen, scrolling)
                self.lines_rendered += 1
        rest = width - self.column_layout.frozen_w
        if rest <= 0:
            return frozen.crop_extend(0, width, base)
        if is_host:  # a host row's summary does not scroll away
            return Strip.join([frozen, scrolling.crop_extend(0, rest, base)])
        start, end, left, right = self.column_layout.window(scroll_x, rest)
        shown = scrolling.crop_extend(start, end, base)
        blank = base if y == 0 else None  # a row's blanks keep its own style (a selected row stays one bar)
        parts = [
            frozen,
            _blanked(scrolling.crop_extend(scroll_x, start, base), blank),
            shown,
            _blanked(scrolling.crop_extend(end, scroll_x + rest, base), blank),
        ]
        if y == 0 and (left or right):
            # the header says where more columns are: ← at the frozen part's edge, → after the last
            if left:
                parts[0] = Strip.join(
                    [frozen.crop(0, frozen.cell_length - 2), Strip([Segment("←", base + MORE), Segment(" ", base)])]
                )
            room = scroll_x + rest - end
            if right and room > 0:
                parts[3] = Strip([Segment(" " * min(1, room - 1), base), Segment("→", base + MORE)]).extend_cell_length(
                    room, base
                )
        return Strip.join(parts)

    def _header(self, base: Style) -> tuple[Strip, Strip]:
        style = base + HEADER
        sort = self.view.sort
        title = NAME.title + (sort_mark(sort) if sort == "name" else "")
        frozen = Strip([Segment(fit_text(title, self.column_layout.name_w), style), Segment(" " * (BADGE_W + 1), base)])
        segments = []
        for p in self.column_layout.placed:
            gap, text = header_text(p, self.view.in_bytes, self.history.span, sort, self.view.graph_scale)
            segments += [
                Segment(gap, base if gap == " " else style),
                Segment(fit_text(text, p.width, p.column.align), style),
            ]
        return frozen, Strip(segments)

    def _build(self, row: Row, cells: tuple, selected: bool, base: Style) -> tuple[Strip, Strip]:
        sel = SELECTED if selected else None
        layout = self.column_layout
        badge = row.badge
        frozen = [
            (
                fit_text(cells[0], layout.name_w) + " ",
                HOST if row.is_host else DIM if row.update.stale or row.fold else None,
            )
        ]
        if badge:
            frozen.append((fit_text(badge.text, BADGE_W), word_style(badge.severity)))
        else:
            frozen.append((" " * BADGE_W, None))
        if row.view is None:
            # padded to the row's width, so a selected host row is one bar like the others
            summary = (" " + cells[1]).ljust(layout.scroll_w)
            style = STATE_STYLE.get(cells[2]) if row.is_host else DIM
            return join_strip(frozen, base, sel), join_strip([(summary, style)], base, sel)
        parts: list[tuple[str, Style | None]] = []
        stale = row.update.stale  # facts as of the last sample, dimmed; no colour says "live"
        for p, (text, style) in zip(layout.placed, cells[1:]):
            parts.append((" ", None))
            if p.column.id == "graphs":
                rx, tx = text
                parts += [
                    (rx, DIM if stale else SPARK_RX),
                    (" " * (p.width - len(rx) - len(tx)), None),
                    (tx, DIM if stale else SPARK_TX),
                ]
            else:
                parts.append((fit_text(text, p.width, p.column.align), DIM if stale else style))
        return join_strip(frozen, base, sel), join_strip(parts, base, sel)

    # -- sideways ------------------------------------------------------------------------

    def _column_stops(self) -> list[int]:
        """Scroll positions that put a column's left edge right after the frozen name, up to the
        first from which every column left fits."""
        layout = self.column_layout
        rest = self.view_width - layout.frozen_w
        stops = []
        for p in layout.placed:
            stops.append(p.x - 1)
            if layout.scroll_w - (p.x - 1) <= rest:
                break
        return stops or [0]

    def action_scroll_columns(self, delta: int) -> None:
        x = int(self.scroll_offset.x)
        stops = self._column_stops()
        ahead = [s for s in stops if s > x] if delta > 0 else [s for s in reversed(stops) if s < x]
        if ahead:
            self.scroll_to(x=ahead[0], animate=False)

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
        """A click on a header sorts by its column; on a row it selects the row; a double click,
        or a click on the row already selected, opens it (as Enter does)."""
        if event.y < 1:
            self._header_clicked(int(event.x))
            return
        index = int(self.scroll_offset.y) + int(event.y) - 1
        if not 0 <= index < len(self.rows):
            return
        again = index == self.cursor and self.has_focus
        self._move_to(index)
        if again or event.chain >= 2:
            self.action_select()

    def _header_clicked(self, x: int) -> None:
        if x < self.column_layout.name_w:
            sort: str | None = "name"
        else:
            placed = self.column_layout.at(x - self.column_layout.frozen_w + int(self.scroll_offset.x))
            sort = placed.column.sort.id if placed and placed.column.sort else None
        if sort is not None:
            self.post_message(self.SortBy(sort))

    def on_focus(self) -> None:
        self._refresh_changed()

    def on_blur(self) -> None:
        self._refresh_changed()
