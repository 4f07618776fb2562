"""The dashboard's row model: grouping, nesting, sorting, filtering and cell text.

Pure (no textual, no rich) so it is tested on its own; the table widget only styles and
draws what this module hands it, and only for the rows on screen.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import is_not
from typing import Callable, Container, Iterable, Mapping, MutableMapping

from ...core import units
from ...core.addresses import routable
from ...core.cells import SORTS as _SORTS
from ...core.kinds import Kind, is_down
from ...core.levels import Severity
from ...core.model import Finding, HostDetail, HostState, HostUpdate, InterfaceView, rate_values
from ...core.order import sort_key, tree
from ...core.oses import short_os
from ...core.totals import host_totals
from ...present.outcome import stale_note, state_word
from ...settings.config import Hide
from .idle import BUSY_BPS, FOLD_KINDS, IDLE_S, Fold, name_pattern

SORTS = tuple(_SORTS)  # the order `s` cycles through (cells.SORTS)
SORT_LABELS = {s.id: s.label for s in _SORTS.values()}
GRAPH_SPAN_S = 60.0  # what the sparklines and the detail graphs cover, whatever the interval
MAX_GRAPH_SAMPLES = 600

RowKey = tuple  # ("host", host), ("iface", host, interface) or ("fold", host, pattern)


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
    # the host's newest update (for a host row's state, os, error); an interface or fold row
    # kept by row_cache may hold an earlier one with the very same views and staleness
    update: HostUpdate
    view: InterfaceView | None = None  # None on a host row
    badge: Badge | None = None
    flat: bool = False  # listed across hosts: the name carries the host's
    fold: Fold | None = None  # idle virtual interfaces shown as this one row

    @property
    def is_host(self) -> bool:
        return self.view is None and self.fold is None


class RateHistory:
    """Every (host, interface)'s RX/TX rates over the last GRAPH_SPAN_S seconds of samples at
    ``interval``, appended as updates arrive.

    A view that is the very object the host's last sample had at the same place (the rate
    tracker hands on an idle link's) has the same rates: its samples are not appended as they
    come but when it changes or its graph is read, so an unchanged interface costs a sample
    nothing but one identity test, done for all of a host's views in one call. Until an
    interface's rates first change, its history is only a count of equal samples: the idle
    links of a big host, never graphed while folded, hold no graph buffers."""

    def __init__(self, interval: float = 1.0) -> None:
        self.size = max(2, min(MAX_GRAPH_SAMPLES, round(GRAPH_SPAN_S / interval)))
        self.span = _span_text(self.size * interval)
        # (host, interface) → [rx, tx, its last rx, its last tx, the host's sample it is appended up to,
        # how many samples it holds while rx and tx are None: all of them its last rates]
        self._data: dict[tuple[str, str], list] = {}
        self._host_peaks: dict[str, deque] = {}  # host → each sample's busiest rate (any interface, either way)
        # host → its samples so far, its last views and each one's busiest rate (either way), in their order
        self._hosts: dict[str, tuple[int, tuple[InterfaceView, ...], list[float]]] = {}

    def push(self, update: HostUpdate) -> None:
        host, views = update.host, update.interfaces
        n, last, busiest = self._hosts.get(host, (0, (), []))
        n += 1
        todo: Iterable[int] | None = None
        if len(last) == len(views):
            changed = list(compress(count(), map(is_not, views, last)))
            if all(views[i].iface.name == last[i].iface.name for i in changed):
                todo = changed  # the same names in the same places: the others are the same views
        full = todo is None
        if todo is None:
            todo, busiest = range(len(views)), [0.0] * len(views)
        data = self._data
        for i in todo:
            view = views[i]
            key = (host, view.iface.name)
            rx, tx = rate_values(view)[:2]  # Rates' order: rx_bps, tx_bps first; no Rates built
            entry = data.get(key)
            if entry is None:
                data[key] = [None, None, rx, tx, n, 1]
            else:
                self._caught_up(entry, n - 1)
                if entry[0] is None and rx == entry[2] and tx == entry[3]:
                    entry[4], entry[5] = n, min(entry[5] + 1, self.size)
                else:
                    if entry[0] is None:
                        entry[0] = deque(repeat(entry[2], entry[5]), maxlen=self.size)
                        entry[1] = deque(repeat(entry[3], entry[5]), maxlen=self.size)
                    entry[0].append(rx)
                    entry[1].append(tx)
                    entry[2], entry[3], entry[4] = rx, tx, n
            busiest[i] = max(rx or 0.0, tx or 0.0)
        if full:  # forget interfaces that went away, so a churning host does not grow memory
            names = {v.iface.name for v in views}
            for gone in {v.iface.name for v in last} - names:
                data.pop((host, gone), None)
        self._hosts[host] = (n, views, busiest)
        peaks = self._host_peaks.get(host)
        if peaks is None:
            peaks = self._host_peaks[host] = deque(maxlen=self.size)
        peaks.append(max(busiest, default=0.0))

    def _caught_up(self, entry: list, n: int) -> list:
        """``entry`` with its last rates appended for each of its host's samples up to ``n``
        it was not appended at (its view was the same object)."""
        missed = n - entry[4]
        if missed > 0:
            if entry[0] is None:
                entry[5] = min(entry[5] + missed, self.size)
            else:
                entry[0].extend(repeat(entry[2], min(missed, self.size)))
                entry[1].extend(repeat(entry[3], min(missed, self.size)))
            entry[4] = n
        return entry

    def clear(self) -> None:
        self._data.clear()
        self._host_peaks.clear()
        self._hosts.clear()

    def host_peak(self, host: str) -> float | None:
        """The busiest rate any of the host's interfaces carried over the span (None: no sample)."""
        peaks = self._host_peaks.get(host)
        return max(peaks) if peaks else None

    def get(self, host: str, name: str) -> tuple[tuple, tuple]:
        entry = self._data.get((host, name))
        if entry is None:
            return ((), ())
        rx, tx, last_rx, last_tx, _, held = self._caught_up(entry, self._hosts[host][0])
        if rx is None:
            return (last_rx,) * held, (last_tx,) * held
        return tuple(rx), tuple(tx)


