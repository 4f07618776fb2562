"""Findings over real SSH in the namespace lab: linkdeck.collector.Fleet feeds a Diagnoser
from on_update, exactly as the dashboard does."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from linkdeck.collector import Fleet
from linkdeck.diagnose import Diagnoser
from linkdeck.model import Finding, HostUpdate, Severity
from tests.cli import linkdeck
from tests.lab import wait_for

pytestmark = pytest.mark.lab

INTERVAL = 0.5


class Watch:
    """A Diagnoser fed by a Fleet; keeps the findings as they stood after every update."""

    def __init__(self, lab, names: list[str], window_s: float) -> None:
        settings = lab.settings(interval=INTERVAL)
        self.settings = replace(settings, thresholds=replace(settings.thresholds, window_s=window_s))
        self.diagnoser = Diagnoser(self.settings)
        self.after_each: list[list[Finding]] = []
        self.last: dict[str, HostUpdate] = {}
        self.fleet = Fleet([lab.spec(n) for n in names], self.settings, self.on_update)

    def on_update(self, update: HostUpdate) -> None:
        self.last[update.host] = update
        self.diagnoser.observe(update)
        self.after_each.append(self.diagnoser.findings())

    def samples(self, name: str) -> int:
        return self.fleet.collectors[name].samples_seen

    async def run_until(self, ticks: int, timeout: float) -> list[Finding]:
        self.fleet.start()
        try:
            await wait_for(
                lambda: all(self.samples(n) >= ticks for n in self.fleet.collectors),
                timeout=timeout,
                message=f"{ticks} samples from every host",
            )
        finally:
            await self.fleet.stop()
        return self.diagnoser.findings()


def eth0(update: HostUpdate):
    return next(v.iface for v in update.interfaces if v.iface.name == "eth0")


async def test_two_hosts_1500_and_9000_in_one_subnet_give_one_mtu_mismatch(make_lab) -> None:
    with make_lab({"a": {"mtu": 1500}, "b": {"mtu": 9000}}) as lab:
        watch = Watch(lab, ["a", "b"], window_s=2.0)
        found = await watch.run_until(ticks=3, timeout=30)
    assert (eth0(watch.last["a"]).mtu, eth0(watch.last["b"]).mtu) == (1500, 9000)
    assert [(f.code, f.severity, f.host, f.interface) for f in found] == [("MTU_MISMATCH", Severity.ERROR, "b", "eth0")]
    subnet = f"{lab.subnet}"
    assert found[0].message.startswith(f"MTU 9000 vs 1500 in one subnet ({subnet}): eth0 differs from a eth0")
    assert found[0].evidence == f"MTUs in {subnet}: a eth0 1500; b eth0 9000"


async def test_host_with_two_interfaces_in_one_subnet_and_different_mtus_is_an_error(make_lab) -> None:
    with make_lab({"c": {"extra_ifaces": [("eth1", None, 9000)]}, "d": {}}) as lab:
        watch = Watch(lab, ["c", "d"], window_s=2.0)
        found = await watch.run_until(ticks=3, timeout=30)
    two = [f for f in found if f.code == "TWO_IFACES_ONE_SUBNET"]
    assert [(f.severity, f.host, f.interface) for f in two] == [(Severity.ERROR, "c", "eth1")]
    assert two[0].evidence == f"eth0 (MTU 1500), eth1 (MTU 9000) in {lab.subnet}"
    # eth1's 9000 also differs from d's 1500: that is the one other finding.
    assert sorted((f.code, f.host, f.interface) for f in found) == [
        ("MTU_MISMATCH", "c", "eth1"),
        ("TWO_IFACES_ONE_SUBNET", "c", "eth1"),
    ]


async def test_a_clean_lab_raises_no_finding_over_several_windows(lab) -> None:
    # Window 2 s, 16 ticks at 0.5 s: four windows' worth, judged after every single update.
    watch = Watch(lab, ["h1", "h2", "h3"], window_s=2.0)
    found = await watch.run_until(ticks=16, timeout=60)
    assert {eth0(watch.last[n]).mtu for n in ("h1", "h2", "h3")} == {1500}
    assert len(watch.after_each) >= 48
    assert [f for each in watch.after_each for f in each] == []
    assert found == []


def snapshot_json(lab, *hosts: str) -> dict:
    out = linkdeck("snapshot", "--json", "--interval", "0.5", "--ssh-config", str(lab.ssh_config), "--no-local", *hosts,
                   drop_env=["SSH_AUTH_SOCK", "SSH_CONNECTION"])
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_issue_18_two_legs_in_one_subnet_name_the_same_spare_whoever_else_is_watched(make_lab) -> None:
    # Issue 18 §1: eth0 (.11, MTU 1500) is the address linkdeck connects to and carries the default
    # route; eth1 (.21, MTU 1400) is the second leg. A jumbo host beside it once turned the advice
    # into "unplug or unaddress eth0".
    with make_lab({"a": {"extra_ifaces": [("eth1", 21, 1400)]}, "g": {"mtu": 9000}}) as lab:
        lab.hosts["a"].ip("route", "add", "default", "via", lab.root_address, "dev", "eth0")
        alone = snapshot_json(lab, "a")
        beside = snapshot_json(lab, "a", "g")
    address = lab.hosts["a"].address
    assert [h["reached_at"] for h in beside["hosts"]] == [address, lab.hosts["g"].address]
    advice = [[f for f in snap["findings"] if f["code"] == "TWO_IFACES_ONE_SUBNET"] for snap in (alone, beside)]
    assert advice[0] == advice[1]
    (f,) = advice[0]
    assert (f["severity"], f["host"], f["interface"]) == ("error", "a", "eth1")
    assert f["hint"] == (
        "keep one interface per subnet: unplug or unaddress eth1, or move it to another subnet; "
        f"keep eth0: it carries linkdeck's session ({address}) and the default route"
    )
