"""The local host on any OS: psutil for counters and facts, pyroute2 on Linux for what psutil
lacks (link kind, carrier changes, detailed error counters, bridge/bond membership),
netifaces for the default route.

Counters are read every tick (psutil's per-NIC counters cost about what a /proc/net/dev parse
does); the slower facts are read every ``facts_every`` ticks and whenever the set of interface
names changes, so a new interface shows up on the tick it appears.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import AsyncIterator, Collection

import psutil

from ..core.kinds import Kind, guess_kind, speed_is_real
from ..core.model import Counters, HostSample, Interface
from ..core.rawjson import counters_from_json, counters_to_json, interface_from_json, interface_to_json
from ..core.tcpstats import TcpCounters
from ..core.units import speed_mbps
from ..parsers import ParseError, proc_net_snmp
from ..parsers.sysfs_linux import KIND_ATTRS, kind_of
from ..settings.limits import DEFAULT_FACTS_EVERY
from ..transport.local_runner import LocalRunner
from ..transport.runner import Runner
from .adapter import Adapter, SampleError

_DUPLEX = {psutil.NIC_DUPLEX_FULL: "full", psutil.NIC_DUPLEX_HALF: "half"}


# Linux keeps interface counters in unsigned longs: 64 bits on a 64-bit kernel (a 64-bit
# Python is the practical sign of one). Elsewhere psutil's width varies by OS and driver.
_COUNTER_BITS = 64 if sys.platform.startswith("linux") and sys.maxsize > 2**32 else None


def psutil_counters() -> dict[str, Counters]:
    # nowrap=False: wrap and reset handling belongs to the rates layer, which knows the link
    # speed and can tell a wrap from a reset; psutil's own correction cannot.
    raw = psutil.net_io_counters(pernic=True, nowrap=False)
    return {
        name: Counters(
            rx_bytes=c.bytes_recv,
            tx_bytes=c.bytes_sent,
            rx_packets=c.packets_recv,
            tx_packets=c.packets_sent,
            rx_errors=c.errin,
            tx_errors=c.errout,
            rx_drops=c.dropin,
            tx_drops=c.dropout,
            bits=_COUNTER_BITS,
        )
        for name, c in raw.items()
    }


def read_tcp() -> TcpCounters | None:
    """This machine's TCP counters: Linux's two /proc files, read here (no process); None
    elsewhere (psutil has no TCP counters) or when they cannot be read."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/net/snmp") as snmp, open("/proc/net/netstat") as netstat:
            return proc_net_snmp.parse(snmp.read()).merged(proc_net_snmp.parse(netstat.read(), "cat /proc/net/netstat"))
    except (OSError, ParseError):
        return None


def _default_route_ifaces() -> set[str]:
    try:
        import netifaces

        defaults = netifaces.gateways().get("default", {})
    except Exception:  # netifaces raises plain OSError/KeyError variants per OS
        return set()
    if not isinstance(defaults, dict):
        return set()
    out = set()
    for family in (socket.AF_INET, socket.AF_INET6):
        entry = defaults.get(family)
        if entry:
            out.add(entry[1])
    return out


def _addresses() -> dict[str, tuple[tuple[str, ...], str | None]]:
    import ipaddress

    out: dict[str, tuple[tuple[str, ...], str | None]] = {}
    for name, addrs in psutil.net_if_addrs().items():
        cidrs: list[str] = []
        mac = None
        for a in addrs:
            if a.family == psutil.AF_LINK:
                mac = a.address or None
            elif a.family in (socket.AF_INET, socket.AF_INET6) and a.address:
                addr = a.address.split("%", 1)[0]
                try:
                    if a.netmask:
                        prefix = ipaddress.ip_network(f"{addr}/{a.netmask}", strict=False).prefixlen
                    else:
                        prefix = 32 if a.family == socket.AF_INET else 128
                except ValueError:
                    prefix = 32 if a.family == socket.AF_INET else 128
                cidrs.append(f"{addr}/{prefix}")
        out[name] = (tuple(cidrs), mac)
    return out


