"""node_exporter's metric names, the PromQL that reads them for the whole fleet at once, and
the answers turned into one :class:`Target` per ``instance``.

Names as node_exporter 1.5 (Debian 12's prometheus-node-exporter) exports them: counters from
the netdev collector, facts from netclass (mtu, speed, operstate, duplex, carrier changes),
addresses from netdev with ``--collector.netdev.address-info``, drivers and supported speeds
from the ethtool collector. Every query groups ``by`` the labels it needs, so Prometheus sends
no job or target labels linkdeck would only throw away (a third of the bytes at 1,000 hosts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from sys import intern
from types import MappingProxyType
from typing import Mapping

from .. import units
from ..kinds import guess_kind, speed_is_real
from ..model import COUNTER_FIELDS, Counters, Interface

COUNTER_METRICS = {
    "node_network_receive_bytes_total": "rx_bytes",
    "node_network_transmit_bytes_total": "tx_bytes",
    "node_network_receive_packets_total": "rx_packets",
    "node_network_transmit_packets_total": "tx_packets",
    "node_network_receive_errs_total": "rx_errors",
    "node_network_transmit_errs_total": "tx_errors",
    "node_network_receive_drop_total": "rx_drops",
    "node_network_transmit_drop_total": "tx_drops",
}
_SLOW_METRICS = {  # metric → the labels read from it
    "node_network_address_info": ", device, address, netmask",
    "node_network_info": ", device, address",  # the MAC; operstate and duplex come with every refresh
    "node_uname_info": ", nodename, sysname, release",
    "node_ethtool_info": ", device, driver, bus_info, version, firmware_version",
    "node_network_protocol_type": ", device",
    "node_network_supported_speed_bytes": ", device, duplex, mode",
}
_COUNTER_INDEX = {name: i for i, name in enumerate(COUNTER_FIELDS)}
# A host's TCP counters from the netstat collector (node_netstat_<name>). Only the first six
# are in node_exporter's default --collector.netstat.fields (1.5 to today); the others need
# it widened, e.g. --collector.netstat.fields='^(Tcp|TcpExt)_.*$', and are null until then.
TCP_METRICS = {
    "Tcp_OutSegs": "out_segs", "Tcp_RetransSegs": "retrans_segs", "Tcp_InSegs": "in_segs", "Tcp_InErrs": "in_errs",
    "TcpExt_TCPTimeouts": "timeouts", "TcpExt_ListenDrops": "listen_drops",
    "Tcp_InCsumErrors": "in_csum_errs", "TcpExt_TCPLostRetransmit": "lost_retrans", "TcpExt_RcvPruned": "rcv_pruned",
    "TcpExt_TCPRcvQDrop": "rcvq_drops", "TcpExt_TCPBacklogDrop": "backlog_drops", "TcpExt_TCPOFODrop": "ofo_drops",
}  # fmt: skip
TCP_LABEL = "linkdeck_tcp"
SCRAPE_TIME = "scrape_time"  # the marker label on timestamp(up)

# ethtool's driver name → linkdeck's kind; a driver with a bus address is a real NIC.
_DRIVER_KINDS = {
    "veth": "virtual", "macvlan": "vnic", "ipvlan": "vnic", "dummy": "virtual", "ifb": "virtual",
    "bridge": "bridge", "openvswitch": "bridge", "bonding": "bond", "team": "bond", "802.1Q VLAN Support": "vlan",
    "tun": "tunnel", "vxlan": "tunnel", "wireguard": "tunnel", "geneve": "tunnel", "ip_gre": "tunnel",
}  # fmt: skip


# The facts read with every refresh, one query each: family → (metric, extra labels kept).
FACT_FAMILIES = {
    "mtu": ("node_network_mtu_bytes", ""),
    "speed": ("node_network_speed_bytes", ""),
    "carrier": ("node_network_carrier_changes_total", ""),
    "info": ("node_network_info", ", operstate, duplex"),
}


def fast_queries(match: str) -> list[tuple[str, str]]:
    """(family, PromQL) for one refresh: one query per counter family (the family is the
    counter's field name), one per fact, and one for each target's health (``up``).

    Each answer is read and folded before the next one is parsed, so a refresh holds one
    family's answer in memory, not the fleet's. The counter queries and ``up`` carry the scrape
    time of every target (``timestamp(up)``) evaluated with them: one evaluation sees a scrape
    whole, so a family's counters come with the time they were read, and a scrape that landed
    between two of the queries shows as two times (that refresh is skipped for that host)."""
    stamp = f' or label_replace(max by (instance) (timestamp(up{{{match}}})), "linkdeck", "{SCRAPE_TIME}", "", "")'
    out = [(field_name, f"max by (instance, device) ({metric}{{{match}}}){stamp}") for metric, field_name in COUNTER_METRICS.items()]
    out += [(family, f"max by (instance, device{labels}) ({metric}{{{match}}})") for family, (metric, labels) in FACT_FAMILIES.items()]
    out.append(("up", f"max by (instance, job) (up{{{match}}}){stamp}"))
    # every TCP counter in one query: the metric's name kept as a label
    names = "|".join(TCP_METRICS)
    selector = f'{{__name__=~"node_netstat_({names})"{", " + match if match else ""}}}'
    out.append(("tcp", f'max by (instance, {TCP_LABEL}) (label_replace({selector}, "{TCP_LABEL}", "$1", "__name__", "node_netstat_(.*)")){stamp}'))
    return out


def slow_queries(match: str) -> list[tuple[str, str]]:
    """(metric, PromQL) for the facts that change rarely: addresses, the host name, drivers,
    supported speeds; one query each, for the same reason as :func:`fast_queries`."""
    out = [(metric, f"max by (instance{labels}) ({metric}{{{match}}})") for metric, labels in _SLOW_METRICS.items()]
    # Only the loopbacks' protocol type matters (ARPHRD_LOOPBACK): Prometheus filters the rest.
    return [(m, f"{q} == 772" if m == "node_network_protocol_type" else q) for m, q in out]


@dataclass(slots=True)
class _Iface:
    counters: list = field(default_factory=lambda: [None] * len(COUNTER_METRICS))  # in COUNTER_FIELDS order
    mtu: int | None = None
    speed_bytes: float | None = None
    carrier_changes: int | None = None
    oper: str | None = None
    duplex: str | None = None


@dataclass(slots=True)
class Target:
    """One ``instance`` as the fast queries saw it."""

    instance: str
    up: float | None = None
    scrape_time: float | None = None
    counter_times: set[float] = field(default_factory=set)
    jobs: set[str | None] = field(default_factory=set)  # the scrape jobs it is a target of  # one per scrape the counters came from
    ifaces: dict[str, _Iface] = field(default_factory=dict)
    tcp: dict[str, int] = field(default_factory=dict)  # TcpCounters field → value


@dataclass(slots=True)
class SlowFacts:
    nodename: str | None = None
    os_detail: str | None = None
    # tuples, not lists and sets: kept for ten refreshes, 80,000 of them at 10,000 hosts, and
    # the cyclic collector stops walking a tuple of strings or ints
    addresses: dict[str, tuple[str, ...]] = field(default_factory=dict)
    drivers: dict[str, tuple[str, str]] = field(default_factory=dict)  # device → (driver, bus_info)
    driver_versions: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # device → (version, firmware)
    loopbacks: set[str] = field(default_factory=set)
    macs: dict[str, str | None] = field(default_factory=dict)
    supported_mbps: dict[str, tuple[int, ...]] = field(default_factory=dict)  # sorted


def read_into(targets: dict[str, Target], series: list[dict], family: str) -> None:
    """Fold one answer of :func:`fast_queries` (as the API sends it) into ``targets``. A
    series without labels or a numeric value raises KeyError, TypeError or ValueError: the
    answer is not Prometheus's."""
    counter = _COUNTER_INDEX.get(family)
    if counter is not None:
        _read_counters(targets, series, counter)
        return
    for item in series:
        labels = item["metric"]
        value = float(item["value"][1])
        instance = labels.get("instance")
        if instance is None:
            continue
        target = targets.get(instance)
        if target is None:
            target = targets[instance] = Target(instance)
        device = labels.get("device")
        if family == "tcp" and TCP_LABEL in labels:
            name = TCP_METRICS.get(labels[TCP_LABEL])
            if name is not None and value == value and value >= 0:
                target.tcp[name] = int(value)
            continue
        if device is None:
            stamp = labels.get("linkdeck") == SCRAPE_TIME
            if family == "tcp" and stamp:
                target.counter_times.add(value)
            elif family == "up":
                if stamp:
                    target.scrape_time = value
                else:
                    target.up = value
                    target.jobs.add(labels.get("job"))
            continue
        if value != value:  # NaN: nothing to read
            continue
        iface = _iface(target, device)
        if family == "mtu":
            iface.mtu = int(value)
        elif family == "speed":
            iface.speed_bytes = value
        elif family == "carrier":
            iface.carrier_changes = int(value)
        elif family == "info":
            iface.oper, iface.duplex = labels.get("operstate"), labels.get("duplex")


def _read_counters(targets: dict[str, Target], series: list[dict], counter: int) -> None:
    """One counter family: read_into's loop with nothing in it but what a counter needs (eight
    of a refresh's fourteen answers, 80,000 series each at 10,000 hosts)."""
    for item in series:
        labels = item["metric"]
        value = float(item["value"][1])
        instance = labels.get("instance")
        if instance is None:
            continue
        target = targets.get(instance)
        if target is None:
            target = targets[instance] = Target(instance)
        device = labels.get("device")
        if device is None:
            if labels.get("linkdeck") == SCRAPE_TIME:
                target.counter_times.add(value)
        elif value == value:  # NaN: nothing to read
            iface = target.ifaces.get(device)
            if iface is None:
                iface = _iface(target, device)
            iface.counters[counter] = int(value)


def _iface(target: Target, device: str) -> _Iface:
    iface = target.ifaces.get(device)
    if iface is None:
        # The same few names on every host: one string each instead of one per host.
        iface = target.ifaces[intern(device)] = _Iface()
    return iface


def read_slow_into(facts: dict[str, SlowFacts], series: list[dict], name: str) -> None:
    """Fold one answer of :func:`slow_queries` (for metric ``name``) into ``facts``."""
    for item in series:
        labels = item["metric"]
        value = float(item["value"][1])
        instance, device = labels.get("instance"), labels.get("device")
        device = intern(device) if device is not None else None
        if instance is None:
            continue
        f = facts.get(instance)
        if f is None:
            f = facts[instance] = SlowFacts()
        if name == "node_uname_info":
            f.nodename = labels.get("nodename") or None
            f.os_detail = " ".join(x for x in (labels.get("sysname"), labels.get("release")) if x) or None
        elif device is None:
            continue
        elif name == "node_network_info":
            f.macs[device] = labels.get("address") or None
        elif name == "node_network_address_info" and labels.get("address"):
            f.addresses[device] = (*f.addresses.get(device, ()), f"{labels['address']}/{labels.get('netmask', '')}".rstrip("/"))
        elif name == "node_ethtool_info":
            f.drivers[device] = (intern(labels.get("driver", "")), labels.get("bus_info", ""))
            # as ethtool -i prints them: empty or "N/A" where the driver has none
            version, firmware = (v if v and v.upper() != "N/A" else None for v in (labels.get("version"), labels.get("firmware_version")))
            f.driver_versions[device] = (version, firmware)
        elif name == "node_network_protocol_type" and value == 772:  # ARPHRD_LOOPBACK
            f.loopbacks.add(device)
        elif name == "node_network_supported_speed_bytes" and value > 0:
            mbps, known = int(value * 8 // 1_000_000), f.supported_mbps.get(device, ())
            if mbps not in known:
                f.supported_mbps[device] = tuple(sorted((*known, mbps)))


def kind_of(device: str, slow: SlowFacts | None) -> str:
    if slow is not None:
        if device in slow.loopbacks:
            return "loopback"
        driver, bus = slow.drivers.get(device, ("", ""))
        if driver in _DRIVER_KINDS:
            return _DRIVER_KINDS[driver]
        if driver and bus:
            return "physical"
    return "loopback" if device == "lo" else guess_kind(device)


def interface(device: str, raw: _Iface, slow: SlowFacts | None) -> Interface:
    """One interface by the rules the SSH path uses: speed only while up, the sentinels (-1,
    0) and made-up speeds of virtual kinds unknown, duplex only beside a known speed."""
    kind = kind_of(device, slow)
    oper = raw.oper if raw.oper else "unknown"
    if oper == "unknown" and kind == "loopback":
        oper = "up"  # sysfs says "unknown" for an up loopback, as the Linux adapter knows
    speed = None
    if oper == "up" and raw.speed_bytes is not None and speed_is_real(kind, oper):
        speed = units.speed_mbps(int(raw.speed_bytes * 8 / 1_000_000) if raw.speed_bytes > 0 else -1)
    duplex = raw.duplex if speed is not None and raw.duplex in ("full", "half") else None
    driver = slow.drivers.get(device, ("", ""))[0] if slow else ""
    version, firmware = slow.driver_versions.get(device, (None, None)) if slow else (None, None)
    return Interface(
        name=device,
        kind=kind,
        oper=oper,
        mtu=raw.mtu,
        speed_mbps=speed,
        duplex=duplex,
        addresses=slow.addresses.get(device, ()) if slow else (),
        mac=slow.macs.get(device) if slow else None,
        supported_speeds_mbps=slow.supported_mbps.get(device, ()) if slow else (),
        carrier_changes=raw.carrier_changes,
        driver=driver or None,
        driver_version=version if driver else None,
        firmware_version=firmware if driver else None,
        nic_counters=_NO_NIC_COUNTERS,
    )


# No driver-level counters are read from node_exporter: every interface shares this empty,
# read-only mapping rather than an empty dict of its own (80,000 at 10,000 hosts, 5 MB, and
# each one more object a full collection of the cyclic collector touches).
_NO_NIC_COUNTERS: Mapping[str, int] = MappingProxyType({})


def counters(raw: _Iface) -> Counters:
    return Counters(*raw.counters, bits=64)
