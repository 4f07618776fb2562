"""One rebuild per burst of hosts answering a tick (LinkdeckApp._gather_rebuild): new numbers
wait a moment for the other hosts' answers; a host coming up, going down or showing a new
interface is on screen at once. Updates are constructed and fed to the real app."""

from __future__ import annotations

from dataclasses import replace

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.messages import HostUpdated
from linkdeck.ui.state.rows import same_rows
from tests.lab import wait_for
from tests.synthetic import opener_for
from tests.ui.test_ui_many import iface_view

HOSTS = ("a", "b", "c")


def live(host: str, time: float, rx: float, names=("eth0", "eth1")) -> HostUpdate:
    views = tuple(iface_view(n, rx, kind="physical", speed_mbps=1000) for n in names)
    return HostUpdate(host=host, os="linux", state=HostState.LIVE, time=time, interfaces=views)


def app_of(hosts=HOSTS) -> LinkdeckApp:
    return LinkdeckApp(
        Settings(interval=1.0, local=False, fold_idle=False),
        [HostSpec(h, address=f"{h}.invalid") for h in hosts],
        opener=opener_for({}),
    )


def row_of(app: LinkdeckApp, host: str, name: str) -> str:
    for i, row in enumerate(app.table.rows):
        if row.view is not None and row.host == host and row.view.iface.name == name:
            return app.table.row_text(i)
    return ""


async def applied(app: LinkdeckApp, update: HostUpdate) -> None:
    app.post_message(HostUpdated(update))
    await wait_for(lambda: app.updates[update.host] is update, 10.0, interval=0.001, message="update applied")


def test_same_rows_is_the_same_state_os_and_interface_names_in_order():
    before = live("a", 1.0, 1e6)
    assert same_rows(before, live("a", 2.0, 5e6))
    assert not same_rows(None, before)
    assert not same_rows(before, replace(before, state=HostState.UNREACHABLE))
    assert not same_rows(before, replace(before, os="freebsd"))
    assert not same_rows(before, live("a", 2.0, 1e6, names=("eth0", "eth1", "eth2")))
    assert not same_rows(before, live("a", 2.0, 1e6, names=("eth1", "eth0")))
    assert not same_rows(before, live("a", 2.0, 1e6, names=("eth0", "eth9")))


async def test_new_numbers_from_hosts_answering_one_tick_are_one_rebuild():
    app = app_of()
    async with app.run_test(size=(160, 40)) as pilot:
        for host in HOSTS:
            await applied(app, live(host, 1.0, 1e6))
        await wait_for(lambda: not app.rows_behind and all(row_of(app, h, "eth1") for h in HOSTS), 10.0)
        await pilot.pause()
        app.gather_s = 1.0  # far longer than the three answers below take to arrive here
        rebuilds, gathered = app.rebuilds, app.gathered
        for host in HOSTS:  # each in its own turns of the event loop, as a slot's answers come
            await applied(app, live(host, 2.0, 123e6))
            await pilot.pause()
        await wait_for(lambda: all("123 Mb/s" in row_of(app, h, "eth0") for h in HOSTS), 10.0, message="the numbers")
        assert (app.rebuilds - rebuilds, app.gathered - gathered) == (1, 1)


async def test_rows_that_appear_or_change_state_do_not_wait():
    app = app_of()
    async with app.run_test(size=(160, 40)):
        app.gather_s = 3600.0  # a rebuild that waited for it would never be seen here
        await applied(app, live("a", 1.0, 1e6))
        await wait_for(lambda: row_of(app, "a", "eth1"), 10.0, message="the first host's rows")
        await applied(app, live("a", 2.0, 77e6))  # only numbers: they wait …
        await applied(app, live("b", 1.0, 1e6))  # … until a host's rows come, which shows both
        await wait_for(lambda: row_of(app, "b", "eth0"), 10.0, message="the second host's rows")
        assert "77.0 Mb/s" in row_of(app, "a", "eth0")
        assert not app.rows_behind and app.gathered == 0
        await applied(app, live("b", 2.0, 1e6, names=("eth0", "eth1", "eth7")))
        await wait_for(lambda: row_of(app, "b", "eth7"), 10.0, message="a new interface")
        await applied(app, HostUpdate(host="a", os="linux", state=HostState.UNREACHABLE, error="gone"))
        await wait_for(lambda: not row_of(app, "a", "eth0"), 10.0, message="the host gone down")
        assert app.gathered == 0
