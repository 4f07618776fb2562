"""Hundreds of interfaces on one screen (issue 20 §2): sparklines scaled so a bar's height
means something, graphs as wide as the terminal allows. Updates are constructed and fed to the
real app as the collector would send them."""

from __future__ import annotations

from linkdeck.config import HostSpec, Settings
from linkdeck.model import Counters, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.messages import HostUpdated
from linkdeck.ui.sparkline import BARS
from tests.lab import wait_for
from tests.synthetic import opener_for


def iface_view(name: str, rx: float, tx: float = 0.0, kind: str = "virtual", speed_mbps: int | None = None, oper: str = "up") -> InterfaceView:
    pps = (rx + tx) / 8 / 90  # 90-byte packets
    return InterfaceView(Interface(name=name, kind=kind, oper=oper, mtu=1500, speed_mbps=speed_mbps), Rates(rx, tx, pps, 0.0, 0.0, 0.0, 0.0, 0.0), Counters())


def node_app(hosts=("node",)) -> LinkdeckApp:
    return LinkdeckApp(Settings(interval=1.0, local=False), [HostSpec(h, address=f"{h}.invalid") for h in hosts], opener=opener_for({}))


async def feed(app: LinkdeckApp, pilot, updates: list[HostUpdate]) -> None:
    # one at a time: a newer update of a host replaces one still queued (HostUpdated.can_replace)
    for update in updates:
        app.post_message(HostUpdated(update))
        await wait_for(lambda: app.updates[update.host].time == update.time, 10.0, interval=0.001, message="update applied")
    await pilot.pause()


def minute(host: str, views_at) -> list[HostUpdate]:
    """Sixty samples of ``host``, ``views_at(t)`` giving each second's interfaces."""
    return [HostUpdate(host=host, os="linux", state=HostState.LIVE, time=float(t), interfaces=tuple(views_at(t))) for t in range(60)]


def graph_cells(app: LinkdeckApp, name: str) -> str:
    """The graphs cell's text on ``name``'s row (RX then TX sparkline)."""
    table = app.table
    graphs = next(p for p in table.column_layout.placed if p.column.id == "graphs")
    index = next(i for i, r in enumerate(table.rows) if r.view and r.view.iface.name == name)
    start = table.column_layout.frozen_w + graphs.x
    return table.row_text(index)[start : start + graphs.width]


def bars(text: str) -> set[str]:
    return set(text) - {" "}


async def test_one_packet_on_an_idle_link_draws_no_full_bar():
    # a minute of silence but for one 90-byte packet each: on a 1 Gb/s NIC, on a veth beside a
    # busy NIC, and on a veth of a host with nothing else (scaled to the floor, 1 Mb/s)
    def busy_node(t):
        packet = 720.0 if t == 30 else 0.0
        return [
            iface_view("eth0", 500e6, 250e6, kind="physical", speed_mbps=1000),
            iface_view("eth1", packet, kind="physical", speed_mbps=1000),
            iface_view("veth0", packet),
        ]

    def quiet_node(t):
        return [iface_view("veth9", 720.0 if t == 30 else 0.0)]

    app = node_app(("node", "quiet"))
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(app, pilot, minute("node", busy_node) + minute("quiet", quiet_node))
        for name in ("eth1", "veth0", "veth9"):
            assert bars(graph_cells(app, name)) == {BARS[1]}, name
        # a half-used 1 Gb/s link draws half a cell, its TX at a quarter
        eth0 = graph_cells(app, "eth0")
        assert BARS[4] in eth0 and BARS[2] in eth0 and BARS[8] not in eth0


async def test_graphs_use_the_width_a_200_column_terminal_has():
    app = node_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(app, pilot, minute("node", lambda t: [iface_view("eth0", 4e8 + 1e7 * (t % 7), 1e8, kind="physical", speed_mbps=1000)]))
        graphs = next(p for p in app.table.column_layout.placed if p.column.id == "graphs")
        assert graphs.width >= 60  # 31 before: 15 cells each way and ~45 columns left empty
        header = app.table.screen_text(0)
        assert len(header.rstrip()) >= 195, header
        rx, _, tx = graph_cells(app, "eth0").partition(" ")
        half = (graphs.width - 1) // 2
        # a full minute fills each sparkline, no blank margin
        assert len(rx) == half and " " not in rx and len(tx.strip()) == half
