"""Each host's rows kept between rebuilds (ui/state/row_cache.py) and the table's cells kept
under what they are made of: the same rows while nothing changed, new ones as soon as anything
the rows show did, the same as built afresh."""

from __future__ import annotations

from dataclasses import replace

import pytest

from linkdeck.core.levels import Severity
from linkdeck.core.model import Counters, HostDetail, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.settings.config import Hide
from linkdeck.ui.state.idle import Activity
from linkdeck.ui.state.row_cache import RowCache
from linkdeck.ui.state.rows import Badge, RateHistory, Row, build_rows, host_summary
from linkdeck.ui.state.view_state import ViewState
from linkdeck.ui.widgets.table import InterfaceTable


def view(name, rx=0.0, kind="physical", **iface):
    return InterfaceView(Interface(name=name, kind=kind, oper="up", **iface), Rates(rx_bps=rx, tx_bps=0.0), Counters())


def node(name="node", veths=6, **kw):
    views = (view("eth0", 1e3), view("eth1", 5e6), *(view(f"veth{i}", kind="virtual") for i in range(veths)))
    return HostUpdate(**{"host": name, "os": "linux", "state": HostState.LIVE, "time": 1.0, "interfaces": views, **kw})


def idle_of(*updates):
    activity = Activity(1.0)
    for _ in range(12):
        for u in updates:
            activity.push(replace(u, interfaces=tuple(replace(v) for v in u.interfaces)))
    return activity.idle


def shown(rows: list[Row]) -> list[tuple]:
    """What a row shows: every field, the views by identity, the host row's update by identity."""
    return [
        (r.key, r.depth, id(r.view), r.badge, r.fold, r.flat, r.update.stale, id(r.update) if r.is_host else None)
        for r in rows
    ]


def fresh(view_state: ViewState, updates, badge_map, idle) -> list[Row]:
    return view_state.rows(updates, badge_map, idle)


def test_a_second_rebuild_of_unchanged_hosts_hands_back_the_very_rows():
    a, b = node("a"), node("b")
    idle = idle_of(a, b)
    cache, vs = RowCache(), ViewState()
    first = cache.rows(vs, [a, b], {}, idle)
    assert shown(first) == shown(fresh(vs, [a, b], {}, idle))
    assert [r.fold.text for r in first if r.fold] == ["6 veth* idle", "6 veth* idle"]
    built = cache.built
    second = cache.rows(vs, [a, b], {}, idle)
    assert cache.built == built
    assert len(second) == len(first) and all(x is y for x, y in zip(first, second))


def test_a_new_update_handing_on_the_same_views_keeps_every_row_but_the_hosts():
    a = node("a")
    idle = idle_of(a)
    cache, vs = RowCache(), ViewState()
    first = cache.rows(vs, [a], {}, idle)
    later = replace(a, time=2.0, error="noted")  # the rate tracker's tuple, handed on
    second = cache.rows(vs, [later], {}, idle)
    assert second[0].update is later and second[0] is not first[0]
    assert all(x is y for x, y in zip(first[1:], second[1:]))
    assert shown(second) == shown(fresh(vs, [later], {}, idle))


def test_new_numbers_for_the_same_interfaces_reuse_the_folds_and_show_the_new_views(monkeypatch):
    from linkdeck.ui.state import rows as rows_mod

    a = node("a")
    idle = idle_of(a)
    cache, vs = RowCache(), ViewState()
    cache.rows(vs, [a], {}, idle)
    asked = []
    real = rows_mod.foldable
    monkeypatch.setattr(rows_mod, "foldable", lambda v: asked.append(v) or real(v))
    moved = replace(a, interfaces=(replace(a.interfaces[0], rates=Rates(rx_bps=7e6)), *a.interfaces[1:]))
    rows = cache.rows(vs, [moved], {}, idle)
    assert asked == []  # the folds of the same idle interfaces were not worked out again
    assert rows[1].view is moved.interfaces[0]
    assert shown(rows) == shown(fresh(vs, [moved], {}, idle))