def _linux_links() -> dict[str, dict]:
    """Per-interface facts from netlink: kind, parent, members, carrier changes, error detail."""
    try:
        from pyroute2 import IPRoute
    except ImportError:
        return {}
    info: dict[str, dict] = {}
    try:
        with IPRoute() as ipr:
            links = ipr.get_links()
    except OSError:
        return {}
    by_index = {link["index"]: link.get_attr("IFLA_IFNAME") for link in links}
    for link in links:
        name = link.get_attr("IFLA_IFNAME")
        linkinfo = link.get_attr("IFLA_LINKINFO")
        kind = linkinfo.get_attr("IFLA_INFO_KIND") if linkinfo else None
        stats = link.get_attr("IFLA_STATS64") or {}
        master = link.get_attr("IFLA_MASTER")
        parent = link.get_attr("IFLA_LINK")
        detail = {
            key: int(stats[key])
            for key in (
                "rx_crc_errors",
                "rx_frame_errors",
                "rx_fifo_errors",
                "rx_missed_errors",
                "rx_over_errors",
                "rx_length_errors",
                "tx_carrier_errors",
                "tx_fifo_errors",
                "collisions",
            )
            if key in stats
        }
        info[name] = {
            "kind": kind,
            "arphrd": link.get("ifi_type"),
            "carrier_changes": link.get_attr("IFLA_CARRIER_CHANGES"),
            "operstate": (link.get_attr("IFLA_OPERSTATE") or "").lower() or None,
            "master": by_index.get(master) if master else None,
            # IFLA_LINK of a veth names its peer in another namespace: only a vlan/macvlan
            # parent is a real "sits on" relation.
            "parent": by_index.get(parent) if parent and kind in ("vlan", "macvlan", "ipvlan") else None,
            "detail": detail,
        }
    for name, facts in info.items():
        if facts["master"] in info:
            info[facts["master"]].setdefault("members", []).append(name)
    return info


SYSFS = Path("/sys/class/net")


def sysfs_attrs(name: str, root: Path = SYSFS) -> dict[str, str] | None:
    """The sysfs files the remote Linux sampler reads for a link's kind (linux.KIND_ATTRS), as
    its parser holds them; None when the link has no directory there (not Linux, a race)."""
    base = root / name
    if not base.is_dir():
        return None
    attrs: dict[str, str] = {}
    for attr in KIND_ATTRS:
        try:
            text = (base / attr).read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if attr.endswith("uevent") and "=" in line:
                key, _, value = line.partition("=")
                attrs[f"{attr}:{key}"] = value
            elif line:
                attrs[attr] = line.strip()
    return attrs


def _linux_kind(name: str, facts: dict | None, flags: str, root: Path = SYSFS) -> Kind:
    """The kind a remote Linux host's sampler would give this link: the same sysfs facts read by
    the same rule (sysfs_linux.kind_of), so a Wi-Fi link or an Open vSwitch port is the same
    kind here and over SSH. Without sysfs, netlink's word or the name."""
    attrs = sysfs_attrs(name, root)
    if attrs is not None:
        return kind_of(name, attrs)
    if facts is None:
        return guess_kind(name, flags)
    if facts.get("arphrd") == 772:
        return Kind.LOOPBACK
    return guess_kind(name, flags)


def read_facts() -> dict[str, Interface]:
    stats = psutil.net_if_stats()
    addrs = _addresses()
    defaults = _default_route_ifaces()
    links = _linux_links() if sys.platform.startswith("linux") else {}
    out: dict[str, Interface] = {}
    for name, st in stats.items():
        link = links.get(name)
        flags = getattr(st, "flags", "") or ""
        kind = _linux_kind(name, link, flags)
        if link and link.get("operstate") and link["operstate"] != "unknown":
            oper = link["operstate"]
        else:
            oper = "up" if st.isup else "down"
        speed = speed_mbps(st.speed) if speed_is_real(kind, oper) else None
        cidrs, mac = addrs.get(name, ((), None))
        out[name] = Interface(
            name=name,
            kind=kind,
            oper=oper,
            mtu=st.mtu or None,
            speed_mbps=speed,
            duplex=_DUPLEX.get(st.duplex) if speed is not None else None,
            addresses=cidrs,
            mac=mac,
            over=link.get("parent") if link else None,
            members=tuple(sorted(link.get("members", ()))) if link else (),
            carrier_changes=link.get("carrier_changes") if link else None,
            default_route=name in defaults,
            nic_counters=link.get("detail", {}) if link else {},
            extra=(("master", link["master"]),) if link and link.get("master") else (),
        )
    return out


async def ethtool_facts(runner, iface: Interface) -> Interface:
    """Ring sizes, driver counters, supported speeds and driver name from ethtool, for the
    NIC-level findings psutil cannot feed. Each piece is optional: virtual NICs and
    unprivileged users get "Operation not supported"/"not permitted", which is not an error."""
    from ..parsers import ethtool

    changes: dict = {}
    settings = await runner.run(["ethtool", iface.name], timeout=5)
    try:
        rec = ethtool.parse_settings(settings.stdout, iface.name)
        changes["supported_speeds_mbps"] = rec.supported_speeds_mbps
        changes["extra"] = iface.extra + rec.extra
    except ParseError:
        pass
    stats = await runner.run(["ethtool", "-S", iface.name], timeout=5)
    try:
        changes["nic_counters"] = {**iface.nic_counters, **ethtool.parse_stats(stats.stdout)}
    except ParseError:
        pass
    rings = await runner.run(["ethtool", "-g", iface.name], timeout=5)
    try:
        rx, rx_max, tx, tx_max = ethtool.parse_rings(rings.stdout)
        changes.update(ring_rx=rx, ring_rx_max=rx_max, ring_tx=tx, ring_tx_max=tx_max)
    except ParseError:
        pass
    info = await runner.run(["ethtool", "-i", iface.name], timeout=5)
    try:
        rec = ethtool.driver_record(info.stdout)
        changes.update(driver=rec.driver, driver_version=rec.driver_version, firmware_version=rec.firmware_version)
    except ParseError:
        pass
    return replace(iface, **changes)


