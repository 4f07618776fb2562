"""The colours of test results: the result panel and the matrix cells. The words come from
``present`` (the same the CLI prints); this module only styles and lays them out."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from ...core.levels import Status
from ...present.fit import wrap
from ...present.outcome import COUNTERS_TITLE, LABEL_WIDTH, matrix_cell, report, short_verdict
from ...probe import Outcome
from .marks import word_style

__all__ = ["cell_text", "result_text", "short_verdict", "status_text"]


def result_text(o: Outcome, width: int = 96) -> Text:
    """The result panel at ``width`` columns: every labelled value (a row, a cause's message
    and evidence, a direction's counters) wraps under its own start, never under the label."""
    rep = report(o)
    # one label column for rows, causes and counters: as wide as the longest label needs
    labels = [label for label, _ in (*rep.rows, *rep.counters)] + [code for code, _, _ in rep.causes]
    indent = min(LABEL_WIDTH, max(map(len, labels), default=0) + 3)
    t = Text()
    _hanging(t, rep.title, width, style="bold")
    t.append("\n")
    status = rep.status.upper()
    _labelled(t, (status, word_style(rep.status)), rep.summary, width, len(status) + 2)
    if rep.rows:
        t.append("\n")
    for label, value in rep.rows:
        _labelled(t, (label, "dim"), value, width, indent)
    for code, message, evidence in rep.causes:
        t.append("\n")
        _labelled(t, (code, "bold yellow"), message, width, indent)
        _labelled(t, ("", ""), evidence, width, indent)
    if rep.counters:
        t.append(f"\n{COUNTERS_TITLE}\n", style="bold")
    for direction, value in rep.counters:
        _labelled(t, (direction, "dim"), value, width, indent)
    return t


def _labelled(t: Text, label: tuple[str, str | Style], value: str, width: int, indent: int = LABEL_WIDTH) -> None:
    """``label`` in its column, ``value`` wrapped to ``width`` with its lines under its first
    word; a label too long for its column puts the value on the line below it."""
    words, style = label
    if len(words) >= indent:
        t.append(words + "\n", style=style)
        words = ""
    t.append(words, style=style)
    t.append(" " * (indent - len(words)))
    lines = wrap(value, max(width - indent, 20)) or [""]
    t.append(lines[0] + "\n")
    for line in lines[1:]:
        t.append(" " * indent + line + "\n")


def _hanging(t: Text, value: str, width: int, style: str = "") -> None:
    for line in wrap(value, max(width, 20), subsequent_indent="  "):
        t.append(line + "\n", style=style)


def status_text(status: Status, text: str) -> Text:
    """A verdict's words in its status's colour."""
    return Text(text, style=word_style(status))


def cell_text(o: Outcome) -> Text:
    text, level = matrix_cell(o)
    return Text(text, style=word_style(level))
