"""One host tested through each of its addresses (issue 10.4, seed 003): which addresses, the
PATH_DIFFERS comparison, the table and JSON; the lab's two-address host over real SSH."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from linkdeck.core import model, units
from linkdeck.core.levels import Status
from linkdeck.core.model import EndState, Verdict
from linkdeck.findings.helpers import runs_over
from linkdeck.present.outcome import addresses_text, stack_text
from linkdeck.probe.every_address import (
    AddressRun,
    Tested,
    addresses_json,
    judge_run,
    reachable_addresses,
    run_addresses,
)
from linkdeck.probe.host_verdict import compare_addresses
from linkdeck.probe.session import watching
from linkdeck.probe.watched import Outcome
from tests.builders import iface, update, view
from tests.cli import linkdeck
from tests.test_json_schemas import valid

# Seed 003's server: aggr0 over four i40e ports, two VNICs over aggr0, all in one /24.
SEED_003 = (
    iface("lo0", kind="loopback", speed_mbps=None, addresses=("127.0.0.1/8",)),
    *(iface(f"i40e{n}", speed_mbps=10000) for n in range(4)),
    iface(
        "aggr0",
        kind="aggr",
        speed_mbps=40000,
        members=("i40e0", "i40e1", "i40e2", "i40e3"),
        addresses=("172.30.115.32/24",),
    ),
    iface("admin0", kind="vnic", speed_mbps=10000, over="aggr0", addresses=("172.30.115.36/24",)),
    iface("admin1", kind="vnic", speed_mbps=10000, over="aggr0", addresses=("172.30.115.47/24",)),
)


def result(address: str, forward: float | None, reverse: float | None = 3.9e9, **kw) -> model.TestResult:
    return model.TestResult(
        src="client", dst="server", address=address, duration_s=5.0, forward_bps=forward, reverse_bps=reverse, **kw
    )


def test_which_addresses_a_client_reaches_in_a_shared_subnet() -> None:
    client = update(
        "client",
        0,
        view(iface("eth0", addresses=("172.30.115.10/24", "fe80::1/64"))),
        view(iface("eth1", addresses=("10.9.0.1/24",))),
    )
    server = update("server", 0, *(view(i) for i in SEED_003), view(iface("net1", addresses=("192.168.7.5/24",))))
    assert reachable_addresses(client, server) == ["172.30.115.32", "172.30.115.36", "172.30.115.47"]
    # an interface that is down, or a host not seen yet, offers nothing
    down = update("server", 0, view(iface("aggr0", oper="down", addresses=("172.30.115.32/24",))))
    assert reachable_addresses(client, down) == [] and reachable_addresses(client, None) == []


def test_what_an_address_runs_over() -> None:
    assert runs_over(SEED_003, "admin0") == (("aggr0",), ("i40e0", "i40e1", "i40e2", "i40e3"))
    assert runs_over(SEED_003, "aggr0") == ((), ("i40e0", "i40e1", "i40e2", "i40e3"))
    assert runs_over(SEED_003, "i40e0") == ((), ())
    # a loop in what the OS reported ends the walk instead of hanging
    assert runs_over((iface("a", over="b"), iface("b", over="a")), "a") == (("b",), ())


def test_seed_003_vnic_addresses_100x_slower_than_the_aggr() -> None:
    # The seed's tcp-client figures (client → server): ~500 MB/s to aggr0's address, ~1.9 MB/s
    # to each VNIC's; the reverse figures are constructed (the seed's tool ran one way).
    tested = [
        ("172.30.115.32", "aggr0", result("172.30.115.32", 4.0e9)),
        ("172.30.115.36", "admin0", result("172.30.115.36", 14.5e6)),
        ("172.30.115.47", "admin1", result("172.30.115.47", 12.5e6, reverse=3.8e9)),
    ]
    causes = compare_addresses(tested, SEED_003)
    assert [c.code for c in causes] == ["PATH_DIFFERS", "PATH_DIFFERS"]
    assert causes[0].message == (
        "client → server to 172.30.115.36 (admin0) is 276× slower than to 172.30.115.32 (aggr0): "
        "replies may leave by aggr0, admin1 (asymmetric path)"
    )
    assert causes[0].evidence == (
        "client → server 14.5 Mb/s via 172.30.115.36 (admin0) vs 4.00 Gb/s via 172.30.115.32 (aggr0), 0.36%; "
        "server has aggr0, admin1 in the subnet of admin0: "
        "its replies to client may go out by another interface than the one they came in by"
    )
    assert causes[1].message.startswith(
        "client → server to 172.30.115.47 (admin1) is 320× slower than to 172.30.115.32 (aggr0)"
    )


def test_only_a_far_slower_address_is_named() -> None:
    # 60 % of the best is a difference, not a different path; alone in its subnet: no asymmetry.
    links = (iface("eth0", addresses=("10.0.0.2/24",)), iface("eth1", addresses=("10.1.0.2/24",)))
    close = [
        ("10.0.0.2", "eth0", result("10.0.0.2", 900e6, 900e6)),
        ("10.1.0.2", "eth1", result("10.1.0.2", 540e6, 900e6)),
    ]
    assert compare_addresses(close, links) == ()
    far = [close[0], ("10.1.0.2", "eth1", result("10.1.0.2", 900e6, 90e6))]
    (cause,) = compare_addresses(far, links)
    assert cause.message == "server → client from 10.1.0.2 (eth1) is 10× slower than from 10.0.0.2 (eth0)"
    # nothing came through one address; a failed test is not compared
    dead = [close[0], ("10.1.0.2", "eth1", result("10.1.0.2", 0.0, 900e6))]
    assert (
        compare_addresses(dead, links)[0].message
        == "client → server to 10.1.0.2 (eth1) carried nothing, 900 Mb/s to 10.0.0.2 (eth0)"
    )
    failed = [close[0], ("10.1.0.2", "eth1", result("10.1.0.2", None, None, error="connection refused"))]
    assert compare_addresses(failed, links) == ()


def test_an_address_whose_own_path_mtu_is_short_is_explained_by_it_not_by_replies() -> None:
    # Constructed from the lab's d→a: a second address of a in the subnet, its interface at MTU
    # 1400 while d sends 1500-byte packets; its test moved 38.6 kb/s and its probe measured it.
    links = (iface("eth0", addresses=("198.18.77.20/24",)), iface("eth1", mtu=1400, addresses=("198.18.77.21/24",)))
    short = model.PathMtu(forward=1404, reverse=1500, forward_mtu=1500, reverse_mtu=1500)
    tested = [
        ("198.18.77.20", "eth0", result("198.18.77.20", 900e6, 900e6)),
        ("198.18.77.21", "eth1", result("198.18.77.21", 38.6e3, 900e6, path_mtu=short)),
    ]
    (cause,) = compare_addresses(tested, links)
    assert cause.message == (
        "client → server to 198.18.77.21 (eth1) moved next to nothing (38.6 kb/s) against 900 Mb/s "
        "to 198.18.77.20 (eth0): its path carries 1404-byte packets where 1500-byte ones are sent"
    )
    assert "replies" not in cause.evidence
    # the same address without a probe, or with one that found the path whole, keeps the
    # asymmetric path as what may explain it
    for probe in (None, model.PathMtu(forward=1500, reverse=1500, forward_mtu=1500, reverse_mtu=1500)):
        unexplained = [tested[0], ("198.18.77.21", "eth1", result("198.18.77.21", 38.6e3, 900e6, path_mtu=probe))]
        (cause,) = compare_addresses(unexplained, links)
        assert cause.message.endswith("replies may leave by eth0 (asymmetric path)")


def outcome(r: model.TestResult, status: str, summary: str) -> Outcome:
    return Outcome(
        r, EndState("client"), EndState("server"), Verdict(Status(status), None, None, summary=summary), "eth0", None
    )


def seed_run() -> AddressRun:
    """Seed 003's server tested through its aggr's address and a VNIC's, the VNIC's 320× slower."""
    server = update("server", 0, *(view(i) for i in SEED_003))
    fast = result("172.30.115.32", 4.0e9, forward_retransmits=3, reverse_retransmits=0)
    slow = result("172.30.115.47", 12.5e6, forward_retransmits=912, reverse_retransmits=1)
    return judge_run(
        "client",
        "server",
        [
            Tested(
                "172.30.115.32", "aggr0", (), ("i40e0", "i40e1", "i40e2", "i40e3"), outcome(fast, "ok", "measured …")
            ),
            Tested(
                "172.30.115.47",
                "admin1",
                ("aggr0",),
                ("i40e0", "i40e1", "i40e2", "i40e3"),
                outcome(slow, "degraded", "retransmits client → server: 7.4 % of segments"),
            ),
        ],
        server,
    )


def test_table_and_json_of_a_run() -> None:
    run = seed_run()
    assert stack_text(run.tested[1]) == "admin1 → aggr0 → i40e0, i40e1, i40e2, i40e3"
    lines = addresses_text(run).splitlines()
    assert lines[0] == "client → server: 2 addresses, one test after another, 5.0 s each"
    assert lines[1].split() == [
        "address",
        "server",
        "interface",
        "client",
        "→",
        "server",
        "server",
        "→",
        "client",
        "retransmits",
        "verdict",
    ]
    cells = [re.split(r" {3,}", line.strip()) for line in lines[2:4]]
    assert cells[0] == [
        "172.30.115.32",
        "aggr0 → i40e0, i40e1, i40e2, i40e3",
        "4.00 Gb/s",
        "3.90 Gb/s",
        "3 / 0",
        "OK — measured …",
    ]
    assert cells[1] == [
        "172.30.115.47",
        "admin1 → aggr0 → i40e0, i40e1, i40e2, i40e3",
        "12.5 Mb/s",
        "3.90 Gb/s",
        "912 / 1",
        # under a tenth of what the same hosts just did over another address: broken (issue 18 §3)
        "BAD — client → server is broken via 172.30.115.47: 12.5 Mb/s against 4.00 Gb/s via 172.30.115.32",
    ]
    assert run.tested[0].outcome.verdict.status == "ok"
    assert len({line.index("3.90 Gb/s") for line in lines[2:4]}) == 1  # the columns line up
    assert lines[4].startswith(
        "  PATH_DIFFERS: client → server to 172.30.115.47 (admin1) is 320× slower than to 172.30.115.32 (aggr0)"
    )
    doc = addresses_json(run)
    assert (doc["src"], doc["dst"], len(doc["results"])) == ("client", "server", 2)
    second = doc["results"][1]
    assert (second["address"], second["interface"], second["over"], second["ports"]) == (
        "172.30.115.47",
        "admin1",
        ["aggr0"],
        ["i40e0", "i40e1", "i40e2", "i40e3"],
    )
    assert second["forward_bps"] == 12.5e6 and second["verdict"] == "bad" and "iperf3" not in second
    assert [c["code"] for c in doc["causes"]] == ["PATH_DIFFERS"]
    assert json.loads(json.dumps(doc)) == doc


async def test_an_address_judged_broken_beside_another_is_bad_in_the_last_test_column_too() -> None:
    # The dashboard's Last test read the single test's DEGRADED while the every-address run
    # judged the same test BAD beside the fast address (the lab's peer-picker test, at times).
    from linkdeck.probe.session import TestSession

    server = update("server", 0, *(view(i) for i in SEED_003))
    runs = {
        "172.30.115.32": outcome(result("172.30.115.32", 4.0e9), "ok", "measured …"),
        "172.30.115.47": outcome(result("172.30.115.47", 12.5e6), "degraded", "retransmits"),
    }

    class Session:  # TestSession's bookkeeping of last outcomes, with tests that are already done
        last: dict = {}
        rejudged = TestSession.rejudged

        def latest(self, host):
            return server if host == "server" else None

        async def run_pair(self, src, dst, address):
            o = replace(runs[address], dst_iface="admin1" if address.endswith("47") else "aggr0")
            self.last[("client", "eth0")] = self.last[("server", o.dst_iface)] = o
            return o

    session = Session()
    run = await run_addresses(session, "client", "server", list(runs))
    assert run.tested[1].outcome.verdict.status is Status.BAD
    assert session.last[("client", "eth0")] is run.tested[1].outcome
    assert session.last[("server", "admin1")].verdict.status is Status.BAD
    assert session.last[("server", "aggr0")] is run.tested[0].outcome  # not re-judged: the same


# --- the lab ------------------------------------------------------------------------------


def two_address_host(lab) -> str:
    """b gets eth1 on the lab bridge (same subnet as eth0) with what the bridge sends into it
    shaped to 10 Mbit/s; b answers ARP for an address only on its own interface (else the
    other leg answers too and the test never touches eth1). Returns eth1's address."""
    b = lab.hosts["b"]
    for key in ("all", "default", "eth0"):
        b.exec("sysctl", "-qw", f"net.ipv4.conf.{key}.arp_ignore=1", f"net.ipv4.conf.{key}.arp_announce=2")
    b.add_interface("eth1", on_bridge=True)
    b.shape_inbound("eth1", 10)
    line = b.exec("ip", "-o", "-4", "addr", "show", "dev", "eth1").stdout.split()
    return line[line.index("inet") + 1].split("/")[0]