def _changes():
    """(what changed, how): each a key the host's rows depend on; applied to (view state,
    update, badges, idle) after a first rebuild, it must give rows built afresh."""
    eth1 = ("iface", "a", "eth1")
    veth = ("iface", "a", "veth2")

    def rate(vs, u, b, i):
        return (
            vs,
            replace(
                u, interfaces=(u.interfaces[0], replace(u.interfaces[1], rates=Rates(rx_bps=9e9)), *u.interfaces[2:])
            ),
            b,
            i,
        )

    def new_interface_facts(vs, u, b, i):  # a veth gets an address of its own: no longer folds
        v = u.interfaces[3]
        views = list(u.interfaces)
        views[3] = replace(v, iface=replace(v.iface, addresses=("192.0.2.9/24",)))
        return vs, replace(u, interfaces=tuple(views)), b, i

    def badge_on_iface(vs, u, b, i):
        return vs, u, {**b, eth1: Badge(Severity.WARNING, 1)}, i

    def badge_on_idle_veth(vs, u, b, i):  # a finding takes a veth out of its fold
        return vs, u, {**b, veth: Badge(Severity.ERROR, 1)}, i

    def badge_on_host(vs, u, b, i):
        return vs, u, {**b, ("host", "a"): Badge(Severity.WARNING, 2)}, i

    def sort(vs, u, b, i):
        return replace(vs, sort="rx"), u, b, i

    def filter_text(vs, u, b, i):
        return replace(vs, filter_text="eth1"), u, b, i

    def hide(vs, u, b, i):
        return replace(vs, hide=Hide.IDLE), u, b, i

    def folded(vs, u, b, i):
        return replace(vs, folded={"a"}), u, b, i

    def unfolded(vs, u, b, i):
        return replace(vs, unfolded={("a", "veth*")}), u, b, i

    def fold_idle(vs, u, b, i):
        return replace(vs, fold_idle=False), u, b, i

    def stale(vs, u, b, i):  # the same views, the update marked stale
        return vs, replace(u, stale=True, state=HostState.RECONNECTING), b, i

    def idle_set(vs, u, b, i):  # veth0 busy a while ago, no longer idle
        return vs, u, b, lambda host: frozenset(n for n in i(host) if (host, n) != ("a", "veth0"))

    return [
        rate,
        new_interface_facts,
        badge_on_iface,
        badge_on_idle_veth,
        badge_on_host,
        sort,
        filter_text,
        hide,
        folded,
        unfolded,
        fold_idle,
        stale,
        idle_set,
    ]


# across hosts (g) there are no host rows, and a host is never folded to its row
_NOT_SHOWN_ACROSS = {"badge_on_host", "folded"}


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "across"])
@pytest.mark.parametrize("change", _changes(), ids=lambda f: f.__name__)
def test_any_change_a_host_shows_builds_its_rows_again(change, grouped):
    if not grouped and change.__name__ in _NOT_SHOWN_ACROSS:
        pytest.skip("not shown across hosts")
    a, b = node("a"), node("b")
    idle = idle_of(a, b)
    cache = RowCache()
    vs0 = ViewState(grouped=grouped)
    first = cache.rows(vs0, [a, b], {}, idle)
    vs, a2, badge_map, idle2 = change(vs0, a, {}, idle)
    again = cache.rows(vs, [a2, b], badge_map, idle2)
    want = fresh(vs, [a2, b], badge_map, idle2)
    assert shown(again) == shown(want)
    assert shown(again) != shown(first)  # the change shows
    # the host that did not change keeps its rows, unless the view changed for every host
    b_rows = [r for r in again if r.host == "b"]
    if vs == vs0:
        assert all(r in first and any(r is f for f in first) for r in b_rows)


@pytest.mark.parametrize("sort", ["name", "rx"])
def test_rows_across_hosts_are_kept_per_host_and_sorted_as_built_afresh(sort, monkeypatch):
    """Across hosts (g) each host's rows are its run of the sorted list: an unchanged host's
    are kept, new numbers for the same interfaces keep its folds, and the list is the one
    build_rows makes afresh, in the same order."""
    from linkdeck.ui.state import rows as rows_mod

    a, b = node("a"), node("b")
    idle = idle_of(a, b)
    cache, vs = RowCache(), ViewState(grouped=False, sort=sort)
    first = cache.rows(vs, [a, b], {}, idle)
    assert shown(first) == shown(build_rows([a, b], sort=sort, grouped=False, idle=idle, fold_idle=True))
    built = cache.built
    again = cache.rows(vs, [a, b], {}, idle)
    assert cache.built == built and all(x is y for x, y in zip(first, again)) and len(again) == len(first)
    asked = []
    real = rows_mod.foldable
    monkeypatch.setattr(rows_mod, "foldable", lambda v: asked.append(v) or real(v))
    moved = replace(a, interfaces=(replace(a.interfaces[0], rates=Rates(rx_bps=7e9)), *a.interfaces[1:]))
    rows = cache.rows(vs, [moved, b], {}, idle)
    assert cache.built == built + 1 and asked == []  # a's rows again, its folds kept; b's kept
    assert shown(rows) == shown(fresh(vs, [moved, b], {}, idle))


def test_rows_across_hosts_follow_random_streams_as_built_afresh():
    """Constructed random streams of three hosts (rates, an interface's facts, a host gone
    and back, badges, the sort and filter, g back and forth): the cache's rows, across hosts
    or grouped, are build_rows'."""
    import random

    rng = random.Random(34)
    hosts = {h: node(h, veths=4) for h in "abc"}
    cache = RowCache()
    vs = ViewState(grouped=False)
    badges: dict = {}
    idle = idle_of(*hosts.values())
    for step in range(300):
        h = rng.choice("abc")
        u = hosts[h]
        k = rng.randrange(len(u.interfaces))
        v = u.interfaces[k]
        odd = rng.random()
        if odd < 0.4:
            v = replace(v, rates=Rates(rx_bps=rng.choice((0.0, 1e3, 5e6, 9e9)), tx_bps=rng.choice((0.0, 2e6))))
        elif odd < 0.5:
            v = replace(v, iface=replace(v.iface, addresses=rng.choice(((), ("192.0.2.9/24",)))))
        elif odd < 0.6:
            badges = {("iface", h, v.iface.name): Badge(Severity.WARNING, 1)} if rng.random() < 0.5 else {}
        elif odd < 0.7:
            vs = replace(vs, sort=rng.choice(("name", "rx", "tx")), filter_text=rng.choice(("", "eth", "b", "veth1")))
        elif odd < 0.75:
            vs = replace(vs, grouped=not vs.grouped)  # g
        hosts[h] = replace(u, interfaces=(*u.interfaces[:k], v, *u.interfaces[k + 1 :]), time=float(step))
        shown_hosts = [hosts[x] for x in "abc" if not (x == "b" and step % 50 < 5)]  # b gone a while
        idle = idle_of(*shown_hosts) if step % 10 == 0 else idle
        assert shown(cache.rows(vs, shown_hosts, badges, idle)) == shown(fresh(vs, shown_hosts, badges, idle)), step


