"""The test screens driven through the dashboard: `c` (ceiling) on this machine with real
iperf3; `t` and `m` between lab hosts over real SSH (lab-marked)."""

from __future__ import annotations

import subprocess

import pytest

from linkdeck.core import units
from linkdeck.settings.config import LOCAL, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.screens import peer_picker, probe_screens
from tests.lab import free_port, iperf3_pids, until, wait_for

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v iperf3"], capture_output=True).returncode != 0, reason="needs iperf3"
)


def screen_text(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_c_runs_the_local_ceiling_and_shows_the_result() -> None:
    app = LinkdeckApp(Settings(interval=0.5, test_duration=1, test_port=free_port()), [LOCAL])
    async with app.run_test(size=(160, 50)) as pilot:
        await until(
            lambda: app.updates["local"].interfaces and app.table.select_key(("iface", "local", "lo")), "local rows"
        )
        await pilot.press("c")
        screen = await until(lambda: isinstance(app.screen, probe_screens.TestScreen) and app.screen, "the test screen")
        await until(lambda: screen.outcome is not None, "the outcome")
        o = screen.outcome
        assert (o.result.src, o.result.dst, o.result.address, o.src_iface) == ("local", "local", "127.0.0.1", "lo")
        assert o.result.forward_bps > 1e8
        # psutil's one-shot reads around the test: lo sent (and received) the transfer
        assert o.result.counters_bps["src_tx"] == pytest.approx(o.result.forward_bps, rel=0.05)
        assert o.result.counters_bps["src_tx"] == o.result.counters_bps["dst_rx"]
        text = screen_text(app, "#probe-result")
        assert text.startswith("local ceiling (loopback)   127.0.0.1   1.0 s   iperf3 3.")
        assert "Interface counters vs iperf3" in text and "local → local" in text
        assert app.inline_verdict("local", "lo") == "ceil " + units.si(o.result.forward_bps, "").replace(" ", "")
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, probe_screens.TestScreen), "the screen closed")
        row = next(i for i, r in enumerate(app.table.rows) if r.view and r.view.iface.name == "lo")
        await until(
            lambda: app.table.row_text(row).rstrip().endswith(app.inline_verdict("local", "lo")), "the Last test column"
        )


async def test_escape_cancels_a_running_test_and_kills_iperf3() -> None:
    port = free_port()
    app = LinkdeckApp(Settings(interval=0.5, test_duration=20, test_port=port), [LOCAL])
    async with app.run_test(size=(160, 50)) as pilot:
        await until(lambda: app.updates["local"].interfaces, "local rows")
        probe_screens.open_ceiling(app, "local")
        screen = await until(lambda: isinstance(app.screen, probe_screens.TestScreen) and app.screen, "the test screen")
        await until(lambda: len(iperf3_pids(port)) == 2 and screen.phase == "running", "server and client running")
        await until(lambda: "running" in screen_text(app, "#probe-progress"), "the progress line")
        assert "/ 20 s  (Esc cancels)" in screen_text(app, "#probe-progress")
        assert "local lo: rx " in screen_text(app, "#probe-progress")  # live rates of the loopback
        await pilot.press("escape")
        await until(lambda: not screen.worker.is_running, "the worker stopped")
        assert iperf3_pids(port) == []
        assert "cancelled: both iperf3 processes stopped" in screen_text(app, "#probe-progress")
        assert screen.outcome is None
        await pilot.press("escape")
        await until(lambda: app.screen is not screen, "the screen closed")


async def test_t_without_a_second_host_says_so() -> None:
    app = LinkdeckApp(Settings(interval=0.5), [LOCAL])
    async with app.run_test(size=(160, 50)) as pilot:
        await until(
            lambda: app.updates["local"].interfaces and app.table.select_key(("iface", "local", "lo")), "local rows"
        )
        await pilot.press("t")
        await until(lambda: app._notifications, "a notification")
        assert "Testing needs a second host" in list(app._notifications)[-1].message
        assert not isinstance(app.screen, peer_picker.PeerScreen)


