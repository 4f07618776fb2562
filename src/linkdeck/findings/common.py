"""What every rule family shares: the interface of one host, its IP subnets, OS-specific hints."""

from __future__ import annotations

import ipaddress
import shlex
from functools import lru_cache
from dataclasses import dataclass
from typing import Iterable

from ..addresses import holds, routable
from ..model import Interface
from ..oses import Family, family_of

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Kinds whose negotiated speed means something: physical ports, and stacks (bond, vlan) that
# report their port's. Wireless rates move with the radio and are no fault of a cable.
# Kinds with a made-up speed (kinds.VIRTUAL_SPEED_KINDS) never appear here.
SPEED_KINDS = frozenset({"physical", "bond", "vlan", "unknown"})


@dataclass(frozen=True, slots=True)
class Port:
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
    return tuple(net for _, net in _keyed_networks(iface.addresses))


# (version, network address, prefix length): equal exactly when the networks are, and hashed
# in C. Grouping hundreds of ports by the Network objects themselves spent most of the subnet
# rules' time in ipaddress's Python __hash__ and __eq__.
NetKey = tuple[int, int, int]


@lru_cache(maxsize=1 << 16)  # every rule asks, every pass, about every interface's addresses (40,000 at 5,000 hosts)
def _keyed_networks(addresses: tuple[str, ...]) -> tuple[tuple[NetKey, Network], ...]:
    return tuple(((net.version, int(net.network_address), net.prefixlen), net) for net in _networks(addresses))


def _networks(addresses: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(dict.fromkeys(ip_if.network for ip_if in routable(addresses)))


def by_subnet(ports: Iterable[Port]) -> dict[Network, list[Port]]:
    """Ports grouped by every subnet they have an address in (a port may be in several)."""
    groups: dict[NetKey, tuple[Network, list[Port]]] = {}
    for port in ports:
        for key, net in _keyed_networks(port.iface.addresses):
            group = groups.get(key)
            if group is None:
                groups[key] = (net, [port])
            else:
                group[1].append(port)
    return dict(groups.values())


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
