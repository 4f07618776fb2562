"""``ipadm show-addr``: IP addresses per interface on illumos / Solaris 11.

An address object is ``<interface>/<name>`` (``aggr0/_a``, ``lo0/v4``, ``net0/?`` for an
address without a name); the interface is the part before the slash. The parseable form
(``-p -o addrobj,addr``) escapes the colons of IPv6 addresses (``lo0/v6:\\:\\:1/128``). ADDR is
``?`` while DHCP has no lease, and ``local->remote`` on point-to-point links.
"""

from __future__ import annotations

from ..core.model import IfaceRecord
from .dladm_rows import parseable_rows, table_rows
from .parse_error import ParseError
from .registry import Entry

PARSEABLE_FIELDS = ("addrobj", "addr")


def parse_show_addr(text: str, os_name: str = "illumos", fields: tuple[str, ...] | None = None) -> list[IfaceRecord]:
    command = "ipadm show-addr" + (f" -p -o {','.join(fields)}" if fields else "")
    rows = parseable_rows(text, command, fields) if fields else table_rows(text, command, ("addrobj", "addr"))
    addresses: dict[str, list[str]] = {}
    dhcp: dict[str, list[str]] = {}
    for row in rows:
        addrobj = row["addrobj"]
        iface = addrobj.split("/", 1)[0]
        if "/" not in addrobj or not iface or any(ch.isspace() for ch in iface):
            raise ParseError(command, f"address object {addrobj!r} is not <interface>/<name>", " ".join(row.values()))
        addresses.setdefault(iface, [])
        addr = row["addr"].split("->", 1)[0].strip()
        if addr in ("", "?", "--"):
            continue  # DHCP without a lease yet, or an address being configured
        addresses[iface].append(addr)
        if row.get("type") == "dhcp":
            dhcp.setdefault(iface, []).append(addr)
    return [
        IfaceRecord(
            name=iface, addresses=tuple(dict.fromkeys(addrs)), extra=tuple(("dhcp", a) for a in dhcp.get(iface, ()))
        )
        for iface, addrs in addresses.items()
    ]


def _parseable(text: str, os_name: str = "illumos") -> list[IfaceRecord]:
    return parse_show_addr(text, os_name, PARSEABLE_FIELDS)


COMMANDS = (
    Entry(
        r"ipadm show-addr -p -o addrobj,addr(?: \S+)?", frozenset({"illumos"}), _parseable, "addresses per interface"
    ),
    Entry(
        r"ipadm show-addr(?: -o all)?(?: \S+)?",
        frozenset({"illumos"}),
        parse_show_addr,
        "addresses per interface, with type (static/dhcp) and state",
    ),
)
