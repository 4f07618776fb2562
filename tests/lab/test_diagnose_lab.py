"""`linkdeck diagnose` over the namespace lab's scenarios (issue 21 §3): the seed's cause is
named first — a 100 Mbit hop (bottleneck), jumbo ends over a 1500 bridge (PATH_MTU), a host
with two NICs in one subnet (its configuration, seed 000 kube05) — and a clean pair says
"nothing wrong" with its ceilings and path shown."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator

import pytest

from linkdeck.present.diagnose_page import diagnosis_text, rank
from linkdeck.probe.diagnose_steps import run_diagnosis
from linkdeck.probe.session import watching
from tests.cli import linkdeck
from tests.lab.traffic import tcp_transfer
from tests.lab.wait import wait_until

pytestmark = pytest.mark.lab

JUMBO = {"mtu": 9000, "offload": False, "port_mtu": 1500}
# A sender whose TCP segments leave as real frames: veth's GSO would slip a burst of them past
# a smaller MTU downstream whenever a write lets several go out as one, and the black hole
# would then carry a test now and then.
SENDS_FRAMES = {"offload": False}


def second_address_at_mtu_1400(host) -> str:
    """``host`` gets eth1 on the lab bridge (eth0's subnet) at MTU 1400; it answers ARP for an
    address only on its own interface (else eth0 answers for eth1 too and a test to eth1's
    address never touches it). Returns eth1's address."""
    for key in ("all", "default", "eth0"):
        host.exec("sysctl", "-qw", f"net.ipv4.conf.{key}.arp_ignore=1", f"net.ipv4.conf.{key}.arp_announce=2")
    host.add_interface("eth1", on_bridge=True, mtu=1400)
    line = host.exec("ip", "-o", "-4", "addr", "show", "dev", "eth1").stdout.split()
    return line[line.index("inet") + 1].split("/")[0]


@contextlib.contextmanager
def beside_a_transfer(lab, src: str, dst: str, mss: int = 0) -> Iterator[None]:
    """A plain TCP transfer ``src`` → ``dst``'s eth0 that linkdeck did not start, running
    (``dst`` eth0 has received 20 MB of it) before the block starts and until it ends."""
    s, d = lab.hosts[src], lab.hosts[dst]

    def received() -> int:
        return int(d.exec("cat", "/sys/class/net/eth0/statistics/rx_bytes").stdout)

    start = received()
    with tcp_transfer(d.popen, s.popen, d.address, seconds=120, mss=mss):
        wait_until(lambda: received() - start > 20e6, timeout=30, message=f"the transfer {src} → {dst} flowing")
        yield


def diagnose(lab, src: str, dst: str, seconds: float = 2, **overrides):
    settings = lab.settings(test_duration=seconds, **overrides)
    specs = {s.name: s for s in settings.hosts}

    async def go():
        async with watching(specs, settings, [src, dst]) as (watch, session):
            return await run_diagnosis(watch, session, src, dst, seconds)

    d = asyncio.run(go())
    return d, rank(d)


def test_a_clean_pair_says_nothing_wrong_with_its_ceilings_and_path(lab, tmp_path) -> None:
    # A 1 Gb/s path for real: both legs shaped to 1000 Mbit/s and told they are 1G links.
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 1000)
    config = tmp_path / "linkdeck.toml"
    config.write_text(f'known_hosts = "{lab.known_hosts}"\n[speed]\n"h1/eth0" = 1000\n"h2/eth0" = 1000\n')
    proc = linkdeck(
        "diagnose", "h1", "h2", "--time", "2", "--json", "--config", str(config), "--ssh-config", str(lab.ssh_config)
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["src"], doc["dst"], doc["verdict"], doc["causes"]) == ("h1", "h2", "ok", []), doc["causes"]
    assert doc["summary"].startswith("nothing wrong")
    ceilings = [doc["steps"]["ceilings"][h]["forward_bps"] for h in ("h1", "h2")]
    assert all(b > 1e9 for b in ceilings)  # loopback outruns the 1G link
    assert doc["ruled_out"][0].startswith("host ceilings ") and doc["ruled_out"][0].endswith(": not the hosts")
    assert "path MTU 1500 both ways: not MTU" in doc["ruled_out"]
    assert doc["steps"]["test"]["path_mtu"] == {"forward": 1500, "reverse": 1500}
    assert doc["steps"]["test"]["forward_bps"] > 0.9e9 and doc["steps"]["addresses"] is None
    assert {i["name"]: i["mtu"] for i in doc["steps"]["ends"]["h1"]["interfaces"]}["eth0"] == 1500
    text = linkdeck(
        "diagnose", "h1", "h2", "--time", "1", "--config", str(config), "--ssh-config", str(lab.ssh_config)
    ).stdout
    assert "1. Both ends alone" in text and "loopback: ceiling " in text and "3. Verdict: OK — nothing wrong" in text
    assert "suspect" not in text  # a tbf at the link's speed lets ~956 Mb/s through: nothing suspect


