"""The help screen: every key from the bindings table, every mark and colour from the legend,
every column from the column table."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...core import cells
from ..bindings import APP_KEYS, TABLE_KEYS, key_label
from ..widgets.columns import header_names
from ..widgets.marks import LEGEND


def _two_columns() -> Table:
    # the right column wraps at word boundaries under itself, never under the left one
    table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1, overflow="fold")
    return table


def keys_table() -> Table:
    table = _two_columns()
    for k in (*APP_KEYS, *TABLE_KEYS):
        table.add_row(Text(key_label(k.key), style="bold cyan"), Text(k.help))
    return table


def legend_table() -> Table:
    table = _two_columns()
    for sample, style, meaning in LEGEND:
        table.add_row(Text(sample, style=style or ""), Text(meaning))
    return table


def columns_table(span: str) -> Table:
    """Each column under the names its header shows (``span``: the graphs' time span)."""
    table = _two_columns()
    for column in (cells.NAME, *cells.COLUMNS.values()):
        names = column.title if column is cells.NAME else header_names(column, span)
        table.add_row(Text(names, style="bold"), Text(column.help))
    return table


def help_body(span: str) -> Group:
    return Group(
        Text("Keys", style="bold underline"),
        keys_table(),
        Text("\nMarks and colours", style="bold underline"),
        legend_table(),
        Text("\nColumns", style="bold underline"),
        columns_table(span),
        Text(
            "\nRates are per second over the last interval. A narrow terminal shows the first "
            "columns that fit (o picks them); → scrolls to the rest while names stay."
        ),
    )


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="close_help")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 100%; max-width: 100; height: auto; max-height: 100%;
        border: round $accent; padding: 0 1; background: $surface;
    }
    """

    def __init__(self, span: str) -> None:
        super().__init__()
        self.span = span  # the graphs' header says it ("RX 60s")

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "linkdeck help"
            scroll.border_subtitle = "↑↓ PgUp PgDn scroll · Esc closes"
            yield Static(help_body(self.span), id="help-body")
