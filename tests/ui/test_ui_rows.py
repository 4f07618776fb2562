"""The dashboard's pure row model and sparklines (no textual needed)."""

from __future__ import annotations

import time
from dataclasses import replace

from linkdeck.core.cells import COLUMNS
from linkdeck.core.model import (
    Counters,
    Finding,
    HostDetail,
    HostState,
    HostUpdate,
    Interface,
    InterfaceView,
    Rates,
    Severity,
)
from linkdeck.core.order import nest
from linkdeck.settings.config import UI_COLUMNS, Hide
from linkdeck.ui.state.rows import RateHistory, badges, build_rows, host_summary, name_cell, short_os, state_text
from linkdeck.ui.widgets.columns import fit, load_choice, save_choice
from linkdeck.ui.widgets.header import fleet_counts
from linkdeck.ui.widgets.sparkline import graph, spark


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
    assert names(build_rows([h])) == [(0, "nas"), (1, "bond0"), (2, "bond0.10"), (2, "eth0"), (2, "eth1"), (1, "lo")]


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
    assert names(build_rows([h], filter_text="nothing")) == []  # a host with nothing that matches has no row
    assert names(build_rows([h], filter_text="H")) == [
        (0, "h"),
        (1, "bond0"),
        (2, "bond0.10"),
        (1, "eth0"),
    ]  # the host's name


def test_hide_down_drops_loopback_and_down():
    h = host("h", view("lo", kind="loopback"), view("eth0"), view("eth1", oper="down"))
    assert names(build_rows([h], hide=Hide.DOWN)) == [(0, "h"), (1, "eth0")]
    assert len(build_rows([h], hide=Hide.NONE)) == 4


def test_badges_take_worst_severity_and_count_per_row_and_host():
    f = lambda sev, iface: Finding("X", sev, "h", iface, "m", "e", "n")
    got = badges([f(Severity.WARNING, "eth0"), f(Severity.ERROR, "eth0"), f(Severity.INFO, None)])
    assert got[("iface", "h", "eth0")].text == "✖2"
    assert got[("host", "h")].text == "✖3"
    assert badges([f(Severity.WARNING, "eth1")])[("iface", "h", "eth1")].text == "⚠1"
    assert badges([f(Severity.INFO, "eth1")])[("iface", "h", "eth1")].text == "ℹ1"
    rows = build_rows([host("h", view("eth0"), view("eth1"))], badge_map=got)
    assert [r.badge.text if r.badge else None for r in rows] == ["✖3", "✖2", None]


def _cells(v, width=200, in_bytes=False):
    layout = fit(width, UI_COLUMNS)
    return {p.column.id: p.column.text(v, in_bytes, p.short) for p in layout.placed}


def test_cells_units_and_unknowns():
    v = view("eth0", rx=8e6, tx=None, util=0.8, speed_mbps=1000, duplex="full", mtu=9000, kind="physical")
    bits = _cells(v)
    assert (bits["kind"], bits["oper"], bits["speed"], bits["mtu"]) == ("physical", "up", "1G full", "9000")
    assert bits["rx"] == "8.00 Mb/s" and bits["tx"] == "—" and bits["util"] == "<1%"
    assert _cells(v, in_bytes=True)["rx"] == "1.00 MB/s"
    unknown = _cells(view("x"))
    assert (unknown["speed"], unknown["mtu"], unknown["util"]) == ("—", "—", "—")


def test_narrow_cells_say_the_same_shorter():
    v = view("eth0", rx=8e6, speed_mbps=1000, duplex="full", kind="physical", oper="lowerlayerdown")
    short = {c: COLUMNS[c].text(v, False, short=True) for c in ("speed", "rx", "kind", "oper")}
    assert short == {"speed": "1G F", "rx": "8.00 M", "kind": "phys", "oper": "lldn"}


def test_layout_fits_the_priority_columns_at_80_narrowing_before_dropping():
    at80 = fit(80, UI_COLUMNS)
    shown = [p.column.id for p in at80.placed[: at80.fitted]]
    assert shown == ["oper", "speed", "mtu", "rx", "tx", "errors", "drops", "util"]
    assert at80.frozen_w + at80.placed[at80.fitted - 1].x + at80.placed[at80.fitted - 1].width <= 80
    assert at80.name_w < fit(200, UI_COLUMNS).name_w  # the name narrowed before a column dropped
    # what does not fit is still there, a scroll to the right away (a host's own column, such as
    # retr, takes no room in the rows: it speaks on the host's row)
    per_interface = [c for c in UI_COLUMNS if not COLUMNS[c].host_only]
    assert [p.column.id for p in at80.placed] == per_interface and "retr" in UI_COLUMNS
    wide = fit(200, UI_COLUMNS)
    assert wide.fitted == len(per_interface) and not any(p.short for p in wide.placed)
    # a width between narrows the lower priority columns first
    mid = fit(77, UI_COLUMNS)
    assert mid.fitted == 8 and mid.placed[7].short and not mid.placed[0].short
    # the config's order is the priority
    assert [p.column.id for p in fit(80, ("util", "rx")).placed] == ["util", "rx"]


