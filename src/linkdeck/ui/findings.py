"""The findings pane: every finding, newest first, with its evidence and next step."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..model import Finding
from .marks import word_style
from .rows import clean


def finding_text(findings: list[Finding], empty: str = "No findings.", title: str | None = None) -> Group:
    """Findings built without markup (remote names cannot inject styles), laid out in two
    columns: the severity, then the finding with its evidence and next step, which wrap at
    word boundaries under themselves and never under the severity."""
    parts: list = [Text(title, style="bold")] if title else []
    if not findings:
        parts.append(Text(empty, style="dim"))
        return Group(*parts)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    for f in findings:
        where = clean(f.host) + (f"/{clean(f.interface)}" if f.interface else "")
        headline = Text.assemble((clean(f.code), "bold"), f" {where}: {clean(f.message)}")
        grid.add_row(Text(f"{f.severity.mark} {f.severity.value.upper()}", style=word_style(f.severity)), headline)
        if f.evidence:
            grid.add_row("", Text(f"evidence: {clean(f.evidence)}", style="dim"))
        if f.hint:
            grid.add_row("", Text(f"next: {clean(f.hint)}", style="italic"))
    parts.append(grid)
    return Group(*parts)


class FindingsPane(VerticalScroll):
    DEFAULT_CSS = """
    FindingsPane { height: 35%; border-top: solid $accent; display: none; }
    FindingsPane.-open { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[Finding, ...] | None = None

    def compose(self):
        yield Static(finding_text([]), id="findings-body")

    def show(self, findings: list[Finding]) -> None:
        """Redraw only when the list changed (findings are stable between most ticks)."""
        key = tuple(findings)
        if key == self._shown:
            return
        self._shown = key
        self.query_one("#findings-body", Static).update(finding_text(findings))
