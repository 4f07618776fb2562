"""The default-route marker (``*eth0``) for the streaming adapters: read the route sections of
a slow-facts frame, and mark the interfaces those routes leave by."""

from __future__ import annotations

import ipaddress
from dataclasses import replace
from typing import Callable, Mapping

from ..core.addresses import routable
from ..core.model import Interface
from ..parsers.default_route import DefaultRoute
from ..parsers.parse_error import ParseError

SECTIONS = ("route", "route6")  # IPv4, IPv6


def read(
    sections: Mapping[str, str], parse: Callable[[str, str], list[DefaultRoute]], os_name: str
) -> tuple[DefaultRoute, ...]:
    """Every default route the frame's route sections name. A route command that is missing,
    refused or printed something unreadable leaves the marker off: the interfaces and their
    counters are still good, so the frame does not fail over it."""
    routes: list[DefaultRoute] = []
    for name in SECTIONS:
        try:
            routes.extend(parse(sections.get(name, ""), os_name))
        except ParseError:
            continue
    return tuple(routes)


def mark(interfaces: dict[str, Interface], routes: tuple[DefaultRoute, ...]) -> dict[str, Interface]:
    """``interfaces`` with ``default_route`` set on those the routes leave by. A route that
    names no interface goes by its gateway: to the one interface whose subnet holds it (several
    such interfaces: the kernel's choice is not known, so none is marked)."""
    names = set()
    for route in routes:
        if route.interface is not None:
            names.add(route.interface)
        elif route.gateway is not None:
            holders = [n for n, i in interfaces.items() if _holds(i, route.gateway)]
            if len(holders) == 1:
                names.add(holders[0])
    return {n: replace(i, default_route=True) if n in names else i for n, i in interfaces.items()}


def _holds(iface: Interface, gateway: str) -> bool:
    try:
        address = ipaddress.ip_address(gateway.split("%", 1)[0])
    except ValueError:
        return False
    return any(address in net.network for net in routable(iface.addresses))
