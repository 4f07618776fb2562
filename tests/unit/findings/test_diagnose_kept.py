"""What the Diagnoser keeps between passes costs the cyclic collector nothing per interface
(issue 20 §3): at 10,000 hosts x 8 interfaces, every object it tracks is walked by each full
collection, a block of the event loop. Its windows and facts are plain tuples of numbers and
strings, which the collector stops tracking; what it keeps per host stays a constant few."""

from __future__ import annotations

import gc
import types

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.core.tcpstats import TcpRates
from linkdeck.findings.engine import Diagnoser
from tests.builders import iface, settings, view

SOURCE_STATE = ("settings", "clock", "own_traffic", "_latest", "_states")


def reachable(roots: list[object]) -> dict[int, object]:
    """Every object reachable from ``roots`` (roots included), by id, not through code."""
    seen: dict[int, object] = {}
    todo = list(roots)
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType, types.MethodType)):
            continue
        seen[id(obj)] = obj
        todo.extend(gc.get_referents(obj))
    return seen


def kept_tracked(d: Diagnoser) -> list[object]:
    """The tracked objects the Diagnoser keeps alive on top of the updates it was last fed (a
    source's own objects: the HostUpdates, their views and Interfaces), its own containers
    not counted."""
    state = [v for k, v in vars(d).items() if k not in SOURCE_STATE]
    sources = reachable([*d._latest.values(), *d._states.values()])
    containers = {id(v) for v in state}
    # A tuple is untracked by the collection that finds its items untracked; one nested in an
    # older generation than its items may take one more collection per level.
    for _ in range(6):
        gc.collect()
    return [o for i, o in reachable(state).items() if i not in sources and i not in containers and gc.is_tracked(o)]


def fleet(hosts: int, ifaces: int) -> Diagnoser:
    """A healthy fleet watched for a few updates, each host's Interfaces kept from one update to
    the next as the Prometheus source keeps them, its TCP counters read, its NIC drop
    counters read but not rising."""
    d = Diagnoser(settings(window_s=10))
    links = {
        f"h{h}": [
            iface(
                f"eth{i}", addresses=(f"10.{i}.0.{h + 1}/24",), carrier_changes=2, nic_counters={"rx_missed_errors": 7}
            )
            for i in range(ifaces)
        ]
        for h in range(hosts)
    }
    for t in range(4):
        for host, ports in links.items():
            views = tuple(
                view(p, rx_bps=1e8, tx_bps=1e8, rx_errors_ps=0.0, tx_errors_ps=0.0, rx_drops_ps=0.0, tx_drops_ps=0.0)
                for p in ports
            )
            tcp = TcpRates(out_segs_ps=1600.0, retrans_segs_ps=1.6, in_segs_ps=800.0)
            d.observe(HostUpdate(host=host, os="linux", state=HostState.LIVE, time=5.0 * t, interfaces=views, tcp=tcp))
        assert d.findings() == []  # every rule judged every interface, and found nothing
    return d


def test_the_kept_state_tracks_a_constant_few_objects_per_host_not_one_per_interface():
    few, many = fleet(hosts=3, ifaces=2), fleet(hosts=3, ifaces=16)
    assert len(many._watched()) == 3 * 16  # the windows are there, and read
    per_host = kept_tracked(many)
    assert len(per_host) == len(kept_tracked(few)), sorted(type(o).__name__ for o in per_host)
    # and two per host: its windows' flat tuple, and its ports' last answers' (which holds the
    # Interfaces they were given for); its TCP window, a NamedTuple, was a third
    more = fleet(hosts=6, ifaces=16)
    assert len(kept_tracked(more)) - len(per_host) == 2 * 3, sorted(type(o).__name__ for o in kept_tracked(more))


def test_a_nic_counter_that_rose_keeps_its_tick_tracked_only_while_it_is_in_the_window():
    # Its rise is a dict in the tick: a tuple holding a dict stays tracked (and the tuples that
    # hold it), the common tick, whose rise is None, does not.
    d = Diagnoser(settings(window_s=10))
    missed = 1000
    for t in range(6):
        missed += 500 if t == 2 else 0  # one rise, in the tick at 10 s: in the window until 20 s
        port = iface("eth0", nic_counters={"rx_missed_errors": missed, "rx_packets": 10**6 * t})
        d.observe(HostUpdate(host="h", os="linux", state=HostState.LIVE, time=5.0 * t, interfaces=(view(port),)))
        kept = kept_tracked(d)
        if t in (2, 3):
            assert kept and all(type(o) is tuple for o in kept), t
            assert any({"rx_missed_errors": 500} in o for o in kept), t
        else:
            assert kept == [], t


def test_the_static_rules_see_only_the_fields_their_answer_is_kept_by() -> None:
    # what a static rule may read is what keys its kept answer: any other field reads its
    # default, so a rule that began reading, say, the driver could never see a stale one
    from dataclasses import fields

    from linkdeck.core.model import Interface
    from linkdeck.findings.engine import STATIC_FIELDS, static_view
    from tests.builders import iface as make_iface

    full = make_iface(
        "eth0",
        driver="ixgbe",
        mac="02:00:00:00:00:01",
        ring_rx=512,
        addresses=("10.0.0.1/24",),
        supported_speeds_mbps=(1000, 10000),
    )
    seen = static_view(full)
    for f in fields(Interface):
        expected = getattr(full, f.name) if f.name in STATIC_FIELDS else getattr(Interface(name="x"), f.name)
        assert getattr(seen, f.name) == expected, f.name
