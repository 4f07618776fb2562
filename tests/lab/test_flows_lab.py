"""Each flow's limiter, proved in the namespace lab with transfers linkdeck did not start (a
plain Python socket sender and receiver, no iperf3), read over real SSH by the same loop
``linkdeck flows`` and ``w`` run, judged with the collectors' view of both ends.

veth legs report no link speed: ``speed_overrides`` tells linkdeck they are 1 Gb/s links, as a
user does for VMs; the 100 Mbit/s narrow point is a tbf on the bridge port in front of the
receiver's leg, between the two ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess

import pytest

from linkdeck.core.tcpflow import split_endpoint
from linkdeck.fleet.collector import open_adapter
from linkdeck.flows.judge import Flow, Limiter
from linkdeck.flows.round_report import FlowReport, report
from linkdeck.flows.sampler import read_rounds
from linkdeck.present.flow_words import report_json, verdict
from linkdeck.probe.session import Watch
from tests.lab.traffic import tcp_transfer

pytestmark = pytest.mark.lab

GIG = {"e/eth0": 1000, "b/eth0": 1000, "c/eth0": 1000}


@contextlib.contextmanager
def transfer(lab, src: str, dst: str, seconds: float = 30, cc: str = "cubic", **receiver):
    """A transfer from ``src`` to ``dst``'s eth0; yields the receiver's port."""
    with tcp_transfer(lab.hosts[dst].popen, lab.hosts[src].popen, lab.hosts[dst].address, seconds, cc, **receiver) as (
        port,
        _,
    ):
        yield port


async def flows_on(lab, host: str, rounds: int = 4, interval: float = 1.0) -> FlowReport:
    """``host``'s flows after ``rounds`` reads, judged with a watch over every lab host."""
    settings = lab.settings(interval=0.5, speed_overrides=GIG)
    watch = Watch([lab.spec(n) for n in lab.hosts], settings)
    await watch.start()
    adapter = await open_adapter(lab.spec(host), settings)
    got = None
    try:
        n = 0
        async for r in read_rounds(adapter.runner, interval, 5):
            n += 1
            if n >= rounds:
                got = report(host, r, dict(watch.updates))
                break
    finally:
        await adapter.close()
        await watch.stop()
    assert got is not None
    return got


def to(got: FlowReport, port: int) -> Flow:
    found = [f for f in got.flows if f.remote.endswith(f":{port}")]
    assert found, [(f.local, f.remote) for f in got.flows]
    return found[0]


async def test_a_path_shaped_to_100_mbit_between_gigabit_ends_is_the_network(make_lab) -> None:
    with make_lab({"e": {}, "b": {}}) as lab:
        lab.hosts["b"].shape_inbound("eth0", 100)
        with transfer(lab, "e", "b") as port:
            got = await flows_on(lab, "e")
    flow = to(got, port)
    said, evidence = verdict(flow)
    assert flow.limiter is Limiter.NETWORK, (said, evidence)
    assert flow.remote_host == "b"
    assert 80e6 < flow.tx_bps < 105e6
    assert flow.rtt_ms > 2 * flow.min_rtt_ms and flow.rtt_ms - flow.min_rtt_ms >= 1
    assert 80e6 < flow.rate_bps < 110e6  # the rate TCP estimates, named in the verdict
    assert said.startswith("a queue builds in front of a bottleneck near ")
    assert said.endswith("both ends' links are 1 Gb/s, so the narrow point is between them")
    assert " Mb/s (delivery rate)" in said or " Mb/s (BBR's estimate)" in said


async def test_a_receiver_that_reads_slowly_is_the_receiver(make_lab) -> None:
    with make_lab({"e": {}, "b": {}}) as lab:
        with transfer(lab, "e", "b", rcvbuf=16384, chunk=4096, pause=0.002) as port:
            got = await flows_on(lab, "e")
            # the receiving end has nothing to say about it: its sender does
            there = await flows_on(lab, "b", rounds=2)
    flow = to(got, port)
    said, evidence = verdict(flow)
    assert flow.limiter is Limiter.RECEIVER, (said, evidence)
    assert flow.rwnd_limited_pct >= 50 and flow.tx_bps < 100e6
    assert said.startswith("the receiver's window caps this flow at about ")
    mine = [f for f in there.flows if f.local.endswith(f":{port}")]
    assert mine and mine[0].limiter is Limiter.UNKNOWN and "`linkdeck flows e`" in verdict(mine[0])[0]


