"""linkdeck's own iperf3 test among a host's flows: the real Linux loop (sh and awk here) over a
fake ``ss`` that prints a real capture (a VM, 10.0.1.29, with iperf3 streams to 10.0.1.37:5201
and two ssh sessions). While linkdeck runs a test from that VM to 10.0.1.37 port 5201, those
flows are its own test's: out of the ranking, listed last and labelled, in ``linkdeck_tests``
of the JSON; a test on another port, or from another host, leaves them the host's. A test
another linkdeck process runs is known by the file it keeps in the user's runtime dir."""

from __future__ import annotations

import json
import os
import subprocess

from linkdeck.flows.own_tests import RunningTest, set_apart_tests
from linkdeck.flows.round_report import report
from linkdeck.flows.sampler import round_of
from linkdeck.present.flow_words import report_json, report_text
from linkdeck.ui.screens.flows_screen import render
from tests.builders import iface, update, view
from tests.unit.test_flows_own import fake_ss, two_rounds

VM = update("vm", 0.0, view(iface("ens5", addresses=("10.0.1.29/24",), mtu=9001)))
PEER = update("peer", 0.0, view(iface("ens5", addresses=("10.0.1.37/24",), mtu=9001)))
UPDATES = {"vm": VM, "peer": PEER}
IPERF = "10.0.1.37:5201"


async def test_the_flows_of_a_test_linkdeck_runs_are_set_apart_and_labelled(tmp_path):
    _, second = await two_rounds(fake_ss(tmp_path, None), top=20)
    running = [RunningTest("vm", "peer", "10.0.1.37", 5201)]
    got = set_apart_tests(second, "vm", running, UPDATES, "linux")
    assert got.total == 13  # every established flow still counts
    assert {cur.remote for cur, _ in got.tests} == {IPERF} and len(got.tests) == 11
    assert {cur.remote for cur, _ in got.flows} == {"73.231.248.16:49724", "73.231.248.16:49703"}
    assert "@@LD FLOWS-TEST 10.0.1.29:42314 10.0.1.37:5201" in got.lines

    judged = report("vm", got, UPDATES)
    assert all(f.linkdeck_test for f in judged.tests) and not any(f.linkdeck_test for f in judged.flows)
    text = report_text(judged, 20).splitlines()
    assert text[0].startswith("vm: the 2 busiest of 13 established TCP flows and 11 of linkdeck's test, over ")
    assert "linkdeck test: 11 flows, listed last, not ranked or judged" in text
    rows = [line for line in text if line.startswith("10.0.1.29:")]
    assert len(rows) == 13 and all("(linkdeck test)" in r for r in rows[2:]) and ":22 " in rows[0]
    assert not any(line.startswith("10.0.1.29:42314 → ") for line in text)  # no verdict of the test's flows

    doc = json.loads(json.dumps(report_json(judged)))
    assert {f["remote"] for f in doc["flows"]} == {"73.231.248.16:49724", "73.231.248.16:49703"}
    assert all(f["linkdeck_test"] is False for f in doc["flows"])
    assert len(doc["linkdeck_tests"]) == 11 and all(f["linkdeck_test"] is True for f in doc["linkdeck_tests"])
    assert len(report_json(judged, show_all=True)["flows"]) == 13

    screen = str(render(judged, width=200)).splitlines()
    assert "linkdeck test: 11 flows, listed last, not ranked or judged" in screen
    assert len([line for line in screen if "(linkdeck test)" in line]) == 11

    # a recording keeps the round's lines: a replay sets the same flows apart
    again = round_of(got.lines)
    assert again is not None and again.tests == got.tests and again.flows == got.flows


async def test_an_iperf3_on_another_port_or_from_another_host_is_the_users(tmp_path):
    _, second = await two_rounds(fake_ss(tmp_path, None), top=20)
    for running in (
        RunningTest("vm", "peer", "10.0.1.37", 5202),  # linkdeck's test on 5202; the user's iperf3 on 5201
        RunningTest("other", "peer", "10.0.1.37", 5201),  # linkdeck's test from another host
        RunningTest("vm", "peer", "10.0.1.38", 5201),  # to another address
    ):
        got = set_apart_tests(second, "vm", [running], {**UPDATES, "other": update("other", 0.0)}, "linux")
        assert got is second and len(got.flows) == 13 and got.tests == ()
        assert report_json(report("vm", got, UPDATES))["linkdeck_tests"] == []


async def test_a_host_the_test_does_not_go_through_keeps_its_flows(tmp_path):
    _, second = await two_rounds(fake_ss(tmp_path, None), top=20)
    running = [RunningTest("vm", "peer", "10.0.1.37", 5201)]
    assert set_apart_tests(second, "third", running, UPDATES, "linux") is second


def test_a_running_test_is_announced_to_this_users_other_linkdeck_processes(tmp_path, monkeypatch):
    from linkdeck.flows.own_tests import announce, announced, withdraw

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    test = RunningTest("vm", "peer", "10.0.1.37", 5201, ("10.0.1.29", "fe80::1"))
    path = announce(test)
    assert path is not None and path.parent == runtime / "linkdeck" / "tests"
    assert (runtime / "linkdeck" / "tests").stat().st_mode & 0o777 == 0o700
    assert announced() == (test,)
    assert announced(but_pid=os.getpid()) == ()  # a session knows its own already
    withdraw(path)
    assert announced() == () and not path.exists()


def test_what_a_gone_process_announced_or_a_stray_file_is_not_a_test(tmp_path, monkeypatch):
    from linkdeck.flows.own_tests import announced

    runtime = tmp_path / "run"
    where = runtime / "linkdeck" / "tests"
    where.mkdir(mode=0o700, parents=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    gone = subprocess.Popen(["true"])
    gone.wait()
    entry = {"src": "vm", "dst": "peer", "address": "10.0.1.37", "port": 5201, "clients": ["10.0.1.29"]}
    (where / "dead.json").write_text(json.dumps({**entry, "pid": gone.pid}))
    (where / "stray.json").write_text("not json")
    (where / "wrong.json").write_text(json.dumps({**entry, "pid": os.getpid(), "port": "5201"}))
    assert announced() == ()
    assert not (where / "dead.json").exists()  # its process was killed before it withdrew it


def test_without_a_runtime_dir_of_the_users_own_nothing_is_announced(tmp_path, monkeypatch):
    from linkdeck.flows.own_tests import announce, announced

    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert announce(RunningTest("vm", "peer", "10.0.1.37", 5201)) is None and announced() == ()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    assert announce(RunningTest("vm", "peer", "10.0.1.37", 5201)) is None


async def test_another_processs_test_is_known_by_its_clients_addresses_whatever_its_hosts_are_called(tmp_path):
    _, second = await two_rounds(fake_ss(tmp_path, None), top=20)
    # `linkdeck test lab-a lab-b` in another process; this one reads the flows of "vm" with no samples
    running = [RunningTest("lab-a", "lab-b", "10.0.1.37", 5201, ("10.0.1.29",))]
    got = set_apart_tests(second, "vm", running, {}, "linux")
    assert len(got.tests) == 11 and len(got.flows) == 2
    other = [RunningTest("lab-a", "lab-b", "10.0.1.37", 5201, ("10.0.1.30",))]
    assert set_apart_tests(second, "vm", other, {}, "linux") is second
