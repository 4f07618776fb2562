"""Messages the collector side posts to the app."""

from __future__ import annotations

from textual.message import Message

from ..model import HostUpdate


class HostUpdated(Message):
    """A host's newest state. Only the newest matters: a slow UI drops the stale ones."""

    def __init__(self, update: HostUpdate) -> None:
        super().__init__()
        self.update = update

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, HostUpdated) and message.update.host == self.update.host
