"""Hundreds of interfaces on one screen (issue 20 §2): sparklines scaled so a bar's height
means something, graphs as wide as the terminal allows. Updates are constructed and fed to the
real app as the collector would send them."""

from __future__ import annotations

import pytest

from linkdeck.core.model import Counters, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.messages import HostUpdated
from linkdeck.ui.widgets.sparkline import BARS
from tests.lab import wait_for
from tests.synthetic import opener_for


def iface_view(
    name: str, rx: float, tx: float = 0.0, kind: str = "virtual", speed_mbps: int | None = None, oper: str = "up"
) -> InterfaceView:
    pps = (rx + tx) / 8 / 90  # 90-byte packets
    return InterfaceView(
        Interface(name=name, kind=kind, oper=oper, mtu=1500, speed_mbps=speed_mbps),
        Rates(rx, tx, pps, 0.0, 0.0, 0.0, 0.0, 0.0),
        Counters(),
    )


def node_app(hosts=("node",)) -> LinkdeckApp:
    return LinkdeckApp(
        Settings(interval=1.0, local=False), [HostSpec(h, address=f"{h}.invalid") for h in hosts], opener=opener_for({})
    )


async def feed(app: LinkdeckApp, pilot, updates: list[HostUpdate]) -> None:
    # one at a time, each applied before the next is posted
    for update in updates:
        app.post_message(HostUpdated(update))
        await wait_for(
            lambda: app.updates[update.host].time == update.time, 10.0, interval=0.001, message="update applied"
        )
    # the rows follow a burst of updates a moment later (LinkdeckApp._gather_rebuild)
    await wait_for(lambda: not app.rows_behind, 10.0, interval=0.001, message="the rows rebuilt")
    await pilot.pause()


def minute(host: str, views_at) -> list[HostUpdate]:
    """Sixty samples of ``host``, ``views_at(t)`` giving each second's interfaces."""
    return [
        HostUpdate(host=host, os="linux", state=HostState.LIVE, time=float(t), interfaces=tuple(views_at(t)))
        for t in range(60)
    ]


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
        for name in ("eth1", "veth0", "veth9"):  # scaled to their own peak, never below the floor
            assert bars(graph_cells(app, name)) == {BARS[1]}, name
        assert BARS[8] in graph_cells(app, "eth0")  # its own busiest minute fills the graph
        await pilot.press("a")  # to the link speed
        await pilot.pause()
        for name in ("eth1", "veth0", "veth9"):
            assert bars(graph_cells(app, name)) == {BARS[1]}, name
        # a half-used 1 Gb/s link draws half a cell, its TX at a quarter
        eth0 = graph_cells(app, "eth0")
        assert BARS[4] in eth0 and BARS[2] in eth0 and BARS[8] not in eth0


async def test_graphs_use_the_width_a_200_column_terminal_has():
    app = node_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(
            app,
            pilot,
            minute("node", lambda t: [iface_view("eth0", 4e8 + 1e7 * (t % 7), 1e8, kind="physical", speed_mbps=1000)]),
        )
        graphs = next(p for p in app.table.column_layout.placed if p.column.id == "graphs")
        assert graphs.width >= 60  # 31 before: 15 cells each way and ~45 columns left empty
        header = app.table.screen_text(0)
        assert len(header.rstrip()) >= 195, header
        rx, _, tx = graph_cells(app, "eth0").partition(" ")
        half = (graphs.width - 1) // 2
        # a full minute fills each sparkline, no blank margin
        assert len(rx) == half and " " not in rx and len(tx.strip()) == half


# -- a Kubernetes node: eth0, two idle NICs, loopback, 300 cali* and 300 veth* (constructed) --

CALI = [f"cali{i:011x}" for i in range(300)]
VETH = [f"veth{i:08x}" for i in range(300)]


def k8s_node(
    t: int, busy: dict[str, float] | None = None, down: tuple[str, ...] = (), host: str = "node"
) -> HostUpdate:
    busy = busy or {}
    views = [
        iface_view("eth0", 800e6, 200e6, kind="physical", speed_mbps=10000),
        iface_view("eth1", 0.0, kind="physical", speed_mbps=1000),
        iface_view("eth2", 0.0, kind="physical", speed_mbps=1000),
        iface_view("lo", 0.0, kind="loopback"),
    ]
    views += [iface_view(n, busy.get(n, 0.0), oper="down" if n in down else "up") for n in CALI + VETH]
    return HostUpdate(host=host, os="linux", state=HostState.LIVE, time=float(t), interfaces=tuple(views))


