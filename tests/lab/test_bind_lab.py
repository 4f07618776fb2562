"""A test from a chosen interface goes through it, and its verdict says where it went.

lab host d has eth0 and eth1 in one subnet (Linux's weak host model: the route sends by eth0
whatever source address is asked); what d sends by eth1 is shaped to 10 Mbit/s with a tbf,
offloads off so the shaper sees real frames. Real sshd, iperf3 and counters."""

from __future__ import annotations

import pytest

from linkdeck.probe import templates
from linkdeck.probe.session import watching

pytestmark = pytest.mark.lab

SPEEDS = {"d/eth0": 1000, "d/eth1": 1000, "a/eth0": 1000}


def two_legs(lab) -> str:
    """d's eth1 shaped to 10 Mbit/s outbound; d answers ARP for an address only on the
    interface holding it, so replies to eth1's address come in by eth1. eth1's address."""
    d = lab.hosts["d"]
    for key in ("all", "default", "eth0"):
        d.exec("sysctl", "-qw", f"net.ipv4.conf.{key}.arp_ignore=1", f"net.ipv4.conf.{key}.arp_announce=2")
    d.add_interface("eth1", on_bridge=True)
    d.exec("ethtool", "-K", "eth1", "tso", "off", "gso", "off", "gro", "off")
    d.shape("eth1", 10)
    line = d.exec("ip", "-o", "-4", "addr", "show", "dev", "eth1").stdout.split()
    return line[line.index("inet") + 1].split("/")[0]


async def run_from(lab_pair, chosen: str):
    lab, _ = lab_pair
    specs = {n: lab.spec(n) for n in ("d", "a")}
    async with watching(specs, lab.settings(test_duration=2, speed_overrides=SPEEDS), ["d", "a"]) as (_, session):
        return await session.run_pair("d", "a", src_iface=chosen)


@pytest.fixture(scope="module")
def lab_pair():
    from tests.lab import Lab

    with Lab({"d": {}, "a": {}}) as lab:
        yield lab, two_legs(lab)


@pytest.mark.parametrize("chosen", ["eth1", "address"])
async def test_a_test_from_eth1_goes_through_eth1(lab_pair, chosen) -> None:
    _, eth1_address = lab_pair
    o = await run_from(lab_pair, eth1_address if chosen == "address" else "eth1")
    r = o.result
    assert r.error is None, r.error
    assert o.src_iface == "eth1"
    # what d sent crossed eth1's 10 Mbit/s shaper: iperf3 and eth1's own counters say so
    assert r.forward_bps is not None and r.forward_bps < 12e6, r.forward_bps
    assert r.counters_bps["src_tx"] is not None and 5e6 < r.counters_bps["src_tx"] < 14e6, r.counters_bps
    assert "speed figure is wrong" not in o.verdict.summary
    assert all(c.code != "ROUTED_ELSEWHERE" for c in o.verdict.causes)


async def test_where_it_cannot_bind_the_verdict_names_the_interface_used(lab_pair, monkeypatch) -> None:
    # an iperf3 without --bind-dev: -B alone picks eth1's address, the route still picks eth0
    monkeypatch.setattr(templates, "BIND_DEV_SINCE", (99,))
    o = await run_from(lab_pair, "eth1")
    r = o.result
    assert r.error is None, r.error
    assert r.forward_bps is not None and r.forward_bps > 50e6, r.forward_bps  # not through the shaper
    assert o.src_iface == "eth0"
    first = o.verdict.causes[0]
    assert first.code == "ROUTED_ELSEWHERE"
    assert first.message == f"sent through eth0, not eth1: the route to {lab_pair[0].hosts['a'].address} leaves by eth0"
    assert "has no --bind-dev" in first.evidence
    assert o.verdict.summary.startswith(first.message)
    assert "eth1" not in o.verdict.summary.split(";", 1)[1]  # judged on eth0, never stamped on eth1


@pytest.mark.parametrize("command", ["test", "diagnose", "matrix"])
def test_the_commands_send_from_the_interface_given(lab_pair, tmp_path, command) -> None:
    import json

    from tests.cli import linkdeck

    lab, _ = lab_pair
    config = tmp_path / "linkdeck.toml"
    config.write_text(
        f'known_hosts = "{lab.known_hosts}"\n[speed]\n' + "".join(f'"{k}" = {v}\n' for k, v in SPEEDS.items())
    )
    common = ("--time", "1", "--json", "--config", str(config), "--ssh-config", str(lab.ssh_config))
    proc = linkdeck(command, "d", "a", "--from", "eth1", *common, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    test = {"test": lambda: doc, "diagnose": lambda: doc["steps"]["test"], "matrix": lambda: doc["cells"][0]}[command]()
    assert (test["src"], test["dst"]) == ("d", "a")
    assert test["forward_bps"] < 12e6, test["forward_bps"]  # through eth1's 10 Mbit/s shaper
    proc = linkdeck("test", "d", "a", "--from", "192.0.2.9", *common, timeout=120)
    assert proc.returncode == 1
    assert "d has no address 192.0.2.9: give one of its own addresses or an interface name to --from" in proc.stdout


async def test_t_on_the_dashboards_eth1_row_tests_through_eth1(lab_pair) -> None:
    # the user's way in: select d's eth1 and press t; the test leaves by eth1, is judged on
    # it, and its result never stamps eth1 with another interface's figures
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.screens import peer_picker, probe_screens
    from tests.lab import until

    lab, _ = lab_pair
    app = LinkdeckApp(
        lab.settings(interval=0.5, test_duration=2, speed_overrides=SPEEDS), [lab.spec("d"), lab.spec("a")]
    )
    async with app.run_test(size=(160, 50)) as pilot:
        await until(
            lambda: (
                all(app.updates[h].interfaces for h in ("d", "a"))
                and any(v.iface.name == "eth1" for v in app.updates["d"].interfaces)
            ),
            "both hosts live",
        )
        assert app.table.select_key(("iface", "d", "eth1"))
        await pilot.press("t")
        peers = await until(lambda: isinstance(app.screen, peer_picker.PeerScreen) and app.screen, "the peer picker")
        assert peers.choices == [("a", lab.hosts["a"].address)]
        await pilot.press("enter")
        screen = await until(lambda: isinstance(app.screen, probe_screens.TestScreen) and app.screen, "the test screen")
        o = await until(lambda: screen.outcome, "the outcome", timeout=60)
    assert o.result.error is None, o.result.error
    assert o.src_iface == "eth1" and o.result.forward_bps < 12e6, (o.src_iface, o.result.forward_bps)
    assert "speed figure is wrong" not in o.verdict.summary
    assert all(c.code != "ROUTED_ELSEWHERE" for c in o.verdict.causes)
