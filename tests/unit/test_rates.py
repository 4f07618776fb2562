"""Counter hygiene: wraps, resets, vanishing interfaces and stalled clocks never give spikes."""

import gc
from dataclasses import fields

from linkdeck.core.model import COUNTER_FIELDS, Counters, HostSample, Interface, Rates
from linkdeck.core.rates import RateTracker, counter_delta, field_delta

GIG = Interface(name="eth0", kind="physical", oper="up", speed_mbps=1000, duplex="full")


def sample(t, **counters_by_iface):
    ifaces = {name: GIG if name == "eth0" else Interface(name=name) for name in counters_by_iface}
    return HostSample(time=t, interfaces=ifaces, counters=counters_by_iface)


def rx(n, **kw):
    return Counters(
        rx_bytes=n,
        tx_bytes=kw.get("tx", 0),
        rx_packets=kw.get("pk", 0),
        tx_packets=0,
        rx_errors=0,
        tx_errors=0,
        rx_drops=0,
        tx_drops=0,
        bits=kw.get("bits"),
    )


def test_first_tick_has_no_rate_then_rate_is_delta_over_time():
    tr = RateTracker()
    (v,) = tr.update(sample(10.0, eth0=rx(1000)))
    assert v.rates.rx_bps is None and v.util_pct is None
    (v,) = tr.update(sample(12.0, eth0=rx(1000 + 25_000_000)))
    assert v.rates.rx_bps == 25_000_000 * 8 / 2
    assert v.totals.rx_bytes == 25_000_000
    assert v.util_pct == 100.0 * 100_000_000 / 1e9


def test_32bit_wrap_is_corrected():
    tr = RateTracker()
    tr.update(sample(0.0, eth0=rx(2**32 - 1000)))
    (v,) = tr.update(sample(1.0, eth0=rx(500)))
    assert v.rates.rx_bps == 1500 * 8
    assert v.totals.rx_bytes == 1500


def test_64bit_wrap_is_corrected():
    tr = RateTracker()
    tr.update(sample(0.0, eth0=rx(2**64 - 10, bits=64)))
    (v,) = tr.update(sample(1.0, eth0=rx(90, bits=64)))
    assert v.rates.rx_bps == 100 * 8


def test_declared_64bit_counter_going_back_is_a_reset_not_a_32bit_wrap():
    tr = RateTracker()
    tr.update(sample(0.0, eth0=rx(5_000_000, bits=64)))
    (v,) = tr.update(sample(1.0, eth0=rx(4_000_000, bits=64)))
    assert v.rates.rx_bps is None


def test_reset_gives_unknown_never_negative_or_spike():
    tr = RateTracker()
    tr.update(sample(0.0, eth0=rx(9_000_000_000_000)))  # beyond 32 bits: cannot be a 32-bit wrap
    (v,) = tr.update(sample(1.0, eth0=rx(1200)))  # the driver was reloaded
    assert v.rates.rx_bps is None
    (v,) = tr.update(sample(2.0, eth0=rx(2200)))  # next tick is normal again
    assert v.rates.rx_bps == 8000


def test_wrap_that_the_link_could_not_carry_is_a_reset():
    # 32-bit counter going from 3.0e9 to 1.0e9 on a 1G link in 1 s would mean 2.29 GB moved:
    # impossible at 125 MB/s (even with margin), so it is a reset.
    tr = RateTracker()
    tr.update(sample(0.0, eth0=rx(3_000_000_000)))
    (v,) = tr.update(sample(1.0, eth0=rx(1_000_000_000)))
    assert v.rates.rx_bps is None


def test_impossible_positive_jump_is_unknown():
    tr = RateTracker()
    tr.update(sample(0.0, eth0=rx(0)))
    (v,) = tr.update(sample(1.0, eth0=rx(10**12)))  # 8 Tb/s on a 1G port
    assert v.rates.rx_bps is None
    assert v.totals.rx_bytes == 0


def test_interface_gone_and_back_starts_over_without_spike():
    tr = RateTracker()
    tr.update(sample(0.0, eth0=rx(0), veth1=rx(5_000)))
    tr.update(sample(1.0, eth0=rx(100), veth1=rx(6_000)))
    views = tr.update(sample(2.0, eth0=rx(200)))
    assert [v.iface.name for v in views] == ["eth0"]
    views = {v.iface.name: v for v in tr.update(sample(3.0, eth0=rx(300), veth1=rx(10)))}
    assert views["veth1"].rates.rx_bps is None  # a new life: no rate on its first tick
    assert views["veth1"].totals.rx_bytes == 0
    assert views["eth0"].rates.rx_bps == 800


