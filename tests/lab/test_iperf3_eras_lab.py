"""Tests between lab hosts of both iperf3 eras (issue 21 §2): Debian's 3.12 (every stream on
one thread, no --json-stream) and the 3.21 that scripts/test.sh builds from ../shared/vendor
(a thread per stream, --json-stream). Real iperf3 over real SSH, each combination once, short."""

from __future__ import annotations

import pytest

from linkdeck.present.outcome import report_text
from linkdeck.probe.pairs import outcome_json
from linkdeck.probe.session import run_pairs
from tests.lab.iperf3_new import NEW_IPERF3_DIR, NEW_IPERF3_VERSION

pytestmark = pytest.mark.lab

OLD = "3.12"  # Debian 12's iperf3: the suite's machines and CI run Debian 12
HOSTS = {"old1": {}, "old2": {}, "new1": {"iperf3": "new"}, "new2": {"iperf3": "new"}}


@pytest.fixture(scope="module")
def eras(require_new_iperf3):
    from tests.lab import Lab

    with Lab(HOSTS) as lab:
        yield lab


def test_each_host_runs_its_era(eras) -> None:
    for name, version in (("old1", OLD), ("new1", NEW_IPERF3_VERSION)):
        banner = eras.ssh(name, "iperf3", "--version").stdout
        assert banner.startswith(f"iperf {version}"), banner
    assert eras.ssh("new2", "sh", "-c", "'command -v iperf3'").stdout == f"{NEW_IPERF3_DIR / 'iperf3'}\n"


@pytest.mark.parametrize(
    ("src", "dst", "shown", "single_threaded"),
    [
        ("old1", "old2", OLD, True),
        ("old1", "new1", f"{OLD} / {NEW_IPERF3_VERSION}", True),
        ("new1", "old1", f"{NEW_IPERF3_VERSION} / {OLD}", True),
        ("new1", "new2", NEW_IPERF3_VERSION, False),
    ],
)
async def test_a_test_between_each_combination(eras, src, dst, shown, single_threaded) -> None:
    specs = {n: eras.spec(n) for n in (src, dst)}
    (o,), _ = await run_pairs(specs, eras.settings(), [(src, dst)], 1)
    r = o.result
    assert r.error is None, r.error
    assert r.forward_bps > 1e8 and r.reverse_bps > 1e8  # both ways measured, in one --bidir run
    assert (r.iperf3_version, r.single_threaded) == (shown, single_threaded)
    era = {"old": OLD, "new": NEW_IPERF3_VERSION}
    assert (r.src_iperf3, r.dst_iperf3) == (era[src[:3]], era[dst[:3]])
    assert r.cpu_src_pct is not None and r.cpu_dst_pct is not None
    for name in (src, dst):
        assert eras.hosts[name].pgrep("iperf3") == []


async def test_parallel_streams_on_the_new_era(eras) -> None:
    # -P 2 each way over one --bidir run: four streams in iperf3's own result, and the CPU
    # ceiling of each 3.21 end is their four threads'
    specs = {n: eras.spec(n) for n in ("new1", "new2")}
    (o,), _ = await run_pairs(specs, eras.settings(test_streams=2), [("new1", "new2")], 1)
    r = o.result
    assert r.error is None and r.streams == 2
    assert len(r.raw_end["streams"]) == 4
    assert r.forward_bps > 1e8 and r.reverse_bps > 1e8
    doc = outcome_json(o)
    assert (doc["streams"], doc["iperf3_version"]) == (2, {"src": NEW_IPERF3_VERSION, "dst": NEW_IPERF3_VERSION})
    assert "-P 2" in report_text(o).splitlines()[0]


