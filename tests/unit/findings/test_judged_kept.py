"""A port whose window and Interface are what they were at the last pass is not judged again
by the window rules, and the findings are those of judging every port afresh, whatever
changed: rates, facts, carrier, NIC counters, the host's own test traffic, the last pass's
findings (a rate held below its threshold), the host's clock. Constructed streams."""

import random
from dataclasses import replace

import pytest

from linkdeck.core.model import Counters, InterfaceView, Rates
from linkdeck.findings import window
from linkdeck.findings.engine import Diagnoser
from tests.builders import Clock, iface, settings, update


def _view(i, **rates) -> InterfaceView:
    return InterfaceView(iface=i, rates=Rates(**rates), totals=Counters())


def _idle(i) -> InterfaceView:
    return _view(i, rx_bps=0.0, tx_bps=0.0, rx_errors_ps=0.0, tx_errors_ps=0.0, rx_drops_ps=0.0, tx_drops_ps=0.0)


def test_an_unchanged_port_is_not_judged_again():
    """Constructed: a node of 600 idle veths and an eth0 that moves every tick; each pass
    after the first judges eth0 alone, until a veth's view changes: then it too, once."""
    idle = tuple(_idle(iface(f"veth{i}", kind="veth", carrier_changes=2)) for i in range(600))
    clock = Clock()
    d = Diagnoser(settings(window_s=10.0), clock=clock)

    def tick(t: float, *veths: InterfaceView) -> None:
        clock.now = t
        moving = _view(iface("eth0", addresses=("10.0.0.2/24",)), rx_bps=1e5 + t, tx_bps=0.0)
        d.observe(update("node", t, moving, *veths))

    tick(1.0, *idle)
    d.findings()
    assert d.ports_judged == 601  # the first pass judges every port
    for t in range(2, 40):  # past the window: the veths' own ticks have all gone out of it
        tick(float(t), *idle)
        before = d.ports_judged
        d.findings()
        assert d.ports_judged - before == 1, t  # eth0 alone
    busy = _view(idle[7].iface, rx_bps=5e6, tx_bps=0.0)
    tick(40.0, *idle[:7], busy, *idle[8:])
    before = d.ports_judged
    d.findings()
    assert d.ports_judged - before == 2  # eth0 and the veth that moved
    tick(41.0, *idle[:7], busy, *idle[8:])
    before = d.ports_judged
    d.findings()
    assert d.ports_judged - before == 2  # a busy window is judged every pass: its mean moves with time


def test_a_port_erring_then_quiet_is_judged_until_its_errors_leave_the_window():
    """Constructed: a link that erred, then stands still (its view the same object): its
    window is left as it was, so it is judged every pass until the errors are out of the
    window, and not after; the finding goes when the errors do, as judging afresh says."""
    clock = Clock()
    d = Diagnoser(settings(window_s=10.0), clock=clock)
    erring = _view(iface("eth1"), rx_bps=0.0, tx_bps=0.0, rx_errors_ps=5.0, tx_errors_ps=0.0)
    quiet = _idle(erring.iface)
    judged, found = [], []
    for t in range(1, 40):
        clock.now = float(t)
        d.observe(update("h", float(t), erring if t < 15 else quiet))
        before = d.ports_judged
        found.append([f.code for f in d.findings()])
        judged.append(d.ports_judged - before)
    assert found[13] == ["ERRORS_RISING"] and found[-1] == []
    assert judged[14:24] == [1] * 10  # the errors still in the window, or held just below the threshold
    assert judged[-5:] == [0] * 5