def test_clock_not_advancing_gives_no_rate_and_keeps_previous():
    tr = RateTracker()
    tr.update(sample(5.0, eth0=rx(0)))
    (v,) = tr.update(sample(5.0, eth0=rx(1000)))
    assert v.rates.rx_bps is None
    (v,) = tr.update(sample(6.0, eth0=rx(2000)))
    assert v.rates.rx_bps == 2000 * 8  # measured from the kept sample at t=5


def test_clock_going_back_is_a_reboot():
    tr = RateTracker()
    tr.update(sample(500.0, eth0=rx(10**9)))
    (v,) = tr.update(sample(3.0, eth0=rx(100)))
    assert v.rates.rx_bps is None
    (v,) = tr.update(sample(4.0, eth0=rx(1100)))
    assert v.rates.rx_bps == 8000


def test_missing_counter_is_unknown_not_zero():
    tr = RateTracker()
    tr.update(sample(0.0, eth0=Counters(rx_bytes=0, tx_bytes=None)))
    (v,) = tr.update(sample(1.0, eth0=Counters(rx_bytes=10, tx_bytes=None)))
    assert v.rates.rx_bps == 80
    assert v.rates.tx_bps is None and v.rates.rx_pps is None
    assert v.util_pct is None


def test_half_duplex_utilisation_sums_directions():
    half = Interface(name="eth0", speed_mbps=100, duplex="half")
    tr = RateTracker()
    tr.update(HostSample(0.0, {"eth0": half}, {"eth0": rx(0, tx=0)}))
    (v,) = tr.update(HostSample(1.0, {"eth0": half}, {"eth0": rx(2_500_000, tx=2_500_000)}))
    assert v.util_pct == 40.0


def test_counter_delta_edges():
    assert counter_delta(10, 10, None, 1e9) == 0
    assert counter_delta(2**32 - 1, 0, 32, 1e9) == 1
    assert counter_delta(5, 3, 32, 1.0) is None


def test_reset_of_a_virtual_interface_is_not_a_32bit_wrap():
    # a veth recreated within one tick: its counter goes from 1e9 back to 100; its speed is
    # unknown and so is the counter width, so nothing bounds a "wrap" — it is a reset
    veth = Interface(name="veth0", kind="virtual")
    tr = RateTracker()
    tr.update(HostSample(0.0, {"veth0": veth}, {"veth0": rx(1_000_000_000)}))
    (v,) = tr.update(HostSample(1.0, {"veth0": veth}, {"veth0": rx(100)}))
    assert v.rates.rx_bps is None
    # with a known width the same fall is a wrap
    tr = RateTracker()
    tr.update(HostSample(0.0, {"veth0": veth}, {"veth0": rx(2**32 - 100, bits=32)}))
    (v,) = tr.update(HostSample(1.0, {"veth0": veth}, {"veth0": rx(100, bits=32)}))
    assert v.rates.rx_bps == 1600


def test_reset_on_a_10g_link_is_not_taken_for_a_wrap():
    ten = Interface(name="eth0", kind="physical", oper="up", speed_mbps=10000, duplex="full")
    tr = RateTracker()
    tr.update(HostSample(0.0, {"eth0": ten}, {"eth0": rx(1_000_000_000)}))
    (v,) = tr.update(HostSample(1.0, {"eth0": ten}, {"eth0": rx(100)}))
    assert v.rates.rx_bps is None  # a 3.3 GB "wrap" in 1 s is beyond 10 Gb/s


def test_field_delta_and_bits_per_second_used_by_tests_and_findings():
    from linkdeck.core.rates import bits_per_second, field_delta, frame_counter_delta

    before, after = Counters(rx_bytes=2**32 - 10, bits=32), Counters(rx_bytes=90, bits=32)
    assert field_delta(before, after, "rx_bytes", 1.0) == 100  # a 32-bit wrap across the window
    assert field_delta(Counters(rx_bytes=5), Counters(rx_bytes=None), "rx_bytes", 1.0) is None
    assert bits_per_second(125_000_000, 1.0) == 1e9 and bits_per_second(None, 1.0) is None
    # a driver counter of unknown width that went back on a link of unknown speed: a reset
    assert frame_counter_delta(1_000_000, 10, 1.0, None) is None
    assert frame_counter_delta(10, 510, 1.0, 1000) == 500


