"""``linkdeck replay FILE``: the dashboard on a recording. A ``ReplayFleet`` stands where the
collectors' Fleet stands and plays the recorded reads through the same parsers (recording/
replay.py) at 1×–60×; everything after the update (rows, findings, details, graphs, inline
verdicts) is the live dashboard's own code. Keys that would touch a host are off."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
from functools import partial
from typing import Callable

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ..commands.recorded import open_recording, outcome_from_json, parse_at
from ..fleet.collector import UpdateSink
from ..probe.session import measured_path
from ..recording.fileformat import Recording
from ..recording.replay import Player, default_lead
from .app import LinkdeckApp
from .bindings import APP_KEYS
from .screens.recorded_flows_screen import RecordedFlowsScreen
from .state.rows import GRAPH_SPAN_S

SPEEDS = (1, 2, 5, 10, 30, 60)
REPLAY_BINDINGS: list[BindingType] = [
    Binding("space", "pause", "Pause", priority=True, id="replay_pause"),
    Binding("right", "step(1)", "Step", priority=True, id="replay_step"),
    Binding("left", "step(-1)", "Back", priority=True, id="replay_back"),
    Binding("plus,equals_sign", "speed(1)", "Faster", id="replay_faster"),
    Binding("minus", "speed(-1)", "Slower", id="replay_slower"),
    Binding("g", "jump", "Go to", id="replay_jump"),
]


def clock(seconds: float) -> str:
    """A position in the recording: "00:27", "01:01", past an hour "1:02:03"."""
    whole = int(max(seconds, 0.0))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


class ReplayFleet:
    """Plays a recording to ``sink`` in (scaled) real time; ``jump`` and ``step`` move it."""

    def __init__(self, recording: Recording, sink: UpdateSink, on_test, on_learn=lambda found: None) -> None:
        self.recording = recording
        self.sink, self.on_test = sink, on_test
        self.on_learn = on_learn  # told of each recorded subnet MTU probe as it is played
        self.player = Player(recording)
        self.told: set[str] = set()  # the damage notes told so far
        self.on_damage: Callable[[str], None] | None = None
        self.speed = 1
        self.paused = False
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="replay")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def restart(self, name: str) -> None:
        """Nothing to reconnect in a replay."""

    def record(self, tap) -> None:
        """A replay is not recorded again."""

    def poke(self) -> None:
        self._wake.set()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            if self.paused or self.player.done:
                await self._wake.wait()
                continue
            due = self.player.next_time()
            if due is None:
                continue
            delay = (due - self.player.now) / self.speed
            if delay > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), delay)
                    continue  # paused, sped up or moved: look again
                except asyncio.TimeoutError:
                    pass
            self.forward_to(due)

    def forward_to(self, when: float) -> None:
        tests, learnt = len(self.player.tests), len(self.player.learnt)
        for update in self.player.advance_to(when):
            self.sink(update)
        for event in self.player.tests[tests:]:
            self.on_test(event)
        for found in self.player.learnt[learnt:]:
            self.on_learn(found)
        self.say_damage()

    def say_damage(self) -> None:
        """Each new note of damage met in the file so far, told once (``on_damage``)."""
        notes = self.recording.damage.notes()
        for note in notes:
            if note not in self.told and self.on_damage is not None:
                self.on_damage(note)
        self.told.update(notes)

    def jump(self, when: float, settings) -> None:
        """Stand at ``when``, skimmed to from the checkpoint before it (each host as it was
        then, nothing played through the dashboard yet)."""
        self.player = Player.at(self.recording, when, settings, lead=0, diagnose=False)
        for update in self.player.updates():
            self.sink(update)
        for event in self.player.tests:
            self.on_test(event)
        for found in self.player.learnt:
            self.on_learn(found)

    def next_tick(self, interval: float) -> float | None:
        """One tick of the whole session on: ``interval`` later, when every host has sent its
        next sample (not the next sample of whichever host comes first); over a gap in the
        recording, the next sample. None at the end."""
        if self.player.now >= self.recording.end:
            return None
        after = self.player.next_read_time()
        return min(max(self.player.now + interval, after or 0.0), self.recording.end)

    def previous_tick(self, interval: float) -> float:
        return max(self.player.now - interval, self.recording.start)


def jump_lead(settings) -> float:
    """What a jump plays in full before the time it goes to: what the recording layer needs,
    and the span the graphs show."""
    return max(default_lead(settings), GRAPH_SPAN_S + 2 * settings.interval)


class JumpScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = "JumpScreen { align: center middle; } JumpScreen > Static, JumpScreen > Input { width: 70; }"

    def compose(self):
        yield Static("Go to: seconds from the start (90, 1m30s), from the end (-30s), a time of day (14:05:30)")
        yield Input(id="jump")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


# Keys a replay turns off (they would touch a host or record again): out of the footer; still
# bound, so pressing one says why it is off.
OFF_IN_REPLAY = tuple(
    k for k in APP_KEYS if (k.action.startswith("probe(") and k.id != "flows") or k.action == "toggle_record"
)


class ReplayApp(LinkdeckApp):
    BINDINGS = REPLAY_BINDINGS + [Binding(k.key, k.action, k.description, show=False, id=k.id) for k in OFF_IN_REPLAY]
    TITLE = "linkdeck replay"

    def __init__(self, recording: Recording, **kw) -> None:
        player = Player(recording)
        super().__init__(player.settings, [], fleet_factory=self._make_fleet, **kw)
        self.source = recording
        self.initial = {u.host: u for u in player.updates()}  # every recorded host has a row
        self.replay: ReplayFleet | None = None
        self.clock = lambda: self.replay.player.now if self.replay else recording.start
        # linkdeck's own traffic as the live session knew it then: the recorded tests and
        # their sockets' end, so the replay raises the findings live raised and no others
        self.tests.own_traffic = lambda host: self.replay.player.own_traffic(host) if self.replay else None  # type: ignore[method-assign]
        self.advice.probing = False  # a replay touches no host
        self.advice.checking_config = False  # its settings are the recording's
        self.reset()

    def _make_fleet(self, sink: UpdateSink) -> ReplayFleet:
        # the recorded subnet MTU probes: MTU_MISMATCH names the side live named
        self.replay = ReplayFleet(self.source, sink, self._recorded_test, self.learn)
        self.replay.on_damage = lambda note: self.notify(
            f"{self.source.path}: {note}", severity="warning", markup=False, timeout=15
        )
        self.replay.say_damage()
        return self.replay

    def _recorded_test(self, event: dict) -> None:
        try:
            outcome = outcome_from_json(event["outcome"])
        except (KeyError, TypeError, ValueError):
            return
        for host, ifname in ((outcome.result.src, outcome.src_iface), (outcome.result.dst, outcome.dst_iface)):
            if ifname:
                self.tests.last[(host, ifname)] = outcome
        path, at = outcome.result.path_mtu, event.get("t")
        if path is not None and outcome.result.src != outcome.result.dst and isinstance(at, (int, float)):
            # what the test's probe proved is a finding in the replay as it was live
            self.passes.measured(measured_path(path, outcome.src, outcome.dst, outcome.result.address, float(at)))
        self._schedule_rebuild()

    def status_extra(self) -> Text | None:
        if self.replay is None:
            return None
        now, start = self.replay.player.now, self.source.start
        when = dt.datetime.fromtimestamp(now).strftime("%H:%M:%S")
        mode = "paused" if self.replay.paused else f"×{self.replay.speed}"
        where = f"{clock(now - start)} / {clock(self.source.end - start)}"
        return Text.assemble(("▶ REPLAY ", "bold magenta"), (where, "bold"), f" {when} {mode} │ ")

    # -- keys --------------------------------------------------------------------------------

    # A key before the app has made its fleet (on mount) has no recording to move: it does nothing.

    def action_pause(self) -> None:
        replay = self.replay
        if replay is None:
            return
        replay.paused = not replay.paused
        replay.poke()
        self._show_status()

    def action_speed(self, change: int) -> None:
        replay = self.replay
        if replay is None:
            return
        i = SPEEDS.index(replay.speed) + change
        replay.speed = SPEEDS[min(max(i, 0), len(SPEEDS) - 1)]
        replay.poke()
        self._show_status()

    def action_step(self, direction: int) -> None:
        replay = self.replay
        if replay is None:
            return
        replay.paused = True
        if direction > 0:
            when = replay.next_tick(self.settings.interval)
            if when is not None:
                replay.forward_to(when)
        else:
            self.go_to(replay.previous_tick(self.settings.interval))
        replay.poke()
        self._show_status()

    def action_jump(self) -> None:
        def chosen(text: str | None) -> None:
            if not text:
                return
            try:
                when = parse_at(text, self.source)
            except ValueError as exc:
                self.notify(str(exc), severity="warning", markup=False)
                return
            self.go_to(when)

        self.push_screen(JumpScreen(), chosen)

    def go_to(self, when: float) -> None:
        """Forward within a little plays on; anywhere else starts from the recording's
        checkpoint before ``when`` with the dashboard's own state reset, and plays the last
        ``jump_lead`` seconds through it, so windows and graphs are as they were then."""
        replay = self.replay
        if replay is None:
            return
        self.inbox.settle(partial(self._guarded, self._apply))  # what play posted goes first
        replay.sink = self._apply  # synchronously, then one rebuild
        if replay.player.now <= when <= replay.player.now + jump_lead(self.settings):
            replay.forward_to(when)
        else:
            self.reset()
            replay.jump(when - jump_lead(self.settings), self.settings)
            replay.forward_to(when)
        replay.sink = self._post_update
        replay.poke()
        self.passes.now_due()
        self._rebuild()

    def _host_selected(self, row) -> None:
        # a recorded host-key prompt is history: nothing to trust from a replay
        self.view.toggle_fold(row.host)
        self._rebuild()

    def action_toggle_record(self) -> None:
        self.notify("A replay is not recorded again: r is off here.", markup=False)

    def action_probe(self, which: str) -> None:
        if which == "flows":  # the flows recorded while the live screen showed them
            row = self.table.selected
            if row is None:
                self.notify("Select a host or interface row first.", severity="warning")
                return
            self.push_screen(RecordedFlowsScreen(row.host, row.view.iface.name if row.view else None))
            return
        self.notify(
            "A replay cannot touch a host: t, m, c, u and d are off (w shows the recorded flows). "
            "linkdeck report FILE shows the recorded tests.",
            markup=False,
        )


# -- the sub-command ------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a recording made by linkdeck record (or the dashboard's r)")


def run(args: argparse.Namespace) -> int:
    recording = open_recording(args.file)
    if recording is None:
        return 2
    ReplayApp(recording).run()
    return 0
