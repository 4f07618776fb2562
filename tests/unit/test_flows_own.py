"""linkdeck's own SSH connection among a host's flows: the real Linux and illumos loops (sh and
awk here) over a fake ``ss`` / ``connstat`` that prints a real capture (a VM with 8 iperf3
streams and two ssh sessions; connstat's constructed -P capture), with ``SSH_CONNECTION`` set
as sshd sets it for linkdeck's session. The flow with those ends is linkdeck's own: out of the
ranking, marked own, said in one line; the other ssh session is listed like any flow."""

from __future__ import annotations

import json
import os
import stat

from linkdeck.flows.round_report import report
from linkdeck.flows.sampler import read_rounds, round_of
from linkdeck.present.flow_words import report_json, report_text
from linkdeck.transport.local_runner import LocalRunner
from linkdeck.ui.screens.flows_screen import render
from tests.corpus import FIXTURES

SS = "ss/ss-tin__mouse-elephant-jumbo-cubic-iperf.txt"
CONNSTAT = "illumos/connstat-P-e-T-u-o-flows__constructed-from-man-examples.txt"
OURS = "73.231.248.16 49703 10.0.1.29 22"  # as sshd sets it: client ip, port, server ip, port


class FakeCommand(LocalRunner):
    """Runs the real loop here, with ``name`` on PATH printing a capture and the session's
    SSH_CONNECTION in its environment."""

    def __init__(self, tmp_path, name: str, body: str, ssh: str | None) -> None:
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        fake = self.bin / name
        fake.write_text("#!/bin/sh\n" + body)
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
        self.env = [f"SSH_CONNECTION={ssh}"] if ssh is not None else []

    async def stream(self, argv, tick=None):
        async for line in super().stream(
            ["env", "-u", "SSH_CONNECTION", f"PATH={self.bin}:{os.environ['PATH']}", *self.env, *argv], tick
        ):
            yield line


def fake_ss(tmp_path, ssh: str | None) -> FakeCommand:
    # `ss -tin` captured; `state established` prints the same without the State column
    return FakeCommand(tmp_path, "ss", f"tail -n +5 '{FIXTURES / SS}' | sed 's/^ESTAB *//'\n", ssh)


async def two_rounds(runner, top: int, os_name: str = "linux"):
    got = []
    async for r in read_rounds(runner, 0.2, top, (), os_name):
        got.append(r)
        if len(got) == 2:
            break
    return got


async def test_the_flow_of_linkdecks_own_ssh_session_is_marked_own_and_not_ranked(tmp_path):
    _, second = await two_rounds(fake_ss(tmp_path, OURS), top=20)
    assert second.total == 13  # every established flow still counts
    listed = [cur.remote for cur, _ in second.flows]
    assert len(listed) == 12 and "73.231.248.16:49703" not in listed
    assert "73.231.248.16:49724" in listed  # someone else's ssh session: a flow like any
    ((cur, prev),) = second.own
    assert (cur.local, cur.remote) == ("10.0.1.29:22", "73.231.248.16:49703") and prev is not None

    got = report("vm", second, {})
    assert [f.own for f in got.own] == [True] and not any(f.own for f in got.flows)
    text = report_text(got, 20)
    own_line, *rest = [line for line in text.splitlines() if "73.231.248.16:49703" in line]
    assert (
        own_line
        == "linkdeck's own SSH, 10.0.1.29:22 → 73.231.248.16:49703: 0 b/s out, 0 b/s in, not listed (--all lists it)"
    )
    assert rest == []  # not in the table
    row = [line for line in report_text(got, 20, show_all=True).splitlines() if line.startswith("10.0.1.29:22 ")]
    assert len(row) == 2 and any("73.231.248.16:49703 (linkdeck's own SSH)" in r for r in row)
    doc = json.loads(json.dumps(report_json(got)))
    assert all(f["own"] is False for f in doc["flows"]) and len(doc["flows"]) == 12
    (own,) = doc["own_ssh"]
    assert (own["remote"], own["own"]) == ("73.231.248.16:49703", True)
    assert [f["own"] for f in report_json(got, show_all=True)["flows"]].count(True) == 1

    screen = [line for line in str(render(got, width=200)).splitlines() if "73.231.248.16:49703" in line]
    assert screen == ["linkdeck's own SSH, 10.0.1.29:22 → 73.231.248.16:49703: 0 b/s out, 0 b/s in, not listed"]

    # a recording keeps the round's lines: the replay finds the same own flow
    again = round_of(second.lines)
    assert again is not None and again.own == second.own and again.flows == second.flows