# Each counter and the rate it gives, in Rates' field order (the tracker builds Rates by position).
RATE_OF = {
    "rx_bytes": "rx_bps", "tx_bytes": "tx_bps", "rx_packets": "rx_pps", "tx_packets": "tx_pps",
    "rx_errors": "rx_errors_ps", "tx_errors": "tx_errors_ps", "rx_drops": "rx_drops_ps", "tx_drops": "tx_drops_ps",
}  # fmt: skip


def test_every_counter_gives_its_own_rate_as_field_delta_reckons_it():
    """The tracker's one pass over a sample's counters gives, field by field, what
    ``field_delta`` (each rule alone) gives: plain rises, a 32-bit wrap, a reset, a jump the
    link could not carry, a counter that goes missing and comes back, an idle interface; and
    the totals sum the believable rises only."""
    assert list(RATE_OF) == list(COUNTER_FIELDS) and list(RATE_OF.values()) == [f.name for f in fields(Rates)]
    seq = [
        Counters(1_000, 2_000, 30, 40, 0, 1, 2, 3),
        Counters(1_000 + 10**8, 2_500, 90, 2**32 - 10, 5, 1, 4, 3),
        Counters(1_000 + 2 * 10**8, 3_000, 150, 20, 1, 2, 4, None),  # tx_packets wraps at 32 bits, rx_errors resets
        Counters(1_000 + 2 * 10**8 + 10**12, 3_100, 150, 25, 3, 2, 9, 7),  # rx_bytes jumps past 1 Gb/s
        Counters(1_000 + 3 * 10**8, 3_200, 160, 30, 4, 2, 9, 8),
        Counters(1_000 + 3 * 10**8, 3_200, 160, 30, 4, 2, 9, 8),  # idle: every rate 0.0
        Counters(1_000 + 3 * 10**8, 3_200, 160, 30, 4, 2, 9, None),  # idle but one counter unknown
    ]
    tr, totals = RateTracker(), dict.fromkeys(COUNTER_FIELDS, 0)
    for k, c in enumerate(seq):
        (v,) = tr.update(HostSample(time=2.0 * k, interfaces={"eth0": GIG}, counters={"eth0": c}))
        for f in COUNTER_FIELDS:
            d = field_delta(seq[k - 1], c, f, 2.0, 1000) if k else None
            totals[f] += d or 0
            assert getattr(v.rates, RATE_OF[f]) == (
                None if d is None else d / 2.0 * 8 if f.endswith("bytes") else d / 2.0
            ), (k, f)
        assert v.totals == Counters(**totals), k
    # the jump to 2**32 - 10 packets is no rise, its wrap to 20 is; the reset, the missing
    # counter and the terabyte count nothing
    assert (totals["rx_bytes"], totals["tx_packets"], totals["rx_errors"], totals["tx_drops"]) == (2 * 10**8, 40, 8, 1)


def test_a_stream_of_the_same_objects_gives_the_views_of_fresh_ones():
    """The tracker works out again only the interfaces whose counters or facts are not the
    objects it saw last time (and those not idle then); fed the same random stream as fresh
    copies every sample it works out every one: the views are equal. The stream (constructed)
    has idle and moving links, counters that are equal but new, unknown or missing, resets,
    links that come, go, change facts or change places, a clock that stalls or goes back."""
    import operator
    import random
    from dataclasses import replace

    rng = random.Random(20)
    ifaces = {f"veth{i}": Interface(name=f"veth{i}", speed_mbps=rng.choice((None, 10000))) for i in range(30)}
    counters: dict[str, Counters | None] = {n: rx(0) for n in ifaces}
    same, fresh = RateTracker(), RateTracker()
    now, kept = 100.0, 0
    last: tuple = ()
    for _ in range(600):
        now += rng.choice((1.0, 1.0, 1.0, 1.0, 0.5, 0.0, -50.0)) if rng.random() < 0.1 else 1.0
        for name in rng.sample(sorted(counters), 3):
            c = counters[name]
            odd = rng.random()
            if c is None or odd < 0.1:
                counters[name] = rx(rng.randrange(10**6))  # a reset, or known again
            elif odd < 0.2:
                counters[name] = replace(c)  # the same numbers, a new object
            elif odd < 0.25:
                counters[name] = replace(c, tx_drops=None)
            elif odd < 0.3:
                counters[name] = None  # the sample has none for it
            else:
                counters[name] = replace(
                    c, rx_bytes=(c.rx_bytes or 0) + rng.randrange(10**5), rx_packets=(c.rx_packets or 0) + 3
                )
        odd = rng.random()
        if odd < 0.05:
            name = rng.choice(sorted(ifaces))
            ifaces[name] = replace(ifaces[name], speed_mbps=rng.choice((None, 100, 10000)))  # facts change
        elif odd < 0.08 and len(ifaces) > 2:
            gone = rng.choice(sorted(ifaces))
            del ifaces[gone], counters[gone]
        elif odd < 0.11:
            name = f"cali{rng.randrange(100)}"
            ifaces.setdefault(name, Interface(name=name))
            counters.setdefault(name, rx(5))
        elif odd < 0.13:
            items = list(ifaces.items())
            rng.shuffle(items)
            ifaces = dict(items)  # the same links in another order
        present = {n: c for n, c in counters.items() if c is not None}
        views = same.update(HostSample(time=now, interfaces=dict(ifaces), counters=present))
        copies = HostSample(
            time=now,
            interfaces={n: replace(i) for n, i in ifaces.items()},
            counters={n: replace(c) for n, c in present.items()},
        )
        assert views == fresh.update(copies)
        # each view shows the facts it was given now, in the sample's order
        assert [v.iface for v in views] == list(ifaces.values()) and all(
            map(operator.is_, (v.iface for v in views), ifaces.values())
        )
        kept += sum(a is b for a, b in zip(last, views))
        last = views
    assert kept > 600 * 12  # most views were kept, not made again


