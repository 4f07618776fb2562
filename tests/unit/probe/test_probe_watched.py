"""Which address a test uses, and what the counters say about the transfer: pure
functions over HostUpdates built here with exact numbers."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from linkdeck.core.model import (
    Counters,
    HostDetail,
    HostState,
    HostUpdate,
    Interface,
    InterfaceView,
    Rates,
    TestResult as Result,
)
from linkdeck.probe import ProbeError, pick_address, pick_route, plan_pair
from linkdeck.probe.watched import counters_bps, end_state, figure_seconds, iface_holding, iface_toward, nic_drops
from tests.corpus import FIXTURES


def view(name: str, addresses=(), kind="physical", oper="up", mtu=1500, totals=None, nic=None) -> InterfaceView:
    iface = Interface(name=name, kind=kind, oper=oper, mtu=mtu, addresses=tuple(addresses), nic_counters=nic or {})
    return InterfaceView(iface=iface, rates=Rates(), totals=totals or Counters())


def update(host: str, *views: InterfaceView, time: float = 100.0, state=HostState.LIVE) -> HostUpdate:
    return HostUpdate(host=host, os="linux", state=state, time=time, interfaces=views)


LO = view("lo", ["127.0.0.1/8", "::1/128"], kind="loopback")
A = update(
    "a", LO, view("eth0", ["192.0.2.10/24", "fe80::1/64"]), view("eth1", ["198.51.100.10/24", "2001:db8::10/64"])
)
B = update(
    "b",
    LO,
    view("ens3", ["fe80::2/64", "2001:db8::20/64"]),
    view("ens4", ["198.51.100.20/24"]),
    view("wg0", ["10.9.9.9/32"]),
)


def test_peer_address_in_the_selected_interfaces_subnet() -> None:
    assert pick_address(A.interfaces[2].iface, B) == "198.51.100.20"  # IPv4 first
    assert pick_address(A.interfaces[1].iface, B) is None  # 192.0.2.0/24: b has nothing there
    only_v6 = update("b", view("ens3", ["2001:db8::20/64", "fe80::2/64"]))
    assert pick_address(A.interfaces[2].iface, only_v6) == "2001:db8::20"  # never link-local
    assert pick_address(A.interfaces[2].iface, None) is None


def test_route_between_two_hosts_skips_loopback_and_down() -> None:
    assert pick_route(A, B) == ("eth1", "198.51.100.20")
    down = update("a", LO, view("eth1", ["198.51.100.10/24"], oper="down"))
    assert pick_route(down, B) is None


def test_plan_pair_picks_ceiling_given_selected_and_refuses_no_subnet() -> None:
    latest = {"a": A, "b": B}.get
    assert plan_pair("a", "a", latest) == ("127.0.0.1", "lo")
    assert plan_pair("a", "b", latest) == ("198.51.100.20", "eth1")
    assert plan_pair("a", "b", latest, src_iface="eth1") == ("198.51.100.20", "eth1")
    assert plan_pair("a", "b", latest, address="198.51.100.99") == ("198.51.100.99", "eth1")
    with pytest.raises(ProbeError, match="b has no address in the subnet of a eth0"):
        plan_pair("a", "b", latest, src_iface="eth0")
    with pytest.raises(ProbeError, match="share no subnet.*--address"):
        plan_pair("a", "c", {"a": A, "c": update("c", view("e0", ["203.0.113.1/24"]))}.get)


def test_no_subnet_names_a_host_whose_addresses_could_not_be_read() -> None:
    unread = (
        "addresses and MAC unavailable: `ip -j addr` printed output linkdeck could not read"
        " (ip -j addr: not JSON (JSONDecodeError: Expecting value)); MTU from sysfs"
    )
    c = replace(update("c", view("eth0", mtu=9000)), detail=HostDetail(missing=(unread, "no ss: no per-flow view (w)")))
    with pytest.raises(ProbeError) as exc:
        plan_pair("a", "c", {"a": A, "c": c}.get)
    # why no subnet was seen is said, not left to read as "no subnet in common"; a missing tool is not it
    assert str(exc.value) == (
        f"a and c share no subnet that linkdeck can see (c: {unread}): give the address to test (--address)"
    )
    with pytest.raises(ProbeError, match=r"^a and d share no subnet that linkdeck can see: give"):
        plan_pair("a", "d", {"a": A, "d": update("d", view("e0", ["203.0.113.1/24"]))}.get)


def test_which_interface_carries_each_end() -> None:
    assert iface_holding(B, "198.51.100.20") == "ens4"
    assert iface_holding(B, "2001:db8::20") == "ens3"
    assert iface_holding(B, "127.0.0.1") == "lo"
    assert iface_holding(B, "203.0.113.9") is None
    assert iface_toward(A, "198.51.100.20") == "eth1"
    assert iface_toward(A, "2001:db8::20") == "eth1"
    assert iface_toward(A, "203.0.113.9") is None


def test_counters_over_the_test_from_totals() -> None:
    before = Counters(rx_bytes=1_000, tx_bytes=2_000)
    after = Counters(rx_bytes=1_000 + 375_000_000, tx_bytes=2_000 + 125_000_000)
    assert counters_bps(before, after, 3.0, 3.0) == {"tx": pytest.approx(125e6 * 8 / 3), "rx": pytest.approx(1e9)}
    assert counters_bps(before, after, 2.0, 2.5) == {"tx": pytest.approx(5e8), "rx": pytest.approx(1.2e9)}
    assert counters_bps(None, after, 3.0, 3.0) == {"tx": None, "rx": None}
    reset = Counters(rx_bytes=10, tx_bytes=10)
    assert counters_bps(before, reset, 3.0, 3.0) == {"tx": None, "rx": None}  # went back: unknown, not negative


def iperf3_end(name: str) -> dict:
    text = (FIXTURES / "iperf3" / name).read_text()
    return json.loads(text[text.find("{") :])["end"]


def test_counters_are_divided_by_the_seconds_of_the_iperf3_figure() -> None:
    def result(raw_end) -> Result:
        return Result(src="a", dst="b", address="192.0.2.2", duration_s=3.0, raw_end=raw_end)

    # --bidir: both figures are what the receivers counted, over the receivers' 1.001722 s
    assert figure_seconds(result(iperf3_end("captured-bidir.json"))) == (1.001722, 1.001722)
    # forward then -R (iperf3 before 3.7): each run's own receiver
    both = {"forward": iperf3_end("captured-forward-P2.json"), "reverse": iperf3_end("captured-reverse.json")}
    assert figure_seconds(result(both)) == (1.003132, 1.000289)
    # one way (a ceiling): no reverse figure, the forward's seconds serve both
    assert figure_seconds(result(iperf3_end("captured-forward-P2.json"))) == (1.003132, 1.003132)
    # nothing usable: the test's duration
    assert figure_seconds(result({"sum_received": {"seconds": "soon"}})) == (3.0, 3.0)


def test_end_state_counts_errors_and_drops_during_the_test() -> None:
    before = Counters(rx_errors=5, tx_errors=1, rx_drops=0, tx_drops=0)
    after = Counters(rx_errors=9, tx_errors=1, rx_drops=3, tx_drops=0)
    iface = view("eth0", mtu=9000).iface
    state = end_state("b", iface, before, after)
    assert (state.host, state.iface.mtu, state.errors_during, state.drops_during) == ("b", 9000, 4, 3)
    nic = end_state("b", iface, before, after, nic_drops=40)
    assert nic.drops_during == 40  # the NIC's 40 out-of-buffer drops exceed the kernel's 3
    quiet = end_state("b", iface, before, before)
    assert (quiet.errors_during, quiet.drops_during) == (0, 0)
    unknown = end_state("b", iface, None, after)
    assert (unknown.iface.name, unknown.errors_during, unknown.drops_during) == ("eth0", None, None)


def test_nic_drops_between_two_collector_views() -> None:
    before = view("eth0", nic={"rx_out_of_buffer": 100, "tx_discards": 7, "rx_packets": 9})
    after = view("eth0", nic={"rx_out_of_buffer": 140, "tx_discards": 9, "rx_packets": 99})
    assert nic_drops(before, after) == 42  # packets are not drops
    assert nic_drops(after, before) is None  # went back: unknown
    assert nic_drops(None, after) is None
