"""The graphs' history and the idle counts skip a view that is the object the host's last sample
had in its place (the rate tracker hands on an idle link's): what they show is what fresh views
of the same numbers every sample would show, and an unchanged view is not read."""

from __future__ import annotations

import random
from dataclasses import replace

from linkdeck.core.model import Counters, InterfaceView, Rates
from linkdeck.ui.state import idle as idle_mod, rows as rows_mod
from linkdeck.ui.state.idle import Activity
from linkdeck.ui.state.rows import RateHistory
from tests.builders import iface, update


def _view(name: str, rx: float | None = 0.0, tx: float | None = 0.0, oper: str = "up", **rates) -> InterfaceView:
    return InterfaceView(
        iface=iface(name, kind="veth", oper=oper), rates=Rates(rx_bps=rx, tx_bps=tx, **rates), totals=Counters()
    )


def _stream(seed: int, steps: int = 400):
    """Each sample's views as a rate tracker hands them (an unchanged link's view the same
    object, the same tuple when none changed), with links changing, moving and going."""
    rng = random.Random(seed)
    views = [_view(f"veth{i}") for i in range(8)]
    kept: tuple = ()
    for _ in range(steps):
        for _ in range(rng.choice((0, 0, 0, 1, 2))):
            k = rng.randrange(len(views))
            odd = rng.random()
            if odd < 0.4:
                views[k] = _view(views[k].iface.name, rx=rng.choice((0.0, 500.0, 2e6, None)), tx=rng.choice((0.0, 3e4)))
            elif odd < 0.55:
                views[k] = _view(views[k].iface.name, oper=rng.choice(("up", "down")))
            elif odd < 0.65:
                views[k] = _view(views[k].iface.name, rx_errors_ps=1.0)
            else:
                views[k] = replace(views[k])  # the same numbers, a new object
        order = list(views)
        if rng.random() < 0.04:
            rng.shuffle(order)
        if rng.random() < 0.04:
            order.pop(rng.randrange(len(order)))  # a link gone for a sample
        if rng.random() < 0.02:
            order.append(_view(f"cali{rng.randrange(3)}"))  # one come and gone
        now = tuple(order)
        if len(now) == len(kept) and all(a is b for a, b in zip(now, kept)):
            now = kept
        kept = now
        yield now


def _fresh(views: tuple) -> tuple:
    return tuple(replace(v, iface=replace(v.iface)) for v in views)


def test_history_and_idle_from_the_same_views_are_those_from_fresh_ones():
    for seed in range(6):
        same_h, fresh_h = RateHistory(1.0), RateHistory(1.0)
        same_a, fresh_a = Activity(1.0), Activity(1.0)
        for n, views in enumerate(_stream(seed)):
            t = float(n + 1)
            for h, a, vs in ((same_h, same_a, views), (fresh_h, fresh_a, _fresh(views))):
                h.push(update("node", t, *vs))
                a.push(update("node", t, *vs))
            assert same_a.idle("node") == fresh_a.idle("node"), (seed, n)
            assert same_h.host_peak("node") == fresh_h.host_peak("node"), (seed, n)
            if n % 7 == 0 or n > 380:  # reading a graph catches it up: read some samples only
                for v in views:
                    assert same_h.get("node", v.iface.name) == fresh_h.get("node", v.iface.name), (seed, n)
        for v in views:
            assert same_h.get("node", v.iface.name) == fresh_h.get("node", v.iface.name), seed


def test_each_graph_is_its_interfaces_last_samples_by_definition():
    """Whatever the history keeps (a count of equal samples, or buffers once the rates moved),
    a graph is the interface's rates at each of the host's samples since it was last seen
    anew, the newest ``size`` of them."""
    for seed in range(6):
        history = RateHistory(1.0)
        seen: dict[str, list[tuple]] = {}
        names: list[str] = []
        for n, views in enumerate(_stream(seed)):
            history.push(update("node", float(n + 1), *views))
            now = [v.iface.name for v in views]
            for gone in set(names) - set(now):
                del seen[gone]  # a link gone for a sample starts again when it comes back
            names = now
            for v in views:
                seen.setdefault(v.iface.name, []).append((v.rates.rx_bps, v.rates.tx_bps))
            for name in names if n % 5 == 0 or n > 380 else ():  # reading catches up: read some only
                last = seen[name][-history.size :]
                assert history.get("node", name) == (tuple(r for r, _ in last), tuple(t for _, t in last)), (seed, n)


def test_an_unchanged_view_is_not_read_by_the_graphs_nor_the_idle_counts(monkeypatch):
    read = []
    for mod in (rows_mod, idle_mod):
        values = mod.rate_values
        monkeypatch.setattr(mod, "rate_values", lambda v, values=values: read.append(v) or values(v))
    idle = tuple(_view(f"veth{i}") for i in range(600))
    hist, act = RateHistory(1.0), Activity(1.0)
    for t in range(1, 4):
        eth0 = InterfaceView(iface=iface("eth0"), rates=Rates(rx_bps=1e5 * t, tx_bps=1e3), totals=Counters())
        hist.push(update("node", float(t), eth0, *idle))  # a new tuple every sample: eth0 moved
        act.push(update("node", float(t), eth0, *idle))
        if t == 1:
            assert len(read) == 2 * 601  # the first sample reads every view
        else:
            assert read == [eth0, eth0]
        read.clear()
    assert hist.get("node", "veth5") == ((0.0,) * 3, (0.0,) * 3)
    assert hist.get("node", "eth0")[0] == (1e5, 2e5, 3e5) and hist.host_peak("node") == 3e5
    assert len(act.idle("node")) == 600
