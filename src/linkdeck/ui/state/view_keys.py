"""The dashboard's keys that only change how the table shows the fleet (sort, grouping, folds,
units, what is hidden): each changes the app's ViewState and redraws."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..widgets.table import InterfaceTable
from .rows import Row

if TYPE_CHECKING:
    from ...core.model import HostUpdate
    from .view_state import ViewState


class ViewKeys:
    """Mixed into LinkdeckApp, which provides what is declared here."""

    if TYPE_CHECKING:
        view: ViewState
        updates: dict[str, HostUpdate]

        @property
        def table(self) -> InterfaceTable: ...

        def _rebuild(self) -> None: ...

        def _changed_view(self) -> None: ...

    def action_cycle_sort(self) -> None:
        self.view.next_sort()
        self._changed_view()

    def on_interface_table_sort_by(self, message: InterfaceTable.SortBy) -> None:
        self.view.sort = message.sort
        self._changed_view()

    def action_toggle_grouped(self) -> None:
        self.view.grouped = not self.view.grouped
        self._changed_view()

    def action_toggle_fold(self) -> None:
        row = self.table.selected
        if row is not None and self.view.grouped:
            self.view.toggle_fold(row.host)
            self._rebuild()

    def action_fold_all(self) -> None:
        self.view.fold_all(set(self.updates))
        self._rebuild()

    def action_toggle_idle_folds(self) -> None:
        self.view.toggle_idle_folds()
        self._rebuild()

    def action_toggle_units(self) -> None:
        self.view.in_bytes = not self.view.in_bytes
        self._changed_view()

    def action_toggle_graph_scale(self) -> None:
        self.view.next_graph_scale()
        self._changed_view()

    def action_toggle_hidden(self) -> None:
        self.view.next_hide()
        self._changed_view()

    def _unfold(self, row: Row) -> None:
        """Show the idle interfaces a fold row stands for (v folds them again)."""
        if row.fold is not None:
            self.view.unfolded.add((row.host, row.fold.pattern))
            self._rebuild()
