"""The interface detail screen: facts first (link | now and totals), then RX and TX graphs side
by side, findings, and the driver's own counters last (they can run to dozens of lines)."""

from __future__ import annotations

from typing import Callable

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from ...core import units
from ...core.cells import drops_ps, errors_ps
from ...core.model import Finding, HostUpdate, Interface, InterfaceView
from ...parsers.ethtool import OFFLOADS
from ...present.outcome import last_test_title, report
from ...probe import Outcome
from ...verdict.goodput import DEFAULT_MTU, ETHERNET_HEADER
from ..dashboard import dashboard
from ..state.rows import clean
from ..widgets.findings_pane import finding_text
from ..widgets.key_footer import KeyFooter
from ..widgets.sparkline import graph

GRAPH_HEIGHT = 5  # bar lines per graph, under one title line: fits 120x35 with the facts
LABEL_MAX = 24  # a longer label wraps inside its column rather than being cut
NARROW = 100  # below this many columns the two fact columns stack
# (the host's update, (rx history, tx history), this interface's findings, bytes?, the last
# test through it)
DetailData = tuple["HostUpdate | None", tuple, list, bool, "Outcome | None"]
Section = tuple[str, list[tuple[str, str]]]  # (title or "", [(label, value)])


class FactList(Static):
    """Titled sections of label/value pairs; the label column is as wide as the longest label
    (up to LABEL_MAX, then wrapped) and values wrap under themselves, never under the label."""

    DEFAULT_CSS = "FactList { height: auto; padding: 0 1; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sections: list[Section] = []
        self.heading: Text | None = None

    def set_sections(self, sections: list[Section], heading: Text | None = None) -> None:
        if (sections, heading) == (self.sections, self.heading):
            return
        self.sections, self.heading = sections, heading
        self.update(self._renderable())

    def _renderable(self) -> Group:
        width = min(LABEL_MAX, max((len(label) for _, pairs in self.sections for label, _ in pairs), default=8))
        parts: list = [self.heading] if self.heading is not None else []
        for n, (title, pairs) in enumerate(self.sections):
            if title:
                parts.append(Text(("\n" if n or parts else "") + title, style="bold"))
            grid = Table.grid(padding=(0, 1))
            grid.add_column(width=width, style="dim", overflow="fold")
            grid.add_column(overflow="fold")
            for label, value in pairs:
                grid.add_row(Text(label), Text(value))
            parts.append(grid)
        return Group(*parts)

    def plain(self, width: int | None = None) -> str:
        """The text as drawn at ``width`` (default: the widget's own), for tests."""
        console = Console(width=width or max(20, self.content_region.width), color_system=None)
        with console.capture() as capture:
            console.print(self._renderable())
        return capture.get()


