"""Which interface carried a test, from the counters read around it (constructed totals)."""

from __future__ import annotations

from linkdeck.core.model import Counters
from linkdeck.probe.egress import carrier

BEFORE = {"eth0": Counters(tx_bytes=1000, rx_bytes=1000), "eth1": Counters(tx_bytes=1000, rx_bytes=1000)}


def after(eth0_tx: int, eth1_tx: int, eth1_rx: int = 0) -> dict[str, Counters]:
    return {
        "eth0": Counters(tx_bytes=1000 + eth0_tx, rx_bytes=1000),
        "eth1": Counters(tx_bytes=1000 + eth1_tx, rx_bytes=1000 + eth1_rx),
    }


def test_the_interface_that_sent_the_bytes_carried_the_test() -> None:
    assert carrier(BEFORE, after(50_000_000, 3_000), "eth1", "tx_bytes", 48e6) == "eth0"
    assert carrier(BEFORE, after(3_000, 50_000_000), "eth1", "tx_bytes", 48e6) is None


def test_replies_arriving_by_the_chosen_interface_do_not_count_as_sending() -> None:
    assert carrier(BEFORE, after(50_000_000, 3_000, eth1_rx=90_000_000), "eth1", "tx_bytes", 48e6) == "eth0"


def test_background_traffic_is_not_a_test_that_moved_next_to_nothing() -> None:
    # a direction that moved 3 kB (a path MTU black hole) beside 1 MB of other traffic on eth0
    assert carrier(BEFORE, after(1_000_000, 500), "eth1", "tx_bytes", 10e6) is None
    assert carrier(BEFORE, after(50_000_000, 500), "eth1", "tx_bytes", None) is None


def test_a_chosen_interface_that_carried_what_iperf3_moved_carried_the_test_beside_a_transfer() -> None:
    # The lab's d → a to a's second address (eth1, MTU 1400) while a transfer runs into eth0:
    # iperf3 moved 14.5 kB in 5 s, eth1 received 16 kB of it, eth0 60 MB of the other transfer.
    assert carrier(BEFORE, after(60_000_000, 16_000), "eth1", "tx_bytes", 14.5e3) is None
    # the same transfer beside a test that really left by eth0: eth1 moved none of it
    assert carrier(BEFORE, after(60_000_000, 300), "eth1", "tx_bytes", 14.5e3) == "eth0"
