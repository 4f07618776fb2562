"""The dashboard's pure row model and sparklines (no textual needed)."""

from __future__ import annotations

from linkdeck.model import Counters, Finding, HostState, HostUpdate, Interface, InterfaceView, Rates, Severity
from linkdeck.present import interface_cells as iface_cells
from linkdeck.ui.rows import RateHistory, badges, build_rows, name_cell, nest, state_text
from linkdeck.ui.sparkline import graph, spark


def view(name, rx=None, tx=None, util=None, errs=None, drops=None, **iface):
    iface.setdefault("oper", "up")
    return InterfaceView(
        iface=Interface(name=name, **iface),
        rates=Rates(rx_bps=rx, tx_bps=tx, rx_errors_ps=errs, rx_drops_ps=drops),
        totals=Counters(),
        util_pct=util,
    )


def host(name, *views, state=HostState.LIVE, **kw):
    return HostUpdate(host=name, os="linux", state=state, interfaces=tuple(views), **kw)


def names(rows):
    return [(r.depth, r.host if r.is_host else r.view.iface.name) for r in rows]


def test_vlan_nests_under_bond_and_members_under_bond():
    h = host(
        "nas",
        view("eth1"),
        view("bond0", kind="bond", members=("eth0", "eth1")),
        view("bond0.10", kind="vlan", over="bond0"),
        view("eth0"),
        view("lo", kind="loopback"),
    )
    assert names(build_rows([h])) == [
        (0, "nas"),
        (1, "bond0"),
        (2, "bond0.10"),
        (2, "eth0"),
        (2, "eth1"),
        (1, "lo"),
    ]


def test_cycle_between_interfaces_is_broken_and_nothing_is_lost():
    children = nest([view("a", over="b"), view("b", over="a"), view("c", over="a")])
    assert [v.iface.name for v in children[None]] == ["a"]
    assert sorted(v.iface.name for v in children["a"]) == ["b", "c"]
    rows = build_rows([host("h", view("a", over="b"), view("b", over="a"))])
    assert names(rows) == [(0, "h"), (1, "a"), (2, "b")]


def test_sorts_order_biggest_first_unknown_last():
    h = host(
        "h",
        view("a", rx=1e6, tx=9e6, util=1.0, errs=0.0, drops=0.0),
        view("b", rx=3e6, tx=1e6, util=30.0, errs=5.0, drops=1.0),
        view("c", rx=2e6, tx=5e6, util=None, errs=None, drops=None),
        view("d"),
    )
    order = lambda sort: [n for d, n in names(build_rows([h], sort=sort))[1:]]
    assert order("name") == ["a", "b", "c", "d"]
    assert order("rx") == ["b", "c", "a", "d"]
    assert order("tx") == ["a", "c", "b", "d"]
    assert order("util") == ["b", "a", "c", "d"]
    assert order("errors") == ["b", "a", "c", "d"]


def test_filter_keeps_parent_of_a_match_and_the_host_row():
    h = host("h", view("bond0", kind="bond"), view("bond0.10", over="bond0"), view("eth0"))
    assert names(build_rows([h], filter_text=".10")) == [(0, "h"), (1, "bond0"), (2, "bond0.10")]
    assert names(build_rows([h], filter_text="ETH")) == [(0, "h"), (1, "eth0")]
    assert names(build_rows([h], filter_text="nothing")) == [(0, "h")]


def test_hide_idle_drops_loopback_and_down():
    h = host("h", view("lo", kind="loopback"), view("eth0"), view("eth1", oper="down"))
    assert names(build_rows([h], hide_idle=True)) == [(0, "h"), (1, "eth0")]
    assert len(build_rows([h], hide_idle=False)) == 4


def test_badges_take_worst_severity_and_count_per_row_and_host():
    f = lambda sev, iface: Finding("X", sev, "h", iface, "m", "e", "n")
    got = badges([f(Severity.WARNING, "eth0"), f(Severity.ERROR, "eth0"), f(Severity.INFO, None)])
    assert got[("iface", "h", "eth0")].text == "E2"
    assert got[("host", "h")].text == "E3"
    rows = build_rows([host("h", view("eth0"), view("eth1"))], badge_map=got)
    assert [r.badge.text if r.badge else None for r in rows] == ["E3", "E2", None]


