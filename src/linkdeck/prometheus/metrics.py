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

from ..core import units
from ..core.kinds import Kind, guess_kind, speed_is_real
from ..core.model import COUNTER_FIELDS, Counters, Interface
from .vector import Row

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
_SLOW_METRICS = {  # metric → the labels read from it (besides instance)
    "node_network_address_info": ("device", "address", "netmask"),
    "node_network_info": ("device", "address"),  # the MAC; operstate and duplex come with every refresh
    "node_uname_info": ("nodename", "sysname", "release"),
    "node_ethtool_info": ("device", "driver", "bus_info", "version", "firmware_version"),
    "node_network_protocol_type": ("device",),
    "node_network_supported_speed_bytes": ("device", "duplex", "mode"),
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
    "veth": Kind.VIRTUAL, "macvlan": Kind.VNIC, "ipvlan": Kind.VNIC, "dummy": Kind.VIRTUAL, "ifb": Kind.VIRTUAL,
    "bridge": Kind.BRIDGE, "openvswitch": Kind.BRIDGE, "bonding": Kind.BOND, "team": Kind.BOND,
    "802.1Q VLAN Support": Kind.VLAN,
    "tun": Kind.TUNNEL, "vxlan": Kind.TUNNEL, "wireguard": Kind.TUNNEL, "geneve": Kind.TUNNEL, "ip_gre": Kind.TUNNEL,
}  # fmt: skip


# The facts read with every refresh, one query each: family → (metric, extra labels kept).
FACT_FAMILIES = {
    "mtu": ("node_network_mtu_bytes", ()),
    "speed": ("node_network_speed_bytes", ()),
    "carrier": ("node_network_carrier_changes_total", ()),
    "info": ("node_network_info", ("operstate", "duplex")),
}

# (what it is, PromQL, the labels of its answer's series sorted by name, as Prometheus writes
# them and as :mod:`.vector` reads them)
Query = tuple[str, str, tuple[str, ...]]


def _query(name: str, by: tuple[str, ...], expr: str, stamp: str = "") -> Query:
    labels = (*by, "linkdeck") if stamp else by
    return name, f"max by ({', '.join(by)}) ({expr}){stamp}", tuple(sorted(labels))


def fast_queries(match: str) -> list[Query]:
    """The queries of one refresh: one per counter family (named by the counter's field), one
    per fact, one for each target's health (``up``) and one for the TCP counters.

    Each answer is read and folded before the next one is parsed, so a refresh holds one
    family's answer in memory, not the fleet's. The counter queries and ``up`` carry the scrape
    time of every target (``timestamp(up)``) evaluated with them: one evaluation sees a scrape
    whole, so a family's counters come with the time they were read, and a scrape that landed
    between two of the queries shows as two times (that refresh is skipped for that host)."""
    stamp = f' or label_replace(max by (instance) (timestamp(up{{{match}}})), "linkdeck", "{SCRAPE_TIME}", "", "")'
    out = [
        _query(field_name, ("instance", "device"), f"{metric}{{{match}}}", stamp)
        for metric, field_name in COUNTER_METRICS.items()
    ]
    out += [
        _query(family, ("instance", "device", *labels), f"{metric}{{{match}}}")
        for family, (metric, labels) in FACT_FAMILIES.items()
    ]
    out.append(_query("up", ("instance", "job"), f"up{{{match}}}", stamp))
    # every TCP counter in one query: the metric's name kept as a label
    names = "|".join(TCP_METRICS)
    selector = f'{{__name__=~"node_netstat_({names})"{", " + match if match else ""}}}'
    out.append(
        _query(
            "tcp",
            ("instance", TCP_LABEL),
            f'label_replace({selector}, "{TCP_LABEL}", "$1", "__name__", "node_netstat_(.*)")',
            stamp,
        )
    )
    return out


def slow_queries(match: str) -> list[Query]:
    """The queries for the facts that change rarely (named by their metric): addresses, the
    host name, drivers, supported speeds; one each, for the same reason as :func:`fast_queries`."""
    out = [_query(metric, ("instance", *labels), f"{metric}{{{match}}}") for metric, labels in _SLOW_METRICS.items()]
    # Only the loopbacks' protocol type matters (ARPHRD_LOOPBACK): Prometheus filters the rest.
    return [(m, f"{q} == 772" if m == "node_network_protocol_type" else q, names) for m, q, names in out]


