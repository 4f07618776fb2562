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

from ..model import Counters, Interface
from ..kinds import guess_kind, speed_is_real
from .. import units

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
_FACT_METRICS = ("node_network_mtu_bytes", "node_network_speed_bytes", "node_network_carrier_changes_total")
_SLOW_METRICS = (
    "node_network_address_info",
    "node_network_info",  # for the MAC address; operstate and duplex come with every refresh
    "node_uname_info",
    "node_ethtool_info",
    "node_network_protocol_type",
    "node_network_supported_speed_bytes",
)
SCRAPE_TIME = "scrape_time"  # the marker label on timestamp(up)

# ethtool's driver name → linkdeck's kind; a driver with a bus address is a real NIC.
_DRIVER_KINDS = {
    "veth": "virtual", "macvlan": "vnic", "ipvlan": "vnic", "dummy": "virtual", "ifb": "virtual",
    "bridge": "bridge", "openvswitch": "bridge", "bonding": "bond", "team": "bond", "802.1Q VLAN Support": "vlan",
    "tun": "tunnel", "vxlan": "tunnel", "wireguard": "tunnel", "geneve": "tunnel", "ip_gre": "tunnel",
}  # fmt: skip


def _names(names) -> str:
    return "|".join(names)


def fast_queries(match: str) -> list[tuple[str | None, str]]:
    """(counter field or None, PromQL) for one refresh: one query per counter family, then one
    for the facts (MTU, speed, carrier changes, operstate, duplex) and each target's health.

    Each query is read and folded before the next answer is parsed, so the memory of a refresh
    is one family's answer, not the fleet's. Each carries the scrape time of every target
    (``timestamp(up)``) evaluated with it: one evaluation sees a scrape whole, so a family's
    counters come with the time they were read, and a scrape that landed between two of the
    queries shows as two times (that refresh is skipped for that host)."""
    extra = f", {match}" if match else ""
    stamp = f' or label_replace(max by (instance) (timestamp(up{{{match}}})), "linkdeck", "{SCRAPE_TIME}", "", "")'
    out: list[tuple[str | None, str]] = [
        (field_name, f"max by (instance, device) ({metric}{{{match}}}){stamp}") for metric, field_name in COUNTER_METRICS.items()
    ]
    out.append(
        (
            None,
            f'max by (__name__, instance, device) ({{__name__=~"{_names(_FACT_METRICS)}"{extra}}})'
            f" or max by (__name__, instance, device, operstate, duplex) (node_network_info{{{match}}})"
            f" or max by (__name__, instance) (up{{{match}}}){stamp}",
        )
    )
    return out


def slow_query(match: str) -> str:
    """Facts that change rarely: addresses, the host name, drivers, supported speeds."""
    extra = f", {match}" if match else ""
    return (
        "max by (__name__, instance, device, address, netmask, nodename, sysname, release, driver, bus_info, duplex, mode)"
        f' ({{__name__=~"{_names(_SLOW_METRICS)}"{extra}}})'
    )


@dataclass(slots=True)
class _Iface:
    counters: dict[str, int] = field(default_factory=dict)
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
    counter_times: set[float] = field(default_factory=set)  # one per scrape the counters came from
    ifaces: dict[str, _Iface] = field(default_factory=dict)


@dataclass(slots=True)
class SlowFacts:
    nodename: str | None = None
    os_detail: str | None = None
    addresses: dict[str, list[str]] = field(default_factory=dict)
    drivers: dict[str, tuple[str, str]] = field(default_factory=dict)  # device → (driver, bus_info)
    protocol: dict[str, int] = field(default_factory=dict)
    macs: dict[str, str | None] = field(default_factory=dict)
    supported_mbps: dict[str, set[int]] = field(default_factory=dict)


def read_into(targets: dict[str, Target], series: list[dict], counter: str | None) -> None:
    """Fold one answer of :func:`fast_queries` (as the API sends it) into ``targets``;
    ``counter`` is the family's counter field, None for the facts. A series without labels or
    a numeric value raises KeyError, TypeError or ValueError: the answer is not Prometheus's."""
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
                if counter is None:
                    target.scrape_time = value
                else:
                    target.counter_times.add(value)
            elif labels.get("__name__") == "up":
                target.up = value
            continue
        if value != value:  # NaN: nothing to read
            continue
        iface = target.ifaces.get(device)
        if iface is None:
            iface = target.ifaces[device] = _Iface()
        if counter is not None:
            iface.counters[counter] = int(value)
            continue
        name = labels.get("__name__")
        if name == "node_network_mtu_bytes":
            iface.mtu = int(value)
        elif name == "node_network_speed_bytes":
            iface.speed_bytes = value
        elif name == "node_network_carrier_changes_total":
            iface.carrier_changes = int(value)
        elif name == "node_network_info":
            iface.oper, iface.duplex = labels.get("operstate"), labels.get("duplex")


def read_slow(series: list[dict]) -> dict[str, SlowFacts]:
    facts: dict[str, SlowFacts] = {}
    for item in series:
        labels = item["metric"]
        value = float(item["value"][1])
        instance, name, device = labels.get("instance"), labels.get("__name__"), labels.get("device")
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
            f.addresses.setdefault(device, []).append(f"{labels['address']}/{labels.get('netmask', '')}".rstrip("/"))
        elif name == "node_ethtool_info":
            f.drivers[device] = (labels.get("driver", ""), labels.get("bus_info", ""))
        elif name == "node_network_protocol_type":
            f.protocol[device] = int(value)
        elif name == "node_network_supported_speed_bytes" and value > 0:
            f.supported_mbps.setdefault(device, set()).add(int(value * 8 // 1_000_000))
    return facts


def kind_of(device: str, slow: SlowFacts | None) -> str:
    if slow is not None:
        if slow.protocol.get(device) == 772:
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
    return Interface(
        name=device,
        kind=kind,
        oper=oper,
        mtu=raw.mtu,
        speed_mbps=speed,
        duplex=duplex,
        addresses=tuple(slow.addresses.get(device, ())) if slow else (),
        mac=slow.macs.get(device) if slow else None,
        supported_speeds_mbps=tuple(sorted(slow.supported_mbps.get(device, ()))) if slow else (),
        carrier_changes=raw.carrier_changes,
        driver=driver or None,
    )


def counters(raw: _Iface) -> Counters:
    return Counters(**raw.counters, bits=64)
