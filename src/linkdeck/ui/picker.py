"""The column picker (o): which of the dashboard's columns show. Their order stays the
priority order that ``[ui] columns`` gives."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import SelectionList

from .. import cells


class ColumnPicker(ModalScreen[tuple[str, ...] | None]):
    """Space or Enter toggles a column; Esc keeps the choice (None when nothing changed)."""

    BINDINGS = [Binding("escape,o", "done", "Done", id="columns_done")]
    DEFAULT_CSS = """
    ColumnPicker { align: center middle; }
    ColumnPicker > SelectionList { width: 100%; max-width: 72; height: auto; max-height: 100%; border: round $accent; }
    """

    def __init__(self, chosen: tuple[str, ...]) -> None:
        super().__init__()
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        order = [*self.chosen, *(c for c in cells.COLUMNS if c not in self.chosen)]
        picker = SelectionList[str](*((f"{cells.COLUMNS[c].title:<14} {cells.COLUMNS[c].help}", c, c in self.chosen) for c in order))
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
