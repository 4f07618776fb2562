"""The colours of test results: the result panel and the matrix cells. The words come from
``present`` (the same the CLI prints); this module only styles and lays them out."""

from __future__ import annotations

from rich.text import Text

from ..levels import Status
from ..present import COUNTERS_TITLE, LABEL_WIDTH, matrix_cell, report, short_verdict
from ..probe import Outcome
from .marks import word_style

__all__ = ["cell_text", "result_text", "short_verdict", "status_text"]


def result_text(o: Outcome) -> Text:
    rep = report(o)
    t = Text()
    t.append(rep.title + "\n\n", style="bold")
    t.append(rep.status.upper(), style=word_style(rep.status))
    t.append(f"  {rep.summary}\n")
    if rep.rows:
        t.append("\n")
    for label, value in rep.rows:
        t.append(f"{label:<{LABEL_WIDTH}}", style="dim")
        t.append(value + "\n")
    for code, message, evidence in rep.causes:
        t.append(f"\n{code}", style="bold yellow")
        t.append(f"  {message}\n  {evidence}\n")
    if rep.counters:
        t.append(f"\n{COUNTERS_TITLE}\n", style="bold")
    for direction, value in rep.counters:
        t.append(f"{direction:<{LABEL_WIDTH}}", style="dim")
        t.append(value + "\n")
    return t


def status_text(status: Status, text: str) -> Text:
    """A verdict's words in its status's colour."""
    return Text(text, style=word_style(status))


def cell_text(o: Outcome) -> Text:
    text, level = matrix_cell(o)
    return Text(text, style=word_style(level))
