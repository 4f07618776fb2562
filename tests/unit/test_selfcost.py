"""linkdeck's own cost (selfcost.py), the collector kept out of the big passes (fleetstate.py),
and what a sampler says of its own: real numbers from this process, this machine's sh, and
`linkdeck snapshot --json`."""

from __future__ import annotations

import gc
import json
import subprocess
import threading
import time

import pytest

from linkdeck.core.fleetstate import collect_young, gc_paused
from linkdeck.core.selfcost import SelfCost
from linkdeck.parsers.numbers import shell_times
from linkdeck.parsers.parse_error import ParseError
from tests.cli import linkdeck


def test_self_cost_sees_a_busy_loop_and_an_idle_wait() -> None:
    cost = SelfCost()
    cost.read()
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        pass
    busy, rss = cost.read()
    time.sleep(0.5)
    idle, _ = cost.read()
    # the machine may be busy with other work: the loop gets most of a core, the wait nearly none
    assert 25 < busy <= 110 and idle < busy / 3
    assert 10 < rss < 2000


def test_shell_times_reads_this_machines_sh() -> None:
    out = subprocess.run(
        ["sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; times"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert 0.001 < shell_times(out) < 30, out
    assert shell_times("0m1.500000s 0m0.250000s\n1m0.000000s 0m0.000000s\n") == pytest.approx(61.75)
    with pytest.raises(ParseError):
        shell_times("user 0.01 sys 0.02")


def test_snapshot_json_says_what_linkdeck_and_collection_cost() -> None:
    out = linkdeck("snapshot", "--json", "--interval", "0.3")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert 0 < doc["self"]["cpu_pct"] < 400 and 10 < doc["self"]["rss_mb"] < 2000
    (host,) = doc["hosts"]
    # this machine's own reads are not a sampler's: nothing on the wire, no remote CPU
    assert host["collection"]["bytes_per_sample"] is None and host["collection"]["remote_cpu_ms_per_sample"] is None
    assert 0 <= host["collection"]["sample_age_ms"] < 5000


async def test_the_header_shows_linkdecks_own_cost(monkeypatch) -> None:
    import re

    import linkdeck.ui.app
    from linkdeck.settings.config import LOCAL, Settings
    from linkdeck.ui.app import LinkdeckApp
    from tests.lab import until

    monkeypatch.setattr(linkdeck.ui.app, "OWN_COST_EVERY_S", 0.3)
    app = LinkdeckApp(Settings(interval=0.5), [LOCAL])
    async with app.run_test(size=(200, 30)):
        await until(lambda: app.own is not None, "a first measurement")
        status = str(app.query_one("#status").render())
        match = re.search(r"linkdeck (\d+\.\d)% CPU (\d+) MB", status)
        assert match, status
        assert 10 < int(match.group(2)) < 2000


class _View:  # a tracked object, as a dashboard's view of one interface is
    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


def test_replacing_long_lived_objects_step_by_step_keeps_the_young_generation_small() -> None:
    """Freeing the old views counts against making the new ones, so the collector's own count
    never calls a collection while a refresh's new views pile up (at 10,000 Prometheus hosts
    half a million of them, one 0.4 s collection: issue 20 §3). collect_young after each step
    keeps the young generation at one step's objects."""
    steps, per_step = 40, 1000

    def largest_young_generation(collect: bool) -> int:
        kept = [_View(i) for i in range(steps * per_step)]
        gc.collect()
        largest = 0
        for step in range(steps):
            with gc_paused():
                kept[step * per_step : (step + 1) * per_step] = [_View(i) for i in range(per_step)]
            if collect:
                collect_young(step)
            largest = max(largest, len(gc.get_objects(0)))
        return largest

    assert largest_young_generation(collect=False) > 10 * per_step  # the count stayed flat
    assert largest_young_generation(collect=True) < 2 * per_step


def test_pauses_that_overlap_on_two_threads_keep_the_collector_off_until_the_last_ends() -> None:
    """The findings pass pauses the collector on a worker thread while the Prometheus
    source's steps pause it on the event loop: the pass ending first used to turn the
    collector back on in the middle of a step (each pause restored what it had found)."""
    assert gc.isenabled()
    loop_entered, pass_ended = threading.Event(), threading.Event()
    seen: list[bool] = []

    def findings_pass() -> None:
        with gc_paused():
            loop_entered.wait(5)
        pass_ended.set()

    worker = threading.Thread(target=findings_pass)
    worker.start()
    with gc_paused():
        loop_entered.set()
        pass_ended.wait(5)
        seen.append(gc.isenabled())  # the pass has ended; this step has not
    worker.join()
    assert seen == [False] and gc.isenabled()
