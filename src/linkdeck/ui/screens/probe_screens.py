"""Test screens: a bidirectional test from an interface row (``t``), the all-pairs matrix
(``m``), a host's loopback ceiling (``c``), the path MTU alone (``u``, ui/screens/mtu_screen.py) and
the whole diagnosis (``d``, ui/screens/diagnose_screen.py).

Entry points the dashboard calls (synchronous; each pushes a screen):
    open_probe(app, which, host, iface_name)   one of the below by the key's name
    open_test(app, host, iface_name)   the peer picker (ui/screens/peer_picker.py), then the test
                                       screen (or, for "all addresses", ui/screens/addresses_screen.py;
                                       ``then``: the path MTU's, ui/screens/mtu_screen.py, or the
                                       diagnosis's, ui/screens/diagnose_screen.py)
    open_matrix(app)                   every ordered pair of live hosts
    open_ceiling(app, host)            the host against itself over 127.0.0.1

``app`` is the dashboard as screens see it (``ui/dashboard.py``): these read its hosts,
updates and settings, and run every test through its ``tests`` (a ``TestSession``: the
connections, the planning, each interface's last outcome). Tests run in Textual workers that
report only through messages (a failure nobody caught: ui/workers.py); the dashboard keeps
receiving updates meanwhile, which is where the live rates come from. Text from hosts goes
through ``clean`` into Rich ``Text`` (never into markup).
"""

from __future__ import annotations

import json
import time
from typing import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static
from textual.worker import Worker

from ...commands.shared import SCHEMA_VERSION
from ...core import units
from ...present.outcome import live_header, live_layout, live_second, quiet_note
from ...probe import Matrix, Outcome, ProbeError, matrix_csv, matrix_json, plan_pair
from ...probe.pairs import common_to_bad, matrix_pairs
from ...probe.watched import iface_holding, view_of
from ..dashboard import Dashboard, dashboard
from ..state.rows import clean
from ..state.saving import plain, save
from ..widgets.key_footer import KeyFooter
from ..widgets.probe_texts import cell_text, short_verdict
from ..widgets.result_panel import ResultPanel
from ..workers import tell_failure
from .addresses_screen import ALL_ADDRESSES, AddressesScreen
from .diagnose_screen import open_diagnosis
from .flows_screen import open_flows
from .mtu_screen import open_mtu
from .peer_picker import Choice, PeerScreen, peer_choices

LIVE_SECONDS_SHOWN = 12  # a longer test scrolls: its latest seconds


# --- entry points ---------------------------------------------------------------------------


def _needs_ssh(app: Dashboard, host: str) -> bool:
    """A host seen only through Prometheus cannot run iperf3: say so instead of failing later."""
    if any(h.name == host for h in app.hosts):
        return False
    app.notify(
        f"{clean(host)} is watched through Prometheus only: tests need SSH to both ends. "
        f"Add it as an SSH host (`linkdeck {clean(host)}` or a [[hosts]] entry) to test it.",
        severity="warning",
        markup=False,
    )
    return True


def open_probe(app: Dashboard, which: str, host: str | None, iface_name: str | None) -> None:
    if which == "test":
        open_test(app, host, iface_name)
    elif which == "mtu":
        open_test(app, host, iface_name, then=open_mtu)
    elif which == "diagnose":
        open_test(app, host, iface_name, then=open_diagnosis)
    elif which == "matrix":
        open_matrix(app)
    elif which == "flows":
        open_flows(app, host, iface_name)
    else:
        open_ceiling(app, host)


