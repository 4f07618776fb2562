"""Remote Linux hosts over real SSH in the namespace lab: what linkdeck sees equals what the lab
set, rates agree with iperf3, sshd going away and coming back, interfaces coming and going."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager

import pytest

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.fleet.collector import Fleet
from tests.lab import wait_for

pytestmark = pytest.mark.lab


class Recorder:
    """on_update sink: every update, in order, and the latest per host."""

    def __init__(self) -> None:
        self.updates: list[HostUpdate] = []

    def __call__(self, update: HostUpdate) -> None:
        self.updates.append(update)

    def last(self, host: str) -> HostUpdate | None:
        for u in reversed(self.updates):
            if u.host == host:
                return u
        return None

    def live(self, host: str, since: int = 0) -> list[HostUpdate]:
        return [u for u in self.updates[since:] if u.host == host and u.state == HostState.LIVE]

    def state(self, host: str) -> HostState | None:
        u = self.last(host)
        return u.state if u else None


@asynccontextmanager
async def running(lab, names, **settings):
    rec = Recorder()
    fleet = Fleet([lab.spec(n) for n in names], lab.settings(**settings), rec)
    fleet.start()
    try:
        yield fleet, rec
    finally:
        await fleet.stop()


def view(update: HostUpdate, ifname: str):
    return next((v for v in update.interfaces if v.iface.name == ifname), None)


async def test_mtu_addresses_names_and_kind_over_ssh(make_lab) -> None:
    with make_lab({"a": {"mtu": 9000}, "b": {"mtu": 1400}, "c": {"extra_ifaces": [("eth1", None, 4000)]}}) as lab:
        async with running(lab, ["a", "b", "c"], interval=0.5) as (_, rec):
            await wait_for(lambda: all(rec.live(n) for n in "abc"), timeout=20, message="all hosts live")
        for name, host in lab.hosts.items():
            u = rec.live(name)[-1]
            assert u.os == "linux" and "Debian" in (u.os_detail or "")
            expected = {"lo", "eth0"} | ({"eth1"} if name == "c" else set())
            assert {v.iface.name for v in u.interfaces} == expected
            eth0 = view(u, "eth0").iface
            assert eth0.mtu == host.mtu
            assert f"{host.address}/{host.prefix}" in eth0.addresses
            # The lab's legs are veth: they report 10000 Mb/s, which is not a link speed.
            assert (eth0.kind, eth0.speed_mbps, eth0.oper) == ("virtual", None, "up")
            assert view(u, "lo").iface.kind == "loopback"
        c_eth1 = view(rec.live("c")[-1], "eth1").iface
        assert c_eth1.mtu == 4000 and any(
            a.endswith(f"/{lab.hosts['c'].prefix}") and not a.startswith("fe80") for a in c_eth1.addresses
        )


async def test_rates_of_both_ends_agree_with_iperf3(make_lab) -> None:
    # MTU 9000 keeps header bytes (counted by the interfaces, not by iperf3) under 1 %; the
    # sender is shaped so that every tick inside the transfer sees the same rate.
    with make_lab({"tx": {"mtu": 9000}, "rx": {"mtu": 9000}}) as lab:
        src, dst = lab.hosts["tx"], lab.hosts["rx"]
        src.shape("eth0", 200)
        server = dst.popen("iperf3", "-s", "-1", "-p", "5201", stdout=open(os.devnull, "w"))
        async with running(lab, ["tx", "rx"], interval=0.5) as (_, rec):
            await wait_for(lambda: all(len(rec.live(n)) >= 2 for n in ("tx", "rx")), timeout=20)
            start = _uptime()
            out = await asyncio.to_thread(
                src.exec, "iperf3", "-c", dst.address, "-p", "5201", "-t", "5", "-J", timeout=30
            )
            end = _uptime()
            await wait_for(lambda: all(rec.live(n)[-1].time > end + 0.5 for n in ("tx", "rx")), timeout=10)
        server.wait(10)
        iperf_bps = json.loads(out.stdout)["end"]["sum_received"]["bits_per_second"]

        def inside(host: str, field: str) -> list[float]:
            # Ticks whose whole interval lies inside the transfer (remote clock = this kernel's uptime).
            return [
                getattr(view(u, "eth0").rates, field)
                for u in rec.live(host)
                if u.time - 0.5 >= start + 0.5
                and u.time <= end - 0.3
                and getattr(view(u, "eth0").rates, field) is not None
            ]

        tx, rx = inside("tx", "tx_bps"), inside("rx", "rx_bps")
        assert len(tx) >= 4 and len(rx) >= 4
        for rates in (tx, rx):
            mean = sum(rates) / len(rates)
            assert abs(mean - iperf_bps) / iperf_bps < 0.05, (mean, iperf_bps, rates)


def _uptime() -> float:
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


async def test_sshd_stop_makes_host_reconnect_while_others_keep_updating(lab) -> None:
    h2 = lab.hosts["h2"]
    async with running(lab, ["h1", "h2", "h3"], interval=0.5) as (_, rec):
        try:
            await wait_for(lambda: all(rec.live(n) for n in ("h1", "h2", "h3")), timeout=20)
            await asyncio.to_thread(h2.stop_sshd)
            await wait_for(lambda: rec.state("h2") == HostState.RECONNECTING, timeout=15, message="h2 reconnecting")
            down_at = len(rec.updates)
            reconnecting = rec.last("h2")
            assert reconnecting.error and reconnecting.detail.retry_in_s is not None
            await wait_for(lambda: len(rec.live("h1", down_at)) >= 3 and len(rec.live("h3", down_at)) >= 3, timeout=10)
            assert rec.state("h2") != HostState.LIVE
        finally:
            await asyncio.to_thread(h2.start_sshd)
        back_at = len(rec.updates)
        await wait_for(lambda: rec.live("h2", back_at), timeout=30, message="h2 live again")
        assert view(rec.live("h2", back_at)[-1], "eth0").iface.mtu == 1500


async def test_interface_added_removed_and_readded_without_spike(lab) -> None:
    h3 = lab.hosts["h3"]
    name = "eth9"
    async with running(lab, ["h3"], interval=0.5) as (_, rec):
        await wait_for(lambda: rec.live("h3"), timeout=20)
        await asyncio.to_thread(h3.add_interface, name, None, None, True)
        address = _v4(h3, name)
        await wait_for(lambda: view(rec.live("h3")[-1], name) is not None, timeout=10, message="eth9 appears")
        await asyncio.to_thread(_send_udp, address, 300)  # counters well above zero
        await wait_for(lambda: (view(rec.live("h3")[-1], name).totals.rx_bytes or 0) > 300 * 200, timeout=10)
        await asyncio.to_thread(h3.del_interface, name)
        await wait_for(lambda: view(rec.live("h3")[-1], name) is None, timeout=10, message="eth9 disappears")
        gone_at = len(rec.updates)
        # Same name again, counters back near zero: a reset, never a negative or huge rate.
        await asyncio.to_thread(h3.add_interface, name, None, None, True)
        await wait_for(lambda: len([u for u in rec.live("h3", gone_at) if view(u, name)]) >= 3, timeout=10)
        await asyncio.to_thread(h3.del_interface, name)
        seen = rec.live("h3")
    back = [view(u, name) for u in rec.live("h3", gone_at) if view(u, name) is not None]
    assert back[0].rates.rx_bps is None  # its first tick has no rate
    assert back[1].rates.rx_bps is not None and back[1].rates.rx_bps < 1e6
    for u in seen:
        for v in u.interfaces:
            for value in (v.rates.rx_bps, v.rates.tx_bps):
                assert value is None or 0 <= value < 50e6, (u.time, v.iface.name, v.rates)


def _v4(host, ifname: str) -> str:
    out = host.exec("ip", "-j", "addr", "show", "dev", ifname).stdout
    return next(a["local"] for a in json.loads(out)[0]["addr_info"] if a["family"] == "inet")


def _send_udp(address: str, count: int) -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(count):
            s.sendto(b"x" * 200, (address, 9))


def test_python_is_not_needed_on_the_remote() -> None:
    # The sampler runs `sh -c SCRIPT`; the script names no interpreter but sh.
    from linkdeck.platforms.linux import build_script

    script = build_script(10)
    assert "python" not in script and "perl" not in script and sys.executable not in script


async def test_hostile_interface_names_are_data_not_code(lab) -> None:
    h1 = lab.hosts["h1"]
    names = ["$(id>pwn)", "a'b\"c`id`"]
    for n in names:
        await asyncio.to_thread(h1.add_interface, n, "10.250.0.1/32" if n == names[0] else None)
    try:
        async with running(lab, ["h1"], interval=0.5) as (_, rec):
            await wait_for(lambda: rec.live("h1") and all(view(rec.live("h1")[-1], n) for n in names), timeout=20)
            u = rec.live("h1")[-1]
    finally:
        for n in names:
            await asyncio.to_thread(h1.del_interface, n)
    assert view(u, names[0]).iface.addresses[0] == "10.250.0.1/32"
    assert view(u, names[1]).iface.mtu == 1500
    assert not (h1.dir / "home" / "pwn").exists()


async def test_a_control_character_in_one_name_costs_no_other_interface_its_facts(lab) -> None:
    # `ip -j addr` prints the name's ESC raw inside a JSON string: every interface of the host
    # lost its MTU and addresses to it, silently, and a test then found "no subnet in common"
    h1 = lab.hosts["h1"]
    odd = "\x1b[31mRED"
    await asyncio.to_thread(h1.add_interface, odd, "10.250.0.2/32")
    try:
        async with running(lab, ["h1"], interval=0.5, facts_every=2) as (_, rec):
            await wait_for(
                lambda: rec.live("h1") and view(rec.live("h1")[-1], odd) is not None,
                timeout=20,
                message="the odd link seen",
            )
            await wait_for(
                lambda: view(rec.live("h1")[-1], odd).iface.addresses, timeout=20, message="the slow facts read"
            )
            u = rec.live("h1")[-1]
    finally:
        await asyncio.to_thread(h1.del_interface, odd)
    eth0 = view(u, "eth0")
    assert eth0.iface.mtu == h1.mtu and f"{h1.address}/{h1.prefix}" in eth0.iface.addresses and eth0.iface.mac
    assert view(u, odd).iface.addresses[0] == "10.250.0.2/32"
    assert u.detail.missing is None  # everything was read: nothing to say
