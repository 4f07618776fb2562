"""What every default-route parser returns: which interface carries the default route, and
through which gateway. One module per command reads its own output (``ip_route``,
``route_get``, ``netstat_route``); the adapters mark the interface (``platforms/route_marks.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.model import IfaceRecord
from .parse_error import ParseError

# An interface name or gateway address as printed by ip, route and netstat: no spaces or
# control characters, at most 64 characters (a scoped IPv6 address is the longest).
_WORD = re.compile(r"[!-~]{1,64}")


@dataclass(frozen=True)
class DefaultRoute:
    """One default route: the interface it leaves by (None when the output does not say, as
    Solaris's netstat on a route added without ``-ifp``) and its gateway (None for a route
    straight onto a link, such as a VPN's point-to-point interface)."""

    interface: str | None
    gateway: str | None = None


def word(text: str, what: str, command: str, line: str) -> str:
    """``text`` if it can be an interface name or an address, else ParseError naming ``what``."""
    if not _WORD.fullmatch(text):
        raise ParseError(command, f"the default route's {what} is not one printable word: {text[:40]!r}", line)
    return text


def as_records(routes: list[DefaultRoute]) -> list[IfaceRecord]:
    """The routes as records for ``linkdeck parse``: each named interface once, its gateway
    on the detail line."""
    via: dict[str, list[str]] = {}
    for route in routes:
        if route.interface is not None:
            via.setdefault(route.interface, []).append(f"via {route.gateway}" if route.gateway else "on-link")
    return [IfaceRecord(name=name, extra=tuple(("default route", v) for v in vias)) for name, vias in via.items()]
