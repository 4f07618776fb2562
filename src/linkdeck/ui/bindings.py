"""The one table of keys: footer, help screen and command palette all read it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class Key:
    id: str
    key: str
    action: str
    description: str  # short, for the footer and the palette title
    help: str  # one sentence, for the help screen and the palette
    show: bool = True  # in the footer
    palette: bool = True  # offered in the command palette


APP_KEYS = (
    Key("quit", "q", "quit", "Quit", "Leave linkdeck."),
    Key("help", "question_mark", "help", "Help", "Show every key and what it does."),
    Key("filter", "slash", "filter", "Filter", "Show only interfaces whose name contains the text typed (Esc clears)."),
    Key("clear_filter", "escape", "clear_filter", "Clear filter", "Clear the name filter.", show=False),
    Key("sort", "s", "cycle_sort", "Sort", "Cycle the sort: name, RX, TX, utilisation, errors+drops."),
    Key("units", "b", "toggle_units", "Bits/bytes", "Show rates in bit/s or in bytes/s."),
    Key("hide", "h", "toggle_hidden", "Hide idle", "Hide or show loopback and down interfaces."),
    Key("findings", "f", "toggle_findings", "Findings", "Show or hide the findings pane."),
    Key("test", "t", "probe('test')", "Test", "Run a throughput test from the selected interface's host."),
    Key("matrix", "m", "probe('matrix')", "Matrix", "Test every pair of hosts."),
    Key("ceiling", "c", "probe('ceiling')", "Ceiling", "Measure the selected host's own ceiling (loopback test)."),
    Key("palette", "ctrl+p", "command_palette", "Palette", "Open the command palette.", show=False, palette=False),
)

TABLE_KEYS = (
    Key("details", "enter", "select", "Details", "Details of the selected interface or host (or trust its new key); a click selects, a second click opens.", palette=False),
    Key("cursor_up", "up,k", "cursor(-1)", "Up", "Move the selection up.", show=False, palette=False),
    Key("cursor_down", "down,j", "cursor(1)", "Down", "Move the selection down.", show=False, palette=False),
    Key("page_up", "pageup", "page(-1)", "Page up", "Move the selection a page up.", show=False, palette=False),
    Key("page_down", "pagedown", "page(1)", "Page down", "Move the selection a page down.", show=False, palette=False),
    Key("first", "home", "cursor_to(0)", "First", "Select the first row.", show=False, palette=False),
    Key("last", "end", "cursor_to(-1)", "Last", "Select the last row.", show=False, palette=False),
)


def to_bindings(keys: tuple[Key, ...]) -> list[Binding]:
    return [Binding(k.key, k.action, k.description, show=k.show, id=k.id) for k in keys]


def key_label(key: str) -> str:
    names = {"question_mark": "?", "slash": "/", "escape": "Esc", "enter": "Enter", "pageup": "PgUp", "pagedown": "PgDn"}
    return " ".join(names.get(part, part) for part in key.split(","))
