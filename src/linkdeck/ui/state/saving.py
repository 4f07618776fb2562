"""What a screen shows, saved as Markdown beside the recordings (``s`` on a test's result, a
diagnosis and the flows screen): the screen's own text, as the terminal shows it, so the file
says what the user read; the path is shown whole on the screen that saved it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from rich.console import Console

from .rows import clean

if TYPE_CHECKING:
    from textual.app import RenderResult

SAVE_WIDTH = 100  # the saved text's width: wide enough for the panels' columns, narrow enough to read


def plain(renderables: Iterable[RenderResult], width: int = SAVE_WIDTH) -> str:
    """What widgets render (rich renderables, or textual's Content, which rich prints through its
    ``__rich__``) as plain text, laid out at ``width`` as a terminal would draw them."""
    console = Console(width=width, color_system=None, force_terminal=False, record=False)
    with console.capture() as capture:
        for renderable in renderables:
            console.print(renderable)
    return "\n".join(line.rstrip() for line in capture.get().splitlines()).strip("\n") + "\n"


def markdown(title: str, body: str, now: float) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(now))
    return f"# {title}\n\nSaved by linkdeck at {stamp}.\n\n```text\n{body}```\n"


def save(directory: Path, kind: str, title: str, body: str, now: float | None = None) -> Path:
    """Writes ``linkdeck-KIND-YYYYmmdd-HHMMSS.md`` in ``directory``; OSError if it cannot."""
    now = time.time() if now is None else now
    path = directory / time.strftime(f"linkdeck-{kind}-%Y%m%d-%H%M%S.md", time.localtime(now))
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(markdown(clean(title), body, now), encoding="utf-8")
    return path