def test_the_totals_kept_and_the_views_numbers_are_left_to_reference_counting():
    """The totals the tracker keeps for each interface and the numbers of the views it makes
    are plain tuples the cyclic collector stops tracking (10,000 hosts keep 80,000 of each
    alive, and every full collection walks every tracked object), through a first tick, a busy
    one, an idle one (the shared all-zero rates) and a stalled clock."""
    tr = RateTracker()
    views = []
    for t, c in (
        (0.0, Counters(1_000, 2_000, 10, 20, 0, 0, 0, 0)),
        (1.0, Counters(3_000, 2_000, 12, 20, 0, 0, 0, 0)),
        (2.0, Counters(3_000, 2_000, 12, 20, 0, 0, 0, 0)),
        (2.0, Counters(3_000, 2_000, 12, 20, 0, 0, 0, 0)),
    ):
        (view,) = tr.update(HostSample(time=t, interfaces={"eth0": GIG}, counters={"eth0": c}))
        views.append(view)
    assert [v.rates.rx_bps for v in views] == [None, 16_000.0, 0.0, None] and views[2].rates == Rates(*(0.0,) * 8)
    assert views[3].totals == Counters(2_000, 0, 2, 0, 0, 0, 0, 0)
    gc.collect()
    gc.collect()  # a tuple is untracked once the tuples in it are: the first pass may see it first
    assert not any(gc.is_tracked(kept) for kept in tr._prev.values())  # the totals are in each
    assert all([o for o in gc.get_referents(v) if gc.is_tracked(o) and not isinstance(o, type)] == [GIG] for v in views)


def tracked_held(*trackers, handed_out=()):
    """The objects the cyclic collector tracks that ``trackers`` hold, but for the trackers
    themselves, classes, and what they handed out (the caller keeps the views: HostUpdate)."""
    skip = {id(o) for o in handed_out}
    seen, found = set(skip), []
    todo = [o for t in trackers for o in vars(t).values()]
    while todo:
        o = todo.pop()
        if id(o) in seen or isinstance(o, type):
            continue
        seen.add(id(o))
        if gc.is_tracked(o):
            found.append(o)
        todo += gc.get_referents(o)
    return found