@dataclass(slots=True)
class _Iface:
    counters: list = field(default_factory=lambda: [None] * len(COUNTER_METRICS))  # in COUNTER_FIELDS order
    mtu: int | None = None
    speed_bytes: float | None = None
    carrier_changes: int | None = None
    oper: str | None = None
    duplex: str | None = None


# Where an interface's numbers sit in its Target's ``values``: its counters (COUNTER_FIELDS'
# order), then these facts.
_MTU, _SPEED, _CARRIER, _OPER, _DUPLEX = range(len(COUNTER_METRICS), len(COUNTER_METRICS) + 5)
_WIDTH = _DUPLEX + 1


@dataclass(slots=True)
class Target:
    """One ``instance`` as the fast queries saw it.

    Its interfaces' numbers in one flat list, each at its offset in ``devices``, not an object
    and a list per interface: a refresh keeps every target from the first answer to the last
    update, and at 10,000 hosts 160,000 such containers were most of what the cyclic collector
    walked meanwhile (a dict of names to offsets is one it does not track)."""

    instance: str
    up: float | None = None
    scrape_time: float | None = None
    counter_times: set[float] = field(default_factory=set)  # one per scrape the counters came from
    jobs: set[str | None] = field(default_factory=set)  # the scrape jobs it is a target of
    devices: dict[str, int] = field(default_factory=dict)
    values: list = field(default_factory=list)
    tcp: dict[str, int] = field(default_factory=dict)  # TcpCounters field → value

    def ifaces(self) -> dict[str, _Iface]:
        """device → what the answers said of it."""
        v = self.values
        return {
            device: _Iface(
                v[at : at + _MTU], v[at + _MTU], v[at + _SPEED], v[at + _CARRIER], v[at + _OPER], v[at + _DUPLEX]
            )
            for device, at in self.devices.items()
        }


@dataclass(slots=True)
class SlowFacts:
    nodename: str | None = None
    os_detail: str | None = None
    # tuples, not lists and sets: kept for ten refreshes, 80,000 of them at 10,000 hosts, and
    # the cyclic collector stops walking a tuple of strings or ints
    addresses: dict[str, tuple[str, ...]] = field(default_factory=dict)
    drivers: dict[str, tuple[str, str]] = field(default_factory=dict)  # device → (driver, bus_info)
    driver_versions: dict[str, tuple[str | None, str | None]] = field(
        default_factory=dict
    )  # device → (version, firmware)
    loopbacks: tuple[str, ...] = ()
    macs: dict[str, str | None] = field(default_factory=dict)
    supported_mbps: dict[str, tuple[int, ...]] = field(default_factory=dict)  # sorted


def read_into(targets: dict[str, Target], rows: list[Row], family: str) -> None:  # noqa: C901, PLR0912 - one branch per metric family, on the hot path
    """Fold the rows of one answer of :func:`fast_queries` (with the labels its query names)
    into ``targets``. A value that is not a number raises ValueError: the answer
    is not Prometheus's."""
    counter = _COUNTER_INDEX.get(family)
    if counter is not None:
        _read_counters(targets, rows, counter)
    elif family == "up":
        for instance, job, stamp, text in rows:
            value = float(text)
            if instance:
                target = _target(targets, instance)
                if stamp == SCRAPE_TIME:
                    target.scrape_time = value
                else:
                    target.up = value
                    target.jobs.add(job or None)
    elif family == "tcp":
        for instance, stamp, name, text in rows:
            value = float(text)
            if not instance:
                continue
            target = _target(targets, instance)
            if name:
                field_name = TCP_METRICS.get(name)
                if field_name is not None and value == value and value >= 0:
                    target.tcp[field_name] = int(value)
            elif stamp == SCRAPE_TIME:
                target.counter_times.add(value)
    elif family == "info":
        for device, duplex, instance, oper, text in rows:
            value = float(text)
            if value == value and instance and device:
                target = _target(targets, instance)
                at = _at(target, device)
                target.values[at + _OPER], target.values[at + _DUPLEX] = oper or None, duplex or None
    else:  # mtu, speed, carrier
        where, kind = {"mtu": (_MTU, int), "speed": (_SPEED, float), "carrier": (_CARRIER, int)}[family]
        for device, instance, text in rows:
            value = float(text)
            if value == value and instance and device:  # NaN: nothing to read
                target = _target(targets, instance)
                target.values[_at(target, device) + where] = kind(value)


