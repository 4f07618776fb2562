"""The path MTU probe over real SSH in the namespace lab (issue 10.2): two hosts at MTU 9000
on a bridge whose ports carry 1500 (offload off, so big frames stay big) are told apart from a
clean pair, and a host without ping says so."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from linkdeck.core.oses import ping_install
from linkdeck.present.outcome import report_text
from linkdeck.probe.pairs import outcome_json
from linkdeck.probe.session import run_pairs
from tests.cli import linkdeck
from tests.test_json_schemas import valid

pytestmark = pytest.mark.lab

JUMBO = {"mtu": 9000, "offload": False}


@pytest.fixture(scope="module")
def mtu_lab(request):
    from tests.conftest import _lab_missing
    from tests.lab import Lab

    reason = _lab_missing()
    if reason:
        pytest.skip(reason)
    with Lab(
        {
            "a": {**JUMBO, "port_mtu": 1500},
            "b": {**JUMBO, "port_mtu": 1500},
            "c": JUMBO,
            "d": JUMBO,
            "e": {"ping": False},
            # §7 of issue 18: the same black hole with no ping at either end
            "f": {**JUMBO, "port_mtu": 1500, "ping": False},
            "g": {**JUMBO, "port_mtu": 1500, "ping": False},
            # issue 23: an end whose own MTU is the path's (a veth, which takes 4 bytes over it)
            "h": {"mtu": 1400, "offload": False},
        }
    ) as built:
        yield built


def _run(lab, pairs, seconds=3):
    settings = lab.settings()
    specs = {s.name: s for s in settings.hosts}
    outcomes, _ = asyncio.run(run_pairs(specs, settings, pairs, seconds))
    return outcomes


def test_jumbo_ends_over_a_1500_path_are_told_so_and_a_clean_pair_is_not(mtu_lab) -> None:
    blackhole, clean = _run(mtu_lab, [("a", "b"), ("c", "d")])
    print(report_text(blackhole), report_text(clean))
    doc = outcome_json(blackhole)
    assert doc["path_mtu"] == {"forward": 1500, "reverse": 1500}
    codes = [c["code"] for c in doc["causes"]]
    assert codes[0] == "PATH_MTU" and "DROPS" not in codes and "BOTTLENECK" not in codes
    first = doc["causes"][0]["message"]
    assert "1500" in first and "9000" in first and "both ends use 9000" in first
    assert doc["verdict"] == "bad" and blackhole.verdict.summary.startswith("the path carries 1500-byte packets")
    assert "Path MTU" in report_text(blackhole) and "a → b 1500 bytes" in report_text(blackhole)

    doc = outcome_json(clean)
    assert doc["path_mtu"] == {"forward": 9000, "reverse": 9000}
    assert "PATH_MTU" not in [c["code"] for c in doc["causes"]]
    assert doc["verdict"] != "error"


def test_without_ping_jumbo_ends_over_a_1500_bridge_are_probed_with_iperf3_udp(mtu_lab) -> None:
    """Issue 18 §7: no ping at either end, MTU 9000 both, a bridge carrying 1500. TCP connects
    and moves nothing; that was "drops rising" and "a bottleneck near 0 b/s". iperf3 3.12 at
    both ends probes the path with UDP --dont-fragment instead (without it: PATH_MTU_SUSPECTED,
    tests/unit/test_verdict.py)."""
    (outcome,) = _run(mtu_lab, [("f", "g")], seconds=2)
    text = report_text(outcome)
    print(text)
    doc = outcome_json(outcome)
    codes = [c["code"] for c in doc["causes"]]
    assert (doc["path_mtu"]["forward"], doc["path_mtu"]["reverse"]) == (1500, 1500), text
    hint = ping_install("linux", Path("/etc/os-release").read_text())
    assert doc["path_mtu"]["note"] == "; ".join(
        f"ping not found on {h} (`{hint}`): probed with iperf3 UDP --dont-fragment: 1500 bytes get through, 1501 do not"
        for h in ("f", "g")
    )
    assert codes and codes[0] == "PATH_MTU", text
    assert not {"BOTTLENECK", "DROPS", "RETRANSMITS", "ASYMMETRY"} & set(codes), text
    assert doc["verdict"] == "bad" and outcome.verdict.summary.startswith(
        "the path carries 1500-byte packets; both ends use 9000"
    )
    print(f"path MTU probe with iperf3 UDP: {outcome.result.path_mtu.seconds:.1f} s")


def test_a_host_without_ping_says_what_to_install(mtu_lab) -> None:
    (outcome,) = _run(mtu_lab, [("e", "c")], seconds=1)
    p = outcome.result.path_mtu
    hint = ping_install("linux", Path("/etc/os-release").read_text())
    # e's own way is probed with iperf3 (3.12 at both ends) up to e's MTU, 1500
    assert (
        p.forward == 1500
        and p.note == f"ping not found on e (`{hint}`): probed with iperf3 UDP --dont-fragment: 1500 bytes get through"
    )
    assert p.reverse is not None  # c has a ping: it probes its own way
    assert outcome_json(outcome)["path_mtu"]["note"] == p.note


def _cli(lab, tmp_path, *argv):
    config = tmp_path / "linkdeck.toml"
    config.write_text(f'known_hosts = "{lab.known_hosts}"\n')
    return linkdeck("mtu", *argv, "--config", str(config), "--ssh-config", str(lab.ssh_config))


def test_linkdeck_mtu_prints_the_largest_packet_each_way(mtu_lab, tmp_path) -> None:
    proc = _cli(mtu_lab, tmp_path, "a", "b", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["src"], doc["dst"], doc["address"]) == ("a", "b", mtu_lab.hosts["b"].address)
    assert doc["path_mtu"] == {"forward": 1500, "reverse": 1500} and doc["mtu"] == {"src": 9000, "dst": 9000}
    assert [c["code"] for c in doc["causes"]] == ["PATH_MTU"] and "both ends use 9000" in doc["causes"][0]["message"]
    valid("mtu", doc)
    text = _cli(mtu_lab, tmp_path, "c", "d").stdout
    c, d = (mtu_lab.hosts[h].address for h in "cd")
    # clean at 9000: the sender's own MTU is what limits each way, and the address each went to
    assert (
        f"c → d ({d}): 9000 bytes get through — c eth0 MTU 9000" in text
        and f"d → c ({c}): 9000 bytes get through — d eth0 MTU 9000" in text
    )
    assert "PATH_MTU" not in text
    same = _cli(mtu_lab, tmp_path, "c", "c")
    assert same.returncode == 2 and "same host" in same.stderr


def test_linkdeck_mtu_names_the_interface_that_limits_each_way(mtu_lab, tmp_path) -> None:
    """c at 9000 and h at 1400 on a 9216 bridge: c's packets get into h's veth up to 1404
    bytes (its MTU plus the 4 Linux takes over it), h sends at most its own 1400. Over SSH a
    veth named eth0 has no driver to read (no device/ in sysfs, so no ethtool -i): the slack
    is the receiver's, not said to be a veth's."""
    c, h = (mtu_lab.hosts[n].address for n in "ch")
    text = _cli(mtu_lab, tmp_path, "c", "h").stdout
    assert f"c → h ({h}): 1404 bytes get through — h eth0 MTU 1400 (+4 receive slack)" in text, text
    assert f"h → c ({c}): 1400 bytes get through — h eth0 MTU 1400" in text, text


async def test_u_on_an_interface_row_shows_the_largest_packet_each_way(mtu_lab) -> None:
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.bindings import APP_KEYS
    from linkdeck.ui.screens import peer_picker
    from linkdeck.ui.screens.mtu_screen import MtuScreen
    from tests.lab import wait_for

    assert any(k.key == "u" and k.action == "probe('mtu')" for k in APP_KEYS)  # help and palette list it
    app = LinkdeckApp(mtu_lab.settings(interval=0.5), [mtu_lab.spec("a"), mtu_lab.spec("b")])
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(lambda: all(app.updates[h].interfaces for h in ("a", "b")), 30, message="both hosts live")
        assert app.table.select_key(("iface", "a", "eth0"))
        await pilot.press("u")
        peers = await wait_for(
            lambda: isinstance(app.screen, peer_picker.PeerScreen) and app.screen, 10, message="the peer picker"
        )
        assert peers.choices == [("b", mtu_lab.hosts["b"].address)]
        await pilot.press("enter")
        screen = await wait_for(
            lambda: isinstance(app.screen, MtuScreen) and app.screen, 10, message="the path MTU screen"
        )
        await wait_for(lambda: screen.outcome is not None, 20, message="the probe's outcome")
        shown = str(screen.query_one("#mtu-result").render())
        # both ends at 9000, 1500 crossed: no end's interface is named as the limit
        a, b = (mtu_lab.hosts[h].address for h in "ab")
        between = "less than {} eth0 MTU 9000 and {} eth0 MTU 9000: a hop between them carries no more"
        assert f"a → b ({b}): 1500 bytes get through — " + between.format("a", "b") in shown.replace("\n", " ")
        assert f"b → a ({a}): 1500 bytes get through — " + between.format("b", "a") in shown.replace("\n", " ")
        assert "PATH_MTU: the path carries 1500-byte packets; both ends use 9000" in shown


def test_own_traffic_lasts_until_the_tests_sockets_are_gone_and_a_replay_knows_it(mtu_lab, tmp_path) -> None:
    """Issue 18 §5: the black-holed test leaves its sockets retransmitting 9 KB segments after
    iperf3 exited. Until they are gone the hosts' drops are linkdeck's own, live and in a
    replay of the recording (which once raised a DROPS_RISING live never had)."""
    from linkdeck.findings.engine import Diagnoser
    from linkdeck.probe.lingering import held_sockets
    from linkdeck.probe.session import watching
    from linkdeck.recording.fileformat import read
    from linkdeck.recording.recorder import Recorder
    from linkdeck.recording.replay import Player
    from linkdeck.settings.config import Thresholds

    settings = mtu_lab.settings(interval=0.5, thresholds=Thresholds(window_s=2.0, drops_per_s=0.5))
    specs = {s.name: s for s in settings.hosts}
    path = tmp_path / "blackhole.ldrec"
    seen: dict[str, object] = {}

    async def go() -> None:
        async with watching(specs, settings, ["f", "g", "c", "d"]) as (watch, session):
            recorder = Recorder.for_fleet(str(path), watch.fleet)
            watch.fleet.record(recorder)
            session.on_own_ended = recorder.own_ended
            session.on_outcome = recorder.test
            await session.run_pair("f", "g", duration=2)
            await session.run_pair("c", "d", duration=1)
            address = mtu_lab.hosts["g"].address
            out = mtu_lab.ssh("f", "ss", "-tan").stdout
            seen["left"] = held_sockets(out, address, settings.test_port)
            seen["f"] = session.own_traffic("f")
            # a clean test's sockets close at once: its own traffic ends within a poll or two
            deadline = asyncio.get_running_loop().time() + 15
            while session.own_traffic("c") in (None, float("inf")) and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.2)
            seen["c"] = session.own_traffic("c")
            await asyncio.sleep(3)  # samples after the tests, the sockets still there
            session.on_own_ended = None
            watch.fleet.record(None)
            recorder.close()

    asyncio.run(go())
    print(seen)
    assert seen["left"], "the black-holed test left no socket behind: nothing to wait for"
    assert seen["f"] == float("inf")  # still its own traffic: the sockets are there
    assert seen["c"] not in (None, float("inf"))
    recording = read(path)
    events = list(recording.events())
    fixed, unaware = Player(recording, settings), Player(recording, settings)
    unaware.diagnoser = Diagnoser(settings, clock=lambda: unaware.now)  # the replay before the fix
    raised: dict[str, set] = {"fixed": set(), "unaware": set()}
    for player, name in ((fixed, "fixed"), (unaware, "unaware")):
        while not player.done:
            player.step()
            raised[name] |= {(f.code, f.host) for f in player.diagnoser.findings() if f.code == "DROPS_RISING"}
    print(raised, [e["ev"] for e in events if e["ev"] in ("test", "own")])
    assert raised["unaware"] & {("DROPS_RISING", "f"), ("DROPS_RISING", "g")}, (
        "the lab's drops no longer raise DROPS_RISING: the test shows nothing"
    )
    assert not raised["fixed"] & {("DROPS_RISING", "f"), ("DROPS_RISING", "g")}
