"""Each host's rows kept between rebuilds while nothing they are made of changed.

The dashboard rebuilds its rows whenever any host sends a sample, but an idle host's rows are
the same as last time: the rate tracker hands on the very tuple of views while its lines do not
change, and keeps each idle interface's view. A host's rows are reused (the same Row objects)
while its views and everything else build_rows reads for it are the same; with new views of the
same interfaces (only rates moved), its idle folds are reused and only the rows around them are
built again. Across hosts (``g``) a host's rows are its run of the one sorted list, kept the
same way with the sort key of each, and the runs are sorted together. Pure: no textual, no rich.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from operator import attrgetter, is_, itemgetter
from typing import Any, Callable, Container, Iterable, Mapping

from ...core.model import HostUpdate, InterfaceView
from ...core.order import sort_key
from .rows import Badge, Row, RowKey, build_rows
from .view_state import ViewState

_IFACE = attrgetter("iface")


@dataclass(slots=True)
class _Kept:
    key: tuple  # everything but the update that the host's rows were built from (_key)
    update: HostUpdate
    rows: list[Row]
    groups: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # build_rows' idle folds, host → …
    order: list[tuple[Any, str]] = field(default_factory=list)  # across hosts: the sort key of each row with a view


def _same_interfaces(old: tuple[InterfaceView, ...], new: tuple[InterfaceView, ...]) -> bool:
    """The same interfaces with the same facts, in the same order (the rate tracker keeps each
    one's Interface while its facts do not change): only their numbers may differ."""
    return len(old) == len(new) and all(map(is_, map(_IFACE, old), map(_IFACE, new)))


class RowCache:
    """The table's rows (ViewState.rows), each host's kept while it did not change."""

    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}
        self.built = 0  # hosts whose rows were built again (not reused), for tests and the benchmark

    def clear(self) -> None:
        self._kept.clear()

    def rows(
        self,
        view: ViewState,
        updates: Iterable[HostUpdate],
        badge_map: Mapping[RowKey, Badge],
        idle: Callable[[str], Container[str]] | None = None,
    ) -> list[Row]:
        updates = list(updates)
        mine: dict[str, list[tuple[RowKey, Badge]]] = {}
        for row_key, badge in badge_map.items():
            mine.setdefault(row_key[1], []).append((row_key, badge))
        unfolded: dict[str, set[str]] = {}
        for host, pattern in view.unfolded:
            unfolded.setdefault(host, set()).add(pattern)
        settings = (view.sort, view.filter_text.lower(), view.hide, view.fold_idle, view.grouped)
        out: list[Row] = []
        kept: dict[str, _Kept] = {}
        for update in updates:
            host = update.host
            key = (
                settings,
                host in view.folded,
                frozenset(unfolded.get(host, ())),
                frozenset(mine.get(host, ())),
                idle(host) if idle is not None else frozenset(),
                update.stale,
            )
            old = self._kept.get(host)
            if old is not None and old.key == key and old.update.interfaces is update.interfaces:
                rows = old.rows
                if old.update is not update and rows and rows[0].is_host:
                    # the host row shows the update itself (state, error, totals); the others
                    # show its views, which are the ones they hold
                    rows = [replace(rows[0], update=update), *rows[1:]]
                entry = _Kept(key, update, rows, old.groups, old.order)
            else:
                same = old is not None and old.key == key and _same_interfaces(old.update.interfaces, update.interfaces)
                groups = old.groups if same and old is not None else {}
                rows = build_rows(
                    [update],
                    sort=view.sort,
                    filter_text=view.filter_text,
                    hide=view.hide,
                    badge_map=badge_map,
                    folded=view.folded,
                    grouped=view.grouped,
                    idle=idle,
                    fold_idle=view.fold_idle,
                    unfolded=view.unfolded,
                    known_folds=groups,
                )
                # across hosts: the host's rows are its run of the list, sorted as build_rows
                # sorts the whole list, its folds after them
                order = (
                    [] if view.grouped else [(sort_key(r.view, view.sort), host) for r in rows if r.view is not None]
                )
                entry = _Kept(key, update, rows, groups, order)
                self.built += 1
            kept[host] = entry
            out += entry.rows
        self._kept = kept  # a host gone is forgotten
        if view.grouped:
            return out
        # every host's interfaces in one list sorted by build_rows' key (stable: a host's own
        # keep their order, and no two hosts' keys are equal), then every host's folds
        flat = [(k, r) for e in kept.values() for k, r in zip(e.order, e.rows)]
        flat.sort(key=itemgetter(0))
        return [r for _, r in flat] + [r for e in kept.values() for r in e.rows[len(e.order) :]]
