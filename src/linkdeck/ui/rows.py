"""The dashboard's row model: grouping, nesting, sorting, filtering and cell text.

Pure (no textual, no rich) so it is tested on its own; the table widget only styles and
draws what this module hands it, and only for the rows on screen.
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from dataclasses import dataclass
from typing import Container, Iterable, Mapping

from .. import units
from ..cells import SORTS as _SORTS
from ..kinds import is_down
from ..model import Finding, HostState, HostUpdate, InterfaceView, Severity
from ..order import sort_key, tree
from ..present import stale_note

SORTS = tuple(_SORTS)  # the order `s` cycles through (cells.SORTS)
SORT_LABELS = {s.id: s.label for s in _SORTS.values()}
GRAPH_SPAN_S = 60.0  # what the sparklines and the detail graphs cover, whatever the interval
MAX_GRAPH_SAMPLES = 600

RowKey = tuple  # ("host", host) or ("iface", host, interface)


@dataclass(frozen=True, slots=True)
class Badge:
    severity: Severity
    count: int

    @property
    def text(self) -> str:
        return f"{self.severity.mark}{min(self.count, 99)}"


@dataclass(frozen=True, slots=True)
class Row:
    key: RowKey
    host: str
    depth: int  # 0 for a host row, 1 for a top-level interface, 2+ nested under another
    update: HostUpdate  # the host's newest update (for a host row's state, os, error)
    view: InterfaceView | None = None  # None on a host row
    badge: Badge | None = None
    flat: bool = False  # listed across hosts: the name carries the host's

    @property
    def is_host(self) -> bool:
        return self.view is None


class RateHistory:
    """Every (host, interface)'s RX/TX rates over the last GRAPH_SPAN_S seconds of samples at
    ``interval``, appended as updates arrive."""

    def __init__(self, interval: float = 1.0) -> None:
        self.size = max(2, min(MAX_GRAPH_SAMPLES, round(GRAPH_SPAN_S / interval)))
        self.span = _span_text(self.size * interval)
        self._data: dict[tuple[str, str], tuple[deque, deque]] = {}
        self._host_peaks: dict[str, deque] = {}  # host → each sample's busiest rate (any interface, either way)

    def push(self, update: HostUpdate) -> None:
        names = set()
        busiest = 0.0
        for view in update.interfaces:
            key = (update.host, view.iface.name)
            names.add(view.iface.name)
            pair = self._data.get(key)
            if pair is None:
                pair = self._data[key] = (deque(maxlen=self.size), deque(maxlen=self.size))
            rx, tx = view.rates.rx_bps, view.rates.tx_bps
            pair[0].append(rx)
            pair[1].append(tx)
            busiest = max(busiest, rx or 0.0, tx or 0.0)
        peaks = self._host_peaks.get(update.host)
        if peaks is None:
            peaks = self._host_peaks[update.host] = deque(maxlen=self.size)
        peaks.append(busiest)
        # forget interfaces that went away, so a churning host does not grow memory
        for key in [k for k in self._data if k[0] == update.host and k[1] not in names]:
            del self._data[key]

    def clear(self) -> None:
        self._data.clear()
        self._host_peaks.clear()

    def host_peak(self, host: str) -> float | None:
        """The busiest rate any of the host's interfaces carried over the span (None: no sample)."""
        peaks = self._host_peaks.get(host)
        return max(peaks) if peaks else None

    def get(self, host: str, name: str) -> tuple[tuple, tuple]:
        pair = self._data.get((host, name))
        return (tuple(pair[0]), tuple(pair[1])) if pair else ((), ())


def _span_text(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.0f}m"


def badges(findings: Iterable[Finding]) -> dict[RowKey, Badge]:
    """Worst severity and count per interface row and per host row (all of that host's)."""
    worst: dict[RowKey, Severity] = {}
    counts: dict[RowKey, int] = {}
    for f in findings:
        keys = [("host", f.host)]
        if f.interface:
            keys.append(("iface", f.host, f.interface))
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
            old = worst.get(key)
            if old is None or f.severity.rank > old.rank:
                worst[key] = f.severity
    return {key: Badge(worst[key], counts[key]) for key in counts}


def _is_hidden(view: InterfaceView) -> bool:
    return view.iface.kind == "loopback" or is_down(view.iface)


