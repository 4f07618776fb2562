"""MTU rules and what defines a subnet. Seed 000's hosts are constructed from the numbers in
its `ifconfig` paste (no Linux ifconfig parser exists); seed 003's illumos host is parsed from
its real `ipadm show-addr` and `dladm show-vnic` output."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from linkdeck.core.model import IfaceRecord, Severity, SubnetMtu, merge_records, record_to_interface
from linkdeck.findings.engine import diagnose
from linkdeck.findings.helpers import networks
from linkdeck.parsers import dladm, ipadm
from linkdeck.settings.config import Settings
from tests.builders import codes, iface, update, view
from tests.corpus import fixture


def kube05(eno1_mtu: int = 1500):
    # Constructed from seed 000: eno1 10.100.5.103/24 MTU 1500, enp1s0 10.100.5.105/24 MTU 9000.
    return update(
        "kube05",
        1,
        view(iface("eno1", mtu=eno1_mtu, addresses=("10.100.5.103/24", "fe80::a28c:fdff:fec0:466d/64"))),
        view(iface("enp1s0", mtu=9000, speed_mbps=10000, addresses=("10.100.5.105/24",))),
    )


def jumbo(host: str, address: str):
    return update(host, 1, view(iface("ix0", mtu=9000, speed_mbps=10000, addresses=(f"{address}/24",))), os="freebsd")


def test_seed_000_kube05_two_nics_one_subnet_different_mtus_is_an_error():
    found = {x.code: x for x in diagnose([kube05()], Settings())}
    # eno1 is the onboard 1G NIC next to the 10G one: slower than its only peer, said softly.
    assert sorted(found) == ["SPEED_BELOW_PEERS", "TWO_IFACES_ONE_SUBNET"]
    assert (found["SPEED_BELOW_PEERS"].interface, found["SPEED_BELOW_PEERS"].severity) == ("eno1", Severity.INFO)
    f = found["TWO_IFACES_ONE_SUBNET"]
    # Nothing of kube05's own says which NIC is the spare one: the host, both named.
    assert (f.code, f.severity, f.host, f.interface) == ("TWO_IFACES_ONE_SUBNET", Severity.ERROR, "kube05", None)
    assert (
        f.message
        == "kube05 has 2 interfaces in 10.100.5.0/24 with different MTUs: replies leave by whichever route wins"
    )
    assert f.evidence == "eno1 (MTU 1500), enp1s0 (MTU 9000) in 10.100.5.0/24"
    assert f.hint == (
        "keep one interface per subnet: "
        "unaddress eno1 or enp1s0, whichever kube05 should not use, or move it to another subnet; "
        "neither carries the default route, and linkdeck does not know which address it reaches kube05 by"
    )


def test_seed_000_kube05_reached_on_its_10g_nic_names_the_onboard_one():
    found = {x.code: x for x in diagnose([replace(kube05(), reached_at="10.100.5.105")], Settings())}
    f = found["TWO_IFACES_ONE_SUBNET"]
    assert (f.severity, f.interface) == (Severity.ERROR, "eno1")
    assert f.hint == (
        "keep one interface per subnet: unplug or unaddress eno1, or move it to another subnet; "
        "keep enp1s0: it carries linkdeck's session (10.100.5.105)"
    )


def test_same_mtu_two_nics_one_subnet_is_a_warning():
    found = [f for f in diagnose([kube05(eno1_mtu=9000)], Settings()) if f.code != "SPEED_BELOW_PEERS"]
    assert [(f.code, f.severity) for f in found] == [("TWO_IFACES_ONE_SUBNET", Severity.WARNING)]


def test_seed_000_fleet_after_jumbo_names_kube05_eno1_as_the_mtu_mismatch():
    fleet = [kube05(), jumbo("opnsense", "10.100.5.1"), jumbo("truenas", "10.100.5.2"), jumbo("kube01", "10.100.5.101")]
    unprobed = [f for f in diagnose(fleet, Settings()) if f.code == "MTU_MISMATCH"]
    # Not probed: every side that differs from another host is named, none is blamed.
    assert sorted((f.host, f.interface, f.severity) for f in unprobed) == [
        ("kube01", "ix0", Severity.WARNING),
        ("kube05", "eno1", Severity.WARNING),
        ("opnsense", "ix0", Severity.WARNING),
        ("truenas", "ix0", Severity.WARNING),
    ]
    # The switch carries 9000 between the two jumbo hosts linkdeck probes (kube05 enp1s0 and kube01).
    found = diagnose(fleet, Settings(), probed=[SubnetMtu("10.100.5.0/24", (1500, 9000), ("kube01", "kube05"), 9000)])
    assert sorted(codes(found)) == [
        ("MTU_MISMATCH", "kube05", "eno1"),
        ("SPEED_BELOW_PEERS", "kube05", "eno1"),
        ("TWO_IFACES_ONE_SUBNET", "kube05", None),
    ]
    mismatch = next(f for f in found if f.code == "MTU_MISMATCH")
    assert mismatch.severity is Severity.ERROR
    assert mismatch.message == "eno1 uses MTU 1500 in 10.100.5.0/24, which carries 9000"
    assert "kube05 eno1 1500" in mismatch.evidence and "opnsense ix0 9000" in mismatch.evidence
    assert mismatch.hint == (
        "the subnet carries 9000: kube05 eno1 at 1500 drops every frame above 1500 its peers send; "
        "raise it to 9000 (`ip link set dev eno1 mtu 9000`) or lower the others to 1500"
    )


def test_two_hosts_1500_and_9000_unprobed_name_both_and_no_direction():
    a = update("h1", 1, view(iface("eth0", mtu=1500, addresses=("10.77.0.11/24",))))
    b = update("h2", 1, view(iface("eth0", mtu=9000, addresses=("10.77.0.12/24",))))
    found = diagnose([a, b], Settings())
    assert sorted(codes(found)) == [("MTU_MISMATCH", "h1", "eth0"), ("MTU_MISMATCH", "h2", "eth0")]
    for f in found:
        assert f.severity is Severity.WARNING
        assert f.message == "MTUs differ in 10.77.0.0/24: h1 eth0 1500; h2 eth0 9000"
        assert f.evidence.startswith("which MTU it carries is not probed yet; ")
        assert "`linkdeck mtu h2 h1`" in f.hint and "does not say which side is wrong" in f.hint
        assert not re.search(r"\b(raise|lower|set them)\b", f.hint)


def three(*mtus: int):
    """Issue 18 §2 (constructed): lab-a, lab-c, lab-g in one subnet at these MTUs."""
    return [
        update(h, 1, view(iface("eth0", mtu=m, addresses=(f"10.77.9.{11 + i}/24",))))
        for i, (h, m) in enumerate(zip(("lab-a", "lab-c", "lab-g"), mtus))
    ]


def test_issue_18_a_switch_that_carries_1500_blames_the_jumbo_hosts_not_the_1500_one():
    probed = SubnetMtu("10.77.9.0/24", (1500, 9000), ("lab-c", "lab-g"), 1500)
    found = diagnose(three(1500, 9000, 9000), Settings(), probed=[probed])
    assert sorted((f.host, f.interface, f.severity) for f in found) == [
        ("lab-c", "eth0", Severity.ERROR),
        ("lab-g", "eth0", Severity.ERROR),
    ]
    assert found[0].hint == (
        "the subnet carries 1500: lab-c eth0 and lab-g eth0 at 9000 lose every large frame; "
        "set them to 1500 (`ip link set dev eth0 mtu 1500`) or raise the switch to 9000"
    )
    assert found[0].evidence.startswith(
        "largest packet through with don't-fragment between lab-c and lab-g: 1500 bytes; "
    )


def test_a_switch_that_carries_9000_blames_the_1500_host():
    probed = SubnetMtu("10.77.9.0/24", (1500, 9000), ("lab-c", "lab-g"), 9000)
    (f,) = diagnose(three(1500, 9000, 9000), Settings(), probed=[probed])
    assert (f.host, f.severity) == ("lab-a", Severity.ERROR)
    assert f.hint.startswith(
        "the subnet carries 9000: lab-a eth0 at 1500 drops every frame above 1500 its peers send; raise it to 9000"
    )


def test_a_probe_that_could_not_run_or_an_mtu_changed_since_gives_no_direction():
    failed = SubnetMtu(
        "10.77.9.0/24", (1500, 9000), ("lab-c", "lab-g"), None, "ping not found on lab-g (`apt install iputils-ping`)"
    )
    found = diagnose(three(1500, 9000, 9000), Settings(), probed=[failed])
    assert {f.severity for f in found} == {Severity.WARNING} and len(found) == 3
    assert found[0].evidence.startswith("cannot probe which MTU it carries: ping not found on lab-g")
    old = SubnetMtu("10.77.9.0/24", (1500, 9000), ("lab-c", "lab-g"), 1500)
    found = diagnose(three(1500, 9000, 4000), Settings(), probed=[old])  # lab-g changed its MTU since
    assert {f.severity for f in found} == {Severity.WARNING}


@pytest.mark.parametrize("mtus", [(1500, 9000, 9000), (1500, 1500, 9000), (9000, 1500, 1400), (1400, 1500, 9000)])
@pytest.mark.parametrize("largest", [1400, 1500, 4000, 9000])
def test_a_hint_never_raises_anything_to_a_smaller_number_nor_lowers_to_a_larger(mtus, largest):
    members = three(*mtus)
    pair = sorted(((m, h) for h, m in zip(("lab-a", "lab-c", "lab-g"), mtus)), reverse=True)[:2]
    probed = SubnetMtu("10.77.9.0/24", tuple(sorted(set(mtus))), (pair[0][1], pair[1][1]), min(largest, pair[1][0]))
    for f in diagnose(members, Settings(), probed=[probed]):
        mine = next(v.iface.mtu for u in members if u.host == f.host for v in u.interfaces)
        carries = int(re.match(r"the subnet carries (\d+)", f.hint).group(1))
        for to in re.findall(r"raise (?:the switch|the others and the switch) to (\d+)", f.hint):
            assert int(to) == mine > carries, f.hint  # the switch (and the rest) up to what this host uses
        for to in re.findall(r"raise them to (\d+)", f.hint):
            assert int(to) > mine, f.hint
        for to in re.findall(r"set them to (\d+)", f.hint):
            assert int(to) < mine, f.hint


def test_link_local_loopback_and_host_routes_define_no_subnet():
    odd = iface(
        "eth0", mtu=9000, addresses=("fe80::1/64", "169.254.3.4/16", "127.0.0.2/8", "192.0.2.10/32", "2001:db8::10/128")
    )
    norm = iface(
        "eth0", mtu=1500, addresses=("fe80::2/64", "169.254.3.5/16", "127.0.0.3/8", "192.0.2.10/32", "2001:db8::10/128")
    )
    assert networks(odd) == ()
    assert diagnose([update("h1", 1, view(odd)), update("h2", 1, view(norm))], Settings()) == []


def test_networks_reads_scoped_and_bare_addresses():
    i = iface(addresses=("fe80::1%eth0/64", "10.0.0.5/24", "2001:db8:1::5/64", "garbage", "10.0.0.9"))
    assert [str(n) for n in networks(i)] == ["10.0.0.0/24", "2001:db8:1::/64"]


def test_down_interfaces_and_loopbacks_are_left_out():
    a = update("h1", 1, view(iface("eth0", mtu=1500, addresses=("10.5.0.1/24",))))
    b = update("h2", 1, view(iface("eth0", mtu=9000, oper="down", addresses=("10.5.0.2/24",))))
    c = update("h3", 1, view(iface("lo", kind="loopback", mtu=65536, addresses=("10.5.0.3/24",))))
    assert diagnose([a, b, c], Settings()) == []


def test_dual_stack_pair_is_named_once():
    up = update(
        "h1",
        1,
        view(iface("eth0", addresses=("10.6.0.1/24", "2001:db8:6::1/64"))),
        view(iface("eth1", addresses=("10.6.0.2/24", "2001:db8:6::2/64"))),
    )
    assert codes(diagnose([up], Settings())) == [("TWO_IFACES_ONE_SUBNET", "h1", None)]


def test_seed_003_vnics_stacked_on_one_aggr_are_only_info():
    records = [
        *ipadm.parse_show_addr(fixture("illumos/ipadm-show-addr__i40e-investigation.txt")),
        *dladm.parse_show_vnic(fixture("illumos/dladm-show-vnic__i40e-investigation.txt")),
        IfaceRecord(name="aggr0", kind="bond", oper="up", members=("i40e0", "i40e1", "i40e2", "i40e3")),
        IfaceRecord(name="lo0", kind="loopback"),
    ]
    ifaces = [record_to_interface(r) for r in merge_records(records).values()]
    (f,) = diagnose([update("smartos", 1, *(view(i) for i in ifaces), os="illumos")], Settings())
    assert (f.code, f.severity) == ("TWO_IFACES_ONE_SUBNET", Severity.INFO)
    assert f.message == "smartos has 3 interfaces in 172.30.115.0/24, all stacked on aggr0"
    assert f.evidence == "admin0 (MTU ?), admin1 (MTU ?), aggr0 (MTU ?) in 172.30.115.0/24"


def issue_18_host(reached_at: str | None = "198.18.77.11"):
    """Issue 18 §1 (constructed from its numbers): eth0 is the address linkdeck connects to and
    carries the default route; eth1 is a second leg in the same subnet at MTU 1400."""
    u = update(
        "lab-a",
        1,
        view(iface("eth0", mtu=1500, default_route=True, addresses=("198.18.77.11/24",))),
        view(iface("eth1", mtu=1400, addresses=("198.18.77.21/24",))),
    )
    return replace(u, reached_at=reached_at) if reached_at else u


def two_ifaces(found):
    return [f for f in found if f.code == "TWO_IFACES_ONE_SUBNET"]


@pytest.mark.parametrize(
    "reached_at, keeps",
    [
        ("198.18.77.11", "; keep eth0: it carries linkdeck's session (198.18.77.11) and the default route"),
        (None, "; keep eth0: it carries the default route"),  # the default route alone decides
    ],
)
def test_issue_18_the_odd_interface_does_not_change_with_a_jumbo_host_watched_beside_it(reached_at, keeps):
    alone = two_ifaces(diagnose([issue_18_host(reached_at)], Settings()))
    beside = two_ifaces(diagnose([issue_18_host(reached_at), jumbo("lab-g", "198.18.77.40")], Settings()))
    assert alone == beside
    (f,) = alone
    assert (f.severity, f.host, f.interface) == (Severity.ERROR, "lab-a", "eth1")
    assert f.hint.startswith("keep one interface per subnet: unplug or unaddress eth1, or move it to another subnet")
    assert keeps in f.hint
    assert "unaddress eth0" not in f.hint


def test_the_session_address_alone_keeps_its_interface():
    u = issue_18_host(reached_at="198.18.77.21")  # linkdeck reaches the host by eth1's address
    u = replace(u, interfaces=tuple(replace(v, iface=replace(v.iface, default_route=False)) for v in u.interfaces))
    for fleet in ([u], [u, jumbo("lab-g", "198.18.77.40")]):
        (f,) = two_ifaces(diagnose(fleet, Settings()))
        assert f.interface == "eth0"
        assert (
            "unplug or unaddress eth0" in f.hint and "keep eth1: it carries linkdeck's session (198.18.77.21)" in f.hint
        )


def test_session_on_one_default_route_on_the_other_advises_removing_neither():
    u = issue_18_host(reached_at="198.18.77.21")  # eth0 has the default route, eth1 the session
    (f,) = two_ifaces(diagnose([u, jumbo("lab-g", "198.18.77.40")], Settings()))
    assert f.interface is None  # the host, not one interface: nothing shows which to drop
    assert "unplug" not in f.hint and "unaddress eth" not in f.hint
    assert "eth1 carries linkdeck's session (198.18.77.21), eth0 the default route" in f.hint


def test_nothing_to_tell_them_apart_names_both_and_says_what_linkdeck_uses():
    u = issue_18_host(reached_at="198.18.77.99")  # a NAT or VIP address: on neither interface
    u = replace(u, interfaces=tuple(replace(v, iface=replace(v.iface, default_route=False)) for v in u.interfaces))
    (f,) = two_ifaces(diagnose([u, jumbo("lab-g", "198.18.77.40")], Settings()))
    assert f.interface is None
    assert "unaddress eth0 or eth1" in f.hint
    assert "linkdeck reaches lab-a at 198.18.77.99, on neither of them" in f.hint


def test_a_request_that_got_no_answer_is_a_black_hole_named_by_its_size():
    from linkdeck.core.model import HostDetail, HostState, HostUpdate
    from linkdeck.findings.mtu import path_mtu_blackhole

    lost = HostUpdate("h", "linux", HostState.ERROR, detail=HostDetail(retry_in_s=4, blackhole_request_bytes=1432))
    (found,) = path_mtu_blackhole([lost, HostUpdate("g", "linux", HostState.ERROR, detail=HostDetail(retry_in_s=4))])
    assert found.host == "h" and "a 1432-byte request (starting the sampler) got no answer" in found.evidence
    # back live with small requests: the finding stays up and says what changed
    (kept,) = path_mtu_blackhole([replace(lost, state=HostState.LIVE)])
    assert "in pieces under 512 bytes" in kept.evidence


def test_two_interfaces_in_one_subnet_with_one_mtu_reads_as_a_sentence() -> None:
    # Constructed: the lab's d, eth0 and eth1 both at 1500 in one /24 on separate wires.
    d = update(
        "lab-d",
        1,
        view(iface("eth0", addresses=("10.77.88.13/24",))),
        view(iface("eth1", addresses=("10.77.88.63/24",))),
    )
    found = {x.code: x for x in diagnose([d], Settings())}
    assert found["TWO_IFACES_ONE_SUBNET"].message == (
        "lab-d has 2 interfaces in 10.77.88.0/24: traffic may enter on one and leave by the other"
    )
