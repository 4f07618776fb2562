"""A test's result laid out for the width it gets (``probe_texts.result_text``): the panel the
test screen (``t``, ``c``) fills when the test ends, and the screen a row of the all-addresses
table opens (Enter) to read that address's whole result."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...probe import Outcome
from .key_footer import KeyFooter
from .probe_texts import result_text


class ResultPanel(Static):
    """Drawn again whenever its width changes (a terminal resized, a scrollbar appearing)."""

    outcome: Outcome | None = None
    _width = 0

    def show(self, outcome: Outcome) -> None:
        self.outcome, self._width = outcome, 0
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width = self.content_size.width
        if self.outcome is not None and width and width != self._width:
            self._width = width
            self.update(result_text(self.outcome, width))


class ResultScreen(ModalScreen):
    """One finished test's whole result, read-only."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]
    DEFAULT_CSS = """
    ResultScreen { align: center middle; }
    ResultScreen > VerticalScroll { width: 100%; height: auto; max-height: 100%; border: round $accent; padding: 0 1; }
    """

    def __init__(self, outcome: Outcome) -> None:
        super().__init__()
        self.outcome = outcome

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield ResultPanel()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(ResultPanel).show(self.outcome)