def _span_text(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.0f}m"


def same_rows(before: HostUpdate | None, update: HostUpdate) -> bool:
    """Whether ``update`` gives its host the rows ``before`` gave it, with other numbers in them:
    the same state, OS and interfaces in the same order."""
    if before is None or (before.state, before.os) != (update.state, update.os):
        return False
    old, new = before.interfaces, update.interfaces
    # an unchanged link's view is handed on as the same object: no name to compare
    return len(old) == len(new) and all(a is b or a.iface.name == b.iface.name for a, b in zip(old, new))


def badges(findings: Iterable[Finding]) -> dict[RowKey, Badge]:
    """Worst severity and count per interface row and per host row (all of that host's)."""
    worst: dict[RowKey, Severity] = {}
    counts: dict[RowKey, int] = {}
    for f in findings:
        keys: list[RowKey] = [("host", f.host)]
        if f.interface:
            keys.append(("iface", f.host, f.interface))
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
            old = worst.get(key)
            if old is None or f.severity.rank > old.rank:
                worst[key] = f.severity
    return {key: Badge(worst[key], counts[key]) for key in counts}


def foldable(view: InterfaceView) -> bool:
    """A virtual interface the host reaches nothing through itself: a pod's veth, not a VM's
    own vtnet0 (it has an address, or the default route), a bridge with ports, nor any
    physical NIC."""
    iface = view.iface
    return (
        iface.kind in FOLD_KINDS
        and not iface.default_route
        and not iface.members
        and not (iface.addresses and routable(iface.addresses))
    )


def _is_hidden(view: InterfaceView) -> bool:
    return view.iface.kind == Kind.LOOPBACK or is_down(view.iface)