def shown(app: LinkdeckApp) -> list[str]:
    return [
        r.host if r.is_host else r.view.iface.name if r.view else app.table.row_text(i).split("  ")[0].strip()
        for i, r in enumerate(app.table.rows)
    ]


async def test_idle_virtual_interfaces_fold_by_pattern_and_unfold():
    app = node_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(app, pilot, [k8s_node(0), k8s_node(1)])
        # physical NICs never fold, idle or not; loopback keeps its row
        assert shown(app) == ["node", "eth0", "eth1", "eth2", "lo", "300 cali*", "300 veth*"]
        fold = app.table.rows[5]
        assert (
            fold.fold is not None
            and len(fold.fold.names) == 300
            and app.table.row_text(5).split()[:6] == ["300", "cali*", "idle:", "under", "10", "kb/s,"]
        )
        await pilot.press("v")  # every row
        assert len(app.table.rows) == 1 + 604
        await pilot.press("v")
        assert shown(app)[-2:] == ["300 cali*", "300 veth*"]
        assert app.table.select_key(("fold", "node", "veth*"))
        await pilot.press("enter")  # this fold's own interfaces, the other stays folded
        assert shown(app)[5:-1] == VETH and shown(app)[-1] == "300 cali*"
        await pilot.press("v", "v")  # folded again everywhere
        assert len(app.table.rows) == 7


async def test_traffic_a_state_change_or_a_finding_takes_an_interface_out_of_the_fold(monkeypatch):
    import linkdeck.findings.engine
    from linkdeck.core.model import Finding, Severity

    found: list[Finding] = []
    monkeypatch.setattr(linkdeck.findings.engine, "Diagnoser", lambda settings, **kw: Findings(found))
    app = node_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(app, pilot, [k8s_node(0), k8s_node(1)])
        assert shown(app)[-2:] == ["300 cali*", "300 veth*"]
        # one sample with traffic (720 kb/s), one with a state change: out at once, sorted among the others
        await feed(app, pilot, [k8s_node(2, busy={CALI[5]: 720e3}, down=(VETH[7],))])
        assert shown(app) == ["node", CALI[5], "eth0", "eth1", "eth2", "lo", VETH[7], "299 cali*", "299 veth*"]
        # a finding: out on the next rebuild, without waiting for the idle time
        found.append(
            Finding("DROPS_RISING", Severity.WARNING, "node", CALI[9], f"{CALI[9]}: drops", "evidence", "next step")
        )
        app.passes.now_due()
        await feed(app, pilot, [k8s_node(3, busy={CALI[5]: 720e3})])
        assert CALI[9] in shown(app) and "298 cali*" in shown(app)
        # quiet again: back in the fold only after 10 s of samples (the state changed back too)
        await feed(app, pilot, [k8s_node(t) for t in range(4, 13)])
        assert CALI[5] in shown(app) and VETH[7] in shown(app)
        await feed(app, pilot, [k8s_node(t) for t in range(13, 15)])
        assert (
            CALI[5] not in shown(app)
            and VETH[7] not in shown(app)
            and "299 cali*" in shown(app)
            and "300 veth*" in shown(app)
        )


async def test_sort_filter_and_the_cross_host_list_work_with_folds():
    app = node_app(("node", "node2"))
    async with app.run_test(size=(200, 60)) as pilot:
        busy = {CALI[3]: 5e6, VETH[1]: 9e8}
        await feed(app, pilot, [k8s_node(t, busy=busy, host=h) for t in (0, 1) for h in ("node", "node2")])
        await pilot.press("s")  # by RX: the busiest first, folds after the host's interfaces
        assert app.view.sort == "rx"
        assert shown(app)[:9] == ["node", VETH[1], "eth0", CALI[3], "eth1", "eth2", "lo", "299 cali*", "299 veth*"]
        await pilot.press("slash", "c", "a", "l", "i", "enter")
        assert shown(app) == ["node", CALI[3], "299 cali*", "node2", CALI[3], "299 cali*"]
        await pilot.press("escape", "g")  # across hosts: every busy interface sorted, then the folds
        names = [app.table.row_text(i).split()[0] for i in range(len(app.table.rows))]
        assert names[:4] == [f"node/{VETH[1]}", f"node2/{VETH[1]}", "node/eth0", "node2/eth0"]
        assert names[-4:] == ["node/299", "node/299", "node2/299", "node2/299"]
        assert "node2/299 veth*" in app.table.row_text(len(app.table.rows) - 1)


