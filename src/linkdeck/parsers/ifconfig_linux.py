"""``ifconfig -a`` on Linux: busybox's and net-tools', for a host without any ``ip``.

Two layouts, told apart by each interface's first line:

- busybox and net-tools before 2.10 (``eth0      Link encap:Ethernet  HWaddr 02:…``, then
  ``inet addr:10.0.0.1  Bcast:…  Mask:255.255.255.0``, ``inet6 addr: fe80::1/64 Scope:Link``,
  ``UP BROADCAST RUNNING MULTICAST  MTU:1500  Metric:1``);
- net-tools 2.10 on (``eth0: flags=4163<UP,…>  mtu 1500``, then ``inet 10.0.0.1  netmask
  255.255.255.0``, ``inet6 fe80::1  prefixlen 64  scopeid 0x20<link>``, ``ether 02:…``).

Read: each link's MAC (Ethernet links only, as ``ip addr``'s ``link/ether``), its addresses
with a prefix length, and its MTU. An alias label (``eth0:1``) is not a link: its address
belongs to the link before the colon (a link's name cannot hold one). ifconfig shows one IPv4
address per label, so a secondary address added without a label is not in its output.

Names are split on spaces and tabs only: a link's name may hold any other byte but ``/``,
``:`` and whitespace, and Python's own whitespace includes control characters a name may hold.
"""

from __future__ import annotations

import ipaddress
import re

from ..core.model import IfaceRecord
from . import numbers
from .parse_error import ParseError
from .registry import Entry

_COMMAND = "ifconfig -a"
_NAME = r"[^ \t]+?"
_OLD_HEAD = re.compile(rf"^({_NAME})[ \t]+Link encap:(.*)$")
_NEW_HEAD = re.compile(rf"^({_NAME}): flags=\d+<[^>]*>(.*)$")
_HWADDR = re.compile(r"\bHWaddr[ \t]+([0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5})(?:[ \t]|$)")
_MAC = re.compile(r"[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}")
_NEW_MTU = re.compile(r"(?:^|[ \t])mtu[ \t]+(\d+)(?:[ \t]|$)")
_OLD_MTU = re.compile(r"(?:^|[ \t])MTU:(\d+)(?:[ \t]|$)")


class _Link:
    def __init__(self, name: str) -> None:
        self.name = name
        self.mac: str | None = None
        self.mtu: int | None = None
        self.addresses: list[str] = []


def parse(text: str) -> list[IfaceRecord]:
    """One record per link, in the order ifconfig lists them; raises ParseError on a detail
    line before any interface, a first line of neither layout, and an address or mask that
    does not parse."""
    links: dict[str, _Link] = {}
    current: _Link | None = None
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if not line.strip(" \t"):
            continue
        if line[0] not in " \t":
            current = _head(line, links)
            continue
        if current is None:
            raise ParseError(_COMMAND, "indented line before any interface", line)
        _detail(current, line.strip(" \t"), line)
    if not links:
        raise ParseError(_COMMAND, "no interface found; is this Linux 'ifconfig -a' output?")
    return [
        IfaceRecord(name=link.name, mtu=link.mtu, mac=link.mac, addresses=tuple(dict.fromkeys(link.addresses)))
        for link in links.values()
    ]


def _head(line: str, links: dict[str, _Link]) -> _Link:
    old = _OLD_HEAD.match(line)
    new = None if old else _NEW_HEAD.match(line)
    if old is None and new is None:
        raise ParseError(_COMMAND, "expected 'NAME  Link encap:…' or 'NAME: flags=N<…>  mtu N'", line)
    head = old or new
    assert head is not None
    name = head.group(1).partition(":")[0]  # an alias label's address is its link's
    link = links.setdefault(name, _Link(name))
    rest = head.group(2)
    if old is not None:
        mac = _HWADDR.search(rest)
        if rest.startswith("Ethernet") and mac and link.mac is None:
            link.mac = mac.group(1).lower()
    else:
        mtu = _NEW_MTU.search(rest)
        if mtu and link.mtu is None:
            link.mtu = numbers.mtu(int(mtu.group(1)))
    return link


def _detail(link: _Link, words_line: str, line: str) -> None:
    words = words_line.split()
    first = words[0]
    if first == "inet" and len(words) > 1:
        link.addresses.append(_inet(words, line))
    elif first == "inet6" and len(words) > 1:
        link.addresses.append(_inet6(words, line))
    elif first == "ether" and len(words) > 1 and _MAC.fullmatch(words[1]) and link.mac is None:
        link.mac = words[1].lower()
    else:
        mtu = _OLD_MTU.search(words_line)
        if mtu and link.mtu is None:
            link.mtu = numbers.mtu(int(mtu.group(1)))


def _inet(words: list[str], line: str) -> str:
    """``inet addr:A … Mask:M`` or ``inet A  netmask M …`` as A/prefix."""
    fields = dict(_pairs(words[1:]))
    address = fields.get("addr") or (words[1] if ":" not in words[1] else None)
    mask = fields.get("Mask") or fields.get("netmask")
    if address is None or mask is None:
        raise ParseError(_COMMAND, "an inet line without its address or mask", line)
    try:
        return str(ipaddress.IPv4Interface(f"{address}/{mask}"))
    except ValueError as exc:
        raise ParseError(_COMMAND, f"an address or mask that does not parse ({exc})", line) from None


def _inet6(words: list[str], line: str) -> str:
    """``inet6 addr: A/P Scope:…`` or ``inet6 A  prefixlen P …`` as A/P."""
    if words[1] == "addr:" and len(words) > 2:
        text = words[2]
    elif "prefixlen" in words[2:-1]:
        text = f"{words[1]}/{words[words.index('prefixlen', 2) + 1]}"
    else:
        raise ParseError(_COMMAND, "an inet6 line without its prefix length", line)
    try:
        return str(ipaddress.IPv6Interface(text))
    except ValueError as exc:
        raise ParseError(_COMMAND, f"an address that does not parse ({exc})", line) from None


def _pairs(words: list[str]) -> list[tuple[str, str]]:
    """``addr:A``, ``Mask:M`` (old layout) and ``netmask M`` (new) as (key, value)."""
    out = []
    for i, word in enumerate(words):
        key, colon, value = word.partition(":")
        if colon and value:
            out.append((key, value))
        elif word in ("netmask", "broadcast", "destination") and i + 1 < len(words):
            out.append((word, words[i + 1]))
    return out


def _parse_entry(text: str, os_name: str) -> list[IfaceRecord]:
    return parse(text)


COMMANDS = (
    Entry(
        r"(?:busybox )?ifconfig(?: -a)?",
        frozenset({"linux"}),
        _parse_entry,
        "ifconfig -a (busybox, net-tools): addresses, MAC, mtu",
    ),
)
