"""Answers folded into targets: what each family sets, and what the fold keeps alive for the
cyclic collector to walk while a refresh runs. The rows here are constructed."""

from __future__ import annotations

import gc

from linkdeck.prometheus.metrics import COUNTER_METRICS, SCRAPE_TIME, _Iface, fast_queries, read_into


def fold(devices: int) -> dict:
    targets: dict = {}
    for family, _, labels in fast_queries(""):
        rows = []
        for d in range(devices):
            row = {"device": f"eth{d}", "instance": "n1:9100", "duplex": "full", "operstate": "up", "job": "node"}
            if family == "tcp":
                row = {"instance": "n1:9100", "linkdeck_tcp": "Tcp_OutSegs"}
            rows.append((*(row.get(name, "") for name in labels), str(1000 + d)))
        if "linkdeck" in labels:  # the scrape time stamped on the counters, up and tcp
            rows.append(tuple(SCRAPE_TIME if name == "linkdeck" else "n1:9100" if name == "instance" else "" for name in labels) + ("1795357005.5",))
        read_into(targets, rows, family)
    return targets


def test_every_family_lands_on_its_interface() -> None:
    target = fold(3)["n1:9100"]
    assert target.ifaces() == {
        f"eth{d}": _Iface([1000 + d] * len(COUNTER_METRICS), mtu=1000 + d, speed_bytes=1000.0 + d, carrier_changes=1000 + d, oper="up", duplex="full")
        for d in range(3)
    }
    assert (target.scrape_time, target.counter_times, target.up, target.jobs) == (1795357005.5, {1795357005.5}, 1002.0, {"node"})
    assert target.tcp == {"out_segs": 1002}  # (one series per host in life: here the last row wins)


def tracked(root) -> int:
    """The objects reachable from ``root`` (itself included, classes not) the cyclic collector
    tracks."""
    seen, todo, count = set(), [root], 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or not gc.is_tracked(obj) or isinstance(obj, type):
            continue
        seen.add(id(obj))
        count += 1
        todo.extend(gc.get_referents(obj))
    return count


def test_a_target_keeps_no_tracked_object_per_interface() -> None:
    """A refresh keeps every target from its first answer to its last update: 10,000 hosts'
    worth, walked by each collection meanwhile (issue 20 §3). Interfaces add numbers, not
    containers."""
    small, big = fold(2)["n1:9100"], fold(64)["n1:9100"]
    gc.collect()  # the collector stops tracking the dicts of names and numbers
    assert tracked(small) == tracked(big) <= 5
