"""The flows view on this machine, for real: a plain TCP transfer over loopback (not started
by linkdeck), read by ``linkdeck flows local`` and by ``w`` in the dashboard; the host's
flows command ends with the screen."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys

import psutil
import pytest

from linkdeck.core.tcpflow import split_endpoint
from linkdeck.settings.config import LOCAL, Settings
from linkdeck.ui.app import LinkdeckApp
from linkdeck.ui.screens.flows_screen import FlowsScreen
from tests.lab import wait_for
from tests.lab.traffic import local_popen, tcp_transfer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ss is Linux's")


@contextlib.contextmanager
def transfer(seconds: float = 20):
    """A loopback transfer; yields the sender's local port."""
    with tcp_transfer(local_popen, local_popen, "127.0.0.1", seconds) as (_, sender_port):
        yield sender_port


def _awk_children() -> list[psutil.Process]:
    return [p for p in psutil.Process(os.getpid()).children(recursive=True) if "pause=sleep" in " ".join(p.cmdline())]


def test_flows_local_json_names_the_busiest_flow_with_its_rate():
    with transfer() as port:
        out = subprocess.run(
            [sys.executable, "-m", "linkdeck", "flows", "local", "--top", "3", "--interval", "0.5", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HOME": os.environ.get("HOME", "/tmp")},
        )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["host"] == "local" and doc["established"] >= 2 and len(doc["flows"]) <= 3
    mine = [f for f in doc["flows"] if f["local"].endswith(f":{port}")]
    assert mine, doc["flows"]
    flow = mine[0]
    assert flow["tx_bps"] > 100e6  # loopback at full tilt
    assert flow["rtt_ms"] is not None and flow["min_rtt_ms"] is not None and flow["pmtu"] == 65535
    assert flow["limiter"] != "unknown" and flow["verdict"] and flow["evidence"]


async def test_w_shows_the_hosts_flows_live_and_stops_them_on_close():
    app = LinkdeckApp(Settings(interval=0.5), [LOCAL])
    with transfer() as port:
        async with app.run_test(size=(220, 50)) as pilot:
            await wait_for(lambda: app.updates["local"].interfaces, 15, message="local interfaces")
            await pilot.press("w")
            screen = app.screen
            assert isinstance(screen, FlowsScreen) and screen.iface is not None or isinstance(screen, FlowsScreen)

            def seen():
                last = screen.last
                return last is not None and any(f.local.endswith(f":{port}") and f.tx_bps for f in last.flows)

            await wait_for(seen, 20, message="the transfer's flow with a rate")
            body = str(screen.query_one("#flows-body").render())
            assert f":{port}" in body and "busiest of" in body
            assert _awk_children()  # the host's flows command runs while the screen shows
            await pilot.press("escape")
            await wait_for(lambda: not _awk_children(), 10, message="the flows command to end with the screen")


async def test_w_sets_apart_the_flows_of_a_test_the_dashboard_runs(monkeypatch):
    """While the dashboard's session runs a test through the host, w lists the test's flows
    last, labelled, out of the ranking; the host's other flows stay ranked."""
    from linkdeck.flows.own_tests import RunningTest

    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # this session's tests only
    app = LinkdeckApp(Settings(interval=0.5), [LOCAL])
    with tcp_transfer(local_popen, local_popen, "127.0.0.1", 20) as (server, client), transfer() as other:
        async with app.run_test(size=(220, 50)) as pilot:
            # constructed: the first transfer stands for a test the session runs (its server's port)
            running = RunningTest("local", "local", "127.0.0.1", server)
            monkeypatch.setattr(app.tests, "running_tests", lambda: (running,))
            await wait_for(lambda: app.updates["local"].interfaces, 15, message="local interfaces")
            await pilot.press("w")
            screen = app.screen
            assert isinstance(screen, FlowsScreen)

            def seen():
                last = screen.last
                return last is not None and last.tests and any(f.local.endswith(f":{other}") for f in last.flows)

            await wait_for(seen, 20, message="the test's flows set apart beside the other transfer")
            last = screen.last
            ends = {(f.local, f.remote) for f in last.tests}
            assert ends == {
                (f"127.0.0.1:{client}", f"127.0.0.1:{server}"),
                (f"127.0.0.1:{server}", f"127.0.0.1:{client}"),
            }
            assert not [
                f for f in last.flows if str(server) in (split_endpoint(f.local)[1], split_endpoint(f.remote)[1])
            ]
            body = str(screen.query_one("#flows-body").render())
            assert "linkdeck test: 2 flows, listed last, not ranked or judged" in body
            assert f"127.0.0.1:{server} (linkdeck test)" in body
            await pilot.press("escape")


async def test_w_on_a_host_without_per_flow_data_says_so():
    from linkdeck.settings.config import HostSpec
    from tests.synthetic import SyntheticAdapter, opener_for, physical

    adapter = SyntheticAdapter([physical("em0")])
    adapter.os = "freebsd"
    app = LinkdeckApp(
        Settings(interval=0.2), [HostSpec("bsd", address="bsd.invalid")], opener=opener_for({"bsd": adapter})
    )
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(lambda: app.updates["bsd"].interfaces, 15, message="the host's interfaces")
        await pilot.press("w")
        screen = app.screen
        await wait_for(lambda: screen.last is not None, 10, message="the flows screen's answer")
        body = str(screen.query_one("#flows-body").render())
        assert "bsd: no per-flow view: the BSDs and macOS report no per-connection window" in body
        assert "TCP on bsd:" in body


async def test_the_interface_filter_runs_on_the_host():
    from linkdeck.core.tcpflow import split_endpoint
    from linkdeck.flows.sampler import read_rounds
    from linkdeck.transport.local_runner import LocalRunner

    async def second_round(addresses):
        n = 0
        async for got in read_rounds(LocalRunner(), 0.5, 50, addresses):
            n += 1
            if n == 2:
                return got

    with transfer() as port:
        mine = await second_round(["127.0.0.1"])
        none = await second_round(["192.0.2.1"])  # TEST-NET-1: on no interface here
    assert mine.total >= 2 and all(split_endpoint(c.local)[0] == "127.0.0.1" for c, _ in mine.flows)
    assert any(c.local.endswith(f":{port}") for c, _ in mine.flows)
    assert (none.total, none.flows) == (0, ())


def test_linkdeck_record_flows_keeps_the_rounds_and_the_report_lists_the_transfer(tmp_path):
    from linkdeck.recording.fileformat import read
    from tests.cli import linkdeck

    rec = tmp_path / "flows.ldrec"
    with transfer() as port:
        out = linkdeck("record", str(rec), "--duration", "4", "--flows", "local", timeout=90)
    assert out.returncode == 0, out.stderr
    rounds = [e for e in read(rec).events() if e["ev"] == "flows"]
    assert (
        len(rounds) >= 2 and {e["h"] for e in rounds} == {"local"} and rounds[0]["lines"][0].startswith("@@LD FLOWS ")
    )
    assert not _awk_children()  # the flows loop ended with the recording
    text = linkdeck("report", str(rec), "--markdown", "-o", "-").stdout
    assert re.search(r"^TCP flows: \d+ reads from \S+ to \S+ \(the whole host\), \d+ flows seen", text, re.M), text
    (row,) = [line for line in text.splitlines() if line.startswith(f"| 127.0.0.1:{port} → 127.0.0.1:")]
    limiter = row.strip("|").split("|")[5].strip()
    assert re.fullmatch(r"(application|receiver|sender|network|path MTU|unknown) \(\d+ of \d+ reads\).*", limiter), row
    bad = linkdeck("record", str(tmp_path / "x.ldrec"), "--flows", "ghost", "--duration", "1")
    assert (
        bad.returncode == 2
        and bad.stderr.strip().endswith("--flows ghost: not one of the recorded hosts (local)")
        and bad.stderr.count("\n") == 1
    )


def test_linkdeck_record_flows_keeps_a_running_linkdeck_test_apart(tmp_path, monkeypatch):
    """``linkdeck record --flows`` while another linkdeck runs a test through the host: the
    test's flows go into the recording set apart (TEST lines), and the report lists none."""
    from linkdeck.flows.own_tests import RunningTest, announce, withdraw
    from linkdeck.recording.fileformat import read
    from tests.cli import linkdeck

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    rec = tmp_path / "flows.ldrec"
    with tcp_transfer(local_popen, local_popen, "127.0.0.1", 20) as (server, client):
        # constructed: this plain transfer announced as a linkdeck test's, this process standing for that linkdeck
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        path = announce(RunningTest("local", "local", "127.0.0.1", server, ("127.0.0.1",)))
        assert path is not None
        try:
            out = linkdeck(
                "record", str(rec), "--duration", "3", "--flows", "local", env={"XDG_RUNTIME_DIR": str(runtime)}
            )
        finally:
            withdraw(path)
    assert out.returncode == 0, out.stderr
    lines = [line for e in read(rec).events() if e["ev"] == "flows" for line in e["lines"]]
    assert f"@@LD FLOWS-TEST 127.0.0.1:{client} 127.0.0.1:{server}" in lines, lines
    text = linkdeck("report", str(rec), "--markdown", "-o", "-").stdout
    assert f"127.0.0.1:{client} → 127.0.0.1:{server}" not in text
    assert f"127.0.0.1:{server} → 127.0.0.1:{client}" not in text