def test_column_choice_is_kept_while_the_config_list_is_the_same(tmp_path):
    path = tmp_path / "linkdeck" / "ui-state.json"
    assert load_choice(path, UI_COLUMNS) == UI_COLUMNS
    assert save_choice(path, UI_COLUMNS, ("rx", "tx")) is None
    assert load_choice(path, UI_COLUMNS) == ("rx", "tx")
    assert load_choice(path, ("rx", "util")) == ("rx", "util")  # the config changed since: it wins
    path.write_text("{not json")
    assert load_choice(path, UI_COLUMNS) == UI_COLUMNS
    (tmp_path / "a-file").write_text("")
    assert "could not keep the column choice" in save_choice(tmp_path / "a-file" / "ui-state.json", UI_COLUMNS, ("rx",))


def test_short_os_for_the_host_row():
    def short(os, detail):
        return short_os(HostUpdate(host="h", os=os, os_detail=detail, state=HostState.LIVE))

    assert short("linux", "Debian GNU/Linux 12 (bookworm) (kernel 6.1.0-27-amd64)") == "debian 12"
    assert short("linux", "Ubuntu 22.04.4 LTS (kernel 5.15.0-105-generic)") == "ubuntu 22.04"
    assert short("linux", "Arch Linux (kernel 6.9.1-arch1-1)") == "arch"
    assert short("freebsd", "FreeBSD 14.1-RELEASE-p3") == "freebsd 14.1"
    assert short("truenas", "TrueNAS-13.0-U6.1") == "truenas 13.0"
    assert short("opnsense", "OPNsense 24.7.5") == "opnsense 24.7"
    assert short("smartos", "SmartOS 20240912T000310Z") == "smartos"
    assert short("omnios", "OmniOS r151050") == "omnios"
    assert short("macos", "macOS 14.5") == "macos 14.5"
    assert short("linux", None) == "linux"
    summary = host_summary(
        HostUpdate(
            host="h",
            os="linux",
            os_detail="Debian GNU/Linux 12 (bookworm) (kernel 6.1.0)",
            state=HostState.HOST_KEY_UNKNOWN,
            detail=HostDetail(fingerprint="SHA256:abc"),
        )
    )
    assert summary == "debian 12  host key unknown — Enter to review and trust"  # the fingerprint is in the dialog


def test_folded_hosts_keep_only_their_row_and_ungrouped_sorts_across_hosts():
    a = host("a", view("eth0", rx=1.0), view("eth1", rx=5.0))
    b = host("b", view("eth0", rx=3.0))
    assert names(build_rows([a, b], folded={"a"})) == [(0, "a"), (0, "b"), (1, "eth0")]
    rows = build_rows([a, b], sort="rx", grouped=False)
    assert [(r.host, r.view.iface.name) for r in rows] == [("a", "eth1"), ("b", "eth0"), ("a", "eth0")]
    assert name_cell(rows[1]) == " b/eth0"
    assert name_cell(build_rows([a], folded={"a"})[0], folded=True) == "▸ a"


def test_hostile_name_is_made_printable_and_default_route_marked():
    h = host("h", view("eth0[bold red]x\x1b[2J", default_route=True))
    row = build_rows([h])[1]
    assert name_cell(row) == "*eth0[bold red]x\\x1b[2J"


def test_state_text_for_every_state():
    fp = "SHA256:abcDEF"
    assert state_text(host("h", state=HostState.CONNECTING)) == "connecting"
    assert state_text(
        host("h", state=HostState.RECONNECTING, error="connection reset", detail=HostDetail(retry_in_s=4))
    ) == ("reconnecting: connection reset (next try in 4 s)")
    assert "host key unknown SHA256:abcDEF" in state_text(
        host("h", state=HostState.HOST_KEY_UNKNOWN, detail=HostDetail(fingerprint=fp))
    )
    changed = state_text(host("h", state=HostState.HOST_KEY_CHANGED, detail=HostDetail(fingerprint=fp)))
    assert changed.startswith("host key changed SHA256:abcDEF") and "refused" in changed
    assert (
        state_text(host("h", state=HostState.AUTH_FAILED, error="publickey denied")) == "auth failed: publickey denied"
    )
    assert state_text(host("h", state=HostState.ERROR, error="bad\x1b[2J")) == "error: bad\\x1b[2J"


