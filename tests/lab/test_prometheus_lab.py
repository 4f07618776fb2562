"""The fleet over Prometheus against the fleet over SSH, in the namespace lab: a real
node_exporter in each host's namespace, a real Prometheus scraping them every second."""

from __future__ import annotations

import asyncio
import time
import urllib.parse
import urllib.request
from dataclasses import replace

import orjson
import pytest

from linkdeck.commands.snapshot import collect
from linkdeck.core.model import HostState
from linkdeck.findings.engine import diagnose
from linkdeck.fleet.collector import Fleet
from linkdeck.prometheus import metrics, vector
from linkdeck.settings.config import Settings
from linkdeck.settings.prometheus_section import PrometheusConfig
from tests.conftest import _lab_missing
from tests.lab import Lab, prometheus as promlab, wait_for

pytestmark = pytest.mark.lab

SUBNET_CODES = {"MTU_MISMATCH", "TWO_IFACES_ONE_SUBNET"}


@pytest.fixture(scope="module")
def prom_lab():
    reason = _lab_missing() or promlab.missing()
    if reason:
        pytest.skip(reason)
    # h1 at MTU 9000 beside two 1500s (MTU_MISMATCH), h3 with a second leg in the subnet
    # (TWO_IFACES_ONE_SUBNET).
    with Lab({"h1": {"mtu": 9000}, "h2": {}, "h3": {"extra_ifaces": [("eth1", None, None)]}}) as lab:
        with promlab.PromLab(lab, dead_target=True) as prom:
            yield lab, prom


def prom_settings(prom, **kw) -> Settings:
    return Settings(local=False, prometheus=PrometheusConfig(url=prom.url, interval=0.5, timeout=3, **kw))


def facts(update) -> dict:
    return {
        v.iface.name: (
            v.iface.kind,
            v.iface.mtu,
            v.iface.speed_mbps,
            tuple(sorted(a for a in v.iface.addresses if ":" not in a)),
        )
        for v in update.interfaces
    }


async def test_snapshot_over_prometheus_shows_what_ssh_shows(prom_lab) -> None:
    lab, prom = prom_lab
    over_ssh = {u.host: u for u in await collect(lab.settings(), [lab.spec(n) for n in lab.hosts], 30)}
    over_prom = {u.host: u for u in await collect(prom_settings(prom), [], 30)}
    dead = over_prom.pop(prom.dead_target)  # a node_exporter target down since before linkdeck started
    assert dead.state is HostState.UNREACHABLE and "connection refused" in dead.error, dead.error
    assert dead.error.startswith(f"Prometheus cannot scrape {prom.dead_target}: Get ")
    assert set(over_prom) == set(lab.hosts)  # named by node_uname_info's nodename
    for name in lab.hosts:
        assert over_prom[name].state is HostState.LIVE, over_prom[name]
        assert over_prom[name].detail.source == "prometheus"
        assert facts(over_prom[name]) == facts(over_ssh[name])
    assert facts(over_prom["h1"])["eth0"][1] == 9000
    # node_ethtool_info's driver and its version (ethtool -i's, from the real node_exporter)
    eth0 = next(v.iface for v in over_prom["h1"].interfaces if v.iface.name == "eth0")
    assert (eth0.driver, eth0.driver_version, eth0.firmware_version) == ("veth", "1.0", None)
    assert {"lo", "eth0", "eth1"} <= set(facts(over_prom["h3"]))
    # Rates from the second scrape on: every interface has one.
    assert all(v.rates.rx_bps is not None for u in over_prom.values() for v in u.interfaces)

    # The same facts give the same findings. Which address an SSH session came in on is the one
    # thing Prometheus cannot say (over SSH it keeps h3's eth0, where the session arrives).
    assert over_ssh["h3"].reached_at == lab.hosts["h3"].address and over_prom["h3"].reached_at is None
    ssh_findings = {
        (f.code, f.host, f.interface)
        for f in diagnose([replace(u, reached_at=None) for u in over_ssh.values()], lab.settings())
        if f.code in SUBNET_CODES
    }  # fmt: skip
    prom_findings = {
        (f.code, f.host, f.interface) for f in diagnose(over_prom.values(), Settings()) if f.code in SUBNET_CODES
    }
    assert {c for c, _, _ in ssh_findings} == SUBNET_CODES
    assert prom_findings == ssh_findings
    two = next(f for f in diagnose(over_ssh.values(), lab.settings()) if f.code == "TWO_IFACES_ONE_SUBNET")
    assert (two.host, two.interface) == ("h3", "eth1")