@pytest.mark.lab
async def test_two_address_host_eth1_shaped_is_named(make_lab) -> None:
    with make_lab({"a": {}, "b": {}}) as lab:
        eth1 = two_address_host(lab)
        specs = {n: lab.spec(n) for n in ("a", "b")}
        seen = []
        async with watching(specs, lab.settings(test_duration=2), ["a", "b"]) as (_, session):
            run = await run_addresses(session, "a", "b", on_done=lambda address, o: seen.append(address))
    assert seen == [lab.hosts["b"].address, eth1]
    (t0, t1) = run.tested
    assert (t0.address, t0.interface, t1.address, t1.interface) == (lab.hosts["b"].address, "eth0", eth1, "eth1")
    fast, slow = t0.outcome.result, t1.outcome.result
    assert fast.error is None and slow.error is None
    assert slow.forward_bps < 10.5e6 and fast.forward_bps >= 5 * slow.forward_bps
    (cause,) = run.causes
    assert cause.code == "PATH_DIFFERS"
    times = fast.forward_bps / slow.forward_bps
    assert cause.message == (
        f"a → b to {eth1} (eth1) is {times:.0f}× slower than to {lab.hosts['b'].address} (eth0): "
        "replies may leave by eth0 (asymmetric path)"
    )
    # and it is true here: b's replies from eth1's address left by eth0 (its route)
    assert t1.outcome.result.counters_bps["dst_tx"] < 0.01 * slow.reverse_bps


