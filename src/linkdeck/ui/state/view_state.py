"""How the dashboard shows the fleet: sort, filter, rows hidden, folds (hosts and idle virtual
interfaces), grouping, units and columns. One object, owned by the app (which changes it on keys) and read by the table
(which draws by it); nothing keeps a copy, so the header, the rows and the status line never disagree. Pure: no textual,
no rich."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Container, Iterable, Mapping

from ...core.model import HostUpdate
from ...settings.config import UI_COLUMNS, Hide, Settings
from ..widgets.sparkline import GRAPH_SCALES
from .rows import SORTS, Badge, Row, RowKey, build_rows


@dataclass
class ViewState:
    sort: str = "name"
    filter_text: str = ""
    hide: Hide = Hide.NONE  # what `h` hides
    folded: set[str] = field(default_factory=set)  # hosts whose interfaces are folded away
    fold_idle: bool = True  # idle virtual interfaces fold into one row per host and name pattern
    unfolded: set[tuple[str, str]] = field(default_factory=set)  # (host, pattern) opened with Enter
    grouped: bool = True  # interfaces stay under their host; g sorts them across hosts
    in_bytes: bool = False
    graph_scale: str = "peak"  # sparkline.GRAPH_SCALES: what a full cell of the table's graphs means
    columns: tuple[str, ...] = UI_COLUMNS

    @classmethod
    def from_settings(cls, settings: Settings, columns: tuple[str, ...]) -> ViewState:
        return cls(
            hide=settings.hide, fold_idle=settings.fold_idle, in_bytes=settings.units == "bytes", columns=columns
        )

    def rows(
        self,
        updates: Iterable[HostUpdate],
        badge_map: Mapping[RowKey, Badge],
        idle: Callable[[str], Container[str]] | None = None,
    ) -> list[Row]:
        """The table's rows for these hosts, as this view shows them (``idle``: a host's idle
        interfaces)."""
        return build_rows(
            updates,
            sort=self.sort,
            filter_text=self.filter_text,
            hide=self.hide,
            badge_map=badge_map,
            folded=self.folded,
            grouped=self.grouped,
            idle=idle,
            fold_idle=self.fold_idle,
            unfolded=self.unfolded,
        )

    def next_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]

    def next_graph_scale(self) -> None:
        self.graph_scale = GRAPH_SCALES[(GRAPH_SCALES.index(self.graph_scale) + 1) % len(GRAPH_SCALES)]

    def next_hide(self) -> None:
        order = list(Hide)
        self.hide = order[(order.index(self.hide) + 1) % len(order)]

    def toggle_fold(self, host: str) -> None:
        self.folded ^= {host}

    def fold_all(self, hosts: set[str]) -> None:
        """Fold every host, or unfold them all when all are folded already."""
        self.folded = set() if self.folded >= hosts else set(hosts)

    def toggle_idle_folds(self) -> None:
        """Fold idle virtual interfaces again everywhere, or show them all."""
        self.fold_idle = not self.fold_idle
        self.unfolded.clear()
