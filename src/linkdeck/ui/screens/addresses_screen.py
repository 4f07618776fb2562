"""The peer picker's "all addresses" choice: one test per address of the peer that this host
reaches, one after another, filled into a table as each ends, then what differs between them
(PATH_DIFFERS). The words are ``present.address_rows``, the same the CLI prints. A verdict
too long for its column is read whole under the table for the row the cursor is on, and
Enter opens that row's whole result."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static
from textual.worker import Worker

from ...present.outcome import address_rows
from ...probe import Outcome
from ...probe.every_address import AddressRun, judge_run, run_addresses, tested
from ..dashboard import dashboard
from ..state.rows import clean
from ..widgets.key_footer import KeyFooter
from ..widgets.marks import word_style
from ..widgets.probe_texts import status_text
from ..widgets.result_panel import ResultScreen
from ..workers import tell_failure

ALL_ADDRESSES = "all addresses"  # the picker's choice, in place of one address


class AddressesScreen(ModalScreen):
    """Runs the tests in a worker; Esc cancels the running one (its iperf3 killed) or closes."""

    BINDINGS = [Binding("escape", "stop", "Cancel / close")]
    DEFAULT_CSS = """
    AddressesScreen { align: center middle; }
    AddressesScreen > VerticalScroll { width: 95%; height: auto; max-height: 90%; border: round $accent; padding: 0 1; }
    AddressesScreen DataTable { height: auto; }
    """

    class Done(Message):
        def __init__(self, address: str, outcome: Outcome) -> None:
            super().__init__()
            self.address, self.outcome = address, outcome

    def __init__(self, src: str, dst: str, addresses: list[str]) -> None:
        super().__init__()
        self.src, self.dst, self.addresses = src, dst, addresses
        self.run = AddressRun(src, dst, (), ())
        self.status = "starting"
        self.worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="addresses-status")
            yield DataTable(id="addresses-grid", cursor_type="row", zebra_stripes=False)
            yield Static(id="addresses-verdict")
            yield Static(id="addresses-causes")
        yield KeyFooter()

    def on_mount(self) -> None:
        grid = self.query_one(DataTable)
        header = address_rows(self.run)[0]
        for key, title in zip(("address", "interface", "forward", "reverse", "retransmits", "verdict"), header):
            grid.add_column(Text(title, style="bold"), key=key)
        for address in self.addresses:
            grid.add_row(clean(address), *[Text("·", style="dim")] * 5, key=address)
        grid.focus()  # ↑↓ choose the row whose verdict shows whole, Enter opens it
        self.worker = self.run_worker(
            self._work(), name="the tests of every address", exclusive=True, group="probe", exit_on_error=False
        )
        self._show()

    async def _work(self) -> None:
        await run_addresses(dashboard(self).tests, self.src, self.dst, self.addresses, on_done=self._done)

    def _done(self, address: str, outcome: Outcome) -> None:
        self.post_message(self.Done(address, outcome))

    def on_addresses_screen_done(self, message: "AddressesScreen.Done") -> None:
        latest = dashboard(self).updates.get(self.dst)
        done = [*self.run.tested, tested(message.address, message.outcome, latest)]
        self.run = judge_run(self.src, self.dst, done, latest)
        grid = self.query_one(DataTable)
        rows = address_rows(self.run)[1:]
        for key, cell in zip(("interface", "forward", "reverse", "retransmits"), rows[-1][1:5]):
            grid.update_cell(message.address, key, cell, update_width=True)
        # every row's verdict: a test may be judged again beside the one that just finished
        for t, row in zip(self.run.tested, rows):
            grid.update_cell(t.address, "verdict", status_text(t.outcome.verdict.status, row[5]), update_width=True)
        if len(done) == len(self.addresses):
            self.status = "done. Esc closes."
        self._show()
        self._show_verdict()

    def _tested(self, address: object):
        return next((t for t in self.run.tested if t.address == address), None)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_verdict()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        t = self._tested(event.row_key.value)
        if t is not None:
            self.app.push_screen(ResultScreen(t.outcome))

    def _show_verdict(self) -> None:
        """The highlighted row's verdict in full, wrapped to the screen, under the table."""
        grid = self.query_one(DataTable)
        t = self._tested(grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value) if grid.row_count else None
        text = Text()
        if t is not None:
            v = t.outcome.verdict
            text.append(f"{clean(t.address)}: ", style="bold")
            text.append(v.status.upper(), style=word_style(v.status))
            text.append(f" — {clean(v.summary)}   (Enter: its whole result)", style="")
        self.query_one("#addresses-verdict", Static).update(text)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if line := tell_failure(self.app, event):
            self.show_failure(line)

    def show_failure(self, line: str) -> None:
        self.status = line
        self._show()

    def _show(self) -> None:
        done, total = len(self.run.tested), len(self.addresses)
        running = (
            f"testing {clean(self.addresses[done])}…" if done < total and self.status == "starting" else self.status
        )
        if self.status == "cancelled":
            running = "cancelled: the running test's iperf3 processes were stopped. Esc closes."
        self.query_one("#addresses-status", Static).update(
            Text(
                f"{clean(self.src)} → {clean(self.dst)}: "
                f"every address, one test after another   {done}/{total}   {running}"
            )
        )
        causes = Text()
        for cause in self.run.causes:
            causes.append(f"\n{clean(cause.code)}", style="bold yellow")
            causes.append(f"  {clean(cause.message)}\n  {clean(cause.evidence)}\n")
        self.query_one("#addresses-causes", Static).update(causes)

    def action_stop(self) -> None:
        if self.worker is not None and self.worker.is_running:
            self.worker.cancel()
            self.status = "cancelled"
            self._show()
            return
        self.dismiss(self.run)