def open_test(
    app: Dashboard,
    host: str | None,
    iface_name: str | None,
    then: Callable[[Dashboard, str, str, list[Choice]], None] | None = None,
) -> None:
    if host is None or iface_name is None:
        app.notify("Select an interface row first: the test runs from its host.", severity="warning")
        return
    if _needs_ssh(app, host):
        return
    peers = [h.name for h in app.hosts if h.name != host]
    if not peers:
        app.notify("Testing needs a second host; `c` measures this host's own ceiling.", severity="warning")
        return
    choices, every = peer_choices(app, host, iface_name, peers)
    # Open the iperf3 connections to this host and the likely peer while the user chooses,
    # so the test starts without SSH handshakes (a failure here is retried and reported by
    # the test itself).
    likely = [host] + [peer for peer, address in choices[:1] if address]
    app.run_worker(app.tests.warm(likely), name="opening the test connections", group="probe-warm", exit_on_error=False)
    if then is not None:  # the path MTU or the diagnosis: its own picker and screen
        return then(app, host, iface_name, choices)

    picker = PeerScreen(host, iface_name, choices, streams=app.settings.test_streams)

    def chosen(choice) -> None:
        if choice:
            peer, address = choice
            if address == ALL_ADDRESSES:
                app.push_screen(AddressesScreen(host, peer, every[peer]))
            else:
                app.push_screen(TestScreen(host, peer, address, iface_name, streams=picker.streams))

    app.push_screen(picker, chosen)


def open_ceiling(app: Dashboard, host: str | None) -> None:
    if host is None:
        app.notify("Select a host first.", severity="warning")
        return
    if _needs_ssh(app, host):
        return
    try:
        _, loopback = plan_pair(host, host, app.updates.get)
    except ProbeError:
        loopback = None
    app.push_screen(TestScreen(host, host, None, loopback))


def open_matrix(app: Dashboard) -> None:
    names = [h.name for h in app.hosts if app.updates.get(h.name) and app.updates[h.name].interfaces]
    if len(names) < 2:
        app.notify("The matrix needs at least two live hosts.", severity="warning")
        return
    app.push_screen(MatrixScreen(names))


# --- screens --------------------------------------------------------------------------------


