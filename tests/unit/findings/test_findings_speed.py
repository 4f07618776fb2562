"""Speed rules over parsed real outputs (seed 001's dladm table, the corpus's ethtool samples)
and over constructed interfaces where no real output exists (each such test says so)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from linkdeck.core.model import IfaceRecord, Severity, merge_records, record_to_interface
from linkdeck.findings.engine import diagnose
from linkdeck.parsers import dladm, ethtool
from linkdeck.settings.config import Settings
from tests.builders import codes, iface, update, view
from tests.corpus import fixture


def interfaces(records: list[IfaceRecord]):
    return [record_to_interface(r) for r in merge_records(records).values()]


def as_port(rec: IfaceRecord):
    """ethtool IF knows no kind or MTU; the Linux adapter adds them from sysfs."""
    return record_to_interface(merge_records([IfaceRecord(name=rec.name, kind="physical", mtu=1500), rec])[rec.name])


def test_seed_001_dladm_speed_100_of_1000_is_below_capability():
    records = dladm.parse_show_linkprop(fixture("seeds/dladm-show-linkprop-speed__seed001-before-fix.txt"))
    found = diagnose([update("dace-2", 1, *(view(i) for i in interfaces(records)), os="solaris")], Settings())
    assert codes(found) == [("SPEED_BELOW_CAPABILITY", "dace-2", "e1000g0")]
    (f,) = found
    assert f.severity is Severity.WARNING
    assert f.message == "e1000g0 negotiated 100 Mb/s but supports 1 Gb/s"
    assert f.evidence == "speed 100 Mb/s; supported 10, 100, 1000 Mb/s"
    assert "cable (Cat5e or better" in f.hint and "dladm set-linkprop -p en_1000fdx_cap=1 e1000g0" in f.hint


def test_seed_001_after_the_cable_swap_is_clean():
    records = dladm.parse_show_linkprop(fixture("seeds/dladm-show-linkprop-speed__seed001-after-fix.txt"))
    assert [i.speed_mbps for i in interfaces(records)] == [1000, 1000]
    assert diagnose([update("dace-2", 1, *(view(i) for i in interfaces(records)), os="solaris")], Settings()) == []


@pytest.mark.parametrize(
    "rel, name, speed",
    [
        ("linux/ethtool__bb-qq-aqc111-issue-1-eth2-old-ethtool.txt", "eth2", 1000),
        ("linux/ethtool__lolyu-aoi-tg3-debian11.txt", "eth0", 1000),
        ("linux/ethtool__pyroute2-issue-720-enp0s31f6.txt", "enp0s31f6", 1000),
        ("linux/ethtool__openwrt-issue-22126-lan12-speed-unknown.txt", "lan12", None),
    ],
)
def test_corpus_ethtool_ports_at_their_top_speed_or_unknown_say_nothing(rel, name, speed):
    rec = ethtool.parse_settings(fixture(rel))
    assert (rec.name, rec.speed_mbps) == (name, speed)
    port = as_port(rec)
    assert diagnose([update("h1", 1, view(port))], Settings()) == []


def test_corpus_ethtool_10g_capable_port_at_1000_is_named():
    # node_exporter's fixture lists 10000baseT/Full as supported but runs at 1000 (its INDEX
    # row notes the author may have added that mode): the rule reads it as a real 10G port.
    rec = ethtool.parse_settings(fixture("linux/ethtool__node-exporter-fixture-eth0-netlink-error.txt"))
    port = as_port(rec)
    assert port.supported_speeds_mbps == (10, 100, 1000, 10000) and port.speed_mbps == 1000
    (f,) = diagnose([update("h1", 1, view(port))], Settings())
    assert f.code == "SPEED_BELOW_CAPABILITY" and f.message == "eth0 negotiated 1 Gb/s but supports 10 Gb/s"
    assert "Cat6a" in f.hint and "`ethtool -s eth0 autoneg on`" in f.hint


def test_constructed_gigabit_port_at_100_on_linux():
    # Constructed: no captured output of a Linux port stuck at 100 exists in the corpus.
    port = iface("enp3s0", speed_mbps=100, supported_speeds_mbps=(10, 100, 1000))
    (f,) = diagnose([update("nas01", 1, view(port))], Settings())
    assert (f.code, f.host, f.interface) == ("SPEED_BELOW_CAPABILITY", "nas01", "enp3s0")
    assert f.hint.endswith("`ethtool enp3s0` (link partner modes), then `ethtool -s enp3s0 autoneg on`")


@pytest.mark.parametrize("kind", ["virtual", "bridge", "loopback", "tunnel", "vnic", "wireless"])
def test_constructed_virtual_kinds_are_never_judged_on_speed(kind):
    # Constructed: a veth claims 10000 and a bridge its fastest member's; neither is a port.
    made_up = iface(
        "v0", kind=kind, speed_mbps=10, duplex="half", supported_speeds_mbps=(10, 10000), addresses=("10.9.0.1/24",)
    )
    real = iface("eth0", speed_mbps=1000, addresses=("10.9.0.2/24",))
    assert diagnose([update("h1", 1, view(made_up)), update("h2", 1, view(real))], Settings()) == []


def test_sentinel_speeds_reach_the_rules_as_unknown():
    # Sentinels become None in the parsers (units.speed_mbps): nothing to judge.
    port = iface("eth0", speed_mbps=None, duplex=None, supported_speeds_mbps=(1000, 10000))
    assert diagnose([update("h1", 1, view(port))], Settings()) == []


def test_constructed_seed_001_fleet_names_the_one_slow_client():
    # Constructed from seed 001: ten identical blades on one subnet, dace-2's NIC at 100.
    ups = [
        update(
            f"dace-{n}",
            1,
            view(iface("e1000g0", speed_mbps=100 if n == 2 else 1000, addresses=(f"192.168.10.{n}/24",))),
        )
        for n in range(10)
    ]
    found = diagnose(ups, Settings())
    assert codes(found) == [("SPEED_BELOW_PEERS", "dace-2", "e1000g0")]
    (f,) = found
    assert f.severity is Severity.WARNING
    assert "slower than every other port in 192.168.10.0/24 (slowest 1 Gb/s)" in f.message
    assert f.evidence.startswith("dace-2 e1000g0 100 Mb/s; peers in 192.168.10.0/24: dace-0 e1000g0 1000")
    assert "and 4 more" in f.evidence


def test_a_10g_nas_among_gigabit_clients_is_no_finding():
    ups = [update("nas", 1, view(iface("ix0", speed_mbps=10000, addresses=("10.1.0.2/24",))))]
    ups += [
        update(f"pc{n}", 1, view(iface("eth0", speed_mbps=1000, addresses=(f"10.1.0.{10 + n}/24",)))) for n in range(3)
    ]
    assert diagnose(ups, Settings()) == []


def test_half_duplex_up_link_is_an_error_and_a_down_one_is_not():
    up_half = iface("eth1", speed_mbps=100, duplex="half")
    (f,) = diagnose([update("h1", 1, view(up_half))], Settings())
    assert (f.code, f.severity) == ("HALF_DUPLEX", Severity.ERROR)
    assert f.evidence == "duplex half, speed 100 Mb/s, state up"
    # Real illumos: a down igb reports "0 half" (parsed as unknown speed, no duplex).
    records = dladm.parse_show_phys(
        fixture("illumos/dladm-show-phys-p-o-link-state-speed-duplex__conch-reporter-smartos.txt"),
        fields=("link", "state", "speed", "duplex"),
    )
    phys = interfaces(records)
    assert [(i.name, i.oper, i.speed_mbps) for i in phys] == [("igb0", "down", None), ("ixgbe0", "up", 10000)]
    assert diagnose([update("smartos", 1, *(view(i) for i in phys), os="illumos")], Settings()) == []


@given(st.lists(st.sampled_from([100, 1000, 2500, 10000]), min_size=1, max_size=12))
def test_below_peers_names_exactly_the_port_slower_than_all_others(speeds) -> None:
    updates = [
        update(f"h{i}", 0, view(iface(speed_mbps=s, addresses=(f"10.9.0.{i + 1}/24",)))) for i, s in enumerate(speeds)
    ]
    named = {host for code, host, _ in codes(diagnose(updates, Settings())) if code == "SPEED_BELOW_PEERS"}
    brute = {f"h{i}" for i, s in enumerate(speeds) if len(speeds) > 1 and s < min(speeds[:i] + speeds[i + 1 :])}
    assert named == brute