async def offload_facts(runner, iface: Interface) -> Interface:
    """The segmentation and receive offloads that are on (ethtool -k), for any interface:
    a veth's are why its packet counts are a fraction of the wire's."""
    from ..parsers import ethtool

    out = await runner.run(["ethtool", "-k", iface.name], timeout=5)
    try:
        return replace(iface, offload=tuple(k for k, on in ethtool.parse_offload(out.stdout).items() if on))
    except ParseError:
        return iface


class LocalAdapter(Adapter):
    os = sys.platform

    def __init__(
        self,
        runner: Runner | None = None,
        os_name: str | None = None,
        os_detail: str | None = None,
        facts_every: int = DEFAULT_FACTS_EVERY,
    ) -> None:
        super().__init__(runner or LocalRunner(), os_name, os_detail, facts_every)
        self.has_ethtool = sys.platform.startswith("linux") and shutil.which("ethtool") is not None
        self._replay_facts: dict[str, Interface] = {}
        self._facts_read: dict | None = None

    async def read_facts(self) -> dict[str, Interface]:
        facts = await asyncio.to_thread(read_facts)
        if self.has_ethtool:
            # Names come from the kernel and go to ethtool as one argv element (no shell);
            # one starting with "-" would read as an option, so it is skipped.
            physical = [i for i in facts.values() if i.kind == Kind.PHYSICAL and not i.name.startswith("-")]
            enriched = await asyncio.gather(*(ethtool_facts(self.runner, i) for i in physical), return_exceptions=True)
            for iface in enriched:
                if isinstance(iface, Interface):
                    facts[iface.name] = iface
            named = [i for i in facts.values() if not i.name.startswith("-")]
            for iface in await asyncio.gather(*(offload_facts(self.runner, i) for i in named), return_exceptions=True):
                if isinstance(iface, Interface):
                    facts[iface.name] = iface
        return facts

    async def read_counters(self, names: Collection[str]) -> dict[str, Counters]:
        return {n: c for n, c in psutil_counters().items() if n in names}

    async def samples(self, interval: float) -> AsyncIterator[HostSample]:
        facts: dict[str, Interface] = {}
        tick = 0
        deadline = time.monotonic()
        while True:
            counters = psutil_counters()
            tcp = read_tcp()
            now = time.monotonic()
            # ("t" is the recording's event time: the TCP counters go under "tcp")
            tcp_read = {} if tcp is None else {"tcp": tcp.to_json()}
            if tick % self.facts_every == 0 or counters.keys() != facts.keys():
                facts = await self.read_facts()
                read = self._facts_read = {
                    "m": now,
                    "c": _counters_json(counters),
                    "i": {n: interface_to_json(i) for n, i in facts.items()},
                    **tcp_read,
                }
            else:
                read = {"m": now, "c": _counters_json(counters), **tcp_read} if self.on_read is not None else {}
            if self.on_read is not None:
                self.on_read(read)
            tick += 1
            yield _sample(now, facts, counters, tcp)
            deadline += interval
            delay = deadline - time.monotonic()
            if delay < -interval:  # we fell behind (suspend, long stall): do not burst to catch up
                deadline = time.monotonic()
                delay = 0
            await asyncio.sleep(max(delay, 0))

    def primer(self) -> dict | None:
        return self._facts_read

    def carries_facts(self, read) -> bool:
        return "i" in read

    def replayed(self, read, received: float) -> HostSample | SampleError:
        try:
            if "i" in read:
                self._replay_facts = {n: interface_from_json(d) for n, d in read["i"].items()}
            counters = {n: counters_from_json(v) for n, v in read["c"].items()}
            tcp = TcpCounters.from_json(read["tcp"]) if "tcp" in read else None
            return _sample(float(read["m"]), self._replay_facts, counters, tcp)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return SampleError(f"unreadable recorded local read ({type(exc).__name__}: {exc})")


def _sample(
    now: float, facts: dict[str, Interface], counters: dict[str, Counters], tcp: TcpCounters | None = None
) -> HostSample:
    interfaces = {name: facts.get(name) or Interface(name=name) for name in counters}
    return HostSample(time=now, interfaces=interfaces, counters=counters, tcp=tcp)


def _counters_json(counters: dict[str, Counters]) -> dict[str, list]:
    return {name: counters_to_json(c) for name, c in counters.items()}