@pytest.mark.lab
def test_cli_all_addresses_table_and_json(make_lab, tmp_path) -> None:
    with make_lab({"a": {}, "b": {}}) as lab:
        eth1 = two_address_host(lab)
        config = tmp_path / "linkdeck.toml"
        config.write_text(f'known_hosts = "{lab.known_hosts}"\n')
        base = ["test", "a", "b", "--time", "2", "--config", str(config), "--ssh-config", str(lab.ssh_config)]
        text = linkdeck(*base, "--all-addresses", "--record", str(tmp_path / "run.ldrec"), timeout=120)
        # the same two addresses named one by one, as JSON
        js = linkdeck(*base, "--address", lab.hosts["b"].address, "--address", eth1, "--json", timeout=120)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "a → b: 2 addresses, one test after another, 2.0 s each"
    assert lines[1].split() == ["address", "b", "interface", "a", "→", "b", "b", "→", "a", "retransmits", "verdict"]
    assert lines[2].split()[:2] == [lab.hosts["b"].address, "eth0"] and lines[3].split()[:2] == [eth1, "eth1"]
    assert lines[3].split()[3] == "Mb/s" and float(lines[3].split()[2]) < 10.5
    assert lines[4].startswith(f"  PATH_DIFFERS: a → b to {eth1} (eth1) is ") and lines[4].endswith("(asymmetric path)")
    assert js.returncode == 0, js.stderr
    doc = json.loads(js.stdout)
    assert [(r["address"], r["interface"]) for r in doc["results"]] == [
        (lab.hosts["b"].address, "eth0"),
        (eth1, "eth1"),
    ]
    fast, slow = doc["results"]
    assert fast["forward_bps"] >= 5 * slow["forward_bps"]
    assert [c["code"] for c in doc["causes"]] == ["PATH_DIFFERS"] and "eth1" in doc["causes"][0]["message"]
    assert units.rate(slow["forward_bps"]) in doc["causes"][0]["evidence"]
    valid("test-all-addresses", doc)
    # recorded (issue 23: --record was ignored with --all-addresses), its report shows the run
    # as one table with its PATH_DIFFERS, as the terminal did
    report = linkdeck("report", str(tmp_path / "run.ldrec"), "--markdown", "-o", "-")
    assert report.returncode == 0, report.stderr
    tests = report.stdout[report.stdout.index("## Tests") :]
    assert (
        re.search(r"^### \d\d:\d\d:\d\d a → b: 2 addresses, one test after another$", tests, re.M)
        and tests.count("### ") == 1
    )
    assert [line.split(" | ")[:2] for line in tests.splitlines() if line.startswith(("| 10.", f"| {eth1}"))] == [
        ["| " + lab.hosts["b"].address, "eth0"],
        ["| " + eth1, "eth1"],
    ]
    assert f"- **PATH\\_DIFFERS**: a → b to {eth1} (eth1) is " in tests and "(asymmetric path)" in tests


