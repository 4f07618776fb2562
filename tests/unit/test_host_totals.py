"""A host's totals: what they sum, and that they are summed once per sample of the host, not
once per render of its row."""

from __future__ import annotations

from dataclasses import replace

from linkdeck.core import totals
from linkdeck.core.model import Counters, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.core.totals import host_totals
from linkdeck.ui.state.rows import host_summary


def view(name, kind="ethernet", rx=None, tx=None, errs=None, **iface):
    return InterfaceView(
        Interface(name=name, kind=kind, oper="up", **iface),
        Rates(rx_bps=rx, tx_bps=tx, rx_pps=rx and rx / 8000, rx_errors_ps=errs),
        Counters(),
    )


def node(n_veths=300):
    return HostUpdate(
        host="node",
        os="linux",
        state=HostState.LIVE,
        interfaces=(
            view("lo", kind="loopback", rx=9e9, tx=9e9),
            view("eth0", rx=2e6, tx=1e6, errs=0.5),
            view("eth1", rx=3e6, tx=None),
            view("bond0", kind="bond", rx=4e6, tx=4e6, members=("eth2", "eth3")),
            view("eth2", rx=2e6, tx=2e6),
            view("eth3", rx=2e6, tx=2e6),
            view("bond0.10", kind="vlan", rx=1e6, tx=1e6, over="bond0"),
            *(view(f"veth{i}", kind="virtual", rx=600.0, tx=600.0) for i in range(n_veths)),
        ),
    )


def test_totals_sum_the_top_level_edge_interfaces_once():
    t = host_totals(node())
    assert t is not None and t.iface == Interface(name="node", kind="host")
    # eth0 + eth1 + bond0; not lo, not the bond's ports nor its vlan, not the virtual ones
    assert t.rates == Rates(rx_bps=9e6, tx_bps=5e6, rx_pps=9e6 / 8000, rx_errors_ps=0.5)


def test_totals_of_a_host_with_only_virtual_interfaces_count_them():
    only = HostUpdate(
        host="vm",
        os="freebsd",
        state=HostState.LIVE,
        interfaces=(view("lo0", kind="loopback", rx=5.0), view("vtnet0", kind="virtual", rx=7.0)),
    )
    t = host_totals(only)
    assert t is not None and t.rates.rx_bps == 7.0 and t.rates.tx_bps is None


def test_a_host_without_rates_has_no_totals():
    stale = HostUpdate(host="h", os="linux", state=HostState.LIVE, interfaces=(view("eth0"),))
    assert host_totals(stale) is None


def test_rendering_a_sample_again_sums_nothing_and_a_new_sample_sums_again(monkeypatch):
    calls = []
    real = totals.nest
    monkeypatch.setattr(totals, "nest", lambda views: calls.append(1) or real(views))
    update = node()
    first = host_summary(update)
    for in_bytes in (False, True, False):  # the row redrawn, its unit toggled: the same sample
        host_summary(update, in_bytes)
    assert len(calls) == 1
    assert host_summary(update) == first
    newer = replace(update, interfaces=(view("eth0", rx=1e3, tx=1e3),))
    assert host_summary(newer) != first
    assert len(calls) == 2
    assert host_totals(newer).rates.rx_bps == 1e3 and len(calls) == 2


def test_a_new_sample_of_the_same_interfaces_sums_the_same_ones_without_nesting_them(monkeypatch):
    calls = []
    real = totals.nest
    monkeypatch.setattr(totals, "nest", lambda views: calls.append(1) or real(views))
    update = node()
    assert host_totals(update).rates.rx_bps == 9e6
    eth0 = update.interfaces[1]
    moved = replace(
        update, interfaces=(update.interfaces[0], replace(eth0, rates=Rates(rx_bps=5e6)), *update.interfaces[2:])
    )
    assert host_totals(moved).rates.rx_bps == 12e6  # eth0 5 Mb/s + eth1 3 + bond0 4
    assert len(calls) == 1
    # a fact changed (eth1 joins the bond): which interfaces count is worked out again
    eth1 = update.interfaces[2]
    bonded = replace(
        moved,
        interfaces=tuple(
            replace(v, iface=replace(v.iface, over="bond0")) if v is eth1 else v for v in moved.interfaces
        ),
    )
    assert host_totals(bonded).rates.rx_bps == 9e6  # eth0 5 + bond0 4
    assert len(calls) == 2


def _veth_node(veths):
    return HostUpdate(host="veths", os="linux", state=HostState.LIVE, interfaces=(view("lo", kind="loopback"), *veths))


def test_a_node_of_veths_sums_again_only_the_block_with_the_link_that_moved(monkeypatch):
    """Only virtual links, so all of them count (a lab node's eth0 is a veth too): a new
    sample whose views are the same objects but one reads that one's block alone, and sums
    what summing them all afresh gives."""
    read = []
    values = totals.rate_values
    monkeypatch.setattr(totals, "rate_values", lambda v: read.append(v) or values(v))
    veths = [view(f"veth{i}", kind="virtual", rx=float(i), tx=0.0) for i in range(601)]
    assert host_totals(_veth_node(veths)).rates.rx_bps == sum(range(601))
    assert len(read) == 601
    read.clear()
    veths[300] = view("veth300", kind="virtual", rx=1e6, tx=5.0)
    moved = host_totals(_veth_node(veths))
    assert 0 < len(read) <= totals._BLOCK and veths[300] in read
    assert moved.rates.rx_bps == sum(range(601)) - 300 + 1e6 and moved.rates.tx_bps == 5.0
    totals._blocks.clear()  # afresh: the same sums
    assert host_totals(_veth_node(veths)).rates == moved.rates
