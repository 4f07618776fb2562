"""Backlog benchmark: a dashboard whose event loop is busy while its hosts keep sending.

    python3 bench/bench_backlog.py [--hosts 20] [--ticks 60] [--interfaces 100] [--smoke]

``--smoke`` (the test suite's): 3 hosts × 4 ticks of 5 interfaces, to prove it still runs.

The dashboard runs headless; every host's ticks arrive (constructed updates, every interface's
rates new each tick) while its loop gets no turn, as when a slow pass holds it. Two ways in, in
one run: each update its own message (how updates came in before ui/state/inbox.py: Textual merged
nothing across interleaved hosts) and the Inbox (a host's waiting update replaced, the replaced
one booked at once). Printed: the messages waiting, the memory held while they wait
(tracemalloc: the updates queued, and for the Inbox what the replaced ones booked into the
graphs and the findings' windows, which both ways keep once applied), and, in a run of its own
without tracemalloc, the CPU from the first update to the newest on screen.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import tracemalloc

from linkdeck.core.model import Counters, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.fleet.collector import Fleet
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.messages import HostUpdated


def tick(host: str, t: int, n: int) -> HostUpdate:
    views = tuple(
        InterfaceView(
            Interface(name=f"eth{i}", kind="physical", oper="up", mtu=1500, speed_mbps=10000, duplex="full"),
            Rates(1e6 * (t + i), 2e5, 100.0 + t, 20.0, 0.0, 0.0, 0.0, 0.0),
            Counters(),
        )
        for i in range(n)
    )
    return HostUpdate(host=host, os="linux", state=HostState.LIVE, time=1000.0 + t, interfaces=views)


async def run(how: str, hosts: int, ticks: int, n: int, trace: bool) -> tuple[int, float, float]:
    """(messages waiting, MB held while they wait (``trace``), CPU seconds until the newest is
    shown (without ``trace``: tracemalloc slows what runs under it))."""
    names = [f"h{i}" for i in range(hosts)]
    sinks: list = []

    def fleet(sink) -> Fleet:
        sinks.append(sink)
        return Fleet([], Settings(), sink)

    app = LinkdeckApp(Settings(interval=1.0), [HostSpec(h, address=f"{h}.invalid") for h in names], fleet_factory=fleet)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        post = sinks[0] if how == "inbox" else (lambda u: app.post_message(HostUpdated(u)))
        before = app.message_queue_size
        if trace:
            tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        cpu = time.process_time()
        for t in range(ticks):  # no await: the loop gets no turn while they arrive
            for h in names:
                post(tick(h, t, n))
        waiting = app.message_queue_size - before
        held = (tracemalloc.get_traced_memory()[0] - base) / 1e6
        if trace:
            tracemalloc.stop()
        last = 1000.0 + ticks - 1
        while not all(app.updates[h].time == last for h in names):
            await asyncio.sleep(0)
        cpu = time.process_time() - cpu
        await pilot.pause()
    return waiting, held, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--ticks", type=int, default=60)
    parser.add_argument("--interfaces", type=int, default=100)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: does it still run")
    args = parser.parse_args()
    if args.smoke:
        args.hosts, args.ticks, args.interfaces = 3, 4, 5
    print(f"{args.hosts} hosts × {args.ticks} ticks of {args.interfaces} interfaces, the loop busy while they arrive:")
    got = {}
    for how, label in (("message", "one message per update (before)"), ("inbox", "inbox (a waiting update replaced)")):
        waiting, held, _ = asyncio.run(run(how, args.hosts, args.ticks, args.interfaces, trace=True))
        _, _, cpu = asyncio.run(run(how, args.hosts, args.ticks, args.interfaces, trace=False))
        got[how] = waiting, held, cpu
        print(f"  {label:<36} {waiting:>6} waiting  {held:8.2f} MB held  {cpu:6.2f} s CPU to the newest")
    (w0, h0, c0), (w1, h1, c1) = got["message"], got["inbox"]
    print(
        f"inbox / before: waiting x{w1 / max(w0, 1):.3f}, held x{h1 / max(h0, 1e-9):.3f}, CPU x{c1 / max(c0, 1e-9):.2f}"
    )


if __name__ == "__main__":
    main()
