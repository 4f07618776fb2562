"""linkdeck's own test traffic through each host, as a replay meets it: what
``TestSession.own_traffic`` answered live at each moment, from the recorded "test" events
(written when a test ended) and "own" events (written when its sockets were gone), so the
replay's findings treat a host's drops as the live session did.

A test's event comes after its traffic started: the player looks ahead for it
(``ahead``), as far as a test can last.
"""

from __future__ import annotations

import math
from typing import Iterable

# Before a test's event its path MTU probe and iperf3 ran: without the outcome's own timings
# this much is taken for the probe and the connections around iperf3.
TEST_SETUP_S = 10.0


def span(event: dict) -> tuple[set[str], float, float] | None:
    """The hosts of a recorded "test" event and when its traffic started and ended."""
    outcome = event.get("outcome")
    if not isinstance(outcome, dict):
        return None
    result = outcome.get("result")
    if not isinstance(result, dict):
        return None
    try:
        end = float(event["t"])
        timings = outcome.get("timings") or {}
        took = (
            float(timings["verdict"]) - float(timings["start"]) if "verdict" in timings and "start" in timings else None
        )
        if took is None:
            took = float(result.get("duration_s") or 0.0) + TEST_SETUP_S
    except (KeyError, TypeError, ValueError):
        return None
    hosts = {str(h) for h in (result.get("src"), result.get("dst")) if isinstance(h, str)}
    return hosts, end - took, end


class OwnTraffic:
    """Fed every event a player plays; ``at`` answers as ``TestSession.own_traffic`` did."""

    def __init__(self) -> None:
        self.lingering: set[str] = set()  # a test ended through it, its sockets not yet gone
        self.ended: dict[str, float] = {}

    def play(self, event: dict) -> None:
        kind = event.get("ev")
        if kind == "test" and (found := span(event)) is not None:
            hosts, _, end = found
            for host in hosts:
                self.ended[host] = max(end, self.ended.get(host, end))
                if event.get("own") is True:  # an "own" event will say when its sockets went
                    self.lingering.add(host)
        elif kind == "own" and isinstance(event.get("h"), str):
            self.lingering.discard(event["h"])
            try:
                self.ended[event["h"]] = float(event["ended"])
            except (KeyError, TypeError, ValueError):
                pass

    def at(self, host: str, now: float, ahead: Iterable[dict]) -> float | None:
        """inf while a test through ``host`` runs (its event among the ones ``ahead``, its
        start passed) or its sockets linger; else when that last ended (None: never)."""
        if host in self.lingering:
            return math.inf
        for event in ahead:
            if event.get("ev") == "test" and (found := span(event)) is not None:
                hosts, start, _ = found
                if host in hosts and start <= now:
                    return math.inf
        return self.ended.get(host)
