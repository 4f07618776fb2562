"""What a path MTU probe proved becomes a finding on both ends (issue 29 §4), constructed:
lab-c and lab-g at MTU 9000, the path between them carrying 1500-byte packets."""

from __future__ import annotations

import time

from linkdeck.core.model import MeasuredPath, PathMtu, Severity
from linkdeck.findings.engine import Diagnoser
from tests.builders import Clock, codes, iface, settings, update, view

C = iface("eth0", mtu=9000, addresses=("10.77.9.13/24",))
G = iface("eth0", mtu=9000, addresses=("10.77.9.17/24",))
AT = 1_700_000_000.0


def probe(largest: int, at: float = AT, src: str = "lab-c", dst: str = "lab-g") -> MeasuredPath:
    return MeasuredPath(src, "eth0", 9000, dst, "eth0", 9000, "10.77.9.17", PathMtu(largest, largest, 9000, 9000), at)


def watching_c_and_g() -> Diagnoser:
    d = Diagnoser(settings(), clock=Clock())
    d.observe(update("lab-c", 100.0, view(C)))
    d.observe(update("lab-g", 100.0, view(G)))
    return d


def test_a_probe_of_1500_between_two_9000_ends_raises_path_mtu_on_both_with_evidence_and_time():
    d = watching_c_and_g()
    assert d.findings() == []
    d.measured(probe(1500))
    found = d.findings()
    assert sorted(codes(found)) == [("PATH_MTU", "lab-c", "eth0"), ("PATH_MTU", "lab-g", "eth0")]
    f = next(f for f in found if f.host == "lab-c")
    assert f.severity is Severity.ERROR
    assert f.message == "the path between lab-c and lab-g carries 1500-byte packets; both ends use 9000"
    when = time.strftime("%H:%M:%S", time.localtime(AT))
    assert f.evidence == (
        "largest packet through with don't-fragment to 10.77.9.17: lab-c → lab-g 1500 bytes, lab-g → lab-c 1500 bytes; "
        f"lab-c eth0 MTU 9000, lab-g eth0 MTU 9000; measured at {when}"
    )
    assert f.hint == (
        "set both ends' MTU to 1500 (`ip link set dev eth0 mtu 1500`) "
        "or raise every hop between lab-c and lab-g to 9000"
    )


def test_a_later_probe_that_carries_9000_either_way_clears_it():
    d = watching_c_and_g()
    d.measured(probe(1500))
    assert len(d.findings()) == 2
    d.measured(probe(9000, at=AT + 60, src="lab-g", dst="lab-c"))
    assert d.findings() == []


def test_a_later_probe_that_could_not_run_keeps_it():
    d = watching_c_and_g()
    d.measured(probe(1500))
    d.measured(
        MeasuredPath(
            "lab-c", "eth0", 9000, "lab-g", "eth0", 9000, "10.77.9.17", PathMtu(note="ping not found on lab-g"), AT + 60
        )
    )
    assert sorted(codes(d.findings())) == [("PATH_MTU", "lab-c", "eth0"), ("PATH_MTU", "lab-g", "eth0")]


def test_ends_set_to_what_the_path_carries_hold_no_finding():
    d = watching_c_and_g()
    d.measured(probe(1500))
    d.observe(update("lab-c", 101.0, view(iface("eth0", mtu=1500, addresses=C.addresses))))
    d.observe(update("lab-g", 101.0, view(iface("eth0", mtu=1500, addresses=G.addresses))))
    assert d.findings() == []


def test_it_does_not_depend_on_which_other_hosts_are_watched():
    alone = watching_c_and_g()
    alone.measured(probe(1500))
    beside = watching_c_and_g()
    beside.observe(update("lab-a", 100.0, view(iface("eth0", mtu=9000, addresses=("10.77.9.11/24",)))))
    beside.measured(probe(1500))
    assert alone.findings() == beside.findings()


def test_a_path_that_carries_what_one_end_uses_is_not_path_mtu():
    d = Diagnoser(settings(), clock=Clock())
    d.observe(update("lab-c", 100.0, view(iface("eth0", mtu=1500, addresses=C.addresses))))
    d.observe(update("lab-g", 100.0, view(G)))
    d.measured(
        MeasuredPath("lab-c", "eth0", 1500, "lab-g", "eth0", 9000, "10.77.9.17", PathMtu(1500, 1500, 1500, 9000), AT)
    )
    assert [f for f in d.findings() if f.code == "PATH_MTU"] == []


def test_where_a_probed_mtu_mismatch_says_what_the_subnet_carries_path_mtu_is_not_said_twice():
    from linkdeck.core.model import SubnetMtu

    d = watching_c_and_g()
    d.observe(update("lab-a", 100.0, view(iface("eth0", mtu=1500, addresses=("10.77.9.11/24",)))))
    d.learn(SubnetMtu("10.77.9.0/24", (1500, 9000), ("lab-c", "lab-g"), 1500))
    d.measured(probe(1500))
    assert sorted(codes(d.findings())) == [("MTU_MISMATCH", "lab-c", "eth0"), ("MTU_MISMATCH", "lab-g", "eth0")]


def test_ends_whose_interface_is_not_known_take_the_mtus_the_probe_went_up_to_host_level():
    from linkdeck.core.model import EndState
    from linkdeck.probe.session import measured_path

    m = measured_path(PathMtu(1500, None, 9000, 9000), EndState("lab-c"), EndState("lab-g"), "10.77.9.17", AT)
    assert (m.src_iface, m.src_mtu, m.dst_iface, m.dst_mtu, m.largest) == (None, 9000, None, 9000, 1500)
    d = Diagnoser(settings(), clock=Clock())
    d.measured(m)
    found = d.findings()
    assert sorted(codes(found)) == [("PATH_MTU", "lab-c", None), ("PATH_MTU", "lab-g", None)]
    assert found[0].hint == "set both ends' MTU to 1500 or raise every hop between lab-c and lab-g to 9000"
    assert found[0].evidence.startswith(
        "largest packet through with don't-fragment to 10.77.9.17: "
        "lab-c → lab-g 1500 bytes; lab-c ? MTU 9000, lab-g ? MTU 9000;"
    )
