"""How the dashboard shows the fleet: sort, filter, idle rows hidden, folds, grouping, units and
columns. One object, owned by the app (which changes it on keys) and read by the table (which
draws by it); nothing keeps a copy, so the header, the rows and the status line never disagree.
Pure: no textual, no rich."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ..config import UI_COLUMNS, Settings
from ..model import HostUpdate
from .rows import SORTS, Badge, Row, RowKey, build_rows


@dataclass
class ViewState:
    sort: str = "name"
    filter_text: str = ""
    hide_idle: bool = False
    folded: set[str] = field(default_factory=set)  # hosts whose interfaces are folded away
    grouped: bool = True  # interfaces stay under their host; g sorts them across hosts
    in_bytes: bool = False
    columns: tuple[str, ...] = UI_COLUMNS

    @classmethod
    def from_settings(cls, settings: Settings, columns: tuple[str, ...]) -> ViewState:
        return cls(hide_idle=settings.hide_idle, in_bytes=settings.units == "bytes", columns=columns)

    def rows(self, updates: Iterable[HostUpdate], badge_map: Mapping[RowKey, Badge]) -> list[Row]:
        """The table's rows for these hosts, as this view shows them."""
        return build_rows(
            updates, sort=self.sort, filter_text=self.filter_text, hide_idle=self.hide_idle, badge_map=badge_map, folded=self.folded, grouped=self.grouped
        )

    def next_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]

    def toggle_fold(self, host: str) -> None:
        self.folded ^= {host}

    def fold_all(self, hosts: set[str]) -> None:
        """Fold every host, or unfold them all when all are folded already."""
        self.folded = set() if self.folded >= hosts else set(hosts)
