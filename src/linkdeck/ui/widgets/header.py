"""The dashboard's header line: the fleet's counts first (what a glance needs), then the
view's settings."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from rich.text import Text

from ...core.levels import Severity
from ...core.model import Finding, HostState, HostUpdate
from ...settings.config import Hide
from ..state.rows import SORT_LABELS
from ..state.view_state import ViewState
from .marks import word_style

HIDDEN_LABELS = {Hide.DOWN: "lo+down hidden", Hide.IDLE: "idle hidden"}  # what `h` hides, as the header says it


def fleet_counts(updates: Iterable[HostUpdate]) -> str:
    """ "5 hosts: 2 live, 1 stale, 1 unreachable, 1 host key unknown": in the words the host rows
    use (a live host whose frames stopped is stale there too), live always named."""
    updates = list(updates)
    words = Counter("stale" if u.stale else u.state.value for u in updates)
    order = [HostState.LIVE.value, "stale", *(s.value for s in HostState if s is not HostState.LIVE)]
    counts = [f"{words[w]} {w}" for w in order if words[w] or w == HostState.LIVE.value]
    return f"{len(updates)} host{'s' if len(updates) != 1 else ''}: " + ", ".join(counts)


def matched_words(text: str, interfaces: int, hosts: int) -> str:
    """What the filter found: "filter 'eth': 12 interfaces on 3 hosts", or that nothing did."""
    if not hosts:
        return f"filter {text!r}: no match"
    return (
        f"filter {text!r}: "
        f"{interfaces} interface{'s' if interfaces != 1 else ''} on {hosts} host{'s' if hosts != 1 else ''}"
    )


def status_text(
    updates: Iterable[HostUpdate],
    findings: list[Finding],
    view: ViewState,
    own: tuple[float, float] | None = None,
    matched: tuple[int, int] = (0, 0),
) -> Text:
    """``matched``: the interfaces and hosts the filter shows, when there is one."""
    text = Text(fleet_counts(updates) + "  │ findings ")
    severities = Counter(f.severity for f in findings)
    for severity in sorted(Severity, key=lambda s: -s.rank):  # the worst first
        if severities[severity]:
            text.append(f"{severity.mark}{severities[severity]} ", style=word_style(severity))
    if not findings:
        text.append("none ", style="dim")
    shown = [
        f"sort {SORT_LABELS[view.sort]}" + ("" if view.grouped else " across hosts"),
        "B/s" if view.in_bytes else "b/s",
    ]
    if view.filter_text:
        shown.append(matched_words(view.filter_text, *matched))
    if view.hide is not Hide.NONE:
        shown.append(HIDDEN_LABELS[view.hide])
    text.append("│ " + " · ".join(shown))
    if own is not None:  # linkdeck's own cost, so a user sees what watching costs
        text.append(f" │ linkdeck {own[0]:.1f}% CPU {own[1]:.0f} MB", style="dim")
    return text