def test_a_host_waiting_to_retry_says_when_and_one_trying_says_so():
    at = time.mktime((2026, 11, 24, 12, 4, 5, 0, 0, -1))
    waiting = host(
        "h", state=HostState.RECONNECTING, error="connection reset", detail=HostDetail(retry_in_s=8, retry_at=at)
    )
    assert state_text(waiting) == "reconnecting: connection reset (next try at 12:04:05)"
    unreachable = host("h", state=HostState.UNREACHABLE, error="no route", detail=HostDetail(retry_in_s=2, retry_at=at))
    assert state_text(unreachable) == "unreachable: no route (next try at 12:04:05)"
    # the collector drops the wait when the next attempt starts: the row says it is trying
    assert (
        state_text(host("h", state=HostState.RECONNECTING, error="connection reset"))
        == "reconnecting: connection reset (trying now)"
    )
    garbled = host(
        "h",
        state=HostState.RECONNECTING,
        error="x",
        detail=HostDetail.from_json({"retry_at": "$(reboot)", "retry_in_s": "4"}),
    )
    assert state_text(garbled) == "reconnecting: x (next try in 4 s)"  # a recording's text is never a time


def test_header_counts_hosts_in_the_words_their_rows_use():
    updates = [
        host("a"),
        host("b", state=HostState.ERROR, error="garbled frame", detail=HostDetail(retry_in_s=2)),
        host("c", state=HostState.UNREACHABLE, error="no route", detail=HostDetail(retry_in_s=2)),
        replace(host("d"), stale=True),  # frames stopped: its row says stale, so does the count
        host("e", state=HostState.AUTH_FAILED),
    ]
    assert fleet_counts(updates) == "5 hosts: 1 live, 1 stale, 1 auth failed, 1 unreachable, 1 error"
    assert fleet_counts([host("b", state=HostState.ERROR)]) == "1 host: 0 live, 1 error"


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


def test_a_host_row_shows_its_tcp_retransmits_while_live_and_nothing_it_does_not_know():
    from linkdeck.commands.snapshot_format import snapshot_table
    from linkdeck.core.cells import host_cells
    from linkdeck.core.tcpstats import TcpRates
    from linkdeck.ui.screens.host_screen import host_facts

    live = HostUpdate(
        host="h",
        os="linux",
        state=HostState.LIVE,
        time=5.0,
        tcp=TcpRates(out_segs_ps=2000.0, retrans_segs_ps=8.0, in_segs_ps=900.0, retrans_pct=0.4),
    )
    assert [(c.id, text) for c, text in host_cells(live, False)] == [("retr", "0.4%")]  # the host row: "· Retr 0.4%"
    assert snapshot_table([live]).splitlines()[0].endswith("live  Retr 0.4%")
    screen = host_facts("h", live).plain
    assert "Retr       0.4%" in screen and "TCP        sent 2.00 k/s, retransmitted 0.4% · received 900/s" in screen
    assert host_cells(replace(live, tcp=TcpRates(out_segs_ps=0.0)), False) == []  # nothing sent: no share
    assert host_cells(replace(live, tcp=None), False) == []  # the OS does not tell
    assert "TCP        not reported by this host" in host_facts("h", replace(live, tcp=None)).plain


def test_snapshot_lists_interfaces_in_the_dashboards_order():
    # constructed: dladm lists e1000g1 before e1000g0, and an aggr after its members
    from linkdeck.commands.snapshot_format import snapshot_json, snapshot_table

    h = HostUpdate(host="omni", os="omnios", state=HostState.LIVE, time=1.0, interfaces=(
        view("e1000g1", kind="physical"), view("vnic0", kind="vnic", over="aggr0"),
        view("e1000g0", kind="physical"), view("aggr0", kind="aggr", members=("e1000g1", "e1000g0")),
        view("lo0", kind="loopback"),
    ))  # fmt: skip
    dashboard = [r.view.iface.name for r in build_rows([h]) if r.view is not None]
    assert dashboard == ["aggr0", "e1000g0", "e1000g1", "vnic0", "lo0"]
    table = snapshot_table([h]).splitlines()[2:7]
    assert [line.split()[0] for line in table] == dashboard
    assert table[1].startswith("    e1000g0")  # nested under aggr0 as on the dashboard
    assert [i["name"] for i in snapshot_json([h], [], 1.0)["hosts"][0]["interfaces"]] == dashboard