async def test_the_own_flow_leaves_its_place_in_the_top_n_to_another(tmp_path):
    _, second = await two_rounds(fake_ss(tmp_path, OURS), top=12)
    assert len(second.flows) == 12 and len(second.own) == 1


async def test_without_an_ssh_session_no_flow_is_own(tmp_path):
    _, second = await two_rounds(fake_ss(tmp_path, None), top=20)
    assert len(second.flows) == 13 and second.own == ()


async def test_illumos_marks_its_own_ssh_flow_too(tmp_path):
    lines = (FIXTURES / CONNSTAT).read_text().splitlines()[4:]
    ssh = next(line.split(",") for line in lines if line.split(",")[1:2] == ["22"])
    body = f"tail -n +5 '{FIXTURES / CONNSTAT}'\n"
    runner = FakeCommand(tmp_path, "connstat", body, f"{ssh[2]} {ssh[3]} {ssh[0]} 22")
    rounds = [r async for r in read_rounds(runner, 1.0, 3, (), "omnios")]
    ((cur, _),) = rounds[-1].own
    assert cur.remote.endswith(":" + ssh[3]) and all(not c.local.endswith(":22") for c, _ in rounds[-1].flows)


async def test_on_this_machine_the_sockets_linkdeck_holds_are_set_apart_and_replay_the_same(tmp_path):
    from linkdeck.flows.held import set_apart

    _, second = await two_rounds(fake_ss(tmp_path, None), top=20)
    ends = {("10.0.1.29", "42314", "10.0.1.37", "5201")}  # as if linkdeck held this one
    got = set_apart(second, ends, "linux")
    ((cur, prev),) = got.own
    assert (cur.local, cur.remote) == ("10.0.1.29:42314", "10.0.1.37:5201") and prev is not None
    assert len(got.flows) == 12 and got.total == 13
    assert "@@LD FLOWS-HELD 10.0.1.29:42314 10.0.1.37:5201" in got.lines
    again = round_of(got.lines)
    assert again is not None and again.own == got.own and again.flows == got.flows
    assert set_apart(second, set(), "linux") is second


def test_the_sockets_this_process_holds_are_found(tmp_path):
    import socket

    from linkdeck.flows.held import held

    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    try:
        port = str(server.getsockname()[1])
        here = str(client.getsockname()[1])
        assert ("127.0.0.1", here, "127.0.0.1", port) in held([])
    finally:
        for s in (client, accepted, server):
            s.close()


async def test_with_all_the_title_counts_linkdecks_own_ssh_among_the_rows(tmp_path):
    """--all lists linkdeck's own SSH connection as a row: the title said "the 12 busiest"
    over 13 rows; it names the own one, so its count matches the rows."""
    _, second = await two_rounds(fake_ss(tmp_path, OURS), top=20)
    got = report("vm", second, {})
    text = report_text(got, 20, show_all=True).splitlines()
    rows = [line for line in text if line.startswith("10.0.1.29:")]
    assert len(rows) == 13
    assert text[0].startswith("vm: the 12 busiest of 13 established TCP flows and linkdeck's own SSH, over ")
    plain = report_text(got, 20).splitlines()
    assert len([line for line in plain if line.startswith("10.0.1.29:")]) == 12
    assert plain[0].startswith(
        "vm: the 12 busiest of 13 established TCP flows, over "
    )  # its own said in one line below