def test_a_100_mbit_hop_between_10g_ends_is_the_bottleneck_first(lab) -> None:
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 100)
    d, j = diagnose(lab, "h1", "h2", speed_overrides={"h1/eth0": 10000, "h2/eth0": 10000})
    codes = [c.code for c in j.causes]
    # the bottleneck's figure heads the page; each direction alone and retransmits are its evidence
    assert (
        j.status.value == "bad"
        and codes[0] == "BOTTLENECK"
        and "ALONE_ALSO_SLOW" not in codes
        and "RETRANSMITS" not in codes
    ), codes
    assert j.summary.startswith("a bottleneck near ") and "100 Mb/s" in j.causes[0].evidence
    assert "`linkdeck matrix h1 h2`" in j.causes[0].next
    assert "path MTU 1500 both ways: not MTU" in j.ruled_out


def test_jumbo_ends_over_a_1500_bridge_are_path_mtu_first(make_lab) -> None:
    with make_lab({"a": JUMBO, "b": JUMBO}) as lab:
        d, j = diagnose(lab, "a", "b", seconds=1)
    assert j.causes[0].code == "PATH_MTU", [c.code for c in j.causes]
    assert d.test.result.path_mtu.forward == 1500 and d.test.result.path_mtu.reverse == 1500
    assert not any("not MTU" in line for line in j.ruled_out)


def test_two_nics_in_one_subnet_are_the_hosts_configuration_first(make_lab) -> None:
    with make_lab({"c": {"extra_ifaces": [("eth1", None, 1500)]}, "d": {}}) as lab:
        for name, ifname in (("c", "eth0"), ("c", "eth1"), ("d", "eth0")):
            lab.hosts[name].shape(ifname, 1000)
        d, j = diagnose(lab, "d", "c", seconds=1, speed_overrides={"c/eth0": 1000, "c/eth1": 1000, "d/eth0": 1000})
    assert j.causes[0].code == "TWO_IFACES_ONE_SUBNET" and j.causes[0].host == "c", [c.code for c in j.causes]
    assert j.status.value != "ok"
    # c answers on both addresses in d's subnet: each was tested (seed 003)
    assert d.addresses is not None and len(d.addresses.tested) == 2


def test_a_slow_second_address_is_named_first_and_the_host_configuration_after_it(make_lab) -> None:
    from tests.unit.probe.test_every_address import two_address_host

    with make_lab({"a": {}, "b": {}}) as lab:
        eth1 = two_address_host(lab)  # b's eth1, same subnet as eth0, what it receives shaped to 10 Mbit/s
        for name in ("a", "b"):
            lab.hosts[name].shape("eth0", 1000)
        d, j = diagnose(lab, "a", "b", seconds=1, speed_overrides={"a/eth0": 1000, "b/eth0": 1000, "b/eth1": 1000})
    codes = [c.code for c in j.causes]
    assert codes[0] == "PATH_DIFFERS" and eth1 in j.causes[0].message, codes  # seed 003: measured, so first
    assert "TWO_IFACES_ONE_SUBNET" in codes and f"`linkdeck mtu a b --address {eth1}`" in j.causes[0].next
    assert [t.address for t in d.addresses.tested] == [lab.hosts["b"].address, eth1]


async def test_d_on_an_interface_row_fills_in_the_same_page_as_each_step_finishes(lab) -> None:
    """Issue 21 §3: ``d`` → the peer picker → the diagnosis's page, redrawn as each step
    finishes, then its verdict and what it ruled out."""
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.bindings import APP_KEYS
    from linkdeck.ui.screens import peer_picker
    from linkdeck.ui.screens.diagnose_screen import DiagnoseScreen
    from tests.lab import wait_for

    assert any(k.key == "d" and k.action == "probe('diagnose')" for k in APP_KEYS)  # help and palette list it
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 1000)
    settings = lab.settings(interval=0.5, test_duration=1, speed_overrides={"h1/eth0": 1000, "h2/eth0": 1000})
    app = LinkdeckApp(settings, [lab.spec("h1"), lab.spec("h2")])
    async with app.run_test(size=(160, 60)) as pilot:
        await wait_for(lambda: all(app.updates[h].interfaces for h in ("h1", "h2")), 30, message="both hosts live")
        assert app.table.select_key(("iface", "h1", "eth0"))
        await pilot.press("d")
        peers = await wait_for(
            lambda: isinstance(app.screen, peer_picker.PeerScreen) and app.screen, 10, message="the peer picker"
        )
        assert peers.choices == [("h2", lab.hosts["h2"].address)]
        await pilot.press("enter")
        screen = await wait_for(
            lambda: isinstance(app.screen, DiagnoseScreen) and app.screen, 10, message="the diagnosis screen"
        )

        def page() -> str:
            return str(screen.query_one("#diagnose-page").render())

        # the ends and both ceilings are on the page while the path's test still runs
        await wait_for(lambda: "  testing…" in page(), 20, message="the ceilings before the test")
        partial = page()
        assert (
            "h1: live" in partial
            and partial.count("loopback: ceiling ") == 2
            and "3. Verdict: when the steps above finish" in partial
        )
        await wait_for(lambda: screen.judged is not None, 30, message="the verdict")
        shown = page()
    assert "3. Verdict: OK — nothing wrong" in shown, shown
    assert "path MTU 1500 both ways: not MTU" in shown and "ruled out:" in shown
    assert "testing…" not in shown and screen.done == {"ends", "ceilings", "test", "all"}


