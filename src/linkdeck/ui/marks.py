"""How the dashboard's marks look, and what each one means (the help screen's legend reads
LEGEND, so a new mark or colour is explained where it is drawn)."""

from __future__ import annotations

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ..model import HostState, Severity
from .rows import BADGE_MARKS

HEADER = Style(bold=True, underline=True)
HOST = Style(bold=True)
DIM = Style(dim=True)
SPARK_RX = Style(color="cyan")
SPARK_TX = Style(color="magenta")
# The badge's mark (✖ ⚠ ℹ) says the severity; the colour is the second carrier.
SEVERITY_STYLE = {
    Severity.ERROR: Style(color="red", bold=True),
    Severity.WARNING: Style(color="yellow", bold=True),
    Severity.INFO: Style(color="blue"),
}
_OPER = {"up": Style(color="green"), "down": Style(color="red"), "lldn": Style(color="red")}
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
_VERDICT_OK = Style(color="green", bold=True)
_VERDICT_BAD = Style(color="yellow", bold=True)
_HOT = Style(color="red", bold=True)  # non-zero errors/drops, utilisation ≥ 90 %


def cell_style(column: str, text: str) -> Style | None:
    if column == "oper":
        return _OPER.get(text)
    if column == "test":
        return None if not text.strip() else _VERDICT_OK if text.startswith("OK") else _VERDICT_BAD
    if text == "—":
        return DIM
    if column in ("errors", "drops") and text != "0":
        return _HOT
    if column == "util" and text.endswith("%") and float(text[:-1]) >= 90:
        return _HOT
    return None


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
    (f"{BADGE_MARKS[Severity.ERROR]}2", SEVERITY_STYLE[Severity.ERROR], "findings on this row, the worst an error (f lists them)"),
    (f"{BADGE_MARKS[Severity.WARNING]}1", SEVERITY_STYLE[Severity.WARNING], "findings, the worst a warning"),
    (f"{BADGE_MARKS[Severity.INFO]}1", SEVERITY_STYLE[Severity.INFO], "findings, for information only"),
    ("*eth0", None, "this interface carries the default route"),
    ("▾ ▸", HOST, "a host row, its interfaces shown / folded away (Enter or space)"),
    ("—", DIM, "unknown: not reported by the host, or not measured yet"),
    ("up", _OPER["up"], "interface up; down and lldn (lower layer down) are red"),
    ("12", _HOT, "errors or drops per second above 0, or utilisation from 90 %"),
    ("live", STATE_STYLE[HostState.LIVE], "host state: live (green), connecting / reconnecting / key unknown (yellow), "
                                            "unreachable / auth failed / key changed / error (red)"),
    ("stale", DIM, "dim rows: the host's frames stopped; rates —, facts as of the time on its row, graphs stopped"),
    ("▁▃█", SPARK_RX, "RX graph (cyan); TX is magenta"),
    ("OK", _VERDICT_OK, "last test met its expectation; anything else is yellow"),
)
