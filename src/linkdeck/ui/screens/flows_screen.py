"""The busiest TCP flows of the selected host (``w``), through the selected interface when an
interface row is selected, each with what limits it; refreshed every interval while shown.
The host's flows command runs only while this screen is open."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from ...core.units import arrow
from ...flows.held import held, master_pids, set_apart
from ...flows.judge import Limiter
from ...flows.own_tests import set_apart_tests
from ...flows.round_report import FlowReport, addresses_of, report
from ...flows.sampler import FlowsUnavailable, no_flows_reason, read_rounds
from ...present import fit
from ...present.flow_words import HEAD, flow_cells, own_line, tcp_line, tests_line, title, verdict
from ..dashboard import dashboard
from ..state.rows import clean
from ..state.saving import plain, save
from ..widgets.fitted import Fitted
from ..widgets.key_footer import KeyFooter

TOP = 10
_STYLE = {
    Limiter.NETWORK: "bold red",
    Limiter.RECEIVER: "yellow",
    Limiter.SENDER: "yellow",
    Limiter.PATH_MTU: "red",
    Limiter.UNKNOWN: "dim",
}


def open_flows(app, host: str | None, iface: str | None) -> None:
    if host is None:
        app.notify("Select a host or interface row first.", severity="warning")
        return
    if not any(h.name == host for h in app.hosts):
        app.notify(
            f"{clean(host)} is watched through Prometheus only: its flows need SSH.", severity="warning", markup=False
        )
        return
    app.push_screen(FlowsScreen(host, iface, max(1.0, app.settings.interval)))


class FlowsRead(Message):
    """One round judged, or why there is none (``error``)."""

    def __init__(self, got: FlowReport | None, error: str | None = None) -> None:
        super().__init__()
        self.got, self.error = got, error


class FlowsScreen(ModalScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Close"),
        Binding("w", "app.pop_screen", "Close", show=False),
        Binding("s", "save", "Save"),
    ]
    DEFAULT_CSS = """
    FlowsScreen { align: center middle; }
    FlowsScreen > VerticalScroll { width: 100%; height: 100%; border: round $accent; padding: 0 1; }
    """

    def __init__(self, host: str, iface: str | None, interval: float) -> None:
        super().__init__()
        self.host, self.iface, self.interval = host, iface, interval
        self.last: FlowReport | None = None
        self.rounds = 0

    def compose(self) -> ComposeResult:
        where = f" through {clean(self.iface)}" if self.iface else ""
        with VerticalScroll():
            yield Fitted(Text(f"{clean(self.host)}: reading its TCP flows{where}…"), id="flows-body")
            yield Static(id="saved")
        yield KeyFooter()

    def action_save(self) -> None:
        """Save what the screen shows as Markdown beside the recordings; the path, whole, on screen."""
        shown = [w.render() for w in self.query("#flows-body")]
        try:
            path = save(dashboard(self).recording.directory, "flows", f"linkdeck flows {self.host}", plain(shown))
        except OSError as exc:
            self.query_one("#saved", Static).update(Text(f"could not save: {exc}", style="red"))
            return
        self.query_one("#saved", Static).update(Text(f"saved {path}", style="dim"))

    def on_mount(self) -> None:
        # exit_on_error=False: whatever the host answers, this screen never takes the app down
        self.run_worker(self._read(), exclusive=True, group="flows", exit_on_error=False)

    async def _read(self) -> None:

        app = dashboard(self)
        try:
            end = _sampling(app, self.host) or await app.tests.pool.get(app.tests.specs[self.host])
            why = no_flows_reason(end.os)
            while why is not None:  # no flows: the host's TCP health, as it comes
                update = app.updates.get(self.host)
                self.post_message(
                    FlowsRead(
                        FlowReport(
                            self.host, self.iface, None, None, 0, unavailable=why, tcp=update.tcp if update else None
                        )
                    )
                )
                await asyncio.sleep(self.interval)
            addresses = addresses_of(app.updates.get(self.host), self.iface) if self.iface else []
            if self.iface and not addresses:
                self.post_message(FlowsRead(None, f"{clean(self.iface)} has no address: no flow goes through it"))
                return
            local = app.tests.specs[self.host].local
            runner = end.runner
            if runner is None:  # a host read without a shell of its own: nothing runs there
                self.post_message(FlowsRead(None, "no shell to read its flows through"))
                return
            async for got in read_rounds(runner, self.interval, TOP, addresses, end.os):
                if local:  # linkdeck's own connections, by the sockets it holds
                    got = set_apart(got, held(master_pids(_connections(app))), end.os)
                # the flows of a test linkdeck runs through the host (`t`): not the user's transfer
                got = set_apart_tests(got, self.host, app.tests.running_tests(), app.updates, end.os)
                app.recording.flows(self.host, self.iface, got.lines)  # what was shown, when recording
                self.post_message(FlowsRead(report(self.host, got, dict(app.updates), self.iface)))
        except FlowsUnavailable as exc:
            self.post_message(FlowsRead(None, str(exc)))
        except Exception as exc:  # a transport failure or a ProbeError: shown, never raised
            self.post_message(FlowsRead(None, str(exc)))

    @on(FlowsRead)
    def _show(self, message: FlowsRead) -> None:
        body = self.query_one("#flows-body", Fitted)
        if message.error is not None:
            body.show(None)
            body.update(Text(f"{clean(self.host)}: {message.error}\nEsc closes.", style="red"))
            return
        got = message.got
        assert got is not None
        self.last, self.rounds = got, self.rounds + 1
        body.show(lambda width: render(got, width=width))


# Which columns stay as the screen narrows: the flow, its rates and its limiter first.
_KEEP_ORDER = ("local", "remote", "out", "in", "limiter", "rtt ms", "retr", "rwnd", "sndbuf", "min", "pmtu", "cwnd")
_GAP = 2


def fitted_columns(rows: list[tuple[str, ...]], width: int) -> list[int]:
    """The indexes of HEAD's columns that fit ``width`` side by side, kept in _KEEP_ORDER's order
    of importance and shown in HEAD's."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
    chosen: list[int] = []
    used = -_GAP
    for name in _KEEP_ORDER:
        i = HEAD.index(name)
        if used + _GAP + widths[i] <= width or len(chosen) < 2:
            chosen.append(i)
            used += _GAP + widths[i]
    return sorted(chosen)


