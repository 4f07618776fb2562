"""How the dashboard's marks look, and what each one means (the help screen's legend reads
LEGEND, so a new mark or colour is explained where it is drawn)."""

from __future__ import annotations

from functools import lru_cache

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ...core.cells import COLUMNS, CONFIGURED, CONFIGURED_SAID, Column
from ...core.levels import Level, Severity, Status, Tone
from ...core.model import HostState, InterfaceView

HEADER = Style(bold=True, underline=True)
HOST = Style(bold=True)
DIM = Style(dim=True)
SPARK_RX = Style(color="cyan")
SPARK_TX = Style(color="magenta")


@lru_cache(maxsize=None)
def tone_style(tone: Tone, bold: bool = False) -> Style:
    """A tone on the terminal (levels.Tone is the one table of colours)."""
    return Style(color=tone.terminal or None, bold=True if bold else None)


def word_style(word: Severity | Status | Level) -> Style:
    """A severity's, a verdict's or a matrix cell's style: its tone, bold where it says so."""
    return tone_style(word.tone, word.bold)


STATE_STYLE = {
    HostState.LIVE: Style(color="green"),
    HostState.CONNECTING: Style(color="yellow"),
    HostState.RECONNECTING: Style(color="yellow"),
    HostState.UNREACHABLE: Style(color="red"),
    HostState.AUTH_FAILED: Style(color="red", bold=True),
    HostState.HOST_KEY_UNKNOWN: Style(color="yellow", bold=True),
    HostState.HOST_KEY_CHANGED: Style(color="red", bold=True),
    HostState.ERROR: Style(color="red"),
}
SELECTED = Style(reverse=True)


def cell_style(column: Column, view: InterfaceView, text: str) -> Style | None:
    """An interface cell's style: its column's tone, from the values it shows (the unknown
    mark is dim); the test column is styled by its verdict's status (word_style)."""
    tone = column.tone_of(view)
    if tone is not None:
        return tone_style(tone, column.bold)
    return DIM if text == "—" else None


def _combine(base: Style, style: Style | None, selected: Style | None) -> Style:
    combined = base + style if style is not None else base
    return combined + selected if selected is not None else combined


def fit_text(text: str, width: int, align: str = "l") -> str:
    if len(text) > width:
        return set_cell_size(text[: width - 1] + "…", width)
    return set_cell_size(text.rjust(width) if align == "r" else text, width)


def join_strip(parts: list[tuple[str, Style | None]], base: Style, sel: Style | None) -> Strip:
    # Adjacent cells with the same style are joined into one Segment: a row is a handful of
    # segments instead of ~30, which every later stage (crop, filters, escape codes) sees.
    segments: list[Segment] = []
    run: list[str] = []
    run_style = parts[0][1] if parts else None
    for text, style in parts:
        if style is not run_style:
            segments.append(Segment("".join(run), _combine(base, run_style, sel)))
            run, run_style = [], style
        run.append(text)
    segments.append(Segment("".join(run), _combine(base, run_style, sel)))
    return Strip(segments)


# (sample as drawn, its style, what it means): every mark and colour the dashboard uses.
LEGEND: tuple[tuple[str, Style | None, str], ...] = (
    (f"{Severity.ERROR.mark}2", word_style(Severity.ERROR), "findings on this row, the worst an error (f lists them)"),
    (f"{Severity.WARNING.mark}1", word_style(Severity.WARNING), "findings, the worst a warning"),
    (f"{Severity.INFO.mark}1", word_style(Severity.INFO), "findings, for information only"),
    ("*eth0", None, "this interface carries the default route"),
    (f"10G{CONFIGURED}", None, f"a speed {CONFIGURED_SAID} (the interface screen says what the host reports)"),
    ("▾ ▸", HOST, "a host row, its interfaces shown / folded away (Enter or space)"),
    ("▲ ▼", HEADER, "in the header: the column the rows are sorted by (names A to Z; the rest biggest first)"),
    ("← →", HOST, "in the header: more columns off the left / right edge (← → scroll to them)"),
    ("—", DIM, "unknown: not reported by the host, or not measured yet"),
    ("up", tone_style(Tone.GOOD), "interface up; down, lldn (lower layer down) and gone (not present) are red"),
    (
        "12",
        tone_style(Tone.BAD, COLUMNS["errors"].bold),
        "errors or drops per second above 0, or utilisation from 90 %",
    ),
    (
        "live",
        STATE_STYLE[HostState.LIVE],
        "host state: live (green), connecting / reconnecting / key unknown (yellow), "
        "unreachable / auth failed / key changed / error (red)",
    ),
    ("stale", DIM, "dim rows: the host's frames stopped; rates —, facts as of the time on its row, graphs stopped"),
    ("▁▃█", SPARK_RX, "RX graph (cyan); TX is magenta"),
    ("OK", word_style(Status.OK), "last test met its expectation; degraded is yellow, bad red, a failed test magenta"),
)
