"""The dashboard's header line: the fleet's counts first (what a glance needs), then the
view's settings."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from rich.text import Text

from ..model import Finding, HostState, HostUpdate, Severity
from .marks import word_style
from .rows import SORT_LABELS


def fleet_counts(updates: Iterable[HostUpdate]) -> str:
    updates = list(updates)
    states = Counter(u.state for u in updates)
    counts = [f"{states[HostState.LIVE]} live"]
    if states[HostState.CONNECTING]:
        counts.append(f"{states[HostState.CONNECTING]} connecting")
    waiting = sum(n for state, n in states.items() if state not in (HostState.LIVE, HostState.CONNECTING) and state.retryable)
    if waiting:  # dropped, unreachable, unreadable: trying again
        counts.append(f"{waiting} reconnecting")
    stopped = len(updates) - states[HostState.LIVE] - states[HostState.CONNECTING] - waiting
    if stopped:  # a host key to trust, an auth failure: waiting for the user
        counts.append(f"{stopped} stopped")
    return f"{len(updates)} host{'s' if len(updates) != 1 else ''}: " + ", ".join(counts)


def status_text(updates: Iterable[HostUpdate], findings: list[Finding], *, sort: str, grouped: bool, in_bytes: bool,
                filter_text: str, hide_idle: bool, own: tuple[float, float] | None = None) -> Text:
    text = Text(fleet_counts(updates) + "  │ findings ")
    severities = Counter(f.severity for f in findings)
    for severity in sorted(Severity, key=lambda s: -s.rank):  # the worst first
        if severities[severity]:
            text.append(f"{severity.mark}{severities[severity]} ", style=word_style(severity))
    if not findings:
        text.append("none ", style="dim")
    view = [f"sort {SORT_LABELS[sort]}" + ("" if grouped else " across hosts"), "B/s" if in_bytes else "b/s"]
    if filter_text:
        view.append(f"filter {filter_text!r}")
    if hide_idle:
        view.append("idle hidden")
    text.append("│ " + " · ".join(view))
    if own is not None:  # linkdeck's own cost, so a user sees what watching costs
        text.append(f" │ linkdeck {own[0]:.1f}% CPU {own[1]:.0f} MB", style="dim")
    return text
