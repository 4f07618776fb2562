"""Messages the collector side posts to the app."""

from __future__ import annotations

from textual.message import Message

from ..core.model import HostUpdate


class HostUpdated(Message):
    """A host's newest state. Merging is the Inbox's (ui/state/inbox.py): Textual's can_replace would
    drop the older of two queued updates unbooked, a sample lost to the graphs and findings."""

    def __init__(self, update: HostUpdate) -> None:
        super().__init__()
        self.update = update  # replaced by a newer one while the message waits (Inbox.put)
        self.dropped = False  # a replay's rewind: its timeline is gone (Inbox.clear)