def test_cells_units_and_unknowns():
    v = view("eth0", rx=8e6, tx=None, util=0.8, speed_mbps=1000, duplex="full", mtu=9000)
    bits = iface_cells(v, in_bytes=False)
    assert bits[:5] == ("unknown", "up", "1G", "full", "9000")
    assert bits[5] == "8.00 Mb/s" and bits[6] == "—"
    assert iface_cells(v, in_bytes=True)[5] == "1.00 MB/s"
    assert bits[11] == "0.8%"
    assert iface_cells(view("x"), False)[2:5] == ("—", "—", "—")


def test_hostile_name_is_made_printable_and_default_route_marked():
    h = host("h", view("eth0[bold red]x\x1b[2J", default_route=True))
    row = build_rows([h])[1]
    assert name_cell(row) == "*eth0[bold red]x\\x1b[2J"


def test_state_text_for_every_state():
    fp = "SHA256:abcDEF"
    assert state_text(host("h", state=HostState.CONNECTING)) == "connecting"
    assert state_text(host("h", state=HostState.RECONNECTING, error="connection reset", detail={"retry_in_s": "4"})) == (
        "reconnecting: connection reset (next try in 4 s)"
    )
    assert "host key unknown SHA256:abcDEF" in state_text(host("h", state=HostState.HOST_KEY_UNKNOWN, detail={"fingerprint": fp}))
    changed = state_text(host("h", state=HostState.HOST_KEY_CHANGED, detail={"fingerprint": fp}))
    assert changed.startswith("host key changed SHA256:abcDEF") and "refused" in changed
    assert state_text(host("h", state=HostState.AUTH_FAILED, error="publickey denied")) == "auth failed: publickey denied"
    assert state_text(host("h", state=HostState.ERROR, error="bad\x1b[2J")) == "error: bad\\x1b[2J"


def test_history_keeps_sixty_and_forgets_vanished_interfaces():
    hist = RateHistory()
    for i in range(70):
        hist.push(host("h", view("eth0", rx=float(i), tx=2.0 * i), view("eth1", rx=1.0)))
    rx, tx = hist.get("h", "eth0")
    assert len(rx) == 60 and rx[0] == 10.0 and rx[-1] == 69.0 and tx[-1] == 138.0
    hist.push(host("h", view("eth0")))
    assert hist.get("h", "eth1") == ((), ())
    assert hist.get("h", "eth0")[0][-1] is None


def test_sparkline_scales_to_its_peak_and_buckets_by_max():
    assert spark([0, 1, 2, 4, 8], 5) == "▁▁▂▄█"
    assert spark([None, None, 1], 5) == "    █"
    assert spark([0.0] * 4, 4) == "▁▁▁▁"
    assert spark([1, 9, 1, 1], 2) == "█▁"  # a one-sample burst survives bucketing
    lines, peak = graph([1, 2, 3, None, 4], 10, 2, capacity=5)
    assert peak == 4 and lines == ["    ▄▄  ██", "▄▄████  ██"]


def test_graph_spreads_a_full_history_over_the_whole_width():
    # 60 samples on 97 columns: no blank margin, each sample one or two columns wide
    lines, peak = graph([float(n) for n in range(1, 61)], 97, 4, capacity=60)
    assert peak == 60 and all(len(line) == 97 for line in lines)
    assert " " not in lines[-1] and lines[0].endswith("▇█") and lines[0][0] == " "
    # fewer samples than the capacity sit on the right, where the newest ones belong
    lines, _ = graph([8.0, 8.0], 12, 1, capacity=6)
    assert lines == ["        ████"]
    # narrower than the capacity: each column keeps its largest sample
    assert graph([1, 9, 1, 1], 2, 1, capacity=4)[0] == ["█▁"]


def test_history_covers_sixty_seconds_at_any_interval():
    fast, slow = RateHistory(0.2), RateHistory(5.0)
    assert (fast.size, fast.span) == (300, "60s") and (slow.size, slow.span) == (12, "60s")
    for i in range(400):
        fast.push(host("h", view("eth0", rx=float(i))))
    assert len(fast.get("h", "eth0")[0]) == 300
    assert RateHistory(60.0).span == "2m"  # two samples at the least, and the title says so
