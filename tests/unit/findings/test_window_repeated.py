"""A host whose views are the objects its windows saw last tick costs the findings a repeat of
each window's last tick, never a reading of the views: and the findings are those of fresh
views every tick."""

import random
from dataclasses import replace

import pytest

from linkdeck.core.model import Counters, InterfaceView, Rates
from linkdeck.findings import window
from linkdeck.findings.engine import Diagnoser
from tests.builders import Clock, codes, iface, settings, update


def _windows(d: Diagnoser) -> dict:
    """Each host's windows as a pass reads them: caught up with the host's ticks."""
    v = d.view()
    return {
        host: (kept[0], *(window.caught_up(w, v.times.get(host, ()), v.window_s) for w in kept[1:]))
        for host, kept in v.windows.items()
    }


def _reads(h: window.History) -> tuple:
    return (
        *(h.mean(attr) for attr in window.TICK_FIELDS[1:8]),
        h.any_positive("errors_ps"),
        h.any_positive("drops_ps"),
        h.any_positive("bps"),
        h.nic_increases(),
        h.link_transitions(),
        h.full,
        h.span_s,
    )


def _reads_agree(d: Diagnoser) -> None:
    """Each window read as it was left, with its host's ticks, answers what it answers caught up."""
    v = d.view()
    for host, kept in v.windows.items():
        times = v.times.get(host, ())
        for w in kept[1:]:
            assert _reads(window.History(w, times, v.window_s)) == _reads(
                window.History(window.caught_up(w, times, v.window_s))
            )


def _view(i, **rates) -> InterfaceView:
    return InterfaceView(iface=i, rates=Rates(**rates), totals=Counters())


def test_an_unchanged_host_repeats_its_windows_without_reading_a_view(monkeypatch):
    read = []
    carrier_changes = window._carrier_changes
    monkeypatch.setattr(window, "_carrier_changes", lambda *a: read.append(a) or carrier_changes(*a))
    idle = tuple(_view(iface(f"veth{i}", kind="veth", carrier_changes=2), rx_bps=0.0, tx_bps=0.0) for i in range(600))
    d = Diagnoser(settings(window_s=30.0))
    d.observe(update("node", 1.0, *idle))
    assert len(read) == 600  # the first tick reads every view
    read.clear()
    for t in range(2, 10):
        d.observe(update("node", float(t), *idle))  # the same tuple of the same views
    assert read == []
    busy = _view(idle[7].iface, rx_bps=5e6, tx_bps=0.0, rx_errors_ps=3.0, tx_errors_ps=0.0)
    d.observe(update("node", 10.0, *idle[:7], busy, *idle[8:]))  # one veth moved: it alone is read
    assert len(read) == 1
    assert _windows(d)["node"][8][-2 * window.TICK_LEN :: window.TICK_LEN] == (9.0, 10.0)


@pytest.mark.parametrize("seed,read_every,churn", [(34, 1, 0.05), (34, 7, 0.05), (5, 13, 0.01), (6, 40, 0.0)])
def test_findings_from_the_same_views_are_those_from_fresh_ones(seed, read_every, churn):
    """The same random stream fed as the same objects (kept while a link is unchanged, as the
    rate tracker hands them) and as fresh copies every tick: equal windows and findings,
    whether they are read every tick or now and then (an unchanged link's window is left as
    it was until read, then catches up on the ticks it missed)."""
    rng = random.Random(seed)
    links = [
        iface(f"eth{i}", carrier_changes=0 if i % 2 else None, nic_counters={"rx_missed_errors": 0} if i == 3 else {})
        for i in range(6)
    ]
    views = [
        _view(i, rx_bps=0.0, tx_bps=0.0, rx_errors_ps=0.0, tx_errors_ps=0.0, rx_drops_ps=0.0, tx_drops_ps=0.0)
        for i in links
    ]
    clock = Clock()
    same, fresh = Diagnoser(settings(window_s=10.0), clock=clock), Diagnoser(settings(window_s=10.0), clock=clock)
    kept: tuple = ()
    now = 100.0
    for _ in range(300):
        now += rng.choice((1.0, 1.0, 1.0, 0.0, 12.0, -40.0)) if rng.random() < 0.05 else 1.0
        clock.now = now
        if rng.random() < 0.3:
            k = rng.randrange(len(views))
            v = views[k]
            odd = rng.random()
            if odd < 0.3:
                views[k] = replace(
                    v,
                    rates=Rates(
                        rx_bps=rng.choice((0.0, 9e8)),
                        rx_errors_ps=rng.choice((0.0, 2.0)),
                        rx_drops_ps=rng.choice((None, 0.0, 1.0)),
                    ),
                )
            elif odd < 0.6:
                i = v.iface
                views[k] = replace(
                    v,
                    iface=replace(
                        i,
                        oper=rng.choice(("up", "down")),
                        carrier_changes=None if i.carrier_changes is None else i.carrier_changes + rng.randrange(3),
                    ),
                )
            elif odd < 0.8 and v.iface.nic_counters:
                views[k] = replace(
                    v,
                    iface=replace(
                        v.iface,
                        nic_counters={"rx_missed_errors": v.iface.nic_counters["rx_missed_errors"] + rng.randrange(50)},
                    ),
                )
            else:
                views[k] = replace(v)  # the same numbers, a new object
        order = list(views)
        if rng.random() < churn:
            rng.shuffle(order)
        if rng.random() < churn:
            order = order[:-1]  # a link gone for a tick
        now_views = tuple(order)
        if len(now_views) == len(kept) and all(a is b for a, b in zip(now_views, kept)):
            now_views = kept  # the tracker hands on the same tuple
        kept = now_views
        same.observe(update("h", now, *now_views))
        fresh.observe(update("h", now, *(replace(v, iface=replace(v.iface)) for v in now_views)))
        if rng.random() < 1 / read_every:
            assert _windows(same) == _windows(fresh)
            _reads_agree(same)
            assert codes(same.findings()) == codes(fresh.findings())
    assert _windows(same) == _windows(fresh)


def test_a_window_left_for_longer_than_the_window_catches_up_as_if_repeated_every_tick():
    """An idle link beside one that moves every tick, read only after 25 ticks of a 10 s
    window, then after a gap: what was left as it was is what fresh views every tick give
    (the ticks gone out of the window, where the window now starts, the counts of a link
    erring all along)."""
    quiet = _view(iface("veth0", kind="veth", carrier_changes=2), rx_bps=0.0, tx_bps=0.0)
    erring = _view(iface("veth1", kind="veth"), rx_bps=0.0, tx_bps=0.0, rx_errors_ps=2.0, tx_errors_ps=0.0)
    lazy, eager = Diagnoser(settings(window_s=10.0)), Diagnoser(settings(window_s=10.0))
    for t in (*range(1, 26), 40, 41, 42):
        moving = _view(iface("eth0"), rx_bps=float(t), tx_bps=0.0)
        lazy.observe(update("node", float(t), moving, quiet, erring))
        eager.observe(update("node", float(t), *(replace(v, iface=replace(v.iface)) for v in (moving, quiet, erring))))
        if t in (25, 42):
            assert _windows(lazy) == _windows(eager)
            _reads_agree(lazy)
            assert codes(lazy.findings()) == codes(eager.findings())
    assert window.History(_windows(lazy)["node"][3]).span_s == 42.0 - 25.0  # from the last tick gone out
