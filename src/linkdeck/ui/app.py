"""The dashboard app: the collector runs in this event loop and reports through messages."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path
from typing import Callable, Iterable

from rich.text import Text
from textual.app import App, ComposeResult, SystemCommand
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import Worker

from ..core.freshness import as_seen, stale_since
from ..core.model import Finding, HostState, HostUpdate, SubnetMtu
from ..core.selfcost import SelfCost
from ..fleet.collector import Fleet, Opener, UpdateSink, open_adapter
from ..present.outcome import last_test_cell
from ..probe import Outcome, iperf
from ..probe.session import TestSession
from ..settings.config import HostSpec, Settings
from .bindings import APP_KEYS, palette_title, to_bindings
from .dashboard import Watcher
from .messages import HostUpdated
from .screens import probe_screens
from .screens.column_picker import ColumnPicker
from .screens.help_screen import HelpScreen
from .screens.host_screen import HostScreen
from .screens.hostkey_screen import offer_trust
from .screens.interface_screen import DetailScreen
from .state.advice import Advice
from .state.findings_passes import FindingsPasses
from .state.idle import Activity
from .state.inbox import Inbox
from .state.recording import RecordSwitch
from .state.row_cache import RowCache
from .state.rows import RateHistory, Row, badges, clean, same_rows
from .state.view_keys import ViewKeys
from .state.view_state import ViewState
from .widgets.columns import load_choice, save_choice
from .widgets.findings_pane import FindingsPane
from .widgets.header import status_text
from .widgets.key_footer import KeyFooter
from .widgets.table import InterfaceTable
from .workers import WorkerFailed, report, tell_failure

FleetFactory = Callable[[UpdateSink], Watcher]
OWN_COST_EVERY_S = 3.0  # linkdeck's own CPU and memory in the header
GATHER_S = 0.05  # how long the numbers of a burst of hosts answering one tick wait for the rest


class DashboardScreen(Screen):
    """The screen the dashboard's widgets are on: it tells the advice when another screen comes
    in front of it and when it is in front again."""

    def on_screen_suspend(self) -> None:
        advice = getattr(self.app, "advice", None)
        if advice is not None:
            advice.dashboard_left()

    def on_screen_resume(self) -> None:
        advice = getattr(self.app, "advice", None)
        if advice is not None:
            advice.dashboard_back()


class LinkdeckApp(App):
    CSS_PATH = "linkdeck.tcss"
    TITLE = "linkdeck"
    BINDINGS = to_bindings(APP_KEYS)

    def __init__(
        self,
        settings: Settings,
        hosts: list[HostSpec],
        *,
        opener: Opener | None = None,
        fleet_factory: FleetFactory | None = None,
        state_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.hosts = list(hosts)
        self._specs = {h.name: h for h in hosts}
        self._opener = opener or open_adapter
        self._fleet_factory = fleet_factory
        self.fleet: Watcher | None = None
        # every host has a row from the start, in the order the user listed them
        self.initial: dict[str, HostUpdate] = {
            h.name: HostUpdate(host=h.name, os=None, state=HostState.CONNECTING) for h in hosts
        }
        # wall-clock "now" for freshness and findings (a replay's clock in a replay)
        self.clock: Callable[[], float] = time.time
        self.recording = RecordSwitch(self)
        self._self_cost = SelfCost()
        self.own: tuple[float, float] | None = None  # linkdeck's CPU % of one core, RSS MB
        # The app's test session: iperf3 connections and each interface's last verdict; closed
        # when the app exits.
        self.tests = TestSession(
            self._specs, settings, lambda host: self.updates.get(host), self._findings_for, self._opener
        )
        self.tests.on_outcome, self.tests.on_own_ended = self.recording.outcome, self.recording.own_ended
        self.tests.on_path = lambda path: self.passes.measured(path)
        self.advice = Advice(self)
        self.passes: FindingsPasses = FindingsPasses(
            settings,
            clock=lambda: self.clock(),
            own_traffic=lambda host: self.tests.own_traffic(host),
            updates=lambda: self.updates,
            before=self.advice.tick,
            found=self.recording.findings,
            judged_later=self._schedule_rebuild,
            notify=lambda message: self.notify(message, severity="warning", markup=False),
            run_worker=self.run_worker,
        )
        self.state_path = state_path  # where the column choice is kept (None: not kept)
        columns = load_choice(state_path, settings.ui_columns)
        # a choice kept from an earlier session changes what shows: said once at start
        self.kept_layout = state_path if columns != settings.ui_columns else None
        self.view = ViewState.from_settings(settings, columns)
        self.view_keys = ViewKeys(
            self.view,
            table=lambda: self.table,
            hosts=lambda: self.updates,
            rebuild=lambda: self._rebuild(),
            relayout=self._changed_view,
        )
        self.history = RateHistory(settings.interval)
        self.activity = Activity(settings.interval)
        self.row_cache = RowCache()
        self._rebuild_pending = False
        self._gather: Timer | None = None
        self.gather_s = GATHER_S
        self.gathered = 0  # rebuilds that waited for a burst's other hosts
        self.mouse_released = False  # x gave the mouse to the terminal, for selecting text
        self._status_shown: Text | None = None
        self.rebuilds = 0
        self.inbox = Inbox(self.post_message, partial(self._guarded, self._book))
        self.reset()

    def reset(self) -> None:
        """The picture of the fleet as at start (a replay's rewind calls this): anything learnt
        from updates belongs here. The view and the connections stay."""
        self.updates: dict[str, HostUpdate] = dict(self.initial)
        self.history.clear()  # the table draws from this very object
        self.activity.clear()
        self.row_cache.clear()
        self._stale_copies: dict[str, tuple[HostUpdate, HostUpdate]] = {}
        self._history_time: dict[str, float | None] = {}
        self.passes.reset()
        self._stale_hosts: frozenset[str] = frozenset()
        self.update_errors = 0
        self.tests.last.clear()
        self.inbox.clear()

    def spec(self, host: str) -> HostSpec | None:
        """How a watched host is reached (None for one seen only through Prometheus)."""
        return self._specs.get(host)

    def get_default_screen(self) -> Screen:
        return DashboardScreen(id="_default")

    def withdraw(self, title: str, message: str) -> None:
        """Take a notice still showing off (Textual hands back no handle on one it shows)."""
        for notification in [n for n in self._notifications if n.title == title and n.message == message]:
            self._unnotify(notification)

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield InterfaceTable(self.history, self.view, annotate=self.last_test, id="table")
        yield FindingsPane(id="findings")
        yield Input(placeholder="filter by interface or host name (Enter keeps it, Esc clears)", id="filter")
        yield KeyFooter(show_command_palette=False)

    @property
    def table(self) -> InterfaceTable:
        return self.query_one("#table", InterfaceTable)

    def on_mount(self) -> None:
        self.table.focus()
        self._rebuild()
        sink = self._post_update
        self.fleet = (
            self._fleet_factory(sink) if self._fleet_factory else Fleet(self.hosts, self.settings, sink, self._opener)
        )
        self.fleet.start()
        # A host that stops sending sends nothing to rebuild on: look for it going stale.
        self.set_interval(1.0, self._check_freshness)
        self.set_interval(OWN_COST_EVERY_S, self._measure_self)
        if self.kept_layout is not None:
            self.notify(
                f"columns as picked with o in an earlier session (kept in {self.kept_layout}); o changes them",
                title="saved layout",
                markup=False,
                timeout=8,
            )

    def _measure_self(self) -> None:
        if not self.is_running:  # its timer can fire while the app closes, the header gone
            return
        self.own = self._self_cost.read()
        self._show_status()

    def _check_freshness(self) -> None:
        now = self.clock()
        if frozenset(h for h, u in self.updates.items() if stale_since(u, now) is not None) != self._stale_hosts:
            self._schedule_rebuild()

    async def on_unmount(self) -> None:
        # A test still running must kill its iperf3 processes over its own connections before
        # those close: cancel it and wait for its cleanup (bounded), then close everything.
        running = [w for w in self.workers if w.group == "probe" and w.is_running]
        for worker in running:
            worker.cancel()
        if running:
            tasks = [w._task for w in running if w._task is not None]  # Textual waits for none of them
            if tasks:
                await asyncio.wait(tasks, timeout=10)
        # a test cancelled twice (here and by Textual's own shutdown) ends before its shielded
        # cleanup does: its kills still need the connections closed below
        await iperf.stopped(10)
        self.recording.stop()
        if self.fleet is not None:
            await self.fleet.stop()
        await self.tests.close()

    # -- updates in ----------------------------------------------------------------------

    def _post_update(self, update: HostUpdate) -> None:
        self.inbox.put(update)  # a host's update still waiting is replaced, its samples kept

    def on_host_updated(self, message: HostUpdated) -> None:
        if self.inbox.take(message):
            before = self.updates.get(message.update.host)
            self._guarded(self._apply, message.update)
            if same_rows(before, message.update):
                self._gather_rebuild()
            else:
                self._schedule_rebuild()

    def _guarded(self, step: Callable[[HostUpdate], None], update: HostUpdate) -> None:
        try:
            step(update)
        except Exception as exc:  # a malformed update must not take the dashboard down
            self.update_errors += 1
            self.log.error(f"update from {update.host!r} dropped: {exc!r}")
            if self.update_errors == 1:
                self.notify(
                    f"An update from {clean(update.host)} could not be shown: {exc}", severity="error", markup=False
                )

    def _apply(self, update: HostUpdate) -> None:
        self.updates[update.host] = update
        self._book(update)

    def _book(self, update: HostUpdate) -> None:
        """What every sample feeds, shown or not: the graphs, the idle counts, the findings."""
        # the collector re-emits the last interfaces on state changes: count each sample once
        if update.time is not None and update.time != self._history_time.get(update.host):
            self._history_time[update.host] = update.time
            self.history.push(update)
            self.activity.push(update)
        self.passes.observe(update)

    def _schedule_rebuild(self) -> None:
        # call_later queues behind the updates already waiting: one rebuild per burst of hosts
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_later(self._rebuild)

    def _gather_rebuild(self) -> None:
        # Every host is asked in the same slot, but their answers come in over a few
        # milliseconds, several turns of the event loop: new numbers wait that long, so that a
        # burst is one rebuild. What adds or removes rows (a host up, down, a new interface)
        # does not wait (_schedule_rebuild).
        if not self._rebuild_pending and self._gather is None:
            self._gather = self.set_timer(self.gather_s, self._gathered)

    def _gathered(self) -> None:
        self._gather = None
        if self._rebuild_pending or not self.is_running:  # one is queued already; or closing
            return
        self.gathered += 1
        self._rebuild()

    @property
    def rows_behind(self) -> bool:
        """Whether an update already taken is not in the rows yet."""
        return self._rebuild_pending or self._gather is not None

    def _rebuild(self) -> None:
        self._rebuild_pending = False
        if self._gather is not None:  # this rebuild shows what the gathered one would have
            self._gather.stop()
            self._gather = None
        self.rebuilds += 1
        self.passes.update()
        now = self.clock()
        shown = [self._as_seen(u, now) for u in self.updates.values()]
        self._stale_hosts = frozenset(u.host for u in shown if u.stale)
        self.table.set_rows(self.row_cache.rows(self.view, shown, badges(self.findings), self.activity.idle))
        self._show_status()
        pane = self.query_one(FindingsPane)
        if pane.has_class("-open"):
            pane.show(self.findings, self.raised_at, self.clock())
        self._refresh_detail()

    def _as_seen(self, update: HostUpdate, now: float) -> HostUpdate:
        # an update once stale stays so: its stale copy (new views) is made once, so that the
        # row cache sees the same views at the next rebuild and keeps the host's rows
        kept = self._stale_copies.get(update.host)
        if kept is not None and kept[0] is update and kept[1].stale:
            return kept[1]
        seen = as_seen(update, now)
        self._stale_copies[update.host] = (update, seen)
        return seen

    def _refresh_detail(self) -> None:
        if isinstance(self.screen, (DetailScreen, HostScreen)):
            self.screen.refresh_data()

    def _detail_data(self, screen: DetailScreen):
        mine = [f for f in self.findings if f.host == screen.host and f.interface == screen.iface_name]
        last = self.last_test(screen.host, screen.iface_name)
        return self._seen(screen.host), self.history.get(screen.host, screen.iface_name), mine, self.view.in_bytes, last

    def _host_data(self, screen: HostScreen):
        seen = self._seen(screen.host)
        age_ms = None if seen is None or seen.received is None else max(0.0, self.clock() - seen.received) * 1000
        recording = str(self.recording.path) if self.recording.path is not None else None
        return (
            seen,
            [f for f in self.findings if f.host == screen.host],
            self.view.in_bytes,
            age_ms,
            recording,
            self.view.sort,
        )

    def _seen(self, host: str) -> HostUpdate | None:
        update = self.updates.get(host)
        return as_seen(update, self.clock()) if update is not None else None

    # -- keys ----------------------------------------------------------------------------

    def _show_status(self) -> None:
        now = self.clock()
        matched = (0, 0)
        if self.view.filter_text:
            rows = self.table.rows
            interfaces = sum(len(r.fold.names) if r.fold is not None else 1 for r in rows if not r.is_host)
            matched = (interfaces, len({r.host for r in rows}))
        text = status_text(
            [as_seen(u, now) for u in self.updates.values()], self.findings, self.view, own=self.own, matched=matched
        )
        extra = self.status_extra()
        text = Text.assemble(extra, text) if extra is not None else text
        if text != self._status_shown:
            self._status_shown = text
            # one row high whatever it says (linkdeck.tcss): drawn in place, no layout of the screen
            self.query_one("#status", Static).update(text, layout=False)

    def status_extra(self) -> Text | None:
        """What goes before the header's counts: the recording's ● and path, and that the
        mouse is the terminal's."""
        recording = self.recording.status()
        if not self.mouse_released:
            return recording
        return Text.assemble(*(p for p in (recording, Text("mouse released (x) ", style="reverse")) if p is not None))

    def action_toggle_mouse(self) -> None:
        """Give the mouse back to the terminal so its own selection copies text, or take it
        again for clicks and the wheel."""
        self.mouse_released = not self.mouse_released
        # Textual's drivers all switch the terminal's mouse reporting this way; a headless one has none
        switch = getattr(
            self._driver, "_disable_mouse_support" if self.mouse_released else "_enable_mouse_support", None
        )
        if switch is not None:
            switch()
        if self.mouse_released:
            self.notify(
                "mouse released: select and copy text with the terminal; x takes the mouse back",
                title="mouse",
                timeout=6,
            )
        self._show_status()

    def action_toggle_record(self) -> None:
        self.recording.toggle()
        self._show_status()

    # -- keys that only change how the table shows the fleet (ui/state/view_keys.py) --------

    def action_cycle_sort(self) -> None:
        self.view_keys.cycle_sort()

    def on_interface_table_sort_by(self, message: InterfaceTable.SortBy) -> None:
        self.view_keys.sort_by(message.sort)

    def action_toggle_grouped(self) -> None:
        self.view_keys.toggle_grouped()

    def action_toggle_fold(self) -> None:
        self.view_keys.toggle_fold()

    def action_fold_all(self) -> None:
        self.view_keys.fold_all()

    def action_toggle_idle_folds(self) -> None:
        self.view_keys.toggle_idle_folds()

    def action_toggle_units(self) -> None:
        self.view_keys.toggle_units()

    def action_toggle_graph_scale(self) -> None:
        self.view_keys.toggle_graph_scale()

    def action_toggle_hidden(self) -> None:
        self.view_keys.toggle_hidden()

    def _changed_view(self) -> None:
        self.table.view_changed()
        self._rebuild()

    # Keys that only change the dashboard's table: off (and out of the footer) on a detail
    # screen, where they would act unseen on the table behind it.
    _TABLE_ONLY = frozenset(
        "filter clear_filter cycle_sort toggle_hidden toggle_findings toggle_grouped "
        "toggle_fold fold_all toggle_idle_folds toggle_graph_scale pick_columns info".split()
    )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self._TABLE_ONLY and isinstance(self.screen, (DetailScreen, HostScreen)):
            return False
        return True

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.history.span))

    def action_pick_columns(self) -> None:
        self.push_screen(ColumnPicker(self.view.columns, self.settings.ui_columns), self._columns_picked)

    def _columns_picked(self, columns: tuple[str, ...] | None) -> None:
        if columns is None:  # nothing changed
            return
        self.view.columns = columns
        self.table.view_changed()
        problem = save_choice(self.state_path, self.settings.ui_columns, columns)
        if problem:
            self.notify(problem, severity="warning", markup=False)

    def action_info(self) -> None:
        row = self.table.selected
        if row is None:
            return
        if row.is_host:
            self.push_screen(HostScreen(row.host, self._host_data))
        elif row.fold is not None:
            self.view_keys.unfold(row)
        else:
            self._open_detail(row)

    def _open_detail(self, row: Row) -> None:
        if row.view is not None:  # an interface's row (host and fold rows have none)
            self.push_screen(DetailScreen(row.host, row.view.iface.name, self._detail_data, self.history.size))

    def action_toggle_findings(self) -> None:
        pane = self.query_one(FindingsPane)
        pane.toggle_class("-open")
        if pane.has_class("-open"):
            pane.show(self.findings, self.raised_at, self.clock())

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-open")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("-open")
        self.view.filter_text = ""
        self.table.focus()
        self._changed_view()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.view.filter_text = event.value
            self._changed_view()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            if not event.value:
                event.input.remove_class("-open")
            self.table.focus()

    def on_interface_table_selected(self, event: InterfaceTable.Selected) -> None:
        row = event.row
        if row.is_host:
            self._host_selected(row)
        elif row.fold is not None:
            self.view_keys.unfold(row)
        else:
            self._open_detail(row)

    def _host_selected(self, row: Row) -> None:
        if row.update.state in (HostState.HOST_KEY_UNKNOWN, HostState.HOST_KEY_CHANGED):
            offer_trust(self, row.update)
        else:
            self.view.toggle_fold(row.host)
            self._rebuild()

    def _findings_for(self, host: str, iface: str) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.host == host and f.interface in (iface, None))

    @property
    def findings(self) -> list[Finding]:
        """The latest pass's findings, newest first."""
        return self.passes.findings

    def raised_at(self, finding: Finding) -> float | None:
        """When ``finding`` was raised, this stretch of it (on the app's clock)."""
        return self.passes.raised_at(finding)

    def learn(self, found: SubnetMtu) -> None:
        """What a subnet's MTU probe found (ui/state/advice.py); kept while recording."""
        self.passes.learn(found)
        self.recording.subnet_mtu(found)

    def last_test(self, host: str, iface: str) -> Outcome | None:
        return self.tests.last.get((host, iface))

    def inline_verdict(self, host: str, iface: str) -> str | None:
        """The words of the Last test cell."""
        return last_test_cell(o, host, iface) if (o := self.last_test(host, iface)) else None

    def action_probe(self, which: str) -> None:
        row = self.table.selected
        probe_screens.open_probe(
            self, which, row.host if row else None, row.view.iface.name if row and row.view else None
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        tell_failure(self, event)  # the app's own workers: a screen's are told to their screen, whose handler calls it

    def on_worker_failed(self, message: WorkerFailed) -> None:
        self.notify(report(message), severity="error", markup=False)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        ours = {key.description for key in APP_KEYS if key.palette}  # Textual's Quit: listed once, as ours
        yield from (c for c in super().get_system_commands(screen) if c.title not in ours)
        for key in APP_KEYS:
            if key.palette:
                yield SystemCommand(palette_title(key), key.help, partial(self.run_action, key.action))
