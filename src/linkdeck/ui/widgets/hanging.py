"""Label-and-value text whose wrapped lines keep a hanging indent: a value too long for the
screen continues under itself, never at the margin under its label."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text


class Hanging:
    """``text`` drawn line by line; a line wider than the screen wraps, each continuation
    indented by ``indent`` cells (the label column's width). ``plain`` is the text unwrapped.
    (Not a Text subclass: Textual draws a Text itself, without asking it how.)"""

    def __init__(self, text: Text, indent: int) -> None:
        self.text, self.indent = text, indent

    @property
    def plain(self) -> str:
        return self.text.plain

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((line.cell_len for line in self.text.split("\n")), default=0)
        return Measurement(min(widest, self.indent + 8), widest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        indent = self.indent if width > self.indent + 8 else 0  # too narrow to hang: plain wrap
        for line in self.text.split("\n", allow_blank=True):
            head, rest = line[:indent], line[indent:]
            for n, part in enumerate(rest.wrap(console, max(1, width - indent), overflow="fold") or [Text()]):
                yield from console.render(
                    Text.assemble(head if n == 0 else " " * indent, part, end=""),
                    options.update(width=width, no_wrap=True),
                )
                yield Segment.line()
