"""The one table of keys: footer, help screen and command palette all read it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType

from .state.idle import BUSY_BPS, IDLE_S


@dataclass(frozen=True, slots=True)
class Key:
    id: str
    key: str
    action: str
    description: str  # short, for the footer and the palette title
    help: str  # one sentence, for the help screen and the palette
    show: bool = True  # in the footer
    palette: bool = True  # offered in the command palette


# The footer shows the keys of show=True in FOOTER_ORDER, as many whole ones as the width holds
# (widgets/key_footer.py); help and the palette list all.
APP_KEYS = (
    Key("quit", "q", "quit", "Quit", "Leave linkdeck."),
    Key("help", "question_mark", "help", "Help", "Show every key and what it does."),
    Key(
        "filter",
        "slash",
        "filter",
        "Filter",
        "Show only the interfaces whose name, or whose host's name, contains the text typed; "
        "the header says how many matched (Esc clears).",
    ),
    Key("clear_filter", "escape", "clear_filter", "Clear filter", "Clear the name filter.", show=False),
    Key("sort", "s", "cycle_sort", "Sort", "Cycle the sort: name, RX, TX, utilisation, errors+drops."),
    Key("units", "b", "toggle_units", "Bits/bytes", "Show rates in bit/s or in bytes/s.", show=False),
    Key(
        "graph_scale",
        "a",
        "toggle_graph_scale",
        "Graph scale",
        "Scale the table's graphs to each interface's own busiest sample of the last minute (any traffic shows; "
        "the default) or to its link speed (how full the link is); the header says which.",
        show=False,
    ),
    Key(
        "hide",
        "h",
        "toggle_hidden",
        "Hide",
        "Cycle what is hidden: nothing; loopback and down interfaces (lo+down hidden); those and every interface "
        f"idle for {IDLE_S:.0f} s: under {BUSY_BPS / 1000:.0f} kb/s, no errors, drops or state change (idle hidden).",
        show=False,
    ),
    Key(
        "idle_folds",
        "v",
        "toggle_idle_folds",
        "Idle folds",
        "Fold idle virtual interfaces (veth, cali…, bridges, tunnels: "
        f"idle {IDLE_S:.0f} s, no finding) into one row per host and name pattern, or show them all; "
        f"Enter on a fold shows its own. Physical ones never fold; traffic of {BUSY_BPS / 1000:.0f} kb/s or more, "
        "errors, drops, a state change or a finding takes one out at once.",
        show=False,
    ),
    Key(
        "group",
        "g",
        "toggle_grouped",
        "Across hosts",
        "Sort interfaces across all hosts in one list, or keep each host's together (the default).",
        show=False,
    ),
    Key("fold", "space", "toggle_fold", "Fold", "Fold or unfold the selected row's host.", show=False, palette=False),
    Key("fold_all", "z", "fold_all", "Fold all", "Fold every host to its one row, or unfold them all.", show=False),
    Key(
        "columns",
        "o",
        "pick_columns",
        "Columns",
        "Pick which columns show (the config's columns list sets their order of priority); the choice is kept.",
    ),
    Key(
        "info",
        "i",
        "info",
        "Info",
        "The selected host's screen (OS, kernel, connection) or the selected interface's details.",
    ),
    Key("findings", "f", "toggle_findings", "Findings", "Show or hide the findings pane."),
    Key("test", "t", "probe('test')", "Test", "Run a throughput test from the selected interface's host."),
    Key(
        "matrix",
        "m",
        "probe('matrix')",
        "Matrix",
        "Test every pair of hosts once (each test measures both directions).",
    ),
    Key(
        "ceiling",
        "c",
        "probe('ceiling')",
        "Ceiling",
        "Measure the selected host's own ceiling (loopback test).",
        show=False,
    ),
    Key(
        "mtu",
        "u",
        "probe('mtu')",
        "Path MTU",
        "The largest packet that gets through each way between the selected interface's host and a peer.",
    ),
    Key(
        "diagnose",
        "d",
        "probe('diagnose')",
        "Diagnose",
        "Why the path from the selected interface's host to a peer is slow (as `linkdeck diagnose`), "
        "the page filling in as each step finishes.",
    ),
    Key(
        "flows",
        "w",
        "probe('flows')",
        "Flows",
        "The selected host's busiest TCP flows (through the selected interface on an interface row): "
        "rates, RTT, window, retransmits, path MTU and what limits each; refreshed while shown.",
    ),
    Key(
        "record",
        "r",
        "toggle_record",
        "Record",
        "Start or stop recording the session to a file named by the time in the user data dir (● REC, "
        "how long and how big in the header while recording; the path in the toast and on the host screen).",
    ),
    Key(
        "mouse",
        "x",
        "toggle_mouse",
        "Mouse",
        "Give the mouse to the terminal so its own selection copies text (x again takes it back; the header "
        "says so meanwhile). Many terminals also select with Shift held while dragging (Option or Fn on macOS).",
        show=False,
    ),
    Key("palette", "ctrl+p", "command_palette", "Palette", "Open the command palette.", show=False, palette=False),
)

# The footer's order: what a user reaches for when a transfer is slow comes first.
FOOTER_ORDER = (
    "quit",
    "help",
    "flows",
    "test",
    "diagnose",
    "findings",
    "info",
    "filter",
    "mtu",
    "matrix",
    "record",
    "sort",
    "columns",
)

TABLE_KEYS = (
    Key(
        "details",
        "enter",
        "select",
        "Open/fold",
        "Details of the selected interface; on a host row, "
        "fold or unfold its interfaces (or review and trust its new key). A click selects, a second click opens.",
        show=False,
        palette=False,
    ),
    Key(
        "scroll_right",
        "right",
        "scroll_columns(1)",
        "Right",
        "Scroll the columns right by one; names stay.",
        show=False,
        palette=False,
    ),
    Key(
        "scroll_left",
        "left",
        "scroll_columns(-1)",
        "Left",
        "Scroll the columns left by one.",
        show=False,
        palette=False,
    ),
    Key("cursor_up", "up,k", "cursor(-1)", "Up", "Move the selection up.", show=False, palette=False),
    Key("cursor_down", "down,j", "cursor(1)", "Down", "Move the selection down.", show=False, palette=False),
    Key("page_up", "pageup", "page(-1)", "Page up", "Move the selection a page up.", show=False, palette=False),
    Key("page_down", "pagedown", "page(1)", "Page down", "Move the selection a page down.", show=False, palette=False),
    Key("first", "home", "cursor_to(0)", "First", "Select the first row.", show=False, palette=False),
    Key("last", "end", "cursor_to(-1)", "Last", "Select the last row.", show=False, palette=False),
)


def to_bindings(keys: tuple[Key, ...]) -> list[BindingType]:
    return [Binding(k.key, k.action, k.description, show=k.show, id=k.id) for k in keys]


def key_label(key: str) -> str:
    names = {
        "question_mark": "?",
        "slash": "/",
        "escape": "Esc",
        "enter": "Enter",
        "pageup": "PgUp",
        "pagedown": "PgDn",
        "space": "Space",
        "right": "→",
        "left": "←",
        "up": "↑",
        "down": "↓",
        "home": "Home",
        "end": "End",
    }
    return " ".join(names.get(part, part) for part in key.split(","))


def palette_title(key: Key) -> str:
    """The command palette's title of a key: its words, then the key that does it without the
    palette ("Sort (s)"), so the palette teaches the keys."""
    return f"{key.description} ({key_label(key.key)})"
