"""The path MTU's words (``linkdeck mtu`` and the dashboard's ``u``, issue 23): each direction
names the address it was sent to and the interface that limits it — only one the figures point
to. The ends are constructed; the figures are what the lab measured (tests/lab/test_pmtu_lab.py)."""

from __future__ import annotations

from linkdeck.core.model import EndState, PathMtu
from linkdeck.present.outcome import mtu_lines
from linkdeck.probe.session import MtuOutcome
from tests.builders import iface


def outcome(
    forward: int | None, reverse: int | None, src_mtu: int | None, dst_mtu: int | None, driver: str | None = "veth"
) -> MtuOutcome:
    src = EndState("lab-a", iface("eth1", mtu=src_mtu, addresses=("198.18.77.21/24",), driver=driver))
    dst = EndState("lab-b", iface("eth0", mtu=dst_mtu, addresses=("198.18.77.22/24",), driver=driver))
    return MtuOutcome("lab-a", "lab-b", "198.18.77.22", PathMtu(forward, reverse, src_mtu, dst_mtu), src, dst)


def test_each_direction_names_its_address_and_the_interface_that_limits_it() -> None:
    # lab-a eth1 at 1400, lab-b eth0 at 1500, both veth: lab-a sends 1400 (its own MTU), and
    # lab-b's 1404 bytes get in because a veth takes 4 bytes over its MTU
    lines = mtu_lines(outcome(1400, 1404, 1400, 1500))
    assert lines[0] == "lab-a → lab-b (198.18.77.22): 1400 bytes get through — lab-a eth1 MTU 1400"
    assert lines[1] == "lab-b → lab-a (198.18.77.21): 1404 bytes get through — lab-a eth1 MTU 1400 (+4 veth slack)"


def test_a_physical_receiver_is_named_with_its_slack_but_not_as_a_veth() -> None:
    lines = mtu_lines(outcome(1400, 1404, 1400, 1500, driver="ixgbe"))
    assert lines[1].endswith("— lab-a eth1 MTU 1400 (+4 receive slack)")


def test_below_both_ends_names_no_interface() -> None:
    # both ends at 9000, 1500 crossed: a hop between them (the lab's 1500 bridge port)
    lines = mtu_lines(outcome(1500, 1500, 9000, 9000))
    assert lines[0] == (
        "lab-a → lab-b (198.18.77.22): 1500 bytes get through — "
        "less than lab-a eth1 MTU 9000 and lab-b eth0 MTU 9000: a hop between them carries no more"
    )
    assert "less than lab-b eth0 MTU 9000 and lab-a eth1 MTU 9000: a hop" in lines[1] and lines[1].startswith(
        "lab-b → lab-a (198.18.77.21): 1500 bytes"
    )
    # one MTU unknown: the known one only, and the other said to be unknown
    lines = mtu_lines(outcome(1500, None, 9000, None))
    assert lines[0].endswith("— less than lab-a eth1 MTU 9000; the other end's MTU is not known")
    assert lines[1] == "lab-b → lab-a (198.18.77.21): not probed"