def _read_counters(targets: dict[str, Target], rows: list[Row], counter: int) -> None:
    """One counter family: eight of a refresh's fourteen answers, 80,000 series each at
    10,000 hosts, so nothing in the loop but what a counter needs."""
    for device, instance, stamp, text in rows:
        value = float(text)
        if not instance:
            continue
        target = targets.get(instance)
        if target is None:
            target = targets[instance] = Target(instance)
        if not device:
            if stamp == SCRAPE_TIME:
                target.counter_times.add(value)
        elif value == value:  # NaN: nothing to read
            at = target.devices.get(device)
            if at is None:
                at = _at(target, device)
            target.values[at + counter] = int(value)


def _target(targets: dict[str, Target], instance: str) -> Target:
    target = targets.get(instance)
    if target is None:
        target = targets[instance] = Target(instance)
    return target


def _at(target: Target, device: str) -> int:
    at = target.devices.get(device)
    if at is None:
        # The same few names on every host: one string each instead of one per host.
        at = target.devices[intern(device)] = len(target.values)
        target.values += _EMPTY
    return at


_EMPTY = (None,) * _WIDTH


def read_slow_into(facts: dict[str, SlowFacts], rows: list[Row], name: str, names: tuple[str, ...]) -> None:
    """Fold the rows of one answer of :func:`slow_queries` (for metric ``name``, its labels
    ``names``) into ``facts``."""
    for row in rows:
        labels = dict(zip(names, row))
        value = float(row[-1])
        instance, device = labels.get("instance"), labels.get("device")
        device = intern(device) if device else None
        if not instance:
            continue
        f = facts.get(instance)
        if f is None:
            f = facts[instance] = SlowFacts()
        if name == "node_uname_info":
            f.nodename = labels["nodename"] or None
            f.os_detail = " ".join(x for x in (labels["sysname"], labels["release"]) if x) or None
        elif device is None:
            continue
        elif name == "node_network_info":
            f.macs[device] = labels["address"] or None
        elif name == "node_network_address_info" and labels["address"]:
            f.addresses[device] = (*f.addresses.get(device, ()), f"{labels['address']}/{labels['netmask']}".rstrip("/"))
        elif name == "node_ethtool_info":
            f.drivers[device] = (intern(labels["driver"]), labels["bus_info"])
            # as ethtool -i prints them: empty or "N/A" where the driver has none
            version, firmware = (
                v if v and v.upper() != "N/A" else None for v in (labels["version"], labels["firmware_version"])
            )
            f.driver_versions[device] = (version, firmware)
        elif name == "node_network_protocol_type" and value == 772:  # ARPHRD_LOOPBACK
            f.loopbacks = (*f.loopbacks, device) if device not in f.loopbacks else f.loopbacks
        elif name == "node_network_supported_speed_bytes" and value > 0:
            mbps, known = int(value * 8 // 1_000_000), f.supported_mbps.get(device, ())
            if mbps not in known:
                f.supported_mbps[device] = tuple(sorted((*known, mbps)))


def kind_of(device: str, slow: SlowFacts | None) -> Kind:
    if slow is not None:
        if device in slow.loopbacks:
            return Kind.LOOPBACK
        driver, bus = slow.drivers.get(device, ("", ""))
        if driver in _DRIVER_KINDS:
            return _DRIVER_KINDS[driver]
        if driver and bus:
            return Kind.PHYSICAL
    return Kind.LOOPBACK if device == "lo" else guess_kind(device)


def interface(device: str, raw: _Iface, slow: SlowFacts | None) -> Interface:
    """One interface by the rules the SSH path uses: speed only while up, the sentinels (-1,
    0) and made-up speeds of virtual kinds unknown, duplex only beside a known speed."""
    kind = kind_of(device, slow)
    oper = raw.oper if raw.oper else "unknown"
    if oper == "unknown" and kind == Kind.LOOPBACK:
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
# read-only mapping rather than an empty dict of its own (one per interface of the fleet, each
# one more object a full collection of the cyclic collector touches).
_NO_NIC_COUNTERS: Mapping[str, int] = MappingProxyType({})


def counters(raw: _Iface) -> Counters:
    return Counters(**dict(zip(COUNTER_FIELDS, raw.counters)), bits=64)