async def test_h_cycles_down_then_idle_and_the_header_says_which():
    app = node_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(
            app,
            pilot,
            [k8s_node(0, busy={CALI[2]: 1e6}, down=(VETH[0],)), k8s_node(1, busy={CALI[2]: 1e6}, down=(VETH[0],))],
        )
        status = lambda: str(app.query_one("#status").render())  # noqa: E731
        assert "hidden" not in status() and "lo" in shown(app)
        await pilot.press("h")
        assert (
            "lo+down hidden" in status()
            and "lo" not in shown(app)
            and VETH[0] not in shown(app)
            and "eth1" in shown(app)
        )
        await pilot.press("h")  # idle too: the idle NICs go, the busy ones stay
        assert "idle hidden" in status() and shown(app) == ["node", CALI[2], "eth0"]
        await pilot.press("h")
        assert "hidden" not in status() and "lo" in shown(app)


async def test_a_host_row_carries_the_hosts_totals_folded_or_not():
    # a bond over two NICs (counted once, as the bond), a vlan on the bond (inside it),
    # loopback and the veths (their traffic also crosses the bond): the totals are the bond's
    # plus the standalone NIC's
    def views(t):
        return [
            InterfaceView(
                Interface("bond0", kind="bond", oper="up", members=("eth0", "eth1")),
                Rates(900e6, 300e6, 80e3, 30e3, 1.0, 0.0, 2.0, 0.5),
                Counters(),
            ),
            InterfaceView(
                Interface("eth0", kind="physical", oper="up"),
                Rates(450e6, 150e6, 40e3, 15e3, 1.0, 0.0, 2.0, 0.5),
                Counters(),
            ),
            InterfaceView(
                Interface("eth1", kind="physical", oper="up"),
                Rates(450e6, 150e6, 40e3, 15e3, 0.0, 0.0, 0.0, 0.0),
                Counters(),
            ),
            InterfaceView(
                Interface("bond0.10", kind="vlan", oper="up", over="bond0"),
                Rates(100e6, 10e6, 9e3, 1e3, 0.0, 0.0, 0.0, 0.0),
                Counters(),
            ),
            InterfaceView(
                Interface("eth2", kind="physical", oper="up"),
                Rates(100e6, 50e6, 10e3, 5e3, 0.0, 0.0, 1.0, 0.0),
                Counters(),
            ),
            iface_view("lo", 5e6, 5e6, kind="loopback"),
            iface_view("veth0", 4e8, 1e8),
        ]

    app = node_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await feed(app, pilot, minute("node", views)[:2])
        expected = "RX 1.00 Gb/s TX 350 Mb/s · Err/s 1.0 Drop/s 3.5 · 90.0 k/35.0 k pps"
        assert expected in app.table.row_text(0)
        await pilot.press("space")  # the host folded to its one row: the same totals
        assert len(app.table.rows) == 1 and expected in app.table.row_text(0)
        await pilot.press("b")
        assert "RX 125 MB/s TX 43.8 MB/s" in app.table.row_text(0)


class Findings:
    """The Diagnoser's place: these findings, whatever the updates."""

    def __init__(self, found: list) -> None:
        self.found = found

    def observe(self, update) -> None:
        pass

    def findings(self) -> list:
        return list(self.found)


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_602_link_node_on_screen(snap_compare, monkeypatch, size):
    """The node folded to what matters: its totals on its row, eth0 busy, one cali busy, the
    idle NICs and loopback, then "299 cali*" and "300 veth*"."""
    import linkdeck.findings.engine
    import linkdeck.ui.app

    monkeypatch.setattr(linkdeck.findings.engine, "Diagnoser", lambda settings, **kw: Findings([]))
    monkeypatch.setattr(linkdeck.ui.app, "OWN_COST_EVERY_S", 3600.0)
    app = node_app()

    async def run_before(pilot):
        await feed(app, pilot, [k8s_node(t, busy={CALI[42]: 3e6 * (1 + t % 3)}) for t in range(12)])

    assert snap_compare(app, terminal_size=size, run_before=run_before)