def _stream(seed: int, passes_every: int) -> None:
    rng = random.Random(seed)
    hosts = [f"h{k}" for k in range(5)]
    ended: dict[str, float | None] = dict.fromkeys(hosts)
    clock = Clock()
    kw = dict(clock=clock, own_traffic=lambda host: ended[host])
    kept, fresh = Diagnoser(settings(window_s=8.0), **kw), Diagnoser(settings(window_s=8.0), **kw)
    links = {
        h: [
            iface(
                f"eth{i}",
                addresses=(f"10.0.{i}.{k + 2}/24",),
                carrier_changes=0 if i % 2 else None,
                nic_counters={"rx_missed_errors": 0} if i == 3 else {},
                ring_rx=256 if i == 3 else None,
                ring_rx_max=4096 if i == 3 else None,
            )
            for i in range(6)
        ]
        for k, h in enumerate(hosts)
    }
    views = {h: [_idle(i) for i in links[h]] for h in hosts}
    sent: dict[str, tuple] = {}
    times = dict.fromkeys(hosts, 100.0)
    for step in range(400):
        h = rng.choice(hosts)
        times[h] += rng.choice((1.0, 1.0, 1.0, 0.0, 9.0, -30.0)) if rng.random() < 0.05 else 1.0
        clock.now = max(clock.now, times[h]) + 0.1
        if rng.random() < 0.05:
            ended[h] = rng.choice((None, clock.now, float("inf"), clock.now - 20.0))
        for _ in range(rng.randrange(3)):
            k = rng.randrange(6)
            v = views[h][k]
            odd = rng.random()
            if odd < 0.4:
                views[h][k] = replace(
                    v,
                    rates=Rates(
                        rx_bps=rng.choice((0.0, 0.0, 2e6, 9e8, 1e7)),
                        tx_bps=rng.choice((0.0, None, 3e5)),
                        rx_errors_ps=rng.choice((0.0, 0.0, 0.7, 2.0, None)),
                        tx_errors_ps=0.0,
                        rx_drops_ps=rng.choice((None, 0.0, 0.6, 1.5)),
                        tx_drops_ps=0.0,
                    ),
                )
            elif odd < 0.55:
                views[h][k] = _idle(v.iface)  # idle again, a new object
            elif odd < 0.7:
                i = v.iface
                views[h][k] = replace(
                    v,
                    iface=replace(
                        i,
                        oper=rng.choice(("up", "down")),
                        carrier_changes=None if i.carrier_changes is None else i.carrier_changes + rng.randrange(3),
                    ),
                )
            elif odd < 0.85 and v.iface.nic_counters:
                n = v.iface.nic_counters["rx_missed_errors"]
                views[h][k] = replace(
                    v, iface=replace(v.iface, nic_counters={"rx_missed_errors": n + rng.choice((0, 5, 80))})
                )
            elif odd < 0.9:
                views[h][k] = replace(v, iface=replace(v.iface, ring_rx=rng.choice((256, 4096, None))))
        now_views = tuple(views[h])
        if rng.random() < 0.02:
            now_views = now_views[:-1]  # a link gone for a tick
        if h in sent and len(now_views) == len(sent[h]) and all(a is b for a, b in zip(now_views, sent[h])):
            now_views = sent[h]  # the tracker hands on the same tuple
        sent[h] = now_views
        u = update(h, times[h], *now_views, os=rng.choice(("linux", "linux", "freebsd")) if step % 97 == 0 else "linux")
        kept.observe(u)
        fresh.observe(u)
        if rng.random() < 1 / passes_every:
            fresh._judged = {}  # every port judged afresh
            a, b = kept.findings(), fresh.findings()
            assert a == b, step
            assert [kept.since(f) for f in a] == [fresh.since(f) for f in b]
    assert kept.ports_judged < fresh.ports_judged


@pytest.mark.parametrize("seed,passes_every", [(34, 1), (35, 1), (36, 3), (37, 7)])
def test_kept_answers_give_the_findings_of_judging_afresh(seed, passes_every):
    _stream(seed, passes_every)


def test_lasting_reads_are_those_a_later_tick_gives():
    """Constructed: a History's answers it says last (``lasting``) are those the same window
    gives with more of its host's ticks, up to well past the window."""
    rng = random.Random(34)
    for _ in range(300):
        w = window.EMPTY
        t = 0.0
        for _ in range(rng.randrange(1, 14)):
            t += 1.0
            rates = dict(
                rx_bps=rng.choice((0.0, 0.0, None, 5.0)),
                tx_bps=rng.choice((0.0, None)),
                rx_errors_ps=rng.choice((0.0, 0.0, 3.0, None)),
                rx_drops_ps=rng.choice((0.0, 0.0, 1.0, None)),
            )
            v = _view(iface("eth0", carrier_changes=rng.choice((1, 1, 2)), nic_counters={}), **rates)
            w = window.observed(w, t, v, 6.0)
        times = tuple(float(x) for x in range(1, int(t) + 1 + rng.randrange(3)))
        reads = (
            lambda h: h.mean("bps"),
            lambda h: h.mean("errors_ps"),
            lambda h: h.any_positive("errors_ps"),
            lambda h: h.any_positive("drops_ps"),
            lambda h: h.any_positive("bps"),
            lambda h: h.nic_increases(),
            lambda h: h.link_transitions(),
            lambda h: h.full,
        )
        for read in reads:
            h = window.History(w, times, 6.0)
            answer = read(h)
            if h.lasting:
                for more in range(1, 12):
                    later = (*times, *(times[-1] + x for x in range(1, more + 1)))
                    assert read(window.History(w, later, 6.0)) == answer
