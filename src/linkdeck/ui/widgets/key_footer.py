"""The dashboard's footer: Textual's, with the keys that matter most first and only as many
whole ones as the width holds (Textual's own clips the last one mid-word and keeps the
declaration order, so the keys a slow transfer needs never made it on screen)."""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from ..bindings import FOOTER_ORDER

_RANK = {key_id: rank for rank, key_id in enumerate(FOOTER_ORDER)}


def footer_rank(key_id: str | None) -> int:
    """A screen's own keys (a replay's pause and step) come before the dashboard's."""
    return _RANK.get(key_id or "", -1)


def key_width(key_display: str, description: str) -> int:
    """A FooterKey's width: the key padded by one each side, the description and one space."""
    return cell_len(key_display) + cell_len(description) + 3


class KeyFooter(Footer):
    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        shown = [(b, enabled, tip) for (_, b, enabled, tip) in self.screen.active_bindings.values() if b.show]
        shown.sort(key=lambda entry: footer_rank(entry[0].id))
        room = self.size.width or self.app.size.width
        seen: set[str] = set()
        for binding, enabled, tooltip in shown:
            if binding.action in seen:
                continue
            display = self.app.get_key_display(binding)
            width = key_width(display, binding.description)
            if width > room:
                break  # the order is the priority: no lesser key in the place of a greater one
            room -= width
            seen.add(binding.action)
            yield FooterKey(
                binding.key, display, binding.description, binding.action, disabled=not enabled, tooltip=tooltip
            ).data_bind(compact=Footer.compact)

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready:
            self.call_after_refresh(self.recompose)