def build_rows(  # noqa: C901 - the table's rows with their folds, one pass
    updates: Iterable[HostUpdate],
    *,
    sort: str = "name",
    filter_text: str = "",
    hide: Hide = Hide.NONE,
    badge_map: Mapping[RowKey, Badge] | None = None,
    folded: Container[str] = (),
    grouped: bool = True,
    idle: Callable[[str], Container[str]] | None = None,
    fold_idle: bool = False,
    unfolded: Container[tuple[str, str]] = (),
    known_folds: MutableMapping[str, dict[str, list[str]]] | None = None,
) -> list[Row]:
    """Host rows in the given order, each followed by its interfaces as a sorted tree (none
    when the host is in ``folded``). Not ``grouped``: the interfaces of every host in one list,
    sorted across hosts, without host rows or nesting.

    An interface is shown when it or its host matches the filter (and it is not hidden), or
    when one of its children is shown: a vlan that matches keeps its lagg on screen for
    context. With a filter, a host with nothing that matches has no row. With
    ``fold_idle``, a host's ``idle`` virtual interfaces without a finding that share a name
    pattern (two or more, the pattern not in ``unfolded``) are one row after its others
    (``idle(host)``: the names of its interfaces idle now).

    ``known_folds``: each host's idle folds, pattern → names; a host found there
    is folded so (they were worked out for the same interfaces and view), and one missing is
    added."""
    badge_map = badge_map or {}
    needle = filter_text.lower()
    idle_of = idle or (lambda host: ())
    updates = list(updates)
    hosts_hit = {u.host for u in updates if needle and needle in u.host.lower()}

    def visible(host: str, view: InterfaceView) -> bool:
        if needle and host not in hosts_hit and needle not in view.iface.name.lower():
            return False
        if hide is not Hide.NONE and _is_hidden(view):
            return False
        return not (hide is Hide.IDLE and view.iface.name in idle_of(host))

    def folds_of(update: HostUpdate) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        if not fold_idle:
            return groups
        host = update.host
        quiet = idle_of(host)
        for v in update.interfaces if quiet else ():
            name = v.iface.name
            if name in quiet and foldable(v) and ("iface", host, name) not in badge_map and visible(host, v):
                pattern = name_pattern(name)
                if (host, pattern) not in unfolded:
                    groups.setdefault(pattern, []).append(name)
        return {p: names for p, names in groups.items() if len(names) >= 2}

    def fold_rows(update: HostUpdate, groups: dict[str, list[str]], listed: set[str], flat: bool) -> list[Row]:
        out = []
        for pattern in sorted(groups):
            names = tuple(n for n in groups[pattern] if n not in listed)  # one kept listed by a busy child stays there
            if names:
                out.append(
                    Row(("fold", update.host, pattern), update.host, 1, update, None, None, flat, Fold(pattern, names))
                )
        return out

    if not grouped:
        flat: list[tuple[HostUpdate, InterfaceView]] = []
        folds: list[Row] = []
        for u in updates:
            if known_folds is None:
                groups = folds_of(u)
            elif u.host in known_folds:
                groups = known_folds[u.host]
            else:
                groups = known_folds[u.host] = folds_of(u)
            away = {n for names in groups.values() for n in names}
            flat += [(u, v) for v in u.interfaces if v.iface.name not in away and visible(u.host, v)]
            folds += fold_rows(u, groups, set(), True)
        flat.sort(key=lambda uv: (sort_key(uv[1], sort), uv[0].host))
        flat_rows = [
            Row(
                ("iface", u.host, v.iface.name),
                u.host,
                1,
                u,
                v,
                badge_map.get(("iface", u.host, v.iface.name)),
                flat=True,
            )
            for u, v in flat
        ]
        return flat_rows + folds
    rows: list[Row] = []
    for update in updates:
        if needle and update.host not in hosts_hit and not any(visible(update.host, v) for v in update.interfaces):
            continue
        rows.append(Row(("host", update.host), update.host, 0, update, None, badge_map.get(("host", update.host))))
        if update.host in folded:
            continue
        if known_folds is None:
            found = folds_of(update)
        elif update.host in known_folds:
            found = known_folds[update.host]
        else:
            found = known_folds[update.host] = folds_of(update)
        away = {n for names in found.values() for n in names}
        listed = set()
        # what folds is a leaf (no ports): left out of the tree, not walked past 600 times
        views = [v for v in update.interfaces if v.iface.name not in away] if away else update.interfaces
        for depth, view in tree(views, sort, lambda v: visible(update.host, v)):
            key = ("iface", update.host, view.iface.name)
            listed.add(view.iface.name)
            rows.append(Row(key, update.host, depth + 1, update, view, badge_map.get(key)))
        rows += fold_rows(update, found, listed, False)
    return rows


