"""A Static whose text is laid out for the width it gets: drawn again whenever that width
changes (a terminal resized, a scrollbar appearing once the text is taller than the screen).
Text laid out for a wider body would be wrapped again by the widget, its words at column 0."""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual.widgets import Static


class Fitted(Static):
    _layout: Callable[[int], Text] | None = None
    _width = 0

    def show(self, layout: Callable[[int], Text] | None) -> None:
        """Lay out with ``layout(width)`` now and at every width to come; None keeps what the
        body shows (an error written with update) through a resize."""
        self._layout, self._width = layout, 0
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width = self.content_size.width
        if self._layout is not None and width and width != self._width:
            self._width = width
            self.update(self._layout(width))
