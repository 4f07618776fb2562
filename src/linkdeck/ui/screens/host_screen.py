"""The host detail screen: who the host is, how linkdeck is connected to it (the host's
resolution through the ssh config, as `linkdeck hosts` prints it), a summary of its
interfaces and its findings (Enter on a host row)."""

from __future__ import annotations

from typing import Callable

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker

from ...core import cells
from ...core.cells import NAME, host_cells, plain_row
from ...core.model import Finding, HostUpdate
from ...core.order import tree
from ...present.outcome import collection, stale_note, tcp_detail
from ...settings.config import HostSpec, Settings
from ..dashboard import dashboard
from ..state.rows import clean, state_text
from ..widgets.findings_pane import finding_text
from ..widgets.hanging import Hanging
from ..widgets.key_footer import KeyFooter
from ..widgets.marks import DIM, STATE_STYLE, tone_style
from ..workers import tell_failure

# (the host's newest update, the host's findings, bytes?, the sample's age now in ms, the
# recording's path, the dashboard's sort)
HostData = tuple["HostUpdate | None", list, bool, "float | None", "str | None", str]


LABEL = 11  # the facts' label column: a wrapped value continues under itself, not under it


def host_facts(
    host: str,
    update: HostUpdate | None,
    age_ms: float | None = None,
    in_bytes: bool = False,
    recording: str | None = None,
) -> Hanging:
    text = Text(clean(host), style="bold")
    if update is None:
        text.append("\nno longer watched", style="bold red")
        return Hanging(text, LABEL)
    os_text = " / ".join(clean(x) for x in (update.os, update.os_detail) if x) or "not known yet"
    facts: tuple[tuple[str, str, str | Style], ...] = (
        ("OS", os_text, ""),
        # stale is dim, as its rows: the live state's green would say its numbers are current
        (
            "State",
            state_text(update) + (f" · {stale_note(update)}" if update.stale else ""),
            DIM if update.stale else STATE_STYLE[update.state],
        ),
        ("Interfaces", str(len(update.interfaces)), ""),
        ("Collection", collection(update, age_ms), ""),
        ("TCP", tcp_detail(update), ""),
        *((c.title, said, "") for c, said in host_cells(update, in_bytes)),
    )
    for label, value, style in facts:
        text.append(f"\n{label:<{LABEL}}", style="dim")
        text.append(value, style=style)
    if update.detail.missing:  # what the host's samples lack, and why: never silently empty
        text.append(f"\n{'Missing':<{LABEL}}", style="dim")
        text.append(clean("; ".join(update.detail.missing)), style="yellow")
    # state_text names the error only for some states: show it whatever the state
    if update.error and clean(update.error) not in text.plain:
        text.append(f"\n{'Last error':<{LABEL}}", style="dim")
        text.append(clean(update.error), style="red")
    if recording:  # the header has only ● REC and its length: the file is named here
        text.append(f"\n{'Recording':<{LABEL}}", style="dim")
        text.append(clean(recording), style="red")
    return Hanging(text, LABEL)


def connection_text(spec: HostSpec | None, settings: Settings) -> Text:
    """How the host resolves: the same rows as `linkdeck hosts`."""
    text = Text("Connection", style="bold")
    if spec is None or spec.local:
        text.append("\n" + ("this machine: no SSH" if spec else "read from Prometheus: no SSH"), style="dim")
        return text
    from ...transport.ssh_describe import lines, resolution  # paramiko only for remote hosts

    target = resolution(spec, settings)
    if not isinstance(target, str):
        text.append(f"\n{'resolved by':<16}", style="dim")
        text.append(target.source)
    for label, value in lines(target, settings):
        text.append(f"\n{label:<16}", style="dim")
        text.append(clean(value), style="red" if label == "error" else "")
    return text


class InterfaceRows:
    """The host screen's interface table, laid out for the width it is drawn at: each
    interface's addresses in a last column, one a line, when they fit beside the numbers;
    otherwise on a line of their own under the row, from the second column on."""

    def __init__(self, headers: list[tuple[str, str]], rows: list[tuple[list[Text], tuple[str, ...]]]) -> None:
        self.headers, self.rows = headers, rows  # (title, "l"/"r"); ([cells], addresses)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = [
            max(len(title), *(row[n].cell_len for row, _ in self.rows)) for n, (title, _) in enumerate(self.headers)
        ]
        addresses = max((len(a) for _, addrs in self.rows for a in addrs), default=1)
        wide = 1 + sum(w + 2 for w in widths) + max(addresses, len("ADDRESSES")) <= options.max_width

        def line(cells: list[Text], last: Text | None) -> Text:
            out = Text(" ")
            for (_, align), width, cell in zip(self.headers, widths, cells):
                pad = " " * (width - cell.cell_len)
                out.append_text(Text.assemble(*((cell, pad) if align == "l" else (pad, cell))))
                out.append("  ")
            return out.append_text(last) if last is not None else out

        header = [Text(title, style="bold underline") for title, _ in self.headers]
        yield line(header, Text("ADDRESSES", style="bold underline") if wide else None)
        under = 1 + widths[0] + 2  # where the second column starts
        for row, addrs in self.rows:
            if wide:
                yield line(row, Text(addrs[0] if addrs else "—", style="" if addrs else "dim"))
                for more in addrs[1:]:
                    yield line([Text("")] * len(row), Text(more))
            else:
                yield line(row, None)
                if addrs:
                    yield Hanging(Text(" " * under + ", ".join(addrs), style="dim"), under)