def test_every_answer_of_a_real_prometheus_is_read_without_json(prom_lab) -> None:
    """The one-regex reader (prometheus/vector.py) assumes Prometheus's own form of an answer
    (labels sorted, no spaces): a real Prometheus's answer to each of linkdeck's queries is read
    by it, to the rows JSON parsing gives."""
    _, prom = prom_lab
    fast_queries = metrics.fast_queries("")
    for name, expr, labels in [*fast_queries, *metrics.slow_queries("")]:
        url = f"{prom.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=5) as response:
            content = response.read()
        fast = vector.fast_rows(content, labels)
        assert fast is not None, (name, content[:300])
        assert fast == vector.parsed_rows(orjson.loads(content)["data"]["result"], labels), name
        assert fast or (name, expr, labels) not in fast_queries, name  # each refresh's answers have series here


async def test_a_host_known_both_ways_is_shown_once_from_ssh(prom_lab) -> None:
    lab, prom = prom_lab
    settings = Settings(
        **{**_fields(lab.settings(hosts=(lab.spec("h1"),))), "prometheus": prom_settings(prom).prometheus}
    )
    updates = await collect(settings, [lab.spec("h1")], 30)
    by_host = {}
    for u in updates:
        by_host.setdefault(u.host, []).append(u)
    assert sorted(by_host) == sorted(["h1", "h2", "h3", prom.dead_target])
    assert len(by_host["h1"]) == 1 and by_host["h1"][0].detail.source is None  # the SSH one
    assert by_host["h2"][0].detail.source == "prometheus"


def _fields(settings: Settings) -> dict:
    return {name: getattr(settings, name) for name in Settings.__slots__}


