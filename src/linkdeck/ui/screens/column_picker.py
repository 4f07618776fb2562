"""The column picker (o): which of the dashboard's columns show. Their order stays the
priority order that ``[ui] columns`` gives; the list itself keeps one order between openings
(the configured columns, then the rest), each line marked ``[x]`` or ``[ ]`` so on and off read
without colour."""

from __future__ import annotations

from rich.segment import Segment
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import SelectionList
from textual.widgets.option_list import OptionDoesNotExist

from ...core import cells


class CheckList(SelectionList[str]):
    """A SelectionList whose toggle reads ``[x]`` / ``[ ]``: its own button is a coloured block."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        try:
            selection = self.get_option_at_index(self.scroll_offset[1] + y)
        except OptionDoesNotExist:
            return strip
        if len(segments) < 4:
            return strip
        plain = segments[3].style  # the space after the button: the line's own style
        mark = "x" if selection.value in self.selected else " "
        segments[:3] = [Segment("[", plain), Segment(mark, plain), Segment("]", plain)]
        return Strip(segments, strip.cell_length)


class ColumnPicker(ModalScreen[tuple[str, ...] | None]):
    """Space or Enter toggles a column; Esc keeps the choice (None when nothing changed)."""

    BINDINGS = [Binding("escape,o", "done", "Done", id="columns_done")]
    DEFAULT_CSS = """
    ColumnPicker { align: center middle; }
    ColumnPicker > CheckList { width: 100%; max-width: 72; height: auto; max-height: 100%; border: round $accent; }
    """

    def __init__(self, chosen: tuple[str, ...], configured: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.chosen = chosen
        self.configured = configured

    def compose(self) -> ComposeResult:
        # not the chosen first: a column turned off would jump to the bottom on the next opening
        order = [*self.configured, *(c for c in cells.COLUMNS if c not in self.configured)]
        picker = CheckList(
            *((f"{cells.COLUMNS[c].title:<14} {cells.COLUMNS[c].help}", c, c in self.chosen) for c in order)
        )
        picker.border_title = "Columns (Space toggles, Esc keeps)"
        yield picker

    def action_done(self) -> None:
        picked = set(self.query_one(SelectionList).selected)
        # the order stays the priority order the user had; newly picked ones go where the
        # default order puts them
        kept = [c for c in self.chosen if c in picked]
        for c in cells.COLUMNS:
            if c in picked and c not in kept:
                kept.insert(sum(1 for k in kept if list(cells.COLUMNS).index(k) < list(cells.COLUMNS).index(c)), c)
        if not kept:
            self.notify("Keep at least one column (the names always show).", severity="warning")
            return
        result = tuple(kept)
        self.dismiss(None if result == self.chosen else result)
