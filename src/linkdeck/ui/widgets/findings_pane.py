"""The findings pane: every finding, newest first, with when it was raised, its evidence and
next step; the findings of one interface together under it."""

from __future__ import annotations

import datetime as dt
from typing import Callable

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ...core import units
from ...core.model import Finding
from ..state.rows import clean
from .marks import word_style

Since = Callable[[Finding], float | None]  # when a finding was first raised (the app's clock)


def raised_text(at: float | None, now: float | None) -> str | None:
    """ "raised 12:04:05, up 3 min 20 s" (local time of the app's clock: a replay's own)."""
    if at is None or now is None:
        return None
    return f"raised {dt.datetime.fromtimestamp(at).strftime('%H:%M:%S')}, up {units.age(now - at)}"


def _where(f: Finding) -> str:
    return clean(f.host) + (f"/{clean(f.interface)}" if f.interface else "")


def _groups(findings: list[Finding]) -> list[list[Finding]]:
    """The findings of one interface together, at the place of its newest; a host-wide finding
    stands alone. (Which of them is the root cause is the findings' own words, not the pane's.)"""
    groups: dict[object, list[Finding]] = {}
    for i, f in enumerate(findings):
        groups.setdefault((f.host, f.interface) if f.interface else i, []).append(f)
    return list(groups.values())


def _details(grid: Table, f: Finding, raised: str | None, indent: str = "") -> None:
    if raised:
        grid.add_row("", Text(indent + raised, style="dim"))
    if f.evidence:
        grid.add_row("", Text(f"{indent}evidence: {clean(f.evidence)}", style="dim"))
    if f.hint:
        grid.add_row("", Text(f"{indent}next: {clean(f.hint)}", style="italic"))


def finding_text(
    findings: list[Finding],
    empty: str = "No findings.",
    title: str | None = None,
    since: Since | None = None,
    now: float | None = None,
) -> Group:
    """Findings built without markup (remote names cannot inject styles), laid out in two
    columns: the severity, then the finding with when it was raised (given ``since`` and
    ``now``), its evidence and next step, which wrap at word boundaries under themselves and
    never under the severity. Several findings on one interface are one entry: the interface,
    then each of them."""
    parts: list = [Text(title, style="bold")] if title else []
    if not findings:
        parts.append(Text(empty, style="dim"))
        return Group(*parts)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)

    def raised(f: Finding) -> str | None:
        return raised_text(since(f), now) if since is not None else None

    for group in _groups(findings):
        worst = max(group, key=lambda f: f.severity.rank).severity
        label = Text(f"{worst.mark} {worst.value.upper()}", style=word_style(worst))
        if len(group) == 1:
            f = group[0]
            grid.add_row(label, Text.assemble((clean(f.code), "bold"), f" {_where(f)}: {clean(f.message)}"))
            _details(grid, f, raised(f))
            continue
        grid.add_row(label, Text.assemble((_where(group[0]), "bold"), f": {len(group)} findings on this interface"))
        for f in group:
            grid.add_row(
                "",
                Text.assemble(
                    (f"{f.severity.mark} ", word_style(f.severity)), (clean(f.code), "bold"), f": {clean(f.message)}"
                ),
            )
            _details(grid, f, raised(f), "  ")
    parts.append(grid)
    return Group(*parts)


class FindingsPane(VerticalScroll):
    DEFAULT_CSS = """
    FindingsPane { height: 35%; border-top: solid $accent; display: none; }
    FindingsPane.-open { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple | None = None

    def compose(self):
        yield Static(finding_text([]), id="findings-body")

    def show(self, findings: list[Finding], since: Since, now: float) -> None:
        """Redraw only when what it says changed: the findings, or a second of their age."""
        key = (tuple(findings), tuple(since(f) for f in findings), int(now))
        if key == self._shown:
            return
        self._shown = key
        self.query_one("#findings-body", Static).update(finding_text(findings, since=since, now=now))
