"""The dashboard's keys that only change how the table shows the fleet (sort, grouping, folds,
units, what is hidden): each changes the ViewState, then redraws the rows (``rebuild``) or, when
the columns or their words change too, the table's layout first (``relayout``). The app holds
one and its ``action_*`` methods call it."""

from __future__ import annotations

from typing import Callable, Iterable

from ..widgets.table import InterfaceTable
from .rows import Row
from .view_state import ViewState


class ViewKeys:
    def __init__(
        self,
        view: ViewState,
        *,
        table: Callable[[], InterfaceTable],
        hosts: Callable[[], Iterable[str]],
        rebuild: Callable[[], None],
        relayout: Callable[[], None],
    ) -> None:
        self._view, self._table, self._hosts = view, table, hosts
        self._rebuild, self._relayout = rebuild, relayout

    def cycle_sort(self) -> None:
        self._view.next_sort()
        self._relayout()

    def sort_by(self, sort: str) -> None:
        self._view.sort = sort
        self._relayout()

    def toggle_grouped(self) -> None:
        self._view.grouped = not self._view.grouped
        self._relayout()

    def toggle_fold(self) -> None:
        row = self._table().selected
        if row is not None and self._view.grouped:
            self._view.toggle_fold(row.host)
            self._rebuild()

    def fold_all(self) -> None:
        self._view.fold_all(set(self._hosts()))
        self._rebuild()

    def toggle_idle_folds(self) -> None:
        self._view.toggle_idle_folds()
        self._rebuild()

    def toggle_units(self) -> None:
        self._view.in_bytes = not self._view.in_bytes
        self._relayout()

    def toggle_graph_scale(self) -> None:
        self._view.next_graph_scale()
        self._relayout()

    def toggle_hidden(self) -> None:
        self._view.next_hide()
        self._relayout()

    def unfold(self, row: Row) -> None:
        """Show the idle interfaces a fold row stands for (v folds them again)."""
        if row.fold is not None:
            self._view.unfolded.add((row.host, row.fold.pattern))
            self._rebuild()