def _sampling(app, host: str):
    """The connection the host's interfaces are sampled over, while it is up (None: down):
    the flows loop rides it, so the one connection linkdeck holds there is the one the loop
    names as its own."""
    collector = app.fleet.collectors.get(host) if app.fleet is not None else None
    adapter = collector.adapter if collector is not None else None
    return adapter if getattr(adapter, "runner", None) is not None else None


def _connections(app) -> list[object]:
    """Every connection linkdeck holds to the hosts: the samplers' and the tests'."""
    sampling = [c.adapter for c in app.fleet.collectors.values()] if app.fleet is not None else []
    return [*sampling, *app.tests.pool.opened()]


def _wrapped(text: str, width: int, indent: int) -> str:
    """A flow's verdict or evidence, wrapped under its first words (at least 20 columns of it)."""
    return "\n".join(fit.wrap(text, max(width, indent + 20), subsequent_indent=" " * indent))


def render(got: FlowReport, note: Text | None = None, width: int = 200) -> Text:
    """The screen's text at ``width`` columns: the columns that fit, and each verdict wrapped
    under itself; ``note`` heads it (a replay: when the round was recorded)."""
    if got.unavailable:
        return Text(f"{clean(got.host)}: no per-flow view: {got.unavailable}.\n{tcp_line(got)}\nEsc closes.")
    text = Text(title(got, TOP) + "\n", style="bold")
    if note is not None:
        text.append_text(note)
        text.append("\n")
    text.append(tcp_line(got) + "\n")
    mine = own_line(got, hint="")
    if mine:
        text.append(mine + "\n", style="dim")
    ours = tests_line(got)
    if ours:
        text.append(ours + "\n", style="dim")
    if got.interval_s is None:
        text.append("first read: the rates come with the next\n", style="dim")
    shown_flows = got.flows + got.tests
    rows = [HEAD, *(flow_cells(f) for f in shown_flows)]
    shown = fitted_columns(rows, width)
    widths = {i: max(len(r[i]) for r in rows) for i in shown}

    def line(cells: tuple[str, ...]) -> str:
        return (" " * _GAP).join(cells[i].ljust(widths[i]) for i in shown).rstrip()[:width]

    text.append(line(HEAD) + "\n", style="bold")
    for flow, cells in zip(shown_flows, rows[1:]):
        text.append(line(cells) + "\n", style="dim" if flow.linkdeck_test else _STYLE.get(flow.limiter, ""))
    if len(shown) < len(HEAD):
        text.append(
            f"(narrow: {', '.join(HEAD[i] for i in range(len(HEAD)) if i not in shown)} left out; wider shows them)\n",
            style="dim",
        )
    text.append("\n")
    for flow in got.flows:
        said, evidence = verdict(flow)
        head = f"{arrow(clean(flow.local), clean(flow.remote))}: "
        body = _wrapped(f"{head}{flow.limiter.value}: {said}", width, fit.HANG)
        text.append(body[: len(head)], style="bold")
        text.append(body[len(head) : len(head) + len(flow.limiter.value)], style=_STYLE.get(flow.limiter, ""))
        text.append(body[len(head) + len(flow.limiter.value) :] + "\n")
        text.append(_wrapped(" " * fit.HANG + evidence, width, fit.HANG) + "\n")
    for error in got.errors:
        text.append(f"unreadable: {clean(error)}\n", style="red")
    text.append(
        "Esc closes." if note is not None else "Esc closes; the host's flows command stops with this screen.",
        style="dim",
    )
    return text