async def test_an_iperf3_transfer_reads_the_same_over_prometheus_and_ssh(prom_lab) -> None:
    lab, prom = prom_lab
    h1, h2 = lab.hosts["h1"], lab.hosts["h2"]
    seen: dict[str, list[tuple[float, float]]] = {"ssh": [], "prometheus": []}
    segs: dict[str, list] = {"ssh": [], "prometheus": []}  # the host's TCP rates (issue 19)
    last_time: dict[str, float] = {}

    def sink(path: str):
        def on_update(update) -> None:
            if update.host != "h1" or update.state is not HostState.LIVE or last_time.get(path) == update.time:
                return
            last_time[path] = update.time
            eth0 = next(v for v in update.interfaces if v.iface.name == "eth0")
            if eth0.rates.tx_bps is not None:
                seen[path].append((time.monotonic(), eth0.rates.tx_bps))
            if update.tcp is not None and update.tcp.out_segs_ps is not None:
                segs[path].append((time.monotonic(), update.tcp))

        return on_update

    ssh = Fleet([lab.spec("h1")], lab.settings(hosts=(lab.spec("h1"),)), sink("ssh"))
    over_prom = Fleet([], prom_settings(prom), sink("prometheus"))
    ssh.start()
    over_prom.start()
    server = h2.popen("iperf3", "-s", "-1", "-p", "5291", stdout=asyncio.subprocess.DEVNULL)
    try:
        await wait_for(lambda: seen["ssh"] and seen["prometheus"], timeout=20)
        await asyncio.sleep(0.5)
        started = time.monotonic()
        client = await asyncio.create_subprocess_exec(
            "ip", "netns", "exec", h1.netns, "iperf3", "-c", h2.address, "-p", "5291", "-t", "10", "-b", "300M",
            stdout=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        assert await client.wait() == 0
    finally:
        await ssh.stop()
        await over_prom.stop()
        server.kill()

    def mean(path: str) -> float:
        # The steady middle of the transfer; Prometheus's figures arrive up to a scrape late.
        window = [bps for at, bps in seen[path] if started + 3 <= at <= started + 9.5]
        assert len(window) >= 4, seen[path]
        return sum(window) / len(window)

    # The host's TCP segments sent: the same over both, from /proc/net/snmp either way. The
    # counters outside node_exporter's default netstat fields are unknown over Prometheus.
    def mean_segs(path: str) -> float:
        window = [t.out_segs_ps for at, t in segs[path] if started + 3 <= at <= started + 9.5]
        assert len(window) >= 4, segs[path]
        return sum(window) / len(window)

    ssh_segs, prom_segs = mean_segs("ssh"), mean_segs("prometheus")
    print(f"h1 TCP segments sent: {ssh_segs:.0f}/s over SSH, {prom_segs:.0f}/s over Prometheus")
    assert ssh_segs > 10_000 and abs(prom_segs / ssh_segs - 1) <= 0.1, (prom_segs, ssh_segs)
    prom_tcp, ssh_tcp = segs["prometheus"][-1][1], segs["ssh"][-1][1]
    assert prom_tcp.retrans_segs_ps is not None and prom_tcp.timeouts_ps is not None and prom_tcp.in_errs_ps is not None
    assert prom_tcp.rcv_pruned_ps is None and prom_tcp.in_csum_errs_ps is None  # not in the default field list
    assert ssh_tcp.rcv_pruned_ps is not None and ssh_tcp.in_csum_errs_ps is not None
    ssh_bps, prom_bps = mean("ssh"), mean("prometheus")
    print(f"h1 eth0 tx: {ssh_bps / 1e6:.1f} Mb/s over SSH, {prom_bps / 1e6:.1f} Mb/s over Prometheus")
    assert ssh_bps > 200e6
    assert abs(prom_bps / ssh_bps - 1) <= 0.05, (prom_bps, ssh_bps)


async def test_a_killed_node_exporter_makes_its_host_unreachable_and_no_other(prom_lab) -> None:
    lab, prom = prom_lab
    latest: dict[str, object] = {}
    fleet = Fleet([], prom_settings(prom), lambda u: latest.__setitem__(u.host, u))
    fleet.start()
    try:
        await wait_for(lambda: all(n in latest and latest[n].state is HostState.LIVE for n in lab.hosts), timeout=15)
        killed_at = time.monotonic()
        prom.stop_exporter("h2")
        await wait_for(lambda: latest["h2"].state is HostState.UNREACHABLE, timeout=2 * prom.scrape_s + 1.5)
        took = time.monotonic() - killed_at
        down = latest["h2"]
        assert "Prometheus cannot scrape" in down.error and "9100" in down.error, down.error
        assert all(v.rates.rx_bps is None for v in down.interfaces)  # nothing stale shown as live
        before = {n: latest[n].time for n in ("h1", "h3")}
        await wait_for(lambda: all(latest[n].time > before[n] for n in before), timeout=5)
        assert all(latest[n].state is HostState.LIVE for n in ("h1", "h3"))
        print(f"h2 unreachable {took:.2f} s after its node_exporter was killed")
    finally:
        await fleet.stop()
        prom.start_exporter("h2")


async def test_t_on_a_prometheus_only_host_says_tests_need_ssh(prom_lab) -> None:
    from linkdeck.settings.config import LOCAL
    from linkdeck.ui.app import LinkdeckApp

    lab, prom = prom_lab
    app = LinkdeckApp(prom_settings(prom), [LOCAL])
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(
            lambda: app.updates.get("h2") and app.updates["h2"].interfaces, timeout=15, message="h2 from Prometheus"
        )
        await wait_for(lambda: app.table.select_key(("iface", "h2", "eth0")), timeout=5, message="h2's eth0 row")
        await pilot.press("t")
        await wait_for(lambda: app._notifications, timeout=5, message="a notification")
        message = list(app._notifications)[-1].message
        assert "h2 is watched through Prometheus only: tests need SSH to both ends" in message
        assert not isinstance(app.screen, probe_screens_peer())


def probe_screens_peer():
    from linkdeck.ui.screens.peer_picker import PeerScreen

    return PeerScreen


async def test_speed_overrides_apply_to_prometheus_hosts(prom_lab) -> None:
    lab, prom = prom_lab
    settings = Settings(**{**_fields(prom_settings(prom)), "speed_overrides": {"h2/eth0": 1000}})
    by_host = {u.host: u for u in await collect(settings, [], 30)}
    eth0 = next(v for v in by_host["h2"].interfaces if v.iface.name == "eth0")
    assert (eth0.iface.speed_mbps, eth0.iface.duplex) == (1000, "full")
    assert eth0.util_pct is not None
    assert next(v for v in by_host["h1"].interfaces if v.iface.name == "eth0").iface.speed_mbps is None  # veth


async def test_prometheus_going_away_makes_its_hosts_unreachable_and_coming_back_live(prom_lab) -> None:
    from tests.lab import netns

    lab, prom = prom_lab
    latest: dict[str, object] = {}
    fleet = Fleet([], prom_settings(prom), lambda u: latest.__setitem__(u.host, u))
    fleet.start()
    try:
        await wait_for(lambda: all(n in latest and latest[n].state is HostState.LIVE for n in lab.hosts), timeout=15)
        netns.kill_pids([prom.prometheus.pid])
        prom.prometheus.wait(5)
        await wait_for(lambda: all(latest[n].state is HostState.UNREACHABLE for n in lab.hosts), timeout=5)
        for name in lab.hosts:
            assert latest[name].error.startswith(f"cannot reach Prometheus at {prom.url}"), latest[name].error
            assert all(v.rates.rx_bps is None for v in latest[name].interfaces)
        await asyncio.to_thread(prom._start_prometheus)
        await wait_for(lambda: all(latest[n].state is HostState.LIVE for n in lab.hosts), timeout=15)
    finally:
        await fleet.stop()