def test_a_prometheus_hosts_trackers_keep_nothing_the_collector_tracks_per_interface():
    """The Prometheus source makes new Counters (and TcpCounters) every sample and keeps the
    Interface objects while the facts stand. After a few samples, busy links and idle ones,
    what the trackers keep is numbers the cyclic collector stops tracking: the same for a host
    of 80 interfaces as for one of 8 (issue 20 §3: a slots _Prev and the sample's Counters per
    interface were 160,000 tracked objects at 10,000 hosts × 8), and the rates are those of
    field_delta."""
    from linkdeck.core.rates import TcpTracker
    from linkdeck.core.tcpstats import TcpCounters

    def held_after(links: int) -> tuple[list, tuple]:
        ifaces = {f"eth{i}": Interface(name=f"eth{i}", speed_mbps=10000) for i in range(links)}
        tracker, tcp = RateTracker(), TcpTracker()
        views: tuple = ()
        for t in range(6):
            # the odd links move, the even ones stay idle: new objects either way
            fresh = {
                n: Counters(10**6 + t * 1000 * (i % 2), 5000, 10 + t * (i % 2), 7, 0, 0, 0, 0, bits=64)
                for i, n in enumerate(ifaces)
            }
            views = tracker.update(HostSample(time=100.0 + 15 * t, interfaces=ifaces, counters=fresh))
            tcp.update(100.0 + 15 * t, TcpCounters(out_segs=1000 + t, retrans_segs=1))
        gc.collect()
        gc.collect()  # a tuple is untracked once the tuples in it are: the first pass may see it first
        return tracked_held(tracker, tcp, handed_out=(views, *views)), views

    few, _ = held_after(8)
    many, views = held_after(80)
    assert len(many) == len(few) <= 2, [type(o).__name__ for o in many]
    assert [v.rates.rx_bps for v in views[:2]] == [0.0, 1000 * 8 / 15]
    assert views[1].totals.rx_bytes == 5 * 1000 and views[1].rates.rx_pps == 1 / 15


def test_a_source_that_hands_the_same_counters_has_them_skipped_by_identity(monkeypatch):
    """The Linux tick reader hands out the same Counters object for a row that did not change:
    those are not read again (a 602-link node's idle veths cost nothing), while a source that
    makes new ones every sample stops having them kept, and is looked at again now and then
    (a host whose first samples were all read whole still finds the fast way)."""
    from linkdeck.core import rates

    read = []
    reading = rates._READING
    monkeypatch.setattr(rates, "_READING", lambda c: read.append(c) or reading(c))
    ifaces = {f"veth{i}": Interface(name=f"veth{i}") for i in range(50)}
    same = {n: rx(100) for n in ifaces}
    tracker = RateTracker()

    def update(t: float, counters: dict) -> int:
        read.clear()
        tracker.update(HostSample(time=t, interfaces=ifaces, counters=counters))
        return len(read)

    assert update(1.0, dict(same)) == 50  # the first sample: every link is new
    assert update(2.0, dict(same)) == 50  # each still had the first view's no-rates
    same["veth7"] = rx(900)  # one link moves, then stays: read as it moves and once idle again
    assert [update(float(t), dict(same)) for t in range(3, 10)] == [1, 1, 0, 0, 0, 0, 0]
    for t in range(10, 10 + 2 + rates._PROBE_EVERY):  # new objects every sample: all read
        assert update(float(t), {n: rx(100) for n in ifaces}) == 50
        if t >= 12:
            assert tracker._held is None or tracker._updates % rates._PROBE_EVERY == 0
    for t in range(100, 100 + rates._PROBE_EVERY + 1):  # the same objects again: found by a probe
        update(float(t), dict(same))
    assert tracker._held is not None and update(200.0, dict(same)) == 0


def test_an_unchanged_sample_gives_the_same_view_objects_and_the_same_tuple():
    """A host whose lines did not change since the last tick hands on the very views it did
    then, in the very tuple (readers tell an unchanged host by identity); a veth that moves
    among 600 idle ones shows its rate at the next sample, drops to 0 once it is idle again,
    then keeps that view."""
    ifaces = {f"veth{i}": Interface(name=f"veth{i}", speed_mbps=10000) for i in range(600)}
    counters = {n: rx(100) for n in ifaces}
    tracker = RateTracker()
    tracker.update(HostSample(time=1.0, interfaces=ifaces, counters=dict(counters)))
    first = tracker.update(HostSample(time=2.0, interfaces=ifaces, counters=dict(counters)))
    again = tracker.update(HostSample(time=3.0, interfaces=ifaces, counters=dict(counters)))
    assert again is first and all(v.rates.rx_bps == 0.0 for v in again)
    counters["veth321"] = rx(100 + 125_000)  # 1 Mb/s over the next second
    moved = tracker.update(HostSample(time=4.0, interfaces=ifaces, counters=dict(counters)))
    assert moved is not first and moved[321].rates.rx_bps == 1e6
    assert sum(a is not b for a, b in zip(first, moved)) == 1  # the 599 others kept their views
    idle = tracker.update(HostSample(time=5.0, interfaces=ifaces, counters=dict(counters)))
    assert idle[321].rates.rx_bps == 0.0 and idle is not moved  # the rate drops once
    assert tracker.update(HostSample(time=6.0, interfaces=ifaces, counters=dict(counters))) is idle