def test_a_second_address_at_mtu_1400_is_named_by_its_path_mtu_first(make_lab) -> None:
    """Issue 29 §3: d → a where a's eth1 (MTU 1400) shares the subnet with eth0; the direction
    into eth1 moves next to nothing. Its path MTU, probed per address, is the first cause."""
    with make_lab({"d": SENDS_FRAMES, "a": {}}) as lab:
        eth1 = second_address_at_mtu_1400(lab.hosts["a"])
        d, j = diagnose(lab, "d", "a", seconds=1)
    first = j.causes[0]
    assert first.code == "PATH_MTU" and f"via {eth1} (eth1)" in first.message, [(c.code, c.message) for c in j.causes]
    assert f"`linkdeck mtu d a --address {eth1}`" in first.next and j.summary == first.message
    assert j.status.value == "bad"  # a direction that moved next to nothing through eth1 is broken
    assert not any(eth1 in c.message for c in j.causes[1:])  # its PATH_DIFFERS is evidence under it
    assert "PATH_DIFFERS" not in [c.code for c in j.causes], [c.message for c in j.causes]  # nor is eth0 slower for it
    assert not any("not probed yet" in c.evidence for c in j.causes)  # the subnet probed as snapshot does


def test_a_diagnosis_beside_a_running_transfer_says_the_path_was_shared_first(lab) -> None:
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 100)
    h1, h2 = lab.hosts["h1"], lab.hosts["h2"]
    with tcp_transfer(h2.popen, h1.popen, h2.address, seconds=60):
        d, j = diagnose(lab, "h1", "h2", speed_overrides={"h1/eth0": 1000, "h2/eth0": 1000})
    assert [c.code for c in j.conditions] == ["SHARED_PATH"], j
    assert j.summary.startswith(j.conditions[0].message) and "the path was shared" in j.summary
    assert "`linkdeck diagnose h1 h2` again when the other traffic has ended" in j.conditions[0].next
    codes = [c.code for c in j.causes]
    assert not {"ALONE_ALSO_SLOW", "BIDIR_ONLY", "ASYMMETRY", "RETRANSMITS"} & set(codes), codes
    assert codes[0] == "BOTTLENECK" and j.causes[0].message.endswith("in all below both 1 Gb/s links")
    page = diagnosis_text(d, j)
    print(page)  # the closing note's page
    assert page.index("first: SHARED_PATH") < page.index("1. BOTTLENECK")


# The lab's scenarios again, each beside a transfer into the destination's eth0 that linkdeck did
# not start (issue 29): the other traffic is a condition said first, never a cause of its own, and
# the first cause is the one the scenario has when the path is quiet.


def test_a_second_address_at_mtu_1400_beside_a_transfer_into_eth0_names_eth1_first(make_lab) -> None:
    # eth0 carries the transfer's bytes and the test to eth1's address moves next to nothing:
    # the test still went through eth1, and eth1's path MTU is what to fix
    with make_lab({"d": SENDS_FRAMES, "a": {}}) as lab:
        eth1 = second_address_at_mtu_1400(lab.hosts["a"])
        for name in ("d", "a"):
            lab.hosts[name].shape("eth0", 1000)
        speeds = {"d/eth0": 1000, "a/eth0": 1000, "a/eth1": 1000}
        with beside_a_transfer(lab, "d", "a"):
            d, j = diagnose(lab, "d", "a", seconds=2, speed_overrides=speeds)
    said = [(c.code, c.message) for c in j.causes]
    assert [c.code for c in j.conditions] == ["SHARED_PATH"], (j.conditions, said)
    first = j.causes[0]
    assert first.code == "PATH_MTU" and f"via {eth1} (eth1)" in first.message, said
    assert "a eth1 takes 1404-byte packets" in first.evidence, first.evidence
    assert "give every interface in that subnet one MTU (a eth1 and the hosts sending to it)" in first.next
    assert f"`linkdeck mtu d a --address {eth1}` re-checks" in first.next, first.next
    assert [(t.address, t.interface) for t in d.addresses.tested] == [(lab.hosts["a"].address, "eth0"), (eth1, "eth1")]
    assert d.addresses.tested[1].outcome.result.forward_bps < 1e6  # the black hole: next to nothing into eth1
    page = diagnosis_text(d, j)
    assert f"{eth1} (eth0)" not in page and "a eth0 takes" not in page, page  # never the busy interface
    assert page.index("first: SHARED_PATH") < page.index("1. PATH_MTU")
    assert j.status.value == "bad", page


