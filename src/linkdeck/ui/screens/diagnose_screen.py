"""``linkdeck diagnose`` from an interface row (``d``): the peer picker, then the same page
as the command (present.diagnose_page), redrawn as each step finishes — both ends alone, their
ceilings, the path, every address — and the causes ranked once all have. The steps are
probe.diagnosis's own; the dashboard stands in for its watch (``AppWatch``)."""

from __future__ import annotations

from functools import partial

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker

from ...core.freshness import as_seen, stale_since
from ...core.model import Finding, HostState, HostUpdate
from ...present.diagnose_page import Judged, diagnosis_text, rank
from ...present.fit import hanging
from ...present.outcome import state_word
from ...probe.diagnose_steps import Diagnosis, run_diagnosis
from ..dashboard import Dashboard, dashboard
from ..state.rows import clean
from ..state.saving import plain, save
from ..widgets.fitted import Fitted
from ..widgets.key_footer import KeyFooter
from ..workers import pair_failure, tell_failure
from .addresses_screen import ALL_ADDRESSES
from .peer_picker import Choice, PeerScreen


def page_at(page: list[str], width: int) -> Text:
    """The page laid out for ``width`` columns: a line too long wraps under its own start, further
    in, with a figure and its unit kept together."""
    text = Text()
    for part in hanging(page, width):
        text.append(part + "\n")
    text.append("Esc closes.", style="dim")
    return text


class AppWatch:
    """What run_diagnosis reads of a watch, from the dashboard: its newest updates and its
    findings (judged over the dashboard's windows, not one sample)."""

    def __init__(self, app: Dashboard) -> None:
        self.app = app

    def latest(self, host: str) -> HostUpdate | None:
        return self.app.updates.get(host)

    def failed(self, host: str) -> str | None:
        """Why a host has no live sample to diagnose from (none yet, or only stale ones), or
        None when it has one."""
        u = self.app.updates.get(host)
        if u is None:
            return f"{host}: not watched"
        now = self.app.clock()
        since = stale_since(u, now)
        if u.state is HostState.LIVE and u.interfaces and since is None:
            return None
        why = f"{host}: {state_word(as_seen(u, now))}" + (f": {u.error}" if u.error else "")
        return why + (f"; its last sample is {now - since:.0f} s old" if since is not None else "")

    def findings(self) -> list[Finding]:
        return list(self.app.findings)


def open_diagnosis(app: Dashboard, host: str, iface_name: str, choices: list[Choice]) -> None:
    """After probe_screens.open_test's checks: the same peers (each address is a step of the
    diagnosis itself, so no "all addresses" choice), then the steps."""

    picker = PeerScreen(
        host,
        iface_name,
        [c for c in choices if c[1] != ALL_ADDRESSES],
        "Diagnose from",
        streams=app.settings.test_streams,
    )

    def chosen(choice: Choice | None) -> None:
        if choice:
            app.push_screen(DiagnoseScreen(host, choice[0], picker.streams))

    app.push_screen(picker, chosen)


class DiagnoseScreen(ModalScreen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Close"), Binding("s", "save", "Save")]
    DEFAULT_CSS = """
    DiagnoseScreen { align: center middle; }
    DiagnoseScreen > VerticalScroll {
        width: 100%; max-width: 120; height: auto; max-height: 100%; border: round $accent; padding: 0 1;
    }
    """

    class Step(Message):
        """A step finished (``judged`` set once the last has)."""

        def __init__(self, name: str, d: Diagnosis, judged: Judged | None = None) -> None:
            super().__init__()
            self.name, self.d, self.judged = name, d, judged

    def __init__(self, src: str, dst: str, streams: int | None = None) -> None:
        super().__init__()
        self.src, self.dst, self.streams = src, dst, streams
        self.done: frozenset[str] = frozenset()
        self.judged: Judged | None = None
        self.page: list[str] = []  # the page's lines as the command prints them, unwrapped

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Fitted(Text(f"{clean(self.src)} → {clean(self.dst)}: looking at both ends…"), id="diagnose-page")
            yield Static(id="saved")
        yield KeyFooter()

    def action_save(self) -> None:
        """Save what the screen shows as Markdown beside the recordings; the path, whole, on screen."""
        shown = [w.render() for w in self.query("#diagnose-page")]
        try:
            path = save(
                dashboard(self).recording.directory,
                "diagnose",
                f"linkdeck diagnose {self.src} → {self.dst}",
                plain(shown),
            )
        except OSError as exc:
            self.query_one("#saved", Static).update(Text(f"could not save: {exc}", style="red"))
            return
        self.query_one("#saved", Static).update(Text(f"saved {path}", style="dim"))

    def on_mount(self) -> None:
        # exit_on_error=False: whatever a host answers, the diagnosis never takes the dashboard down
        self.run_worker(self._work(), name="the diagnosis", exclusive=True, group="probe", exit_on_error=False)

    async def _work(self) -> None:
        app = dashboard(self)

        def step(name: str, d: Diagnosis) -> None:
            self.post_message(self.Step(name, d))

        d = await run_diagnosis(
            AppWatch(app), app.tests, self.src, self.dst, app.settings.test_duration, self.streams, step
        )
        self.post_message(self.Step("all", d, rank(d)))

    def on_diagnose_screen_step(self, message: "DiagnoseScreen.Step") -> None:
        self.done |= {message.name}
        self.judged = message.judged
        page = diagnosis_text(message.d, message.judged, None if message.judged else self.done)
        # what hosts answered is in the page: each line printable, the lines kept
        self.page = [clean(line) for line in page.splitlines()]
        self.query_one("#diagnose-page", Fitted).show(partial(page_at, self.page))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if line := tell_failure(self.app, event):
            self.show_failure(line)

    def show_failure(self, line: str) -> None:
        body = self.query_one("#diagnose-page", Fitted)
        body.show(None)
        body.update(pair_failure(self.src, self.dst, line))
