"""Findings over real SSH in the namespace lab: linkdeck.fleet.collector.Fleet feeds a Diagnoser
from on_update, exactly as the dashboard does."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from linkdeck.core.model import Finding, HostUpdate, Severity
from linkdeck.findings.engine import Diagnoser
from linkdeck.fleet.collector import Fleet
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
    # Not probed (a Watch has no prober): both sides named, neither blamed.
    assert sorted((f.code, f.severity, f.host, f.interface) for f in found) == [
        ("MTU_MISMATCH", Severity.WARNING, "a", "eth0"),
        ("MTU_MISMATCH", Severity.WARNING, "b", "eth0"),
    ]
    subnet = f"{lab.subnet}"
    assert found[0].message == f"MTUs differ in {subnet}: a eth0 1500; b eth0 9000"


async def test_host_with_two_interfaces_in_one_subnet_and_different_mtus_is_an_error(make_lab) -> None:
    with make_lab({"c": {"extra_ifaces": [("eth1", None, 9000)]}, "d": {}}) as lab:
        watch = Watch(lab, ["c", "d"], window_s=2.0)
        found = await watch.run_until(ticks=3, timeout=30)
    two = [f for f in found if f.code == "TWO_IFACES_ONE_SUBNET"]
    assert [(f.severity, f.host, f.interface) for f in two] == [(Severity.ERROR, "c", "eth1")]
    assert two[0].evidence == f"eth0 (MTU 1500), eth1 (MTU 9000) in {lab.subnet}"
    # eth1's 9000 also differs from d's 1500: not probed, so both sides are named.
    assert sorted((f.code, f.host, f.interface) for f in found) == [
        ("MTU_MISMATCH", "c", "eth1"),
        ("MTU_MISMATCH", "d", "eth0"),
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
    out = linkdeck(
        "snapshot",
        "--json",
        "--interval",
        "0.5",
        "--ssh-config",
        str(lab.ssh_config),
        "--no-local",
        *hosts,
        drop_env=["SSH_AUTH_SOCK", "SSH_CONNECTION"],
    )
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


JUMBO = {"mtu": 9000, "offload": False}


@pytest.mark.parametrize("port_mtu, blamed", [(1500, ["c", "g"]), (9216, ["a"])])
def test_issue_18_mtu_mismatch_blames_the_side_the_subnet_does_not_carry(make_lab, port_mtu, blamed) -> None:
    # Issue 18 §2: hosts at 1500, 9000, 9000. On a bridge that carries 1500 the minority (a) was
    # told to `mtu 9000`: the opposite of the truth. snapshot probes the two jumbo hosts first.
    with make_lab(
        {"a": {"port_mtu": port_mtu}, "c": {**JUMBO, "port_mtu": port_mtu}, "g": {**JUMBO, "port_mtu": port_mtu}}
    ) as lab:
        snap = snapshot_json(lab, "a", "c", "g")
    found = [f for f in snap["findings"] if f["code"] == "MTU_MISMATCH"]
    assert sorted(f["host"] for f in found) == blamed and {f["severity"] for f in found} == {"error"}
    carried = 1500 if port_mtu == 1500 else 9000
    assert found[0]["evidence"].startswith(
        f"largest packet through with don't-fragment between c and g: {carried} bytes; "
    )
    if blamed == ["c", "g"]:
        assert found[0]["hint"] == (
            "the subnet carries 1500: c eth0 and g eth0 at 9000 lose every large frame; "
            "set them to 1500 (`ip link set dev eth0 mtu 1500`) or raise the switch to 9000"
        )
    else:
        assert found[0]["hint"].startswith(
            "the subnet carries 9000: a eth0 at 1500 drops every frame above 1500 its peers send; raise it to 9000"
        )


async def test_the_dashboard_probes_a_mixed_subnet_once_before_blaming_a_side(make_lab) -> None:
    from linkdeck.ui.app import LinkdeckApp

    with make_lab({"a": {"port_mtu": 1500}, "c": {**JUMBO, "port_mtu": 1500}, "g": {**JUMBO, "port_mtu": 1500}}) as lab:
        app = LinkdeckApp(lab.settings(interval=0.5), [lab.spec(n) for n in ("a", "c", "g")])
        async with app.run_test(size=(160, 40)):

            def mismatch() -> list:
                return sorted((f.host, f.severity.value) for f in app.findings if f.code == "MTU_MISMATCH")

            await wait_for(
                lambda: mismatch() == [("c", "error"), ("g", "error")],
                30,
                message="the jumbo hosts blamed after the probe",
            )
            assert [(s.subnet, s.mtus, s.between, s.largest) for s in app.advice.learnt] == [
                (str(lab.subnet), (1500, 9000), ("c", "g"), 1500)
            ]
            # linkdeck's own traffic through both ends of the probe, never judged as theirs
            assert (
                app.tests.own_traffic("c") is not None
                and app.tests.own_traffic("g") is not None
                and app.tests.own_traffic("a") is None
            )
            # the subnet's probe is a path MTU probe too: MTU_MISMATCH says it, PATH_MTU does not again
            assert [f for f in app.findings if f.code == "PATH_MTU"] == []
            hint = next(f.hint for f in app.findings if f.code == "MTU_MISMATCH")
            assert hint.startswith("the subnet carries 1500: c eth0 and g eth0 at 9000 lose every large frame")


def _shown(app) -> str:
    """The status line and the findings pane as the dashboard draws them, as plain text."""
    from rich.console import Console

    from linkdeck.ui.widgets.findings_pane import finding_text

    console = Console(width=150, record=True, file=open("/dev/null", "w"))
    console.print(app.query_one("#status").render())
    console.print(finding_text(app.findings, since=app.raised_at, now=app.clock()))
    return console.export_text()


@pytest.mark.parametrize("how", ["probe", "test", "diagnose"])
async def test_issue_29_what_a_probe_proved_between_two_jumbo_hosts_watched_alone_is_a_finding(make_lab, how) -> None:
    # Issue 29 §4: lab-c and lab-g alone, both at 9000 behind a bridge that carries 1500. Their
    # MTUs agree, so no subnet probe runs; `u` (path_mtu) or `t` (run_pair, which probes the
    # path first) proved the path carries 1500 and the dashboard still said "findings none".
    from linkdeck.ui.app import LinkdeckApp

    with make_lab({"c": {**JUMBO, "port_mtu": 1500}, "g": {**JUMBO, "port_mtu": 1500}}) as lab:
        app = LinkdeckApp(lab.settings(interval=0.5, test_duration=1), [lab.spec(n) for n in ("c", "g")])
        async with app.run_test(size=(160, 40)):
            await wait_for(lambda: all(app.updates[n].interfaces for n in ("c", "g")), 30, message="both hosts sampled")
            print(f"before:\n{_shown(app)}")
            assert app.findings == []
            if how == "probe":
                outcome = await app.tests.path_mtu("c", "g")
                assert outcome.path is not None and outcome.path.forward == 1500
            elif how == "test":
                outcome = await app.tests.run_pair("c", "g", duration=1)
                assert outcome.result.path_mtu is not None and outcome.result.path_mtu.forward == 1500
            else:  # what `d` runs
                from linkdeck.probe.diagnose_steps import run_diagnosis
                from linkdeck.ui.screens.diagnose_screen import AppWatch

                d = await run_diagnosis(AppWatch(app), app.tests, "c", "g", 1)
                assert d.test is not None and "PATH_MTU" in [c.code for c in d.test.verdict.causes]

            def path_mtu() -> list:
                return sorted((f.host, f.interface) for f in app.findings if f.code == "PATH_MTU")

            await wait_for(lambda: path_mtu() == [("c", "eth0"), ("g", "eth0")], 20, message="PATH_MTU on both ends")
            print(f"after:\n{_shown(app)}")
            f = next(f for f in app.findings if f.host == "c")
            assert f.message == "the path between c and g carries 1500-byte packets; both ends use 9000"
            assert f.evidence.startswith(
                f"largest packet through with don't-fragment to {lab.hosts['g'].address}: c → g 1500 bytes"
            )
            assert "c eth0 MTU 9000, g eth0 MTU 9000; measured at " in f.evidence
            if how == "probe":  # the ends set to what the path carries: it holds no longer
                for n in ("c", "g"):
                    lab.hosts[n].ip("link", "set", "dev", "eth0", "mtu", "1500")
                await wait_for(lambda: path_mtu() == [], 30, message="PATH_MTU cleared once both ends use 1500")


async def test_issue_29_a_headless_test_records_what_its_probe_proved(make_lab, tmp_path) -> None:
    # Issue 29 §4 in the headless mode: `linkdeck test --record` between the two jumbo hosts
    # behind a 1500 hop; the recorded findings (what `report` lists) carry PATH_MTU on both,
    # and so does the replay of that recording (which judges its findings again).
    from linkdeck.recording.fileformat import read
    from linkdeck.ui.replay_dashboard import ReplayApp

    path = tmp_path / "c-g.ldrec"
    with make_lab({"c": {**JUMBO, "port_mtu": 1500}, "g": {**JUMBO, "port_mtu": 1500}}) as lab:
        out = linkdeck(
            "test", "c", "g", "--time", "1", "--record", str(path), "--ssh-config", str(lab.ssh_config),
            drop_env=["SSH_AUTH_SOCK", "SSH_CONNECTION"], timeout=120,
        )  # fmt: skip
    assert path.exists(), out.stderr
    page = linkdeck("report", str(path), "--markdown", "-o", "-")
    assert page.returncode == 0, page.stderr
    for host in ("c", "g"):
        assert f"- **PATH\\_MTU** (error) {host}/eth0, " in page.stdout
    assert "the path between c and g carries 1500-byte packets; both ends use 9000" in page.stdout

    replay = ReplayApp(read(path))
    async with replay.run_test(size=(160, 40)):
        await wait_for(lambda: replay.replay is not None, 20, message="the replay started")
        replay.go_to(read(path).end)

        def path_mtu() -> list:
            return sorted((f.host, f.interface) for f in replay.findings if f.code == "PATH_MTU")

        await wait_for(lambda: path_mtu() == [("c", "eth0"), ("g", "eth0")], 20, message="PATH_MTU in the replay")


def test_record_probes_a_mixed_subnet_as_the_dashboard_does(make_lab, tmp_path) -> None:
    # Issue 29 §4: a at 1500, c and g at 9000 behind bridge ports that carry 1500. A headless
    # `linkdeck record` never probed the subnet: its report said MTU_MISMATCH "not probed yet" on
    # all three for the whole run, while the dashboard and snapshot blamed c and g in seconds.
    # The recording carries the probe, so a replay and `snapshot --from` judge as live did.
    from linkdeck.recording.fileformat import read
    from linkdeck.recording.replay import Player

    path = tmp_path / "acg.ldrec"
    with make_lab({"a": {"port_mtu": 1500}, "c": {**JUMBO, "port_mtu": 1500}, "g": {**JUMBO, "port_mtu": 1500}}) as lab:
        out = linkdeck(
            "record", str(path), "--duration", "20", "--ssh-config", str(lab.ssh_config), "--no-local", "a", "c", "g",
            drop_env=["SSH_AUTH_SOCK", "SSH_CONNECTION"], timeout=120,
        )  # fmt: skip
        subnet = str(lab.subnet)
    assert out.returncode == 0, out.stderr
    page = linkdeck("report", str(path), "--markdown", "-o", "-")
    assert page.returncode == 0, page.stderr
    listed = page.stdout.split("\n## Findings\n", 1)[1].split("\n## Tests\n", 1)[0]
    print(listed)
    for host in ("c", "g"):
        assert f"- **MTU\\_MISMATCH** (error) {host}/eth0, " in listed
    assert "a/eth0" not in listed
    assert f"eth0 uses MTU 9000 in {subnet}, which carries 1500" in listed
    assert "largest packet through with don't-fragment between c and g: 1500 bytes" in listed
    assert "not probed yet" not in listed

    recording = read(path)
    raised = [e for e in recording.events() if e.get("ev") == "finding" and e.get("code") == "MTU_MISMATCH"]
    print([(round(e["t"] - recording.start, 1), e["host"], e.get("severity"), e["on"]) for e in raised])
    # blamed within the first seconds, and never "not probed yet" after them
    assert min(e["t"] for e in raised if e["host"] == "c" and e.get("severity") == "error") - recording.start < 8
    assert [e for e in raised if e["t"] - recording.start > 8 and "not probed yet" in e.get("evidence", "")] == []

    player = Player(recording)
    while not player.done:
        player.step()
    assert player.diagnoser is not None
    replayed = sorted((f.host, f.severity.value) for f in player.diagnoser.findings() if f.code == "MTU_MISMATCH")
    assert replayed == [("c", "error"), ("g", "error")]
    snap = linkdeck("snapshot", "--from", str(path), "--json")
    assert snap.returncode == 0, snap.stderr
    found = [(f["host"], f["severity"]) for f in json.loads(snap.stdout)["findings"] if f["code"] == "MTU_MISMATCH"]
    assert sorted(found) == [("c", "error"), ("g", "error")]
