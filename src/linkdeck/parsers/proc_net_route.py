"""/proc/net/route: the IPv4 default routes where ``ip -j route`` is missing (busybox's ip).

Columns by the header's names. Every row names its interface, which is what marks the
default link; the gateway is left unread, its hex being in the host's byte order, which a
big-endian router (MIPS) would turn around. Among default routes that are up, the lowest
metric wins, as the kernel chooses.
"""

from __future__ import annotations

from .default_route import DefaultRoute
from .parse_error import ParseError

_FILE = "/proc/net/route"
_RTF_UP = 0x1


def parse_routes(text: str, os_name: str = "linux") -> list[DefaultRoute]:
    """The default routes (destination and mask 0, up) of the lowest metric."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    if not lines or lines[0][:2] != ["Iface", "Destination"]:
        raise ParseError(_FILE, "expected the header 'Iface Destination Gateway …'", text[:80])
    column = {name: i for i, name in enumerate(lines[0])}
    need = ("Iface", "Destination", "Flags", "Metric", "Mask")
    if not all(n in column for n in need):
        raise ParseError(_FILE, f"header lacks one of {need}", " ".join(lines[0]))
    found: list[tuple[int, DefaultRoute]] = []
    for row in lines[1:]:
        try:
            dest, mask, flags, metric = (
                int(row[column[n]], 16 if n != "Metric" else 10) for n in ("Destination", "Mask", "Flags", "Metric")
            )
        except (IndexError, ValueError) as exc:
            raise ParseError(_FILE, f"unreadable row ({exc})", " ".join(row)) from exc
        if dest or mask or not flags & _RTF_UP:
            continue
        found.append((metric, DefaultRoute(interface=row[column["Iface"]])))
    best = min((m for m, _ in found), default=None)
    return [r for m, r in found if m == best]
