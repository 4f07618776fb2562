"""A dashboard that falls behind its hosts (issue 20): Textual merges a message only with the one
right behind it, so interleaved hosts' updates all waited in its queue. Now a host's waiting
update is replaced by its newer one (ui/state/inbox.py), and what needs every sample — the graphs,
the idle counts, the findings' windows — still gets every one. Constructed updates: the
numbers must be exact."""

from __future__ import annotations

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.fleet.collector import Fleet
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.ui.app import LinkdeckApp
from tests.builders import iface, view
from tests.lab import until

HOSTS = [f"h{i}" for i in range(4)]
TICKS = 50
BURST = range(40, 43)  # three ticks of 40 receive errors/s: 4/s over the 30 s window
WAKE = 45  # the one tick veth1 carries anything


def rates(rx: float, errors: float = 0.0) -> dict[str, float]:
    return dict(
        rx_bps=rx,
        tx_bps=0.0,
        rx_pps=rx / 720,
        tx_pps=0.0,
        rx_errors_ps=errors,
        tx_errors_ps=0.0,
        rx_drops_ps=0.0,
        tx_drops_ps=0.0,
    )


def tick(host: str, t: int) -> HostUpdate:
    eth0 = view(iface("eth0"), **rates(1e6 * (t + 1), errors=40.0 if t in BURST else 0.0))
    veth1 = view(iface("veth1", kind="veth", speed_mbps=None, duplex=None), **rates(720e3 if t == WAKE else 0.0))
    return HostUpdate(host=host, os="linux", state=HostState.LIVE, time=1000.0 + t, interfaces=(eth0, veth1))


def app_and_sink() -> tuple[LinkdeckApp, list]:
    sinks: list = []

    def fleet(sink) -> Fleet:  # the hosts' updates come from the test, through the app's own sink
        sinks.append(sink)
        return Fleet([], Settings(), sink)

    return LinkdeckApp(
        Settings(interval=1.0), [HostSpec(h, address=f"{h}.invalid") for h in HOSTS], fleet_factory=fleet
    ), sinks


async def test_a_dashboard_behind_its_hosts_waits_on_one_update_per_host_and_keeps_every_sample():
    app, sinks = app_and_sink()
    async with app.run_test(size=(200, 60)) as pilot:
        await until(lambda: sinks, "the fleet")
        await pilot.pause()
        before = app.message_queue_size
        # Every host's ticks, interleaved as the collector's tasks post them, with the app's loop
        # never getting a turn (no await): the queue is what a blocked dashboard accumulates.
        most = 0
        for t in range(TICKS):
            for host in HOSTS:
                sinks[0](tick(host, t))
            most = max(most, app.message_queue_size - before)
        assert most <= len(HOSTS)  # was TICKS × hosts = 200
        assert app.inbox.merged == (TICKS - 1) * len(HOSTS)
        await until(lambda: all(app.updates[h].time == 1000.0 + TICKS - 1 for h in HOSTS), "the newest updates")
        await pilot.pause()
        assert len(app.inbox) == 0
        app.passes.now_due()  # judge now, not on the 2 s cadence
        app._rebuild()
        for host in HOSTS:
            # the newest is shown
            row = next(i for i, r in enumerate(app.table.rows) if r.key == ("iface", host, "eth0"))
            assert "50.0 Mb/s" in app.table.row_text(row)
            # every sample reached the graphs, in order
            assert app.history.get(host, "eth0")[0] == tuple(1e6 * (t + 1) for t in range(TICKS))
            # veth1's one busy tick was counted: not idle until 10 quiet samples after it
            assert "veth1" not in app.activity.idle(host)
            # the error burst of three ticks long replaced reached the findings' window
            assert [(f.code, f.interface) for f in app.findings if f.host == host] == [("ERRORS_RISING", "eth0")]


async def test_a_rewind_drops_the_updates_of_the_old_timeline_still_waiting():
    app, sinks = app_and_sink()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: sinks, "the fleet")
        await pilot.pause()
        for t in range(3):
            sinks[0](tick("h0", t))
        app.reset()  # a replay's jump, before the app took the waiting update
        sinks[0](tick("h1", 7))
        await until(lambda: app.updates["h1"].time == 1007.0, "the update after the rewind")
        await pilot.pause()
        assert app.updates["h0"].state is HostState.CONNECTING and app.history.get("h0", "eth0") == ((), ())