def test_only_virtual_interfaces_the_host_reaches_nothing_through_fold():
    from linkdeck.ui.state.idle import Activity

    h = host(
        "vm",
        view("vtnet0", 0.0, 0.0, kind="virtual", addresses=("192.0.2.7/24",)),  # the VM's own NICs
        view("vtnet1", 0.0, 0.0, kind="virtual", default_route=True),
        view("em0", 0.0, 0.0, kind="physical"),
        view("em1", 0.0, 0.0, kind="physical"),
        view("veth0", 0.0, 0.0, kind="virtual", addresses=("fe80::1/64",)),  # link-local only: folds
        view("veth1", 0.0, 0.0, kind="virtual"),
    )
    activity = Activity(1.0)
    activity.push(h)
    rows = build_rows([h], idle=activity.idle, fold_idle=True)
    assert [r.fold.text if r.fold else r.view.iface.name for r in rows[1:]] == [
        "em0",
        "em1",
        "vtnet0",
        "vtnet1",
        "2 veth* idle",
    ]
    # not yet known to be idle (no rates), or folding off: every row
    assert len(build_rows([h], idle=Activity(1.0).idle, fold_idle=True)) == 7
    assert len(build_rows([h], idle=activity.idle, fold_idle=False)) == 7


def test_a_fold_holds_neighbour_discovery_chatter_and_lets_real_traffic_out():
    """One ~70-byte frame a second (≈600 bit/s, 1 pps) on a pod link is background chatter: the
    link stays folded. Traffic above the floor, errors, drops or a state change take it out."""
    from linkdeck.ui.state.idle import BUSY_BPS, Activity

    def node(**busy):
        veths = []
        for i in range(6):
            rx = tx = 0.0
            if i in (0, 1):  # neighbour discovery: one 70-byte frame a second each way
                rx = tx = 560.0
            veths.append(
                InterfaceView(
                    Interface(name=f"veth{i}", kind="virtual", oper="up"),
                    Rates(rx_bps=rx, tx_bps=tx, rx_pps=1.0 if rx else 0.0, tx_pps=1.0 if tx else 0.0),
                    Counters(),
                )
            )
        for i, r in busy.items():
            n = int(i[1:])
            veths[n] = (
                replace(veths[n], rates=r)
                if isinstance(r, Rates)
                else replace(veths[n], iface=replace(veths[n].iface, oper=r))
            )
        return host("node", view("eth0", 5e6, 5e6, kind="physical"), *veths)

    def shown(activity, update):
        rows = build_rows([update], idle=activity.idle, fold_idle=True)
        return [r.fold.text if r.fold else r.view.iface.name for r in rows[1:]]

    assert 600 < BUSY_BPS <= 1e6
    activity = Activity(1.0)
    for _ in range(15):
        activity.push(node())
    assert shown(activity, node()) == ["eth0", "6 veth* idle"]
    for change, rates_or_oper in (
        ("v2", Rates(rx_bps=1e6, tx_bps=1e3, rx_pps=90.0, tx_pps=2.0)),  # a pod at work: 1 Mb/s
        ("v3", Rates(rx_bps=560.0, tx_bps=0.0, rx_errors_ps=1.0)),
        ("v4", Rates(rx_bps=0.0, tx_bps=0.0, tx_drops_ps=2.0)),
        ("v5", "down"),
    ):
        quiet = Activity(1.0)
        for _ in range(15):
            quiet.push(node())
        quiet.push(node(**{change: rates_or_oper}))
        name = f"veth{change[1:]}"
        assert name in shown(quiet, node()), change
        assert "5 veth* idle" in shown(quiet, node()), change


def test_activity_counts_nothing_for_a_settled_host_handed_the_same_views(monkeypatch):
    """A node whose views are the same tuple again, every interface already idle, is not read
    again; a veth moving among them is busy at once, and idle again after IDLE_S."""
    from linkdeck.ui.state import idle as idle_mod
    from tests.builders import iface, update, view as b_view

    read = []
    values = idle_mod.rate_values
    monkeypatch.setattr(idle_mod, "rate_values", lambda v: read.append(v) or values(v))
    quiet = tuple(b_view(iface(f"veth{i}", kind="veth"), rx_bps=0.0, tx_bps=0.0) for i in range(600))
    act = idle_mod.Activity(interval=1.0)
    act.push(update("node", 1.0, *quiet))
    names = act.idle("node")
    assert len(names) == 600
    hand = HostUpdate(host="node", os="linux", state=HostState.LIVE, time=2.0, interfaces=quiet)
    act.push(hand)  # another tuple of the same views, all idle: not read
    names = act.idle("node")
    read.clear()
    for t in range(3, 6):
        act.push(replace(hand, time=float(t)))
    assert read == [] and act.idle("node") is names
    busy = (*quiet[:7], b_view(quiet[7].iface, rx_bps=5e6, tx_bps=0.0), *quiet[8:])
    act.push(update("node", 6.0, *busy))
    assert "veth7" not in act.idle("node") and read == [busy[7]]  # the one view that changed
    again = replace(hand, interfaces=busy)
    for t in range(7, 7 + act.need + 2):
        act.push(replace(again, time=float(t)))
    assert "veth7" not in act.idle("node")  # still the busy view: still busy
    for t in range(20, 20 + act.need):
        act.push(replace(hand, time=float(t)))
    assert act.idle("node") == names  # quiet again for IDLE_S: idle
