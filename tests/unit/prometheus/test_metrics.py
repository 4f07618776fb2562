"""Answers folded into targets: what each family sets, and what the fold keeps alive for the
cyclic collector to walk while a refresh runs. The rows here are constructed."""

from __future__ import annotations

import gc

from linkdeck.prometheus.metrics import COUNTER_METRICS, SCRAPE_TIME, _Iface, fast_queries, read_into


def fold(devices: int, instance: str = "n1:9100", step: int = 0) -> dict:
    targets: dict = {}
    for family, _, labels in fast_queries(""):
        rows = []
        for d in range(devices):
            row = {"device": f"eth{d}", "instance": instance, "duplex": "full", "operstate": "up", "job": "node"}
            if family == "tcp":
                row = {"instance": instance, "linkdeck_tcp": "Tcp_OutSegs"}
            rows.append((*(row.get(name, "") for name in labels), str(1000 * (step + 1) + d)))
        if "linkdeck" in labels:  # the scrape time stamped on the counters, up and tcp
            stamp = str(1795357005.5 + 15 * step)
            rows.append(
                tuple(SCRAPE_TIME if name == "linkdeck" else instance if name == "instance" else "" for name in labels)
                + (stamp,)
            )
        read_into(targets, rows, family)
    return targets


def test_every_family_lands_on_its_interface() -> None:
    target = fold(3)["n1:9100"]
    assert target.ifaces() == {
        f"eth{d}": _Iface(
            [1000 + d] * len(COUNTER_METRICS),
            mtu=1000 + d,
            speed_bytes=1000.0 + d,
            carrier_changes=1000 + d,
            oper="up",
            duplex="full",
        )
        for d in range(3)
    }
    assert (target.scrape_time, target.counter_times, target.up, target.jobs) == (
        1795357005.5,
        {1795357005.5},
        1002.0,
        {"node"},
    )
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


async def test_a_refreshs_updates_never_set_off_a_full_collection() -> None:
    """Turning the answers into updates replaces each host's long-lived views: with the
    collector's own schedule, a full collection of everything alive (0.2-0.3 s at 10,000
    hosts) landed on top of that work about every second refresh. The source collects its
    young objects itself, so with a full collection due, none comes during the updates; it
    comes in a turn of the event loop of its own (issue 20 §3)."""
    from linkdeck.prometheus.source import YIELD_EVERY, PrometheusSource
    from linkdeck.settings.config import Settings
    from linkdeck.settings.prometheus_section import PrometheusConfig

    cfg = PrometheusConfig(url="http://127.0.0.1:9", interval=15)
    source = PrometheusSource(cfg, Settings(local=False, prometheus=cfg), lambda update: None)
    hosts = 2 * YIELD_EVERY + 1  # three steps
    generations: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            generations.append(info["generation"])

    for k in range(3):
        targets: dict = {}
        for h in range(hosts):
            targets.update(fold(2, instance=f"n{h}:9100", step=k))
        # A full collection due: a quarter more long-lived objects than the last one saw,
        # and more middle-generation collections since than its threshold.
        gc.collect()
        due = [[] for _ in range(len(gc.get_objects()) // 3)]
        for _ in range(gc.get_threshold()[2] + 1):
            gc.collect(1)
        gc.callbacks.append(seen)
        try:
            await source._apply(targets, {})
        finally:
            gc.callbacks.remove(seen)
        del due
    assert all(h.samples_seen == 3 for h in source.hosts.values()) and len(source.hosts) == hosts
    assert generations and 2 not in generations, generations