def build_rows(
    updates: Iterable[HostUpdate],
    *,
    sort: str = "name",
    filter_text: str = "",
    hide_idle: bool = False,
    badge_map: Mapping[RowKey, Badge] | None = None,
    folded: Container[str] = (),
    grouped: bool = True,
) -> list[Row]:
    """Host rows in the given order, each followed by its interfaces as a sorted tree (none
    when the host is in ``folded``). Not ``grouped``: the interfaces of every host in one list,
    sorted across hosts, without host rows or nesting.

    An interface is shown when it matches the filter (and is not hidden), or when one of its
    children is shown: a vlan that matches keeps its lagg on screen for context."""
    badge_map = badge_map or {}
    needle = filter_text.lower()

    def shown(view: InterfaceView) -> bool:
        return (needle in view.iface.name.lower()) and not (hide_idle and _is_hidden(view))

    if not grouped:
        flat = [(u, v) for u in updates for v in u.interfaces if shown(v)]
        flat.sort(key=lambda uv: (sort_key(uv[1], sort), uv[0].host))
        return [Row(("iface", u.host, v.iface.name), u.host, 1, u, v, badge_map.get(("iface", u.host, v.iface.name)), flat=True) for u, v in flat]
    rows: list[Row] = []
    for update in updates:
        rows.append(Row(("host", update.host), update.host, 0, update, None, badge_map.get(("host", update.host))))
        if update.host in folded:
            continue
        for depth, view in tree(update.interfaces, sort, shown):
            key = ("iface", update.host, view.iface.name)
            rows.append(Row(key, update.host, depth + 1, update, view, badge_map.get(key)))
    return rows


def clean(text: object) -> str:
    """Remote text made printable (control characters shown as \\xNN)."""
    return units.printable(str(text))


def name_cell(row: Row, folded: bool = False) -> str:
    if row.is_host:
        return ("▸ " if folded else "▾ ") + clean(row.host)
    iface = row.view.iface
    marker = "*" if iface.default_route else " "
    if row.flat:
        return f"{marker}{clean(row.host)}/{clean(iface.name)}"
    return "  " * (row.depth - 1) + marker + clean(iface.name)


def short_os(update: HostUpdate) -> str:
    """``debian 12``, ``freebsd 14.1``, ``truenas 13.0``, ``smartos``: the distribution and its
    major.minor version (a build stamp is no version); the full text is on the host screen."""
    detail = re.sub(r"\([^)]*\)", " ", update.os_detail or "")
    words = re.split(r"[\s\-]+", detail.strip())
    name = update.os or ""
    if name in ("linux", "") and words[0]:
        name = words[0]
    for word in words[1:]:
        version = _VERSION.match(word)
        if version:
            return clean(f"{name.lower()} {version.group(1)}")
    return clean(name.lower()) or "?"


_VERSION = re.compile(r"v?(\d{1,4}(?:\.\d{1,3})?)(?:\.\d+)*$")


def host_summary(update: HostUpdate) -> str:
    """The host row's text after its name: short OS and state (and what explains the state)."""
    os_text = short_os(update) if (update.os or update.os_detail) else ""
    state = state_text(update, brief=True)
    note = stale_note(update)
    if note:
        state += f" · {note}"
    return f"{os_text}  {state}" if os_text else state


def _next_try(state: HostState, detail: Mapping[str, str]) -> str:
    """When a host waiting to try again will (a clock time stays true while the row sits
    there; a countdown would not), or that it is trying right now."""
    try:
        at = float(detail.get("retry_at", ""))
    except ValueError:
        at = math.nan
    if math.isfinite(at) and 0 < at < 1e11:
        return f" (next try at {time.strftime('%H:%M:%S', time.localtime(at))})"
    if detail.get("retry_in_s"):
        return f" (next try in {clean(detail['retry_in_s'])} s)"
    return " (trying now)" if state is HostState.RECONNECTING else ""


def state_text(update: HostUpdate, brief: bool = False) -> str:
    """The state and what explains it; ``brief`` (a host row) leaves the key's fingerprint to
    the trust dialog and the host screen."""
    state, detail = update.state, update.detail or {}
    text = state.value
    if state in (HostState.RECONNECTING, HostState.UNREACHABLE, HostState.ERROR) and update.error:
        text += f": {clean(update.error)}"
    if state.retryable and state is not HostState.LIVE:
        text += _next_try(state, detail)
    fingerprint = "" if brief else f" {clean(detail.get('fingerprint', ''))}"
    if state is HostState.HOST_KEY_UNKNOWN:
        text += f"{fingerprint} — Enter to review and trust"
    elif state is HostState.HOST_KEY_CHANGED:
        text += f"{fingerprint} — refused; check the host, then fix known_hosts"
    elif state is HostState.AUTH_FAILED and update.error:
        text += f": {clean(update.error)}"
    return text