@pytest.mark.lab
async def test_t_between_lab_hosts_with_live_rows_and_inline_verdict(lab) -> None:
    settings = lab.settings(interval=0.5, test_duration=3, speed_overrides={"h1/eth0": 1000, "h2/eth0": 1000})
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 1000)
    app = LinkdeckApp(settings, [lab.spec("h1"), lab.spec("h2")])
    async with app.run_test(size=(160, 50)) as pilot:
        await until(
            lambda: (
                all(app.updates[h].interfaces for h in ("h1", "h2")) and app.table.select_key(("iface", "h1", "eth0"))
            ),
            "both hosts live",
        )
        await pilot.press("t")
        peers = await until(lambda: isinstance(app.screen, peer_picker.PeerScreen) and app.screen, "the peer picker")
        assert peers.choices == [("h2", lab.hosts["h2"].address)]
        await pilot.press("enter")
        screen = await until(lambda: isinstance(app.screen, probe_screens.TestScreen) and app.screen, "the test screen")
        await until(lambda: screen.phase == "running", "the test running")
        times_at_start = app.updates["h1"].time, app.updates["h2"].time
        await until(lambda: screen.outcome is not None, "the outcome")
        # the dashboard kept receiving samples of both ends while the 3 s test ran: at least
        # four more 0.5 s ticks each (the remote clocks' centisecond schedule can put five
        # ticks 2.49 s apart, and the receiver's samples queue behind the test's traffic)
        assert app.updates["h1"].time >= times_at_start[0] + 4 * settings.interval - 0.05
        assert app.updates["h2"].time >= times_at_start[1] + 4 * settings.interval - 0.05
        o = screen.outcome
        assert o.verdict.status == "ok" and o.verdict.pct_of_expected >= 90
        for key, figure in (
            ("src_tx", "forward_bps"),
            ("dst_rx", "forward_bps"),
            ("dst_tx", "reverse_bps"),
            ("src_rx", "reverse_bps"),
        ):
            assert o.result.counters_bps[key] == pytest.approx(getattr(o.result, figure), rel=0.04), key
        # on both ends, each saying which end it was: → where it ran from, ← where it ran to
        assert app.inline_verdict("h1", "eth0") == "→ " + probe_screens.short_verdict(o)
        assert app.inline_verdict("h1", "eth0").startswith("→ OK ")
        assert app.inline_verdict("h2", "eth0") == "← " + probe_screens.short_verdict(o)
        assert lab.hosts["h1"].pgrep("iperf3") == [] and lab.hosts["h2"].pgrep("iperf3") == []


@pytest.mark.lab
async def test_m_fills_the_matrix_of_three_lab_hosts(lab, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # the exports must not land in the directory linkdeck started from
    app = LinkdeckApp(
        lab.settings(interval=0.5, test_duration=1, save_dir=str(tmp_path / "saved")),
        [lab.spec(n) for n in ("h1", "h2", "h3")],
    )
    async with app.run_test(size=(180, 50)) as pilot:
        await until(lambda: all(app.updates[h].interfaces for h in ("h1", "h2", "h3")), "three hosts live")
        await pilot.press("m")
        screen = await until(
            lambda: isinstance(app.screen, probe_screens.MatrixScreen) and app.screen, "the matrix screen"
        )
        await until(
            lambda: len(screen.matrix.cells) == 3, "three cells: each pair once, both directions in each", timeout=90
        )
        for (src, dst), o in screen.matrix.cells.items():
            assert o.result.error is None and o.result.forward_bps > 1e8, (src, dst, o.result.error)
        grid = app.screen.query_one("DataTable")
        cell = grid.get_cell("h1", "h2")
        r = screen.matrix.cells[("h1", "h2")].result
        # both directions' rates (no link speed in the lab, so no percentages), then retransmits each way
        assert str(cell) == (
            f"{units.rate(r.forward_bps, short=True)} / {units.rate(r.reverse_bps, short=True)}"
            f" r{units.count(r.forward_retransmits)}/{units.count(r.reverse_retransmits)}"
        )
        await pilot.press("v")
        saved = list((tmp_path / "saved").glob("linkdeck-matrix-*.csv"))
        assert len(saved) == 1 and len(saved[0].read_text().splitlines()) == 4
        assert not list(tmp_path.glob("linkdeck-matrix-*"))


@pytest.mark.lab
async def test_quitting_during_a_test_leaves_no_iperf3_on_either_host(lab) -> None:
    app = LinkdeckApp(lab.settings(interval=0.5, test_duration=20), [lab.spec("h1"), lab.spec("h2")])
    async with app.run_test(size=(160, 50)) as pilot:
        await until(
            lambda: (
                all(app.updates[h].interfaces for h in ("h1", "h2")) and app.table.select_key(("iface", "h1", "eth0"))
            ),
            "both hosts live",
        )
        await pilot.press("t")
        await until(lambda: isinstance(app.screen, peer_picker.PeerScreen), "the peer picker")
        await pilot.press("enter")
        screen = await until(lambda: isinstance(app.screen, probe_screens.TestScreen) and app.screen, "the test screen")
        await until(lambda: screen.phase == "running", "the test running")
        assert lab.hosts["h1"].pgrep("iperf3") and lab.hosts["h2"].pgrep("iperf3")
        await pilot.press("q")
    # the app closed its test connections and both iperf3 processes were killed by PID
    assert app.tests.pool._adapters == {}
    await wait_for(
        lambda: not lab.hosts["h1"].pgrep("iperf3") and not lab.hosts["h2"].pgrep("iperf3"),
        10,
        message="no iperf3 left",
    )
