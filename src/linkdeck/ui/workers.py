"""Workers report through messages, and a failure nobody foresaw is shown, never swallowed.

A screen's worker posts its result as a message (the screen's handler updates the widgets); a
worker that raises instead ends in the ERROR state, which Textual tells only the worker's own
screen. That screen's handler calls ``tell_failure``, which turns it into one line for the screen
to put in place of its progress and a ``WorkerFailed`` for the app, whose one handler shows it
and logs the traceback: a screen is never left saying "probing…" for ever, and the dashboard
never exits."""

from __future__ import annotations

import logging

from rich.text import Text
from textual.message import Message
from textual.message_pump import MessagePump
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


def tell_failure(app: MessagePump, event: Worker.StateChanged) -> str | None:
    """When the worker failed: the app is told (it shows the line and logs the traceback) and
    the line is returned, for the worker's screen to put where its result would have gone."""
    if event.state is not WorkerState.ERROR:
        return None
    line = failure_line(event.worker)
    app.post_message(WorkerFailed(line, event.worker.error))
    return line


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
