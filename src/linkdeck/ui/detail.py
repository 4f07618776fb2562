"""The interface detail screen: facts, driver data, totals, findings and a live graph."""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from .. import units
from ..model import Finding, HostUpdate, InterfaceView
from .findings import finding_text
from .rows import clean, drops_ps, errors_ps
from .sparkline import graph

GRAPH_HEIGHT = 6
# (the host's update, (rx history, tx history), this interface's findings, bytes?)
DetailData = tuple["HostUpdate | None", tuple, list, bool]


class RateGraph(Widget):
    """RX and TX over the last 60 samples, each rescaled to its own peak."""

    DEFAULT_CSS = "RateGraph { height: auto; min-height: 16; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rx: tuple = ()
        self.tx: tuple = ()
        self.in_bytes = False

    def set_data(self, rx: tuple, tx: tuple, in_bytes: bool) -> None:
        if (rx, tx, in_bytes) != (self.rx, self.tx, self.in_bytes):
            self.rx, self.tx, self.in_bytes = rx, tx, in_bytes
            self.refresh()

    def get_content_height(self, container, viewport, width: int) -> int:
        return 2 * (GRAPH_HEIGHT + 1) + 1

    def render(self) -> Text:
        width = max(10, self.size.width - 2)
        text = Text()
        for label, values, style in (("RX", self.rx, "cyan"), ("TX", self.tx, "magenta")):
            lines, peak = graph(values, width, GRAPH_HEIGHT)
            last = values[-1] if values else None
            text.append(
                f"{label}  now {units.rate(last, self.in_bytes)}   peak shown {units.rate(peak, self.in_bytes)}\n",
                style="bold",
            )
            for line in lines:
                text.append(line + "\n", style=style)
        text.rstrip()
        return text


def facts_text(host: str, view: InterfaceView, siblings: dict[str, InterfaceView], in_bytes: bool) -> Text:
    i, r, t = view.iface, view.rates, view.totals
    text = Text()
    text.append(f"{clean(host)} / {clean(i.name)}", style="bold")
    text.append(f"   {clean(i.kind)}, {clean(i.oper)}" + ("   default route" if i.default_route else "") + "\n\n")

    def line(label: str, value: object) -> None:
        text.append(f"{label:<18}", style="dim")
        text.append(f"{value}\n")

    line("Speed / duplex", f"{units.link_speed(i.speed_mbps)} {i.duplex or '—'}")
    if i.supported_speeds_mbps:
        line("Supported speeds", ", ".join(units.link_speed(s) for s in i.supported_speeds_mbps))
    line("MTU", "—" if i.mtu is None else i.mtu)
    line("MAC", clean(i.mac or "—"))
    line("Addresses", ", ".join(clean(a) for a in i.addresses) or "—")
    if i.driver:
        line("Driver", clean(i.driver))
    if i.ring_rx is not None or i.ring_tx is not None:
        line("Rings rx / tx", f"{i.ring_rx or '—'} of {i.ring_rx_max or '—'} / {i.ring_tx or '—'} of {i.ring_tx_max or '—'}")
    if i.carrier_changes is not None:
        line("Carrier changes", i.carrier_changes)
    for label, value in i.extra:
        line(clean(label)[:17], clean(value))
    related = ([i.over] if i.over else []) + list(i.members)
    for name in related:
        other = siblings.get(name)
        role = "over" if name == i.over else "member"
        if other is None:
            line(role, clean(name))
        else:
            o = other.iface
            line(role, f"{clean(name)}  {units.link_speed(o.speed_mbps)} {o.duplex or ''} {clean(o.oper)}")
    text.append("\nNow\n", style="bold")
    line("RX / TX", f"{units.rate(r.rx_bps, in_bytes)} / {units.rate(r.tx_bps, in_bytes)}")
    line("Packets/s", f"{units.per_second(r.rx_pps)} / {units.per_second(r.tx_pps)}")
    line("Errors/s, drops/s", f"{units.per_second(errors_ps(view))}, {units.per_second(drops_ps(view))}")
    line("Utilisation", units.percent(view.util_pct))
    text.append("\nSince linkdeck started\n", style="bold")
    line("Bytes rx / tx", f"{units.size_bytes(t.rx_bytes)} / {units.size_bytes(t.tx_bytes)}")
    line("Packets rx / tx", f"{_count(t.rx_packets)} / {_count(t.tx_packets)}")
    line("Errors rx / tx", f"{_count(t.rx_errors)} / {_count(t.tx_errors)}")
    line("Drops rx / tx", f"{_count(t.rx_drops)} / {_count(t.tx_drops)}")
    if i.nic_counters:
        text.append("\nNIC counters\n", style="bold")
        for name, value in sorted(i.nic_counters.items()):
            line(clean(name)[:17], value)
    text.rstrip()
    return text


def _count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


class DetailScreen(Screen):
    BINDINGS = [Binding("escape,q,enter", "app.pop_screen", "Back", id="detail_back")]
    DEFAULT_CSS = """
    DetailScreen #detail-facts { padding: 0 1; }
    DetailScreen #detail-findings { padding: 1 1 0 1; }
    DetailScreen RateGraph { padding: 1 1 0 1; }
    """

    def __init__(self, host: str, name: str, source: Callable[["DetailScreen"], DetailData]) -> None:
        super().__init__()
        self.host, self.iface_name = host, name
        self._source = source  # the app's current data for this interface, asked on each refresh
        self._shown: object = None
        self._ready = False  # the app may ask for a refresh before the children exist

    def on_mount(self) -> None:
        self._ready = True
        self.refresh_data()

    def refresh_data(self) -> None:
        if self._ready:
            self.show(*self._source(self))

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield RateGraph(id="detail-graph")
            yield Static(id="detail-facts")
            yield Static(id="detail-findings")
        yield Footer()

    def show(self, update: HostUpdate | None, history: tuple[tuple, tuple], findings: list[Finding], in_bytes: bool) -> None:
        views = {v.iface.name: v for v in (update.interfaces if update else ())}
        view = views.get(self.iface_name)
        self.query_one(RateGraph).set_data(history[0], history[1], in_bytes)
        key = (view, in_bytes, tuple(findings))
        if key == self._shown:
            return
        self._shown = key
        facts = self.query_one("#detail-facts", Static)
        if view is None:
            facts.update(Text(f"{clean(self.host)} / {clean(self.iface_name)} is gone (the host no longer reports it).", style="bold red"))
        else:
            facts.update(facts_text(self.host, view, views, in_bytes))
        body = Text("Findings\n", style="bold")
        body.append_text(finding_text(findings, "None for this interface."))
        self.query_one("#detail-findings", Static).update(body)