async def test_the_peer_picker_chooses_the_streams(eras) -> None:
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.screens import peer_picker, probe_screens
    from tests.lab import until

    app = LinkdeckApp(eras.settings(interval=0.5, test_duration=1), [eras.spec("new1"), eras.spec("new2")])
    async with app.run_test(size=(160, 50)) as pilot:
        await until(lambda: all(app.updates[h].interfaces for h in ("new1", "new2")), "both hosts live")
        assert app.table.select_key(("iface", "new1", "eth0"))
        await pilot.press("t")
        peers = await until(lambda: isinstance(app.screen, peer_picker.PeerScreen) and app.screen, "the peer picker")
        assert peers.streams == 1
        await pilot.press("p", "p")
        assert peers.streams == 4
        assert str(peers.query_one("OptionList").border_subtitle) == "4 streams each way (p: -P)"
        await pilot.press("enter")
        screen = await until(lambda: isinstance(app.screen, probe_screens.TestScreen) and app.screen, "the test screen")
        await until(lambda: screen.outcome is not None, "the outcome")
        r = screen.outcome.result
        assert r.error is None and r.streams == 4 and len(r.raw_end["streams"]) == 8
        assert "iperf3 3.21   -P 4" in str(screen.query_one("#probe-result").render()).splitlines()[0]


async def _open_test(app, pilot, src: str, dst: str):
    from linkdeck.ui.screens import peer_picker, probe_screens
    from tests.lab import until

    await until(lambda: all(app.updates[h].interfaces for h in (src, dst)), "both hosts live")
    assert app.table.select_key(("iface", src, "eth0"))
    await pilot.press("t")
    await until(lambda: isinstance(app.screen, peer_picker.PeerScreen), "the peer picker")
    await pilot.press("enter")
    return await until(lambda: isinstance(app.screen, probe_screens.TestScreen) and app.screen, "the test screen")


async def test_the_panel_shows_each_second_as_it_arrives_and_esc_cancels(eras) -> None:
    # issue 21 §1: 3.21 sends --json-stream; each second reaches the panel while the test
    # runs, with both interfaces' counters beside it; Esc still stops both iperf3
    from linkdeck.ui.app import LinkdeckApp
    from tests.lab import until

    app = LinkdeckApp(eras.settings(interval=0.5, test_duration=20), [eras.spec("new1"), eras.spec("new2")])
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open_test(app, pilot, "new1", "new2")
        await until(lambda: len(screen.seconds) >= 2, "two seconds on the panel", timeout=15)
        assert screen.outcome is None  # live: the test is still running
        second = screen.seconds[-1]
        assert second["forward_bps"] > 1e8 and second["reverse_bps"] > 1e8
        assert second["rtt_ms"] is not None and second["cwnd_bytes"] > 0 and second["forward_retransmits"] is not None
        text = str(screen.query_one("#probe-progress").render())
        lines = text.splitlines()
        header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("s ") and "new1 → new2" in line)
        assert "counters: new1 eth0 tx / new2 eth0 rx" in lines[header]
        assert lines[header + 1].split()[0] == "1" and lines[header + 1].count("b/s") == 6  # 2 iperf3, 4 counters
        await pilot.press("escape")
        await until(lambda: not screen.worker.is_running, "the worker stopped")
        assert "cancelled: both iperf3 processes stopped" in str(screen.query_one("#probe-progress").render())
        assert eras.hosts["new1"].pgrep("iperf3") == [] and eras.hosts["new2"].pgrep("iperf3") == []


async def test_an_old_client_says_why_there_are_no_seconds(eras) -> None:
    from linkdeck.ui.app import LinkdeckApp
    from tests.lab import until

    app = LinkdeckApp(eras.settings(interval=0.5, test_duration=2), [eras.spec("old1"), eras.spec("new1")])
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open_test(app, pilot, "old1", "new1")
        await until(lambda: screen.phase == "running" and screen.quiet, "the note")
        text = str(screen.query_one("#probe-progress").render())
        assert (
            f"iperf3 {OLD} on old1 reports only when the test ends (each second needs iperf3 ≥ 3.17 on the sending end)"
            in text
        )
        assert "old1 eth0: rx " in text  # the counters each tick meanwhile
        await until(lambda: screen.outcome is not None, "the outcome")
        assert screen.seconds == [] and screen.outcome.result.intervals == ()


