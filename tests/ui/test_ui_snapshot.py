"""Layout snapshots of the dashboard with five deterministic hosts (pytest-textual-snapshot), at
the sizes people run it in: 80x24 (the default terminal, half a tmux split), 120x30, 200x60;
the help screen and a test result at 80x24.

The host data is constructed (not captured): names, OS strings and numbers shaped like the
adapters' output. Regenerate after an intended layout change with
``pytest tests/ui/test_ui_snapshot.py --snapshot-update``, then look at the SVGs.
"""

from __future__ import annotations

import pytest

from linkdeck.core.model import (
    Counters,
    Finding,
    HostDetail,
    HostState,
    HostUpdate,
    Interface,
    InterfaceView,
    Rates,
    Severity,
)
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.messages import HostUpdated
from tests.lab import wait_for
from tests.synthetic import opener_for

HOSTS = ("nas01", "web1", "zone1", "edge", "db2")


def _view(name, rx, tx, errors=0.0, drops=0.0, step=59, **iface):
    iface.setdefault("oper", "up")
    # a minute of traffic with a shape, so the graphs have something to draw
    wave = (0.35, 0.5, 0.8, 1.0, 0.7, 0.45, 0.6, 0.9, 0.55, 0.4)[(step + len(name)) % 10]
    rx, tx = rx * wave, tx * (1.4 - wave)
    i = Interface(name=name, **iface)
    util = None if not i.speed_mbps else 100 * max(rx, tx) / (i.speed_mbps * 1e6)
    return InterfaceView(i, Rates(rx, tx, rx / 8000, tx / 8000, errors, 0.0, drops, 0.0), Counters(), util)


def five_hosts(step: int) -> list[HostUpdate]:
    """Constructed updates of five hosts: TrueNAS with a lagg, Debian, SmartOS, one waiting
    for its host key to be trusted, one reconnecting."""

    def _v(*args, **kwargs):
        return _view(*args, step=step, **kwargs)

    nas = HostUpdate(
        host="nas01",
        os="truenas",
        os_detail="TrueNAS-13.0-U6.1",
        state=HostState.LIVE,
        time=float(step),
        interfaces=(
            _v(
                "lagg0",
                900e6 + step * 1e6,
                400e6,
                kind="bond",
                mtu=9000,
                speed_mbps=2000,
                duplex="full",
                members=("igb0", "igb1"),
            ),
            _v("igb0", 450e6, 200e6, kind="physical", mtu=9000, speed_mbps=1000, duplex="full"),
            _v("igb1", 95e6, 20e6, kind="physical", mtu=9000, speed_mbps=100, duplex="half"),
            _v("vlan10", 12e6 * (step % 5), 3e6, kind="vlan", mtu=9000, over="lagg0", default_route=True),
            _v("lo0", 0.0, 0.0, kind="loopback", mtu=16384),
        ),
    )
    web = HostUpdate(
        host="web1",
        os="linux",
        os_detail="Debian GNU/Linux 12 (bookworm) (kernel 6.1.0-27-amd64)",
        state=HostState.LIVE,
        time=float(step),
        interfaces=(
            _v(
                "enp3s0f0",
                4.2e9,
                1.1e9,
                errors=3.0,
                kind="physical",
                mtu=1500,
                speed_mbps=10000,
                duplex="full",
                default_route=True,
            ),
            _v("enp3s0f1", 0.0, 0.0, kind="physical", oper="down", mtu=1500),
            _v("docker0", 1.5e6, 9e5, drops=0.4, kind="bridge", mtu=1500),
            _v("lo", 2e4, 2e4, kind="loopback", mtu=65536),
        ),
    )
    zone = HostUpdate(
        host="zone1",
        os="smartos",
        os_detail="SmartOS 20240912T000310Z",
        state=HostState.LIVE,
        time=float(step),
        interfaces=(
            _v("ixgbe0", 9.3e9, 2.0e9, kind="physical", mtu=9000, speed_mbps=10000, duplex="full"),
            _v("net0", 9.2e9, 1.9e9, kind="vnic", mtu=9000, over="ixgbe0", default_route=True),
        ),
    )
    return [
        nas,
        web,
        zone,
        HostUpdate(
            host="edge",
            os=None,
            state=HostState.HOST_KEY_UNKNOWN,
            detail=HostDetail(fingerprint="SHA256:Zm9vYmFyYmF6cXV4"),
        ),
        HostUpdate(
            host="db2",
            os="linux",
            state=HostState.RECONNECTING,
            error="Connection reset by peer",
            detail=HostDetail(retry_in_s=8),
        ),
    ]


FINDINGS = [
    Finding(
        "ERRORS_RISING",
        Severity.ERROR,
        "web1",
        "enp3s0f0",
        "enp3s0f0: 3.0 receive errors/s over 30 s",
        "rx_errors rose by 90 in 30 s while rx_packets rose by 9.8 million (ethtool -S: rx_crc_errors +90)",
        "Check the cable and the switch port's counters; CRC errors are usually the physical layer.",
    ),
    Finding(
        "HALF_DUPLEX",
        Severity.WARNING,
        "nas01",
        "igb1",
        "igb1 runs at half duplex",
        "ifconfig igb1: media 100baseTX <half-duplex>",
        "Set the switch port and igb1 both to autonegotiate.",
    ),
    Finding(
        "SPEED_BELOW_CAPABILITY",
        Severity.WARNING,
        "nas01",
        "igb1",
        "igb1 at 100M of 1G",
        "ifconfig -m igb1: supported media up to 1000baseT",
        "Replace the cable or the switch port.",
    ),
]