# -- the table's cells --------------------------------------------------------------------


def _table() -> tuple[InterfaceTable, RateHistory]:
    history = RateHistory(1.0)
    return InterfaceTable(history, ViewState()), history


def test_a_host_rows_summary_is_kept_while_what_it_reads_is_the_same():
    table, _ = _table()
    a = node("a", os_detail="Debian 12", received=100.0)
    row = Row(("host", "a"), "a", 0, a)
    cells = table._row_cells(row)
    later = replace(a, time=2.0, received=101.0, fresh_until=104.0, wire_bytes=560)  # nothing it shows
    assert table._row_cells(replace(row, update=later)) is cells


@pytest.mark.parametrize(
    "field, value",
    [
        ("os", "freebsd"),
        ("os_detail", "Debian 13"),
        ("state", HostState.UNREACHABLE),
        ("error", "connection reset"),
        ("detail", HostDetail(retry_in_s=5.0)),
        ("stale", True),
        ("interfaces", None),  # new numbers: the totals move
    ],
)
def test_a_host_rows_summary_follows_each_thing_it_reads(field, value):
    table, _ = _table()
    a = node("a", os_detail="Debian 12", received=100.0, state=HostState.RECONNECTING, error="refused")
    row = Row(("host", "a"), "a", 0, a)
    before = table._row_cells(row)
    if field == "interfaces":
        value = (replace(a.interfaces[0], rates=Rates(rx_bps=9e9, tx_bps=1.0)), *a.interfaces[1:])
    changed = replace(a, **{field: value})
    cells = table._row_cells(replace(row, update=changed))
    assert cells[1].startswith(host_summary(changed)) and cells[1] != before[1]


def test_a_stale_host_says_how_old_its_numbers_are_as_they_age():
    table, _ = _table()
    a = node("a", received=100.0, stale=True, state=HostState.RECONNECTING)
    row = Row(("host", "a"), "a", 0, a)
    before = table._row_cells(row)
    older = replace(a, received=3700.0)
    assert table._row_cells(replace(row, update=older))[1] == host_summary(older) != before[1]


def test_an_interface_kept_as_it_was_still_has_its_graph_move():
    """An idle interface's view is handed on unchanged; its sparkline must still scroll the
    last burst out as the history moves on."""
    table, history = _table()
    a = node("a")
    eth1 = a.interfaces[1]
    history.push(replace(a, interfaces=(replace(eth1, rates=Rates(rx_bps=9e6, tx_bps=9e6)),)))
    row = Row(("iface", "a", "eth1"), "a", 1, a, eth1)
    graph = table._row_cells(row)
    assert table._row_cells(row) is graph  # nothing moved: kept
    for _ in range(history.size):
        history.push(replace(a, interfaces=(eth1,)))
    assert table._row_cells(row) != graph


def test_when_only_the_history_moved_only_the_graphs_are_drawn_again():
    """An idle link's graph fills over its first minute under a view handed on unchanged: the
    graphs cell is drawn again, the other cells are the ones already made, and the whole is what
    a table drawing the row afresh makes."""
    table, history = _table()
    a = node("a")
    eth1 = a.interfaces[1]
    row = Row(("iface", "a", "eth1"), "a", 1, a, eth1)
    history.push(replace(a, interfaces=(replace(eth1, rates=Rates(rx_bps=9e6, tx_bps=9e6)),)))
    before = table._row_cells(row)
    for _ in range(8):  # the burst moves a few columns left
        history.push(replace(a, interfaces=(eth1,)))
    after = table._row_cells(row)
    graphs = 1 + next(i for i, p in enumerate(table.column_layout.placed) if p.column.id == "graphs")
    assert after[graphs] != before[graphs]
    assert all(after[i] is before[i] for i in range(len(after)) if i != graphs)
    fresh = InterfaceTable(history, ViewState())
    assert fresh._row_cells(row) == after


def test_a_live_host_gone_stale_says_so_on_the_same_views():
    table, _ = _table()
    a = node("a")
    row = Row(("host", "a"), "a", 0, a)
    before = table._row_cells(row)
    gone = replace(a, stale=True)
    assert table._row_cells(replace(row, update=gone))[1] == host_summary(gone) != before[1]