def interface_table(update: HostUpdate | None, in_bytes: bool, sort: str = "name") -> InterfaceRows:
    """The host's interfaces, nested and in the dashboard's order (order.py, by the sort the
    table shows), in the plain tables' columns (cells.py) the host screen shows, then their
    addresses."""
    columns = [c for c in cells.PLAIN if c.host_screen]
    headers = [(header, c.align) for c in (NAME, *columns) for header in c.plain]
    rows = []
    for depth, view in tree(update.interfaces if update else (), sort):
        row = [Text("  " * depth + clean(view.iface.name))]
        for c in columns:
            tone = c.tone_of(view)
            style = tone_style(tone, c.bold) if tone is not None else ""
            row += [Text(word, style=style) for word in plain_row(view, in_bytes, (c,))]
        rows.append((row, tuple(clean(a) for a in view.iface.addresses)))
    return InterfaceRows(headers, rows)


class HostScreen(Screen):
    BINDINGS = [Binding("escape,q,enter", "app.pop_screen", "Back", id="host_back")]
    DEFAULT_CSS = """
    HostScreen #host-facts { padding: 0 1; }
    HostScreen #host-connection { padding: 1 1 0 1; }
    HostScreen #host-findings { padding: 1 1 0 1; }
    HostScreen #host-interfaces { padding: 1 1 0 1; }
    """

    def __init__(self, host: str, source: Callable[["HostScreen"], HostData]) -> None:
        super().__init__()
        self.host = host
        self._source = source  # the app's current data for this host, asked on each refresh
        self._shown: object = None
        self._ready = False

    def compose(self) -> ComposeResult:
        # kept as attributes, not queried: a refresh may come while the screen is being torn down
        self._facts, self._interfaces, self._findings = (
            Static(id="host-facts"),
            Static(id="host-interfaces"),
            Static(id="host-findings"),
        )
        self._connection = Static(Text("Connection", style="bold"), id="host-connection")
        with VerticalScroll():
            yield self._facts
            # findings before the interfaces: on a node of 600 links they would be a long scroll away
            yield self._findings
            yield self._interfaces
            # last: what matters when the host will not connect, when the sections above are empty
            yield self._connection
        yield KeyFooter()

    def on_mount(self) -> None:
        self._ready = True
        self.refresh_data()
        # resolving may run `ssh -G` and the config's Match exec commands: not on the event loop
        app = dashboard(self)
        spec, settings = app.spec(self.host), app.settings
        self.run_worker(
            lambda: self._resolve(spec, settings),
            name="resolving the host",
            thread=True,
            group="resolution",
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if line := tell_failure(self.app, event):
            self.show_failure(line)

    def show_failure(self, line: str) -> None:
        # a resolution that failed in a way connection_text did not foresee: one line, not an exit
        self._show_connection(Text(f"Connection\n{line}"))

    def _resolve(self, spec: HostSpec | None, settings: Settings) -> None:
        dashboard(self).call_from_thread(self._show_connection, connection_text(spec, settings))

    def _show_connection(self, text: Text) -> None:
        if self._connection.is_attached:  # the screen may have been closed meanwhile
            self._connection.update(text)

    def refresh_data(self) -> None:
        if self._ready:
            self.show(*self._source(self))

    def show(
        self,
        update: HostUpdate | None,
        findings: list[Finding],
        in_bytes: bool,
        age_ms: float | None,
        recording: str | None = None,
        sort: str = "name",
    ) -> None:
        app = dashboard(self)
        now = app.clock()
        key = (
            update,
            tuple(findings),
            in_bytes,
            age_ms,
            recording,
            sort,
            tuple(map(app.raised_at, findings)),
            int(now),
        )
        if key == self._shown:
            return
        self._shown = key
        self._facts.update(host_facts(self.host, update, age_ms, in_bytes, recording))
        if update is not None and update.interfaces:
            body = Group(Text("Interfaces", style="bold"), interface_table(update, in_bytes, sort))
        else:
            body = Group(Text("Interfaces", style="bold"), Text("None reported yet.", style="dim"))
        self._interfaces.update(body)
        self._findings.update(finding_text(findings, "None for this host.", "Findings", since=app.raised_at, now=now))
