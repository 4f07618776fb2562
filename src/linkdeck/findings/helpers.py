"""What every rule family shares: the interface of one host, its IP subnets, OS-specific hints."""

from __future__ import annotations

import ipaddress
import re
import shlex
from functools import lru_cache
from typing import Iterable, NamedTuple

from ..core.addresses import holds, routable
from ..core.kinds import Kind
from ..core.model import Interface
from ..core.oses import Family, family_of

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Kinds whose negotiated speed means something: physical ports, and stacks (bond, vlan) that
# report their port's. Wireless rates move with the radio and are no fault of a cable.
# Kinds with a made-up speed (kinds.VIRTUAL_SPEED_KINDS) never appear here.
SPEED_KINDS = frozenset({Kind.PHYSICAL, Kind.BOND, Kind.VLAN, Kind.UNKNOWN})


class Port(NamedTuple):
    """One interface of one host, as the rules see it."""

    host: str
    os: str | None
    iface: Interface
    reached_at: str | None = None  # the host's address linkdeck's session arrived at (HostUpdate.reached_at)

    @property
    def label(self) -> str:
        return f"{self.host} {self.iface.name}"

    @property
    def session(self) -> bool:
        """Whether linkdeck's session to this host comes in on this interface."""
        return self.reached_at is not None and holds(self.iface.addresses, self.reached_at)

    @property
    def shell_name(self) -> str:
        """The interface name as one shell word, for the commands a hint suggests: a name
        like ``$(reboot)`` stays inert when the hint is pasted."""
        return shlex.quote(self.iface.name)

    @property
    def family(self) -> Family | None:
        """The OS family's record (its hint commands); None for an OS linkdeck does not know."""
        return family_of(self.os)

    def command(self, template: str, **values: object) -> str:
        """One of the family's hint commands for this interface, its name shell-quoted."""
        return template.format(name=self.shell_name, **values)


def networks(iface: Interface) -> tuple[Network, ...]:
    """The IP subnets an interface has an address in. Link-local and loopback addresses, and
    host routes (/32, /128: a VIP shared by many hosts is not a shared segment), define none."""
    return tuple(_network(key) for key in _keyed_networks(iface.addresses))


# (version, network address, prefix length): equal exactly when the networks are, and hashed
# in C. Grouping hundreds of ports by the Network objects themselves spent most of the subnet
# rules' time in ipaddress's Python __hash__ and __eq__.
NetKey = tuple[int, int, int]

_V4 = re.compile(r"([1-9]?[0-9]{1,2})\.([1-9]?[0-9]{1,2})\.([1-9]?[0-9]{1,2})\.([1-9]?[0-9]{1,2})/([0-9]{1,2})")
_LOOPBACK4, _LINK_LOCAL4 = 127, (169 << 8) | 254


# Every rule asks, every pass, about every interface's addresses: 80,000 tuples at 10,000
# hosts x 8 interfaces, all different, so the cache holds them all (an LRU smaller than the
# fleet misses on every call).
@lru_cache(maxsize=1 << 18)
def _keyed_networks(addresses: tuple[str, ...]) -> tuple[NetKey, ...]:
    """The subnets' keys, as :func:`addresses.routable` would read them; an IPv4
    ``a.b.c.d/n`` (nearly every address in a fleet) by integer arithmetic, anything else
    through ipaddress."""
    keys: list[NetKey] = []
    for text in addresses:
        m = _V4.fullmatch(text)
        if m is None or text.startswith("0"):
            keys += [(net.version, int(net.network_address), net.prefixlen) for net in _networks((text,))]
            continue
        a, b, c, d, prefix = (int(g) for g in m.groups())
        if max(a, b, c, d) > 255 or prefix > 32:
            continue  # unreadable: ipaddress refuses it too
        if prefix == 32 or a == _LOOPBACK4 or (a << 8) | b == _LINK_LOCAL4:
            continue  # a host route, loopback, link-local
        mask = (0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF
        keys.append((4, ((a << 24) | (b << 16) | (c << 8) | d) & mask, prefix))
    return tuple(dict.fromkeys(keys))


@lru_cache(maxsize=1 << 12)
def _network(key: NetKey) -> Network:
    version, address, prefix = key
    return ipaddress.ip_network((address, prefix)) if version == 6 else ipaddress.IPv4Network((address, prefix))


def _networks(addresses: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(dict.fromkeys(ip_if.network for ip_if in routable(addresses)))


def by_subnet(ports: Iterable[Port]) -> dict[Network, list[Port]]:
    """Ports grouped by every subnet they have an address in (a port may be in several)."""
    groups: dict[NetKey, list[Port]] = {}
    for port in ports:
        for key in _keyed_networks(port.iface.addresses):
            group = groups.get(key)
            if group is None:
                groups[key] = [port]
            else:
                group.append(port)
    return {_network(key): members for key, members in groups.items()}


def autoneg_hint(port: Port, capable_mbps: int | None) -> str:
    """Check the cable and the switch port, then make the NIC advertise its speeds again."""
    cable = "Cat6a" if capable_mbps and capable_mbps >= 10_000 else "Cat5e or better"
    cap = "en_10gfdx_cap" if capable_mbps and capable_mbps >= 10_000 else "en_1000fdx_cap"
    fam = port.family
    step = port.command(fam.autoneg, cap=cap) if fam else "its autonegotiation settings"
    return f"check the cable ({cable}, all four pairs) and the switch port, then {step}"


def runs_over(links: Iterable[Interface], name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What interface ``name`` runs over: the links below it (a vnic's aggr, a vlan's bond),
    and the ports of the lowest one (the aggr's, the bond's, a bridge's members)."""
    by_name = {i.name: i for i in links}
    chain: list[str] = []
    here = by_name.get(name)
    while here is not None and here.over and here.over not in chain and here.over != name:
        chain.append(here.over)
        here = by_name.get(here.over)
    return tuple(chain), tuple(here.members) if here is not None else ()
