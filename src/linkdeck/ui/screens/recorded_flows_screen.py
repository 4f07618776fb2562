"""``w`` in a replay: the selected host's flows as the recording has them at the replay's
moment (the last round the live flows screen showed by then), with the time it was recorded;
a round older than a few of its intervals is said to be old, never shown as current. A host
whose flows screen was not open while recording says so."""

from __future__ import annotations

import asyncio
import datetime as dt

from rich.text import Text

from ...flows.round_report import recorded
from ..state.rows import clean
from ..widgets.fitted import Fitted
from .flows_screen import FlowsScreen, render

REFRESH_S = 0.5
STALE_ROUNDS = 2.5  # a round older than this many of its intervals is history, not the moment


def _clock(t: float) -> str:
    return dt.datetime.fromtimestamp(t).strftime("%H:%M:%S")


def recorded_view(player, host: str, width: int = 200) -> Text:
    """What the screen shows of ``host`` at ``player``'s moment, laid out for ``width`` columns."""
    event = player.flows.get(host)
    if event is None:
        return Text(
            f"{clean(host)}: no flows recorded up to {_clock(player.now)}: "
            "the flows screen (w) was not open on this host while recording by then. Esc closes."
        )
    got = recorded(event, {h: t.last for h, t in player.tracks.items()})
    if got is None:
        return Text(
            f"{clean(host)}: the round recorded at {_clock(float(event['t']))} could not be read. Esc closes.",
            style="red",
        )
    age = player.now - float(event["t"])
    every = got.interval_s or player.settings.interval
    if age > STALE_ROUNDS * every:
        note = Text(
            f"recorded at {_clock(float(event['t']))}, {age:.0f} s before this moment: "
            "the last round shown live by then (the flows screen closed after it)",
            style="bold yellow",
        )
    else:
        note = Text(f"recorded at {_clock(float(event['t']))}", style="dim")
    return render(got, note, width)


class RecordedFlowsScreen(FlowsScreen):
    """The live flows screen's layout, read from the replay instead of the host."""

    def __init__(self, host: str, iface: str | None) -> None:
        super().__init__(host, iface, REFRESH_S)

    async def _read(self) -> None:
        body = self.query_one("#flows-body", Fitted)
        while True:
            replay = getattr(self.app, "replay", None)  # the ReplayApp's fleet, replaced by a jump
            if replay is not None:
                player = replay.player
                body.show(lambda width: recorded_view(player, self.host, width))
                self.rounds += 1
            await asyncio.sleep(self.interval)
