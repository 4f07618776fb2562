"""``netstat -rn -f inet`` (and ``-f inet6``): the default route's interface on illumos and
Solaris, and on the BSDs and macOS.

Columns differ by OS and release, so they are found by the header's names::

    FreeBSD  Destination  Gateway  Flags  Netif Expire
    macOS    Destination  Gateway  Flags  Refs  Use  Mtu  Netif  Expire      (-l)
    NetBSD   Destination  Gateway  Flags  Refs  Use  Mtu  Interface
    illumos    Destination           Gateway           Flags  Ref     Use     Interface
             (IPv6: Destination/Mask  Gateway  Flags  Ref  Use  If)

Columns after the interface (Expire) may be empty, and Solaris leaves the interface itself
empty for a default added without ``-ifp``: the route is returned without an interface for
the adapter to place by its gateway. macOS lists one default per interface with the I
(interface-scoped) flag besides the one the host uses: those are skipped. illumos prints a
logical interface (``net0:1``) for a route out of an extra address; the link is ``net0``.
"""

from __future__ import annotations

import re

from ..core.model import IfaceRecord
from ..core.oses import family
from .default_route import DefaultRoute, as_records, word
from .parse_error import ParseError
from .registry import Entry

COMMAND = "netstat -rn"
_IFACE_COLUMNS = ("Netif", "Iface", "Interface", "If")
_DEFAULT = {"default", "0.0.0.0", "0.0.0.0/0", "::", "::/0"}
_LOGICAL = re.compile(r"(.+):[0-9]{1,5}")


def parse_routes(text: str, os_name: str = "illumos") -> list[DefaultRoute]:
    header: list[str] | None = None
    routes: list[DefaultRoute] = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0].startswith("Destination"):
            header = words
            if "Flags" not in header or not any(c in header for c in _IFACE_COLUMNS):
                raise ParseError(COMMAND, "a header without Flags and an interface column", line)
            continue
        if words[0] not in _DEFAULT:
            continue  # other routes, section titles, the dashes under illumos's header
        if header is None:
            raise ParseError(COMMAND, "a default route before any column header", line)
        route = _route(words, header, line, os_name)
        if route is not None:
            routes.append(route)
    return routes


def _route(words: list[str], header: list[str], line: str, os_name: str) -> DefaultRoute | None:
    flags_at = header.index("Flags")
    if len(words) <= flags_at:
        raise ParseError(
            COMMAND, f"a route with {len(words)} columns, fewer than the header's {flags_at + 1} up to Flags", line
        )
    flags = words[flags_at]
    if "U" not in flags or os_name == "macos" and "I" in flags:
        return None  # down, or macOS's per-interface scoped default
    at = next(header.index(c) for c in _IFACE_COLUMNS if c in header)
    gateway = words[1] if words[1] != words[0] and not words[1].startswith("link#") else None
    gateway = word(gateway, "gateway", COMMAND, line) if gateway else None
    if len(words) <= at:
        return DefaultRoute(None, gateway)
    name = word(words[at], "interface", COMMAND, line)
    logical = _LOGICAL.fullmatch(name)
    if logical and family(os_name) == "illumos":
        name = logical.group(1)
    return DefaultRoute(name, gateway)


def _records(text: str, os_name: str = "illumos") -> list[IfaceRecord]:
    return as_records(parse_routes(text, os_name))


COMMANDS = (
    Entry(
        r"netstat -(?:rn|nr|r -n|n -r)(?: -f ?inet6?)?",
        frozenset({"illumos", "bsd"}),
        _records,
        "the interface that carries the default route",
    ),
)
