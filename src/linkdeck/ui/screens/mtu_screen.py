"""The path MTU from an interface row (``u``): the peer picker, then the largest packet that
gets through each way (the probe every test runs first, alone: a fraction of a second)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker

from ...present.outcome import mtu_lines
from ...probe.session import MtuOutcome
from ..dashboard import Dashboard, dashboard
from ..state.rows import clean
from ..widgets.key_footer import KeyFooter
from ..workers import pair_failure, tell_failure
from .peer_picker import Choice, PeerScreen


def open_mtu(app: Dashboard, host: str, iface_name: str, choices: list[Choice]) -> None:
    """After probe_screens.open_test's checks: the same peers, then the probe."""

    def chosen(choice: Choice | None) -> None:
        if choice:
            peer, address = choice
            app.push_screen(MtuScreen(host, peer, address, iface_name))

    app.push_screen(PeerScreen(host, iface_name, choices, "Path MTU from"), chosen)


class MtuScreen(ModalScreen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]
    DEFAULT_CSS = """
    MtuScreen { align: center middle; }
    MtuScreen > VerticalScroll { width: 100%; height: auto; max-height: 100%; border: round $accent; padding: 0 1; }
    """

    class Done(Message):
        def __init__(self, outcome: MtuOutcome) -> None:
            super().__init__()
            self.outcome = outcome

    def __init__(self, src: str, dst: str, address: str | None, src_iface: str) -> None:
        super().__init__()
        self.src, self.dst, self.address, self.src_iface = src, dst, address, src_iface
        self.outcome: MtuOutcome | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(
                Text(f"{clean(self.src)} → {clean(self.dst)}: probing the path MTU each way…"), id="mtu-result"
            )
        yield KeyFooter()

    def on_mount(self) -> None:
        # exit_on_error=False: whatever a host answers, the probe never takes the dashboard down
        self.run_worker(self._work(), name="the path MTU probe", exclusive=True, group="probe", exit_on_error=False)

    async def _work(self) -> None:
        outcome = await dashboard(self).tests.path_mtu(self.src, self.dst, self.address, self.src_iface)
        self.post_message(self.Done(outcome))

    def on_mtu_screen_done(self, message: "MtuScreen.Done") -> None:
        self.outcome = o = message.outcome
        text = Text(f"{clean(o.src)} → {clean(o.dst)}   {clean(o.address)}\n", style="bold")
        cause = o.cause
        for line in mtu_lines(o):
            text.append(line + "\n", style="red" if cause and line.startswith(cause.code) else "")
        text.append("Esc closes.", style="dim")
        self.query_one("#mtu-result", Static).update(text)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if line := tell_failure(self.app, event):
            self.show_failure(line)

    def show_failure(self, line: str) -> None:
        self.query_one("#mtu-result", Static).update(pair_failure(self.src, self.dst, line))