class TestScreen(ModalScreen):
    """Runs one test (or a ceiling) in a worker; progress, live rates, then the result."""

    __test__ = False
    BINDINGS = [Binding("escape", "stop", "Cancel / close"), Binding("s", "save", "Save")]
    DEFAULT_CSS = """
    TestScreen { align: center middle; }
    TestScreen > VerticalScroll { width: 100%; height: auto; max-height: 100%; border: round $accent; padding: 0 1; }
    """

    class Phase(Message):
        def __init__(self, phase: str) -> None:
            super().__init__()
            self.phase = phase

    class Finished(Message):
        def __init__(self, outcome: Outcome) -> None:
            super().__init__()
            self.outcome = outcome

    class Live(Message):
        """A second of the running test (or why there will be none): probe.iperf.Live."""

        def __init__(self, kind: str, data) -> None:
            super().__init__()
            self.kind, self.data = kind, data

    def __init__(
        self, src: str, dst: str, address: str | None, src_iface: str | None, streams: int | None = None
    ) -> None:
        super().__init__()
        self.src, self.dst, self.address, self.src_iface = src, dst, address, src_iface
        self.streams = streams  # None: [test] streams
        self.seconds: list = []  # each second iperf3 reported so far (--json-stream)
        self.quiet: str | None = None  # why there are none
        self.phase = "starting"
        self.started = time.monotonic()
        self.outcome: Outcome | None = None
        self.cancelled = False
        self.worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="probe-progress")
            yield ResultPanel(id="probe-result")
            yield Static(id="saved")
        yield KeyFooter()

    def action_save(self) -> None:
        """Save what the screen shows as Markdown beside the recordings; the path, whole, on screen."""
        shown = [w.render() for w in self.query("#probe-progress, #probe-result")]
        try:
            path = save(
                dashboard(self).recording.directory, "test", f"linkdeck test {self.src} → {self.dst}", plain(shown)
            )
        except OSError as exc:
            self.query_one("#saved", Static).update(Text(f"could not save: {exc}", style="red"))
            return
        self.query_one("#saved", Static).update(Text(f"saved {path}", style="dim"))

    def on_mount(self) -> None:
        # exit_on_error=False: whatever a host answers, a test never takes the dashboard down
        self.worker = self.run_worker(self._work(), name="the test", exclusive=True, group="probe", exit_on_error=False)
        self.set_interval(0.25, self._show_progress)
        self._show_progress()

    async def _work(self) -> None:
        outcome = await dashboard(self).tests.run_pair(
            self.src,
            self.dst,
            self.address,
            self.src_iface,
            on_phase=lambda p: self.post_message(self.Phase(p)),
            streams=self.streams,
            on_live=lambda kind, data: self.post_message(self.Live(kind, data)),
        )
        self.post_message(self.Finished(outcome))

    def on_test_screen_phase(self, message: "TestScreen.Phase") -> None:
        self.phase = message.phase
        if message.phase == "running":
            self.started = time.monotonic()

    def on_test_screen_live(self, message: "TestScreen.Live") -> None:
        if message.kind == "interval":
            self.seconds.append(message.data)
        else:
            self.quiet = quiet_note(message.data.get("host", self.src), message.data.get("version", "?"))
        self._show_progress()

    def on_test_screen_finished(self, message: "TestScreen.Finished") -> None:
        self.outcome = message.outcome
        o = message.outcome
        self.query_one(ResultPanel).show(o)
        self._show_progress()
        self.app.notify(
            f"{clean(o.result.src)} → {clean(o.result.dst)}: {short_verdict(o)} — {clean(o.verdict.summary)}",
            markup=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if line := tell_failure(self.app, event):
            self.show_failure(line)

    def show_failure(self, line: str) -> None:
        self.phase = line
        self._show_progress()

    def _live(self, host: str, ifname: str | None) -> str:
        view = view_of(dashboard(self).updates.get(host), ifname)
        if view is None:
            return f"{clean(host)}: —"
        return f"{clean(host)} {clean(ifname)}: rx {units.rate(view.rates.rx_bps)}  tx {units.rate(view.rates.tx_bps)}"

    def _show_progress(self) -> None:
        total = dashboard(self).settings.test_duration
        t = Text()
        title = (
            f"{clean(self.src)} → {clean(self.dst)}"
            if self.src != self.dst
            else f"{clean(self.src)} ceiling (loopback)"
        )
        t.append(title + "\n", style="bold")
        if self.cancelled:
            t.append("cancelled: both iperf3 processes stopped. Esc closes.\n", style="yellow")
        elif self.outcome is None:
            elapsed = min(time.monotonic() - self.started, total) if self.phase == "running" else 0.0
            t.append(f"{self.phase}  {elapsed:4.1f} / {total:.0f} s  (Esc cancels)\n")
        o = self.outcome
        src_if = o.src_iface if o else self.src_iface
        dst_if = (
            o.dst_iface
            if o
            else iface_holding(dashboard(self).updates.get(self.dst), self.address)
            if self.address
            else None
        )
        if self.seconds:
            # the seconds name the interfaces the counters beside them were read from
            src_if, dst_if = self.seconds[-1].get("src_if") or src_if, self.seconds[-1].get("dst_if") or dst_if
            progress = self.query_one("#probe-progress", Static)
            layout = live_layout(
                self.src, self.dst, src_if, dst_if, progress.content_size.width or self.app.size.width - 6
            )
            t.append(live_header(self.src, self.dst, src_if, dst_if, layout) + "\n", style="dim")
            for second in self.seconds[-LIVE_SECONDS_SHOWN:]:
                t.append(live_second(self.src, self.dst, second, layout) + "\n")
        elif self.quiet and self.outcome is None:
            t.append(self.quiet + "\n", style="dim")
        t.append(self._live(self.src, src_if) + "\n")
        if self.dst != self.src and dst_if:
            t.append(self._live(self.dst, dst_if) + "\n")
        self.query_one("#probe-progress", Static).update(t)

    def action_stop(self) -> None:
        if self.worker is not None and self.worker.is_running:
            self.cancelled = True
            self.worker.cancel()  # CancelledError in run_test: both iperf3 killed by PID
            self._show_progress()
            return
        self.dismiss(self.outcome)


class MatrixScreen(ModalScreen):
    """Sender rows × receiver columns, filled one test at a time, coloured by % of expected."""

    BINDINGS = [
        Binding("escape", "stop", "Cancel / close"),
        Binding("j", "export('json')", "Save JSON"),
        Binding("v", "export('csv')", "Save CSV"),
    ]
    DEFAULT_CSS = """
    MatrixScreen { align: center middle; }
    MatrixScreen > VerticalScroll { width: 95%; height: auto; max-height: 90%; border: round $accent; padding: 0 1; }
    MatrixScreen DataTable { height: auto; }
    """

    class CellDone(Message):
        def __init__(self, src: str, dst: str, outcome: Outcome) -> None:
            super().__init__()
            self.src, self.dst, self.outcome = src, dst, outcome

    class Running(Message):
        def __init__(self, src: str, dst: str) -> None:
            super().__init__()
            self.src, self.dst = src, dst

    def __init__(self, hosts: list[str]) -> None:
        super().__init__()
        self.hosts = hosts
        self.matrix = Matrix(list(hosts), {})
        self.status = "starting"
        self.worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="matrix-status")
            yield DataTable(id="matrix-grid", cursor_type="cell", zebra_stripes=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        grid = self.query_one(DataTable)
        grid.add_column(Text("sender \\ receiver", style="bold"), key="sender")
        for h in self.hosts:
            grid.add_column(Text(clean(h), style="bold"), key=h)
        for h in self.hosts:
            tested = set(matrix_pairs(self.hosts))
            # a pair is tested once, both directions in the cell where its first host sends
            grid.add_row(
                Text(clean(h), style="bold"),
                *[Text("·" if (h, d) in tested else "—", style="dim") for d in self.hosts],
                key=h,
            )
        self.worker = self.run_worker(
            self._work(), name="the matrix", exclusive=True, group="probe", exit_on_error=False
        )
        self._status()

    async def _work(self) -> None:
        for src, dst in matrix_pairs(self.hosts):
            self.post_message(self.Running(src, dst))
            outcome = await dashboard(self).tests.run_pair(src, dst, in_matrix=True)
            self.post_message(self.CellDone(src, dst, outcome))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if line := tell_failure(self.app, event):
            self.show_failure(line)

    def show_failure(self, line: str) -> None:
        self.status = line
        self._status()

    def on_matrix_screen_running(self, message: "MatrixScreen.Running") -> None:
        self.status = f"testing {clean(message.src)} → {clean(message.dst)}…"
        self.query_one(DataTable).update_cell(message.src, message.dst, Text("…", style="bold"))
        self._status()

    def on_matrix_screen_cell_done(self, message: "MatrixScreen.CellDone") -> None:
        self.matrix.cells[(message.src, message.dst)] = message.outcome
        self.query_one(DataTable).update_cell(message.src, message.dst, cell_text(message.outcome), update_width=True)
        if len(self.matrix.cells) == len(matrix_pairs(self.hosts)):
            common = common_to_bad(self.matrix.cells)
            self.status = (
                f"every bad pair involves {clean(common)}: look at it first. " if common else ""
            ) + "done. j saves JSON, v saves CSV."
        self._status()

    def _status(self) -> None:
        done, total = len(self.matrix.cells), len(matrix_pairs(self.hosts))
        self.query_one("#matrix-status", Static).update(
            Text(
                f"{done}/{total} pairs   {self.status}   "
                "(row → column rate and % of expected / back; r: retransmits each way)"
            )
        )

    def action_stop(self) -> None:
        if self.worker is not None and self.worker.is_running:
            self.worker.cancel()
            self.status = "cancelled: the running test's iperf3 processes were stopped. Esc closes."
            self._status()
            return
        self.dismiss(self.matrix)

    def action_export(self, kind: str) -> None:
        if not self.matrix.cells:
            self.notify("Nothing to save yet.", severity="warning")
            return
        # beside the recordings, not wherever linkdeck was started from
        path = dashboard(self).recording.directory / time.strftime(f"linkdeck-matrix-%Y%m%d-%H%M%S.{kind}")
        try:
            text = (
                json.dumps({"schema_version": SCHEMA_VERSION, **matrix_json(self.matrix)}, indent=2)
                if kind == "json"
                else matrix_csv(self.matrix)
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"Could not save {path}: {exc}", severity="error", markup=False)
            return
        self.notify(f"Saved {path}", markup=False)