class FixedFindings:
    def __init__(self, settings, **kwargs):
        pass

    def observe(self, update):
        pass

    def findings(self):
        return list(FINDINGS)

    def since(self, finding):
        return None  # the snapshots' clock is the machine's: no "raised …" to differ run to run


def five_host_app(monkeypatch, settings: Settings | None = None) -> LinkdeckApp:
    import linkdeck.findings.engine
    import linkdeck.ui.app

    monkeypatch.setattr(linkdeck.findings.engine, "Diagnoser", FixedFindings)
    # linkdeck's own CPU and memory in the header vary run to run: keep them out of the picture
    monkeypatch.setattr(linkdeck.ui.app, "OWN_COST_EVERY_S", 3600.0)
    hosts = [HostSpec(n, address=f"{n}.invalid") for n in HOSTS]
    return LinkdeckApp(settings or Settings(), hosts, opener=opener_for({}))


# Every value the host screen's Connection section shows is set here, so it reads the same on
# every machine (no home directory, local user name or ssh-agent in it).
FIXED_SSH_CONFIG = """Host *
  User ops
  Port 2222
  IdentityFile /keys/ops
  UserKnownHostsFile /kh/known_hosts
  GlobalKnownHostsFile none
  StrictHostKeyChecking yes
  ConnectTimeout 5
"""


async def feed_five(app: LinkdeckApp, pilot, steps: int = 60) -> None:
    for step in range(steps):
        for update in five_hosts(step):
            app.post_message(HostUpdated(update))
    await wait_for(
        lambda: app.updates["nas01"].time == steps - 1 and app.updates["db2"].state is HostState.RECONNECTING,
        10.0,
        message="every update applied",
    )
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (120, 30), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_dashboard_five_hosts(snap_compare, monkeypatch, size):
    app = five_host_app(monkeypatch)

    async def run_before(pilot):
        await feed_five(app, pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_help_screen_80x24(snap_compare, monkeypatch):
    app = five_host_app(monkeypatch)

    async def run_before(pilot):
        await feed_five(app, pilot, steps=2)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_help_screen_legend_80x24(snap_compare, monkeypatch):
    app = five_host_app(monkeypatch)

    async def run_before(pilot):
        await feed_five(app, pilot, steps=2)
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.press("pagedown")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_test_result_80x24(snap_compare, monkeypatch):
    from linkdeck.ui.screens.probe_screens import TestScreen
    from linkdeck.verdict.rules import judge
    from tests.builders import end, from_iperf3

    app = five_host_app(monkeypatch)
    # a real capture (iperf3 -J bidirectional over loopback) judged as if between two 1G ends,
    # one of them at half duplex: a degraded result with a cause to read
    result = from_iperf3("iperf3/captured-bidir.json", src="web1", dst="nas01")
    ends = end("web1", speed_mbps=25000), end("nas01", speed_mbps=25000, duplex="half")
    from linkdeck.probe import Outcome

    outcome = Outcome(result, *ends, judge(result, *ends), "enp3s0f0", "igb1")

    async def run_pair(*args, **kwargs):
        return outcome

    monkeypatch.setattr(app.tests, "run_pair", run_pair)

    async def run_before(pilot):
        await feed_five(app, pilot, steps=2)
        screen = TestScreen("web1", "nas01", "10.0.10.2", "enp3s0f0")
        app.push_screen(screen)
        await wait_for(lambda: screen.outcome is not None, 10.0, message="result shown")
        app.clear_notifications()  # the toast repeats the verdict over the panel's corner
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("screen", ["host", "detail", "matrix"])
def test_screens_80x24(snap_compare, monkeypatch, tmp_path, screen):
    """The host screen (i on a host row), an interface's details (Enter) and the matrix (m,
    its first pair still running) read at 80x24."""
    import asyncio

    (tmp_path / "ssh_config").write_text(FIXED_SSH_CONFIG)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    app = five_host_app(monkeypatch, Settings(ssh_config=str(tmp_path / "ssh_config")))

    async def never(*args, **kwargs):
        await asyncio.Event().wait()

    monkeypatch.setattr(app.tests, "run_pair", never)

    async def run_before(pilot):
        await feed_five(app, pilot, steps=20)
        if screen == "host":
            app.table.select_key(("host", "web1"))
            await pilot.press("i")
            # the Connection section is resolved in a thread: the snapshot waits for it
            await wait_for(
                lambda: "connects to" in app.screen.query_one("#host-connection").content.plain,
                10.0,
                message="resolution shown",
            )
        elif screen == "detail":
            app.table.select_key(("iface", "web1", "enp3s0f0"))
            await pilot.press("enter")
        else:
            from linkdeck.ui.screens.probe_screens import MatrixScreen

            app.push_screen(MatrixScreen(["nas01", "web1", "zone1"]))
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