async def test_a_clean_pair_at_full_speed_is_not_the_network(make_lab) -> None:
    with make_lab({"e": {}, "c": {}}) as lab:
        with transfer(lab, "e", "c") as port:
            got = await flows_on(lab, "e")
    flow = to(got, port)
    said, evidence = verdict(flow)
    assert flow.tx_bps > 300e6, (said, evidence)  # veth at memory speed: well above the shaped case
    assert flow.limiter is not Limiter.NETWORK, (said, evidence)
    assert flow.limiter is not Limiter.UNKNOWN, (said, evidence)


def test_linkdeck_flows_json_over_ssh_names_the_far_end_and_the_narrow_point(make_lab, tmp_path) -> None:
    from tests.cli import linkdeck

    with make_lab({"e": {}, "b": {}}) as lab:
        lab.hosts["b"].shape_inbound("eth0", 100)
        config = tmp_path / "linkdeck.toml"
        config.write_text(
            f'known_hosts = "{lab.known_hosts}"\nlocal = false\n[[hosts]]\nname = "e"\n'
            '[[hosts]]\nname = "b"\n[speed]\n"e/eth0" = 1000\n"b/eth0" = 1000\n'
        )
        with transfer(lab, "e", "b") as port:
            proc = linkdeck(
                "flows",
                "e",
                "--json",
                "--top",
                "3",
                "--config",
                str(config),
                "--ssh-config",
                str(lab.ssh_config),
                timeout=90,
            )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["host"] == "e" and doc["interval_s"] == pytest.approx(1.0, abs=0.3)
    assert doc["tcp"]["out_segs_ps"] is not None  # the host's TCP health beside its flows
    (flow,) = [f for f in doc["flows"] if f["remote"].endswith(f":{port}")]
    assert (flow["remote_host"], flow["limiter"]) == ("b", "network"), flow
    assert 70e6 < flow["tx_bps"] < 105e6 and flow["rtt_ms"] > 2 * flow["min_rtt_ms"]
    assert flow["verdict"].endswith("both ends' links are 1 Gb/s, so the narrow point is between them")


