"""Host updates on their way to the app: at most one message per host in Textual's queue.

Textual merges a message only with the one right behind it (the message pump asks
``Message.can_replace`` of the head of its queue alone), so with several hosts' updates
interleaved nothing merges, and a dashboard that falls behind its hosts holds every update of
every host (a 600-link host's is ~600 views). Each update is the host's whole state (the
collector carries its last one forward, error and state included), so a newer one replaces one
still waiting for the screen. What needs every sample — the graphs, the idle counts, the
findings' windows (an error burst in one tick, a clock that went back) — is not the newest
values only: the replaced update is booked there at once, in arrival order, so nothing it
carried is lost, and only drawing it is skipped. Called on the app's event loop only (the
collector and the Prometheus source run there): no lock.
"""

from __future__ import annotations

from typing import Callable

from ...core.model import HostUpdate
from ..messages import HostUpdated


class Inbox:
    def __init__(self, post: Callable[[HostUpdated], bool], book: Callable[[HostUpdate], None]) -> None:
        self._post = post  # the app's post_message
        self._book = book  # every sample's bookkeeping, without drawing
        self._waiting: dict[str, HostUpdated] = {}  # host → its message still in the queue
        self.merged = 0  # updates replaced before they were shown

    def put(self, update: HostUpdate) -> None:
        """The collector's sink: post ``update``, or let it replace the host's waiting one."""
        waiting = self._waiting.get(update.host)
        if waiting is not None:
            self._book(waiting.update)
            waiting.update = update
            self.merged += 1
            return
        message = HostUpdated(update)
        if self._post(message):  # False while the app closes: nothing will take it
            self._waiting[update.host] = message

    def take(self, message: HostUpdated) -> bool:
        """The app handles ``message`` now: whether to apply its update (not when ``clear``
        dropped it)."""
        if message.dropped:
            return False
        if self._waiting.get(message.update.host) is message:
            del self._waiting[message.update.host]
        return True

    def settle(self, apply: Callable[[HostUpdate], None]) -> None:
        """Apply every waiting update now: a replay's jump forward applies its own directly, and
        these, older, taken after them would be shown, and booked, out of order."""
        waiting, self._waiting = self._waiting, {}
        for message in waiting.values():
            message.dropped = True
            apply(message.update)

    def clear(self) -> None:
        """A replay's rewind: updates of the old timeline still queued are not applied."""
        for message in self._waiting.values():
            message.dropped = True
        self._waiting.clear()

    def __len__(self) -> int:
        return len(self._waiting)