async def test_json_carries_each_second_of_a_new_client(eras) -> None:
    specs = {n: eras.spec(n) for n in ("new1", "old1")}
    (o,), _ = await run_pairs(specs, eras.settings(), [("new1", "old1")], 2)
    doc = outcome_json(o)
    assert len(doc["intervals"]) == 2
    first = doc["intervals"][0]
    assert set(first) == {
        "start_s",
        "end_s",
        "forward_bps",
        "reverse_bps",
        "forward_retransmits",
        "reverse_retransmits",
        "rtt_ms",
        "cwnd_bytes",
    }
    assert first["start_s"] == 0 and first["forward_bps"] > 1e8 and first["reverse_bps"] > 1e8
    # the seconds add up to what the end section says (within a second's rounding)
    mean = sum(i["forward_bps"] for i in doc["intervals"]) / 2
    assert mean == pytest.approx(o.result.forward_bps, rel=0.15)


async def test_a_short_bidir_is_rerun_each_way_alone_on_a_slow_path(eras) -> None:
    # Both legs shaped to 100 Mbit/s, said to be 1G: BOTTLENECK is all the --bidir run can
    # name, so each direction runs alone (iperf3 -R for the way back) and is as slow: the path.
    for name in ("new1", "new2"):
        eras.hosts[name].shape("eth0", 100)
    try:
        settings = eras.settings(speed_overrides={"new1/eth0": 1000, "new2/eth0": 1000})
        specs = {n: eras.spec(n) for n in ("new1", "new2")}
        (o,), _ = await run_pairs(specs, settings, [("new1", "new2")], 2)
    finally:
        eras.heal()
    r, v = o.result, o.verdict
    assert r.alone is not None and r.alone["duration_s"] == 2.0
    assert 80e6 < r.alone["forward_bps"] < 100e6 and 80e6 < r.alone["reverse_bps"] < 100e6
    assert [c.code for c in v.causes][:2] == ["BOTTLENECK", "ALONE_ALSO_SLOW"]
    assert v.summary.startswith("a bottleneck near ")
    assert v.summary.endswith("; alone also slow (new1 → new2, new2 → new1): the path")
    assert outcome_json(o)["alone"]["reverse_bps"] == r.alone["reverse_bps"]
    assert eras.hosts["new1"].pgrep("iperf3") == [] and eras.hosts["new2"].pgrep("iperf3") == []


def _rx_bytes(host) -> int:
    return int(host.exec("cat", "/sys/class/net/eth0/statistics/rx_bytes").stdout)


@pytest.mark.parametrize(
    ("src", "dst", "signal"), [("old1", "old2", "TERM"), ("new1", "new2", "TERM"), ("new1", "new2", "HUP")]
)
async def test_a_test_cut_short_is_not_a_result(eras, src, dst, signal) -> None:
    # 3.19 and later exit 0 when a signal stops them: the verdict must not stand on it
    import asyncio

    from linkdeck.probe.session import watching
    from tests.lab import until

    specs = {n: eras.spec(n) for n in (src, dst)}
    async with watching(specs, eras.settings(), [src, dst]) as (_, session):
        start = _rx_bytes(eras.hosts[dst])
        task = asyncio.create_task(session.run_pair(src, dst, duration=10))
        await until(lambda: _rx_bytes(eras.hosts[dst]) - start > 50_000_000, "the test's traffic flowing")
        (pid,) = eras.hosts[src].pgrep("iperf3 -c")
        eras.hosts[src].exec("kill", f"-{signal}", str(pid))
        o = await task
    assert o.verdict.status.value == "error"
    assert "was cut short" in o.verdict.summary and "of 10 s" in o.verdict.summary, o.verdict.summary
    assert o.result.forward_bps is None


@pytest.mark.parametrize(("src", "dst"), [("old1", "new1"), ("new1", "old1"), ("new1", "new2")])
async def test_the_binding_options_in_each_role_and_era(eras, src, dst) -> None:
    # the client's -B and --bind-dev, the server's -B: 3.20 and later refuse an option in a
    # role it does not belong to
    from linkdeck.probe.session import watching

    specs = {n: eras.spec(n) for n in (src, dst)}
    async with watching(specs, eras.settings(), [src, dst]) as (_, session):
        o = await session.run_pair(src, dst, eras.hosts[dst].address, "eth0", duration=1)
    assert o.result.error is None, o.result.error
    assert o.result.forward_bps > 1e8 and (o.src_iface, o.dst_iface) == ("eth0", "eth0")
