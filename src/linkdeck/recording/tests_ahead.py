"""The recorded "test" events ahead of a replay's position, found by a read of the recording
of their own that decodes only the lines that can be one: a replay asks on every findings pass
(linkdeck's own traffic, own.py) how far ahead a test runs, and decoding the ten minutes ahead
on a 602-link node costs 0.4 s and 170 MB held.

What it finds is what decoding every event ahead finds. A line that starts as the recorder
writes one, ``{"t":TIME,"ev":"KIND"``, is taken at its word (a JSON object written from a dict
holds each key once); it is decoded when KIND is "test" and when TIME is past the horizon (the
scan stops there only if the line is a whole event). Any other line is decoded. The one
difference: ``limit`` counts lines, where the decoded scan counts events, so a damaged line
among the next ``limit`` counts here.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Iterator

from .fileformat import Recording, decode_event

_HEAD = re.compile(rb'\{"t":(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?),"ev":"([a-z_]*)"[,}]')


class TestsAhead:
    """The scan, moving forward with the replay: each line is read once while the horizon
    only moves later (a replay's clock going back starts it again at its checkpoint)."""

    __test__ = False  # not a pytest class

    def __init__(self, recording: Recording, checkpoint: int) -> None:
        self.recording, self.checkpoint = recording, checkpoint
        self._restart()

    def _restart(self) -> None:
        self._lines: Iterator[tuple[int, bytes]] = enumerate(self.recording.lines(self.checkpoint))
        self._pending: tuple[int, bytes] | None = None  # the line the scan stopped at
        self._found: deque[tuple[int, dict]] = deque()  # (line number, "test" event) scanned
        self._until = float("-inf")

    def after(self, played: int, until: float, limit: int) -> list[dict]:
        """The "test" events on the lines after line ``played``, at most ``limit`` lines on,
        before the first event later than ``until``."""
        if until < self._until:
            self._restart()
        self._until = until
        last = played + limit
        while self._found and self._found[0][0] <= played:
            self._found.popleft()
        while True:
            item = self._pending or next(self._lines, None)
            self._pending = None
            if item is None:
                break
            number, line = item
            if number <= played:
                continue
            if number > last:
                self._pending = item
                break
            head = _HEAD.match(line)
            event = None
            t = float(head.group(1)) if head is not None else None
            if t is None or t > until or head is None or head.group(2) == b"test":
                event = decode_event(line)
                if event is None:
                    continue  # no event: the replay skips it too
                t = float(event["t"])
            if t > until:
                self._pending = item
                break
            if event is not None and event.get("ev") == "test":
                self._found.append((number, event))
        return [event for number, event in self._found if number <= last]