@pytest.mark.lab
async def test_dashboard_peer_picker_all_addresses(make_lab) -> None:
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.screens import peer_picker, probe_screens
    from linkdeck.ui.screens.addresses_screen import ALL_ADDRESSES, AddressesScreen
    from tests.lab import until

    with make_lab({"a": {}, "b": {}}) as lab:
        eth1 = two_address_host(lab)
        app = LinkdeckApp(lab.settings(interval=0.5, test_duration=2), [lab.spec("a"), lab.spec("b")])
        async with app.run_test(size=(200, 50)) as pilot:
            await until(lambda: len(app.updates["b"].interfaces) == 3 if "b" in app.updates else False, "b with eth1")
            await until(lambda: app.updates.get("a") and app.updates["a"].interfaces, "a live")
            assert app.table.select_key(("iface", "a", "eth0"))
            await pilot.press("t")
            peers = await until(
                lambda: isinstance(app.screen, peer_picker.PeerScreen) and app.screen, "the peer picker"
            )
            assert peers.choices == [("b", lab.hosts["b"].address), ("b", ALL_ADDRESSES)]
            await pilot.press("down", "enter")
            screen = await until(lambda: isinstance(app.screen, AddressesScreen) and app.screen, "the addresses screen")
            assert screen.addresses == [lab.hosts["b"].address, eth1]
            await until(lambda: len(screen.run.tested) == 2, "both addresses tested", timeout=60)
            grid = screen.query_one("DataTable")
            assert str(grid.get_cell(eth1, "interface")) == "eth1"
            assert "Mb/s" in str(grid.get_cell(eth1, "forward"))
            assert [c.code for c in screen.run.causes] == ["PATH_DIFFERS"]
            causes = str(screen.query_one("#addresses-causes").render())
            assert f"a → b to {eth1} (eth1) is " in causes and "(asymmetric path)" in causes
            assert "done. Esc closes." in str(screen.query_one("#addresses-status").render())
            # the Last test column of a's eth0 shows the last of the runs, as sent from there
            assert app.inline_verdict("a", "eth0") == "→ " + probe_screens.short_verdict(screen.run.tested[-1].outcome)
            await pilot.press("escape")
            await until(lambda: not isinstance(app.screen, AddressesScreen), "the screen closed")
        assert lab.hosts["a"].pgrep("iperf3") == [] and lab.hosts["b"].pgrep("iperf3") == []


def test_an_address_broken_one_way_is_no_yardstick_the_other_way() -> None:
    """The lab's d → a with a's eth1 at MTU 1400: into eth1 moved 38.5 kb/s, so out of it a → d
    ran alone and twice as fast as beside a full forward direction over eth0; eth0 is not
    slower for that."""
    links = (iface("eth0", addresses=("10.0.0.12/24",)), iface("eth1", addresses=("10.0.0.62/24",)))
    tested = [
        ("10.0.0.12", "eth0", result("10.0.0.12", 5.05e9, 4.80e9)),
        ("10.0.0.62", "eth1", result("10.0.0.62", 38.5e3, 10.1e9)),
    ]
    causes = compare_addresses(tested, links)
    assert [c.message.split(":")[0] for c in causes] == [
        "client → server to 10.0.0.62 (eth1) moved next to nothing (38.5 kb/s) against 5.05 Gb/s to 10.0.0.12 (eth0)"
    ]
