"""Workers report through messages, and a failure nobody foresaw is shown, never swallowed.

A screen's worker posts its result as a message (the screen's handler updates the widgets); a
worker that raises instead ends in the ERROR state, which Textual tells only the worker's own
screen. ``ShowsWorkerFailures`` turns that into one line in place of the screen's progress and
a ``WorkerFailed`` for the app, whose one handler shows it and logs the traceback: a screen is
never left saying "probing…" for ever, and the dashboard never exits."""

from __future__ import annotations

import logging

from rich.text import Text
from textual.message import Message
from textual.worker import Worker, WorkerState

from ..core.logs import log_path
from .state.rows import clean

log = logging.getLogger("linkdeck.ui")


def failure_line(worker: Worker) -> str:
    """One printable line: what failed and why."""
    error = worker.error
    what = worker.name or worker.group
    return clean(" ".join(f"{what} failed: {type(error).__name__}: {error}".split()))


class WorkerFailed(Message):
    """A worker ended with an exception nothing caught; ``line`` says so."""

    def __init__(self, line: str, error: BaseException | None) -> None:
        super().__init__()
        self.line, self.error = line, error


class ShowsWorkerFailures:
    """Mixed into a screen that runs workers: ``show_failure`` puts the line where its result
    would have gone; the app is told in any case."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            line = failure_line(event.worker)
            self.show_failure(line)
            self.app.post_message(WorkerFailed(line, event.worker.error))  # type: ignore[attr-defined]

    def show_failure(self, line: str) -> None:
        """Where the screen shows it (its progress line); nothing by default."""


def pair_failure(src: str, dst: str, line: str) -> Text:
    """A one-pair screen's page when its worker failed: the pair, the line, how to leave."""
    text = Text(f"{clean(src)} → {clean(dst)}\n", style="bold")
    text.append(line + "\n", style="red")
    text.append("Esc closes.", style="dim")
    return text


def report(message: WorkerFailed) -> str:
    """What the app shows for a failure: the line and where the traceback went."""
    log.error(message.line, exc_info=message.error)
    return f"{message.line} (details: {log_path()})"