class RateGraph(Widget):
    """One direction's samples over the history's span, rescaled to the largest one shown."""

    DEFAULT_CSS = f"RateGraph {{ height: {GRAPH_HEIGHT + 1}; width: 1fr; padding: 0 1; }}"

    def __init__(self, label: str, style: str, capacity: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label, self.style, self.capacity = label, style, capacity
        self.values: tuple = ()
        self.in_bytes = False

    def set_data(self, values: tuple, in_bytes: bool) -> None:
        if (values, in_bytes) != (self.values, self.in_bytes):
            self.values, self.in_bytes = values, in_bytes
            self.refresh()

    def render(self) -> Text:
        lines, peak = graph(self.values, max(10, self.content_region.width), GRAPH_HEIGHT, self.capacity)
        last = self.values[-1] if self.values else None
        text = Text(f"{self.label} now {units.rate(last, self.in_bytes)}", style="bold")
        text.append(f"   scale 0–{units.rate(peak, self.in_bytes)}\n", style="dim")
        text.append("\n".join(lines), style=self.style)
        return text


def heading(host: str, view: InterfaceView) -> Text:
    i = view.iface
    text = Text(f"{clean(host)} / {clean(i.name)}", style="bold")
    text.append(f"   {clean(i.kind)}, {clean(i.oper)}" + ("   default route" if i.default_route else ""))
    return text


def speed_words(i: Interface) -> str:
    """The speed and duplex, and where a configured one came from: the config's [speed] is
    not what the link negotiated."""
    said = f"{units.link_speed(i.speed_mbps)} {units.duplex(i.duplex)}"
    if not i.speed_configured:
        return said
    reported = units.link_speed(i.reported_speed_mbps) if i.reported_speed_mbps else "no speed"
    return f"{said} (configured in [speed], not negotiated; the host reports {reported})"


def driver_words(i: Interface) -> str:
    """The driver as ethtool -i or the OS names it, with its version and firmware when told."""
    if not i.driver:
        return "unknown"
    return ", ".join(
        [
            clean(i.driver),
            *(
                f"{what} {clean(v)}"
                for what, v in (("version", i.driver_version), ("firmware", i.firmware_version))
                if v
            ),
        ]
    )


OFFLOAD_NAMES = dict(zip(OFFLOADS, ("TSO", "GSO", "GRO")))


def offload_words(i: Interface) -> str | None:
    if i.offload is None:
        return None
    return ", ".join(f"{short} {'on' if name in i.offload else 'off'}" for name, short in OFFLOAD_NAMES.items())


def burst_notes(view: InterfaceView) -> list[tuple[str, str]]:
    """Why a packet rate is a fraction of the wire's, where the counters show it (a counted
    packet larger than an MTU-sized frame) and ethtool -k shows the offload that does it."""
    i, r = view.iface, view.rates
    on, frame = set(i.offload or ()), (i.mtu or DEFAULT_MTU) + ETHERNET_HEADER
    notes = []
    for way, bps, pps, offloads, how in (
        (
            "TX",
            r.tx_bps,
            r.tx_pps,
            {"tcp-segmentation-offload", "generic-segmentation-offload"},
            "the kernel counts each burst of up to 64 kB as one packet before it is cut into frames",
        ),
        (
            "RX",
            r.rx_bps,
            r.rx_pps,
            {"generic-receive-offload"},
            "the kernel merges arriving frames of a flow into one packet before it counts them",
        ),
    ):
        if not (on & offloads) or not bps or not pps or bps / 8 / pps <= frame:
            continue
        size = bps / 8 / pps
        names = " and ".join(OFFLOAD_NAMES[o] for o in OFFLOADS if o in on & offloads)
        notes.append((
            f"{way} packets",
            f"{units.size_bytes(round(size))} each on average, larger than a {frame}-byte frame: "
            f"{names} on (ethtool -k), so {how}. The wire carries about {units.times(size / frame)} as many packets; "
            "bytes/s are exact. Compare packet rates only between ends with the same offloads.",
        ))  # fmt: skip
    return notes


def test_facts(outcome: "Outcome | None", host: str, iface: str) -> list[Section]:
    """The last test through this interface, on either end, saying which end it was."""
    if outcome is None:
        return []
    rep = report(outcome)
    return [
        (
            last_test_title(outcome, host, iface),
            [("Verdict", f"{rep.status.upper()}: {rep.summary}"), ("Test", rep.title)],
        )
    ]


def link_facts(view: InterfaceView, siblings: dict[str, InterfaceView]) -> list[Section]:
    i = view.iface
    pairs = [("Speed / duplex", speed_words(i))]
    if i.supported_speeds_mbps:
        pairs.append(("Supported speeds", ", ".join(units.link_speed(s) for s in i.supported_speeds_mbps)))
    pairs += [
        ("MTU", units.mtu(i.mtu)),
        ("MAC", clean(i.mac or "—")),
        ("Addresses", ", ".join(clean(a) for a in i.addresses) or "—"),
    ]
    pairs.append(("Driver", driver_words(i)))
    if (offload := offload_words(i)) is not None:
        pairs.append(("Offload", offload))
    if i.ring_rx is not None or i.ring_tx is not None:
        pairs.append(
            (
                "Rings rx / tx",
                f"{i.ring_rx or '—'} of {i.ring_rx_max or '—'} / {i.ring_tx or '—'} of {i.ring_tx_max or '—'}",
            )
        )
    if i.carrier_changes is not None:
        pairs.append(("Carrier changes", str(i.carrier_changes)))
    pairs += [(clean(label), clean(value)) for label, value in i.extra]
    for name in ([i.over] if i.over else []) + list(i.members):
        other = siblings.get(name)
        role = "over" if name == i.over else "member"
        if other is None:
            pairs.append((role, clean(name)))
        else:
            o = other.iface
            pairs.append((role, f"{clean(name)}  {units.link_speed(o.speed_mbps)} {o.duplex or ''} {clean(o.oper)}"))
    return [("Link", pairs)]


def traffic_facts(view: InterfaceView, in_bytes: bool) -> list[Section]:
    r, t = view.rates, view.totals
    notes = burst_notes(view)
    return [
        (
            "Now",
            [
                ("RX / TX", f"{units.rate(r.rx_bps, in_bytes)} / {units.rate(r.tx_bps, in_bytes)}"),
                ("Packets/s", f"{units.per_second(r.rx_pps)} / {units.per_second(r.tx_pps)}"),
                ("Errors/s, drops/s", f"{units.per_second(errors_ps(view))}, {units.per_second(drops_ps(view))}"),
                ("Utilisation", units.percent(view.util_pct)),
            ],
        ),
        *([("Packet counts", notes)] if notes else []),
        (
            "Since linkdeck started",
            [
                ("Bytes rx / tx", f"{units.size_bytes(t.rx_bytes)} / {units.size_bytes(t.tx_bytes)}"),
                ("Packets rx / tx", f"{_count(t.rx_packets)} / {_count(t.tx_packets)}"),
                ("Errors rx / tx", f"{_count(t.rx_errors)} / {_count(t.tx_errors)}"),
                ("Drops rx / tx", f"{_count(t.rx_drops)} / {_count(t.tx_drops)}"),
            ],
        ),
    ]


def nic_facts(view: InterfaceView) -> list[Section]:
    counters = view.iface.nic_counters
    if not counters:
        return []
    return [("NIC counters (driver)", [(clean(name), _count(value)) for name, value in sorted(counters.items())])]


def _count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


class DetailScreen(Screen):
    BINDINGS = [Binding("escape,q,enter", "app.pop_screen", "Back", id="detail_back")]
    DEFAULT_CSS = """
    DetailScreen #detail-columns { height: auto; }
    DetailScreen #detail-facts { width: 3fr; }
    DetailScreen #detail-traffic { width: 2fr; }
    DetailScreen.-narrow #detail-columns { layout: vertical; }
    DetailScreen.-narrow #detail-columns FactList { width: 100%; }
    DetailScreen #detail-graphs { height: auto; margin-top: 1; }
    DetailScreen #detail-findings { padding: 1 1 0 1; }
    DetailScreen #detail-nic { margin-top: 1; }
    """

    def __init__(self, host: str, name: str, source: Callable[["DetailScreen"], DetailData], samples: int = 60) -> None:
        super().__init__()
        self.host, self.iface_name, self.samples = host, name, samples
        self._source = source  # the app's current data for this interface, asked on each refresh
        self._shown: object = None
        self._ready = False  # the app may ask for a refresh before the children exist

    def on_mount(self) -> None:
        self._ready = True
        self.refresh_data()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")

    def refresh_data(self) -> None:
        if self._ready:
            self.show(*self._source(self))

    def compose(self) -> ComposeResult:
        # kept as attributes, not queried: a refresh may come while the screen is being torn down
        self._facts, self._traffic = FactList(id="detail-facts"), FactList(id="detail-traffic")
        self._rx = RateGraph("RX", "cyan", self.samples, id="detail-rx")
        self._tx = RateGraph("TX", "magenta", self.samples, id="detail-tx")
        self._findings, self._nic = Static(id="detail-findings"), FactList(id="detail-nic")
        with VerticalScroll():
            with Horizontal(id="detail-columns"):
                yield self._facts
                yield self._traffic
            with Horizontal(id="detail-graphs"):
                yield self._rx
                yield self._tx
            yield self._findings
            yield self._nic
        yield KeyFooter()

    def show(
        self,
        update: HostUpdate | None,
        history: tuple[tuple, tuple],
        findings: list[Finding],
        in_bytes: bool,
        last: "Outcome | None" = None,
    ) -> None:
        views = {v.iface.name: v for v in (update.interfaces if update else ())}
        view = views.get(self.iface_name)
        self._rx.set_data(history[0], in_bytes)
        self._tx.set_data(history[1], in_bytes)
        app = dashboard(self)
        now = app.clock()
        key = (view, in_bytes, tuple(findings), last, tuple(map(app.raised_at, findings)), int(now))
        if key == self._shown:
            return
        self._shown = key
        if view is None:
            gone = Text(
                f"{clean(self.host)} / {clean(self.iface_name)} is gone (the host no longer reports it).",
                style="bold red",
            )
            self._facts.set_sections([], gone)
            self._traffic.set_sections([])
            self._nic.set_sections([])
        else:
            self._facts.set_sections(
                link_facts(view, views) + test_facts(last, self.host, self.iface_name), heading(self.host, view)
            )
            # a blank first line keeps "Now" level with "Link" under the heading
            self._traffic.set_sections(traffic_facts(view, in_bytes), Text(""))
            self._nic.set_sections(nic_facts(view))
        self._findings.update(
            finding_text(findings, "None for this interface.", "Findings", since=app.raised_at, now=now)
        )