def test_a_slow_second_address_beside_a_transfer_into_eth0_is_named_by_eth1_first(make_lab) -> None:
    from tests.unit.probe.test_every_address import two_address_host

    with make_lab({"a": {}, "b": {}}) as lab:
        eth1 = two_address_host(lab)  # b's eth1, same subnet as eth0, what it receives shaped to 10 Mbit/s
        for name in ("a", "b"):
            lab.hosts[name].shape("eth0", 1000)
        speeds = {"a/eth0": 1000, "b/eth0": 1000, "b/eth1": 1000}
        with beside_a_transfer(lab, "a", "b"):
            d, j = diagnose(lab, "a", "b", seconds=2, speed_overrides=speeds)
    said = [(c.code, c.message) for c in j.causes]
    assert [c.code for c in j.conditions] == ["SHARED_PATH"], (j.conditions, said)
    first = j.causes[0]
    assert first.code == "PATH_DIFFERS" and f"to {eth1} (eth1) is " in first.message, said
    assert first.message.endswith("replies may leave by eth0 (asymmetric path)"), first.message
    assert f"`linkdeck mtu a b --address {eth1}`" in first.next, first.next
    assert f"`linkdeck test a b --address {eth1}`" in first.next, first.next
    assert [(t.address, t.interface) for t in d.addresses.tested] == [(lab.hosts["b"].address, "eth0"), (eth1, "eth1")]
    page = diagnosis_text(d, j)
    assert f"{eth1} (eth0)" not in page and "replies may leave by eth1" not in page, page
    assert page.index("first: SHARED_PATH") < page.index("1. PATH_DIFFERS")


def test_jumbo_ends_over_a_1500_bridge_beside_a_transfer_that_fits_are_path_mtu_first(make_lab) -> None:
    # someone's transfer between the jumbo ends with its segments clamped to what the bridge
    # carries (so it runs at full speed, unlike the test's 9000-byte frames)
    with make_lab({"a": JUMBO, "b": JUMBO}) as lab:
        for name in ("a", "b"):
            lab.hosts[name].shape("eth0", 1000)
        with beside_a_transfer(lab, "a", "b", mss=1400):
            d, j = diagnose(lab, "a", "b", seconds=2, speed_overrides={"a/eth0": 1000, "b/eth0": 1000})
    said = [(c.code, c.message) for c in j.causes]
    first = j.causes[0]
    assert first.code == "PATH_MTU", (said, j.conditions)
    assert first.message.startswith("the path carries 1500-byte packets; both ends use 9000"), first.message
    assert "make every hop between a and b carry the ends' MTU" in first.next, first.next
    assert "`linkdeck mtu a b` re-checks" in first.next
    assert d.test.result.path_mtu.forward == 1500 and d.test.result.path_mtu.reverse == 1500
    assert not any("not MTU" in line for line in j.ruled_out)
    assert j.status.value == "bad"


def test_a_clean_pair_beside_a_transfer_is_shared_and_nothing_wrong(lab) -> None:
    for name in ("h1", "h2"):
        lab.hosts[name].shape("eth0", 1000)
    with beside_a_transfer(lab, "h1", "h2"):
        d, j = diagnose(lab, "h1", "h2", speed_overrides={"h1/eth0": 1000, "h2/eth0": 1000})
    assert [c.code for c in j.conditions] == ["SHARED_PATH"], j
    assert j.causes == () and j.status.value == "ok", [(c.code, c.message) for c in j.causes]
    assert j.summary.startswith(j.conditions[0].message) and j.summary.endswith("about what a 1 Gb/s hop carries")
    assert "`linkdeck diagnose h1 h2` again when the other traffic has ended" in j.conditions[0].next
    page = diagnosis_text(d, j)
    assert "3. Verdict: OK — " in page and "suspect" not in page, page
