"""The findings pane: every finding, newest first, with its evidence and next step."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..model import Finding, Severity
from .rows import clean

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


def finding_text(findings: list[Finding], empty: str = "No findings.") -> Text:
    """Findings as Rich Text built without markup: remote names cannot inject styles."""
    text = Text()
    if not findings:
        text.append(empty, style="dim")
        return text
    for f in findings:
        where = clean(f.host) + (f"/{clean(f.interface)}" if f.interface else "")
        text.append(f"{f.severity.value.upper():7} ", style=SEVERITY_STYLE.get(f.severity, ""))
        text.append(f"{clean(f.code)} ", style="bold")
        text.append(f"{where}: {clean(f.message)}\n")
        if f.evidence:
            text.append(f"        evidence: {clean(f.evidence)}\n", style="dim")
        if f.hint:
            text.append(f"        next: {clean(f.hint)}\n", style="italic")
    text.rstrip()
    return text


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