def clean(text: object) -> str:
    """Remote text made printable (control characters shown as \\xNN)."""
    return units.printable(str(text))


def name_cell(row: Row, folded: bool = False) -> str:
    if row.fold is not None:
        count = len(row.fold.names)
        return (
            f"{clean(row.host)}/{count} {clean(row.fold.pattern)}"
            if row.flat
            else f" {count} {clean(row.fold.pattern)}"
        )
    if row.view is None:  # a host row (a fold row returned above)
        return ("▸ " if folded else "▾ ") + clean(row.host)
    iface = row.view.iface
    marker = "*" if iface.default_route else " "
    if row.flat:
        return f"{marker}{clean(row.host)}/{clean(iface.name)}"
    return "  " * (row.depth - 1) + marker + clean(iface.name)


def host_summary(update: HostUpdate, in_bytes: bool = False) -> str:
    """The host row's text after its name: short OS and state (and what explains the state),
    then the host's totals while its rates are live (core.totals.host_totals says over what)."""
    os_text = short_os(update) if (update.os or update.os_detail) else ""
    state = state_text(update, brief=True)
    note = stale_note(update)
    if note:
        state += f" · {note}"
    text = f"{os_text}  {state}" if os_text else state
    totals = host_totals(update)
    if totals is not None:
        t = totals.rates
        text += (
            f" · RX {units.rate(t.rx_bps, in_bytes)} TX {units.rate(t.tx_bps, in_bytes)}"
            f" · Err/s {units.per_second(units.sum_known(t.rx_errors_ps, t.tx_errors_ps))}"
            f" Drop/s {units.per_second(units.sum_known(t.rx_drops_ps, t.tx_drops_ps))}"
            f" · {units.per_second(t.rx_pps)}/{units.per_second(t.tx_pps)} pps"
        )
    return text


FOLD_NOTE = (
    f"idle: under {BUSY_BPS / 1000:.0f} kb/s, no errors, "
    f"drops or state change for {IDLE_S:.0f} s · Enter shows them, v all"
)


def _next_try(state: HostState, detail: HostDetail) -> str:
    """When a host waiting to try again will (a clock time stays true while the row sits
    there; a countdown would not), or that it is trying right now."""
    at = math.nan if detail.retry_at is None else detail.retry_at
    if math.isfinite(at) and 0 < at < 1e11:
        return f" (next try at {time.strftime('%H:%M:%S', time.localtime(at))})"
    if detail.retry_in_s is not None:
        return f" (next try in {detail.retry_in_s:.0f} s)"
    return " (trying now)" if state is HostState.RECONNECTING else ""


def state_text(update: HostUpdate, brief: bool = False) -> str:
    """The state and what explains it; ``brief`` (a host row) leaves the key's fingerprint to
    the trust dialog and the host screen."""
    state, detail = update.state, update.detail
    text = state_word(update)
    if state in (HostState.RECONNECTING, HostState.UNREACHABLE, HostState.ERROR) and update.error:
        text += f": {clean(update.error)}"
    if state.retryable and state is not HostState.LIVE:
        text += _next_try(state, detail)
    fingerprint = "" if brief else f" {clean(detail.fingerprint or '')}"
    if state is HostState.HOST_KEY_UNKNOWN:
        text += f"{fingerprint} — Enter to review and trust"
    elif state is HostState.HOST_KEY_CHANGED:
        text += f"{fingerprint} — refused; check the host, then fix known_hosts"
    elif state is HostState.AUTH_FAILED and update.error:
        text += f": {clean(update.error)}"
    return text
