"""transport.base.Ticker: the client's clock for a streamed sampler (issue 20 §1). One tick per
slot, only once the last was answered and its write is done; a late slot sends one tick and
the schedule goes on from the next slot ahead, never a burst of the ones missed."""

from __future__ import annotations

import asyncio
import time

from linkdeck.transport.runner import Ticker


class Host:
    """A sampler that answers every tick at once (or not, when told), and a write that is in
    flight until released (or not)."""

    def __init__(self) -> None:
        self.sent: list[float] = []
        self.answers = True
        self.in_flight = False
        self.ticker: Ticker | None = None

    def send(self) -> bool:
        if self.in_flight:
            return False
        self.sent.append(time.monotonic())
        if self.answers:
            asyncio.get_running_loop().call_soon(self.answer)
        return True

    def answer(self) -> None:
        assert self.ticker is not None
        self.ticker.heard = True


async def _ticking(host: Host, interval: float) -> Ticker:
    host.ticker = Ticker(interval, host.send)
    host.ticker.heard = True  # the first frame, sent unasked
    return host.ticker


async def test_one_tick_a_slot_on_the_schedule():
    host = Host()
    ticker = await _ticking(host, 0.05)
    await asyncio.sleep(0.53)
    ticker.stop()
    assert 7 <= len(host.sent) <= 11, host.sent  # ten slots in 0.53 s


async def test_a_late_slot_sends_one_tick_and_the_schedule_goes_on_without_a_burst():
    host = Host()
    ticker = await _ticking(host, 0.05)
    await asyncio.sleep(0.12)  # two ticks
    time.sleep(0.5)  # the event loop busy for ten slots
    before = len(host.sent)
    resumed = time.monotonic()
    await asyncio.sleep(0.12)
    ticker.stop()
    after = host.sent[before:]
    # one tick at once for the missed slots, then the schedule's (about two in 0.12 s), not ten
    assert 1 <= len(after) <= 4 and after[0] - resumed < 0.1, (after, resumed)


async def test_a_host_that_has_not_answered_or_a_write_in_flight_gets_no_new_tick():
    host = Host()
    ticker = await _ticking(host, 0.05)
    host.answers = False  # slower than its interval
    await asyncio.sleep(0.33)
    assert len(host.sent) == 1  # the first tick, unanswered: no queue of ticks behind it
    host.in_flight = True  # answered now, but the last write has not gone out
    ticker.heard = True
    await asyncio.sleep(0.2)
    assert len(host.sent) == 1
    host.in_flight = False  # the channel took it: ticks again, one a slot
    host.answers = True
    await asyncio.sleep(0.22)
    ticker.stop()
    assert 4 <= len(host.sent) <= 6, host.sent
    count = len(host.sent)
    await asyncio.sleep(0.12)
    assert len(host.sent) == count  # stopped


async def test_hosts_of_one_interval_are_asked_in_the_same_slot_by_one_timer():
    loop = asyncio.get_running_loop()
    timers_before = len(loop._scheduled)  # type: ignore[attr-defined]
    hosts = [Host() for _ in range(5)]
    tickers = []
    for host in hosts:
        tickers.append(await _ticking(host, 0.1))
        await asyncio.sleep(0.013)  # each starts at its own moment
    assert len(loop._scheduled) == timers_before + 1  # type: ignore[attr-defined]
    await asyncio.sleep(0.45)
    for ticker in tickers:
        ticker.stop()
    assert all(len(h.sent) >= 3 for h in hosts), [h.sent for h in hosts]
    # the same slots: every host's ticks land within a few ms of the first host's
    slots = hosts[0].sent
    for host in hosts[1:]:
        assert all(min(abs(t - s) for s in slots) < 0.01 for t in host.sent), (host.sent, slots)
    assert all(h.cancelled() for h in loop._scheduled[timers_before:]), "the clock outlived its last ticker"  # type: ignore[attr-defined]


async def test_a_host_joining_just_before_a_slot_waits_for_the_next_one():
    early, late = Host(), Host()
    first = await _ticking(early, 0.2)
    await asyncio.sleep(0.17)  # the shared slot is 0.03 s away: too soon after late's first frame
    joined = time.monotonic()
    second = await _ticking(late, 0.2)
    await asyncio.sleep(0.3)
    first.stop()
    second.stop()
    assert late.sent and late.sent[0] - joined > 0.1, (late.sent, joined)
    assert len(early.sent) >= 2
