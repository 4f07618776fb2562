"""The help screen: every key from the bindings table."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .bindings import APP_KEYS, TABLE_KEYS, key_label


def keys_table() -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for k in (*APP_KEYS, *TABLE_KEYS):
        table.add_row(key_label(k.key), k.help)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="close_help")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; height: auto; max-height: 90%; border: round $accent; padding: 1 2; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("[b]linkdeck keys[/b]  (Esc closes)\n")
            yield Static(keys_table(), id="help-keys")
            yield Static(
                "\nRows: a host, then its interfaces; vlan/vnic sit under what they run on, bond "
                "members under the bond. [b]*[/b] marks the interface carrying the default route. "
                "Rates are per second over the last tick; — means unknown."
            )