async def test_flows_shown_while_recording_replay_and_report_with_their_limiter(make_lab, tmp_path) -> None:
    """The dashboard records (r) while w shows e's flows during a transfer linkdeck did not
    start; the replay's w shows the recorded round with its time and b's 'none recorded';
    the report lists the flow with its limiter, in the real headless browser too."""
    from linkdeck.recording.fileformat import read
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.replay_dashboard import ReplayApp
    from linkdeck.ui.screens.flows_screen import FlowsScreen
    from linkdeck.ui.screens.recorded_flows_screen import RecordedFlowsScreen
    from tests.cli import linkdeck
    from tests.lab import until
    from tests.unit.recording.test_report import chromium, screenshot

    with make_lab({"e": {}, "b": {}}) as lab:
        lab.hosts["b"].shape_inbound("eth0", 100)
        app = LinkdeckApp(lab.settings(interval=1.0, speed_overrides=GIG), [lab.spec("e"), lab.spec("b")])
        app.recording.directory = tmp_path
        with transfer(lab, "e", "b", seconds=60) as port:
            async with app.run_test(size=(200, 50)) as pilot:
                await until(
                    lambda: all(h in app.updates and app.updates[h].interfaces for h in ("e", "b")), "both hosts live"
                )
                await pilot.press("r")
                await until(lambda: app.recording.on, "recording")
                assert app.table.select_key(("host", "e"))
                await pilot.press("w")
                screen = await until(lambda: isinstance(app.screen, FlowsScreen) and app.screen, "the flows screen")
                await until(lambda: screen.rounds >= 5, "five rounds shown", timeout=60)
                shown = screen.last
                await pilot.press("escape")
                await pilot.press("r")
                assert not app.recording.on
    (path,) = tmp_path.glob("linkdeck-*.ldrec")
    recording = read(path)
    rounds = [e for e in recording.events() if e["ev"] == "flows"]
    assert len(rounds) >= 5 and {e["h"] for e in rounds} == {"e"}
    (live,) = [f for f in shown.flows if f.remote.endswith(f":{port}")]
    assert live.limiter is Limiter.NETWORK

    replay = ReplayApp(recording)
    async with replay.run_test(size=(200, 50)) as pilot:
        await until(lambda: replay.replay is not None, "the replay started")
        replay.go_to(recording.end)
        assert replay.table.select_key(("host", "e"))
        await pilot.press("w")
        screen = await until(
            lambda: isinstance(replay.screen, RecordedFlowsScreen) and replay.screen, "the recorded flows"
        )
        await until(lambda: screen.rounds >= 1, "drawn")
        text = str(screen.query_one("#flows-body").render())
        assert "recorded at " in text and f":{port} (b)" in text and "network" in text
        await pilot.press("escape")
        assert replay.table.select_key(("host", "b"))
        await pilot.press("w")
        screen = await until(
            lambda: isinstance(replay.screen, RecordedFlowsScreen) and replay.screen, "b's recorded flows"
        )
        await until(lambda: screen.rounds >= 1, "drawn")
        assert "b: no flows recorded up to " in str(screen.query_one("#flows-body").render())

    out = linkdeck("report", str(path), "--markdown", "-o", "-")
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if f":{port} (b) |" in line)
    assert "| network (" in row and "a queue builds in front of a bottleneck near " in row, row
    assert "TCP flows: none recorded" in out.stdout  # b's section
    page_path = tmp_path / "report.html"
    assert linkdeck("report", str(path), "-o", str(page_path)).returncode == 0
    page = page_path.read_text()
    assert "<th>limiter</th>" in page and f":{port} (b)</td>" in page
    if chromium() is None:
        pytest.skip("no chromium on PATH (apt-get install chromium; scripts/test.sh does as root)")
    dump = tmp_path / "dom.html"
    with dump.open("w") as fh:
        subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page_path.as_uri()],
            stdout=fh,
            timeout=120,
            check=True,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    dom = dump.read_text()
    assert "network (" in dom and f":{port} (b)" in dom  # the browser parsed the table as written
    screenshot(page_path, tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_linkdeck_flows_over_ssh_leaves_its_own_connection_out_and_says_it(make_lab, tmp_path) -> None:
    """Every channel linkdeck opens to e (the sampler, the flows loop) rides one SSH connection:
    the flow that is that connection on e (port 22, from linkdeck's address) is not among the
    listed flows, is reported as linkdeck's own, and is listed, marked, with --all."""
    from tests.cli import linkdeck

    with make_lab({"e": {}, "b": {}}) as lab:
        config = tmp_path / "linkdeck.toml"
        config.write_text(
            f'known_hosts = "{lab.known_hosts}"\nlocal = false\n[[hosts]]\nname = "e"\n[[hosts]]\nname = "b"\n'
        )
        args = ("flows", "e", "--top", "20", "--config", str(config), "--ssh-config", str(lab.ssh_config))
        with transfer(lab, "e", "b") as port:
            proc = linkdeck(*args, "--json", timeout=90)
            every = linkdeck(*args, "--json", "--all", timeout=90)
            text = linkdeck(*args, timeout=90)
        ours = lab.root_address
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    to_ssh = [f for f in doc["flows"] if f["local"].endswith(":22") and f["remote"].startswith(f"{ours}:")]
    assert to_ssh == [], to_ssh
    (own,) = doc["own_ssh"]
    assert (
        own["own"] is True and own["local"] == f"{lab.hosts['e'].address}:22" and own["remote"].startswith(f"{ours}:")
    ), own
    assert [f["remote"] for f in doc["flows"] if f["remote"].endswith(f":{port}")]  # the transfer is listed
    assert all(f["own"] is False for f in doc["flows"])
    assert every.returncode == 0, every.stderr
    marked = [f for f in json.loads(every.stdout)["flows"] if f["own"]]
    assert len(marked) == 1 and marked[0]["local"].endswith(":22")
    assert text.returncode == 0, text.stderr
    assert "linkdeck's own SSH, " in text.stdout and "not listed (--all lists it)" in text.stdout, text.stdout


async def test_the_dashboards_flows_screen_leaves_linkdecks_own_connection_out(make_lab) -> None:
    """w reads e's flows over the connection that samples e: linkdeck's one connection there is
    the one the loop names as its own, said in a line, not listed."""
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.screens.flows_screen import FlowsScreen
    from tests.lab import until

    with make_lab({"e": {}, "b": {}}) as lab:
        app = LinkdeckApp(lab.settings(interval=1.0), [lab.spec("e"), lab.spec("b")])
        async with app.run_test(size=(200, 50)) as pilot:
            await until(
                lambda: all(h in app.updates and app.updates[h].interfaces for h in ("e", "b")), "both hosts live"
            )
            assert app.table.select_key(("host", "e"))
            await pilot.press("w")
            screen = await until(lambda: isinstance(app.screen, FlowsScreen) and app.screen, "the flows screen")
            await until(lambda: screen.rounds >= 2, "two rounds shown", timeout=60)
            shown = screen.last
            text = str(screen.query_one("#flows-body").render())
            await pilot.press("escape")
    ours = lab.root_address
    mine = [f for f in shown.flows if f.local.endswith(":22") and f.remote.startswith(f"{ours}:")]
    assert mine == [], [(f.local, f.remote) for f in mine]
    (own,) = shown.own
    assert own.own and own.remote.startswith(f"{ours}:")
    assert f"linkdeck's own SSH, {own.local} → {own.remote}: " in text


def test_linkdeck_flows_local_sets_apart_its_connections_to_the_hosts_it_watches(make_lab, tmp_path) -> None:
    """On this machine no SSH_CONNECTION names linkdeck's own: its connection to e (from the
    sockets it and its ssh master hold) is set apart like a host's own one."""
    from tests.cli import linkdeck

    with make_lab({"e": {}}) as lab:
        config = tmp_path / "linkdeck.toml"
        config.write_text(f'known_hosts = "{lab.known_hosts}"\nlocal = true\n[[hosts]]\nname = "e"\n')
        proc = linkdeck(
            "flows",
            "local",
            "--json",
            "--top",
            "200",
            "--config",
            str(config),
            "--ssh-config",
            str(lab.ssh_config),
            timeout=90,
        )
        to_e = f"{lab.hosts['e'].address}:22"
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [f for f in doc["flows"] if f["remote"] == to_e] == []
    mine = [f for f in doc["own_ssh"] if f["remote"] == to_e]
    assert len(mine) == 1 and mine[0]["own"] is True and mine[0]["local"].startswith(f"{lab.root_address}:"), doc[
        "own_ssh"
    ]


async def _judged_with_tests(lab, host, settings, watch, session, wanted) -> FlowReport:
    """``host``'s flows read over SSH while linkdeck's test runs, set apart as the flows
    screen does: the first round (with rates) that ``wanted`` accepts."""
    from linkdeck.flows.own_tests import set_apart_tests

    adapter = await open_adapter(lab.spec(host), settings)
    try:
        async for r in read_rounds(adapter.runner, 1.0, 10, (), adapter.os):
            r = set_apart_tests(r, host, session.running_tests(), watch.updates, adapter.os)
            got = report(host, r, dict(watch.updates))
            if r.prev_time is not None and wanted(got):
                return got
    finally:
        await adapter.close()
    raise AssertionError("the flows loop ended")


async def test_the_flows_of_a_test_linkdeck_runs_are_set_apart_as_its_own(make_lab) -> None:
    """linkdeck runs its own test e → b while a user's slow transfer e → b runs on another
    port: the flows read on both ends during the test set the test's flows apart, labelled
    linkdeck's test (to the server's port it chose), and the user's transfer stays theirs."""
    import asyncio

    from linkdeck.probe.session import watching
    from tests.lab import until

    with make_lab({"e": {}, "b": {}}) as lab:
        settings = lab.settings(interval=0.5, speed_overrides=GIG, test_duration=8)
        with transfer(lab, "e", "b", seconds=90, rcvbuf=16384, chunk=4096, pause=0.002) as user_port:
            async with watching({n: lab.spec(n) for n in ("e", "b")}, settings, ["e", "b"]) as (watch, session):
                task = asyncio.create_task(session.run_pair("e", "b"))
                try:
                    (running,) = await until(lambda: session.running_tests(), "the test's server listening")
                    seen = {
                        host: await asyncio.wait_for(
                            _judged_with_tests(lab, host, settings, watch, session, lambda got: len(got.tests) >= 2), 30
                        )
                        for host in ("e", "b")
                    }
                    outcome = await task
                finally:
                    task.cancel()
                left = session.running_tests()
    assert outcome.result.error is None, outcome.result.error
    assert left == () and (running.src, running.dst, running.address) == ("e", "b", lab.hosts["b"].address)
    server = (lab.hosts["b"].address, str(running.port))
    for host, got in seen.items():
        # the server end, as each end prints it (b's iperf3 listens on ::, so b says ::ffff:…)
        def far(f: Flow, host: str = host) -> tuple[str, str]:
            return split_endpoint(f.remote if host == "e" else f.local)

        assert all(f.linkdeck_test for f in got.tests)
        assert {far(f) for f in got.tests} == {server}, (host, got.tests)
        assert not [f for f in got.flows if far(f) == server], (host, got.flows)
        user = [f for f in got.flows if far(f) == (server[0], str(user_port))]
        assert user and not any(f.linkdeck_test for f in user), (host, got.flows)
    doc = report_json(seen["e"])
    assert {f["remote"] for f in doc["linkdeck_tests"]} == {":".join(server)}
    assert all(f["linkdeck_test"] for f in doc["linkdeck_tests"])
    assert not any(f["linkdeck_test"] for f in doc["flows"])


def test_linkdeck_flows_sets_apart_the_test_another_linkdeck_runs(make_lab, tmp_path) -> None:
    """`linkdeck test e b` in one process, `linkdeck flows e --json` in another while it runs:
    the test's flows are in linkdeck_tests, none of them in flows."""
    import sys

    from tests.cli import isolated_env, linkdeck
    from tests.lab import wait_until

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    announced = runtime / "linkdeck" / "tests"
    with make_lab({"e": {}, "b": {}}) as lab:
        config = tmp_path / "linkdeck.toml"
        config.write_text(
            f'known_hosts = "{lab.known_hosts}"\nlocal = false\n[[hosts]]\nname = "e"\n[[hosts]]\nname = "b"\n'
        )
        args = ("--config", str(config), "--ssh-config", str(lab.ssh_config))
        test = subprocess.Popen(
            [sys.executable, "-m", "linkdeck", "test", "e", "b", "--time", "10", "--json", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=isolated_env(**env),
        )
        try:
            wait_until(lambda: list(announced.glob("*.json")), timeout=60, message="the test announced")
            proc = linkdeck("flows", "e", "--json", *args, env=env, timeout=90)
            _, test_err = test.communicate(timeout=120)
        finally:
            if test.poll() is None:
                test.kill()
                test.wait()
    assert proc.returncode == 0, proc.stderr
    assert test.returncode == 0, test_err
    doc = json.loads(proc.stdout)
    server = lab.hosts["b"].address
    ours = doc["linkdeck_tests"]
    assert ours and all(f["linkdeck_test"] and split_endpoint(f["remote"])[0] == server for f in ours), ours
    ports = {split_endpoint(f["remote"])[1] for f in ours}
    assert not [f for f in doc["flows"] if split_endpoint(f["remote"]) in {(server, p) for p in ports}], doc["flows"]
    assert list(announced.glob("*.json")) == []  # withdrawn when the test ended
