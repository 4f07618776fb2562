"""``ifconfig -a`` / ``ifconfig IF`` / ``ifconfig -m`` on the BSD family and macOS.

Each interface is a header line ``name: flags=8843<UP,…> [metric 0] mtu 1500 [index 4]``
followed by indented lines (a TAB on real systems; spaces in pasted copies, so any leading
whitespace counts). What is read from the indented lines:

- ``ether`` / ``lladdr`` (macOS FireWire, OpenBSD) / ``address:`` (NetBSD) → MAC;
  ``hwaddr`` is the permanent address (FreeBSD) and only kept in ``extra``.
- ``inet A netmask 0xffffff00`` (hex mask), ``inet A/24`` (NetBSD ≥ 8), ``inet A --> B``
  (point-to-point), ``inet6 A%scope prefixlen 64`` or ``A%scope/64`` → ``A/prefix``.
- ``media:`` in every shape seen in real output: ``Ethernet autoselect (1000baseT
  <full-duplex>)`` (negotiated mode in parentheses), ``Ethernet 10Gbase-LR
  <full-duplex,rxpause,txpause>`` (fixed), ``autoselect`` / ``autoselect (none)`` /
  ``<unknown type>`` (no speed), NetBSD/OpenBSD without angle brackets ``(100baseTX
  full-duplex)``; and a ``hwaddr … media: …`` line fused by a paste (jc's cxl3 fixture).
  The speed is a property of the active media only; ``autoselect <full-duplex>`` with no
  active media says nothing negotiated, so speed and duplex stay unknown.
- ``status:`` active/associated → up, no carrier/inactive → down; without a status line the
  UP and RUNNING flags decide.
- lagg (``laggproto``, ``laggport: IF``; OpenBSD ``trunkport IF``), vlan (``vlan: N … parent
  interface: IF``; NetBSD ``vlan: N parent: IF``; OpenBSD ``encap: vnetid N parent IF``),
  bridge (``member: IF``) → kind, ``members`` / ``over``; ``groups:`` hints the kind.
- Supported media (FreeBSD ``ifconfig -m``: ``supported media:`` then ``media X [mediaopt Y]``
  lines; NetBSD ``ifconfig -m`` the same ``media X`` lines) → supported_speeds_mbps.

Virtual NICs invent a media (virtio vtnet "10Gbase-T", epair "10Gbase-T"): their kind is
virtual and their speed unknown. Everything else indented (options=, capabilities=, nd6, SFP
module diagnostics, bridge configuration, LACP tuples) is ignored.
"""

from __future__ import annotations

import ipaddress
import re

from ..core.kinds import Kind, guess_kind
from ..core.model import IfaceRecord
from ..core.units import speed_mbps
from . import numbers
from .parse_error import ParseError
from .registry import Entry

_HEADER = re.compile(r"^(?P<name>[^\s:]+): flags=(?:0x)?[0-9a-fA-F]+<(?P<flags>[^>]*)>(?P<rest>.*)$")
_MTU = re.compile(r"\bmtu (\S+)")
_INDEX = re.compile(r"\bindex (\d+)")
# Media subtypes carry their speed in the name: 10baseT/UTP, 100baseTX, 1000baseT, 2500Base-T,
# 10Gbase-SR, 25GBase-SR, 40Gbase-CR4, 100G-CAUI4 (FreeBSD/NetBSD/OpenBSD ifmedia tables).
_SUBTYPE_SPEED = re.compile(r"^([0-9]{1,7}(?:\.[0-9]{1,3})?)([GM]?)(?:base|-)", re.IGNORECASE)
_NO_MEDIA = {"autoselect", "none", "manual", "auto", "<unknown", "unknown"}
_MEDIA_TYPES = {"ethernet", "ieee802.11", "fddi", "token", "atm"}
_GROUP_KINDS = {
    "lo": Kind.LOOPBACK,
    "lagg": Kind.BOND,
    "vlan": Kind.VLAN,
    "bridge": Kind.BRIDGE,
    "epair": Kind.VIRTUAL,
    "tap": Kind.TUNNEL,
    "tun": Kind.TUNNEL,
    "wlan": Kind.WIRELESS,
    "wg": Kind.TUNNEL,
}


def parse(text: str, command: str = "ifconfig -a") -> list[IfaceRecord]:
    """One record per interface, in output order. Raises ParseError on an indented line before
    any interface, on a non-indented line that is not an interface header, and on addresses or
    masks that do not parse."""
    blocks: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0] in " \t":
            if not blocks:
                raise ParseError(command, "indented line before any interface header", line)
            blocks[-1][1].append(line.strip())
            continue
        if not _HEADER.match(line):
            raise ParseError(command, "expected 'NAME: flags=…<…> mtu N'", line)
        blocks.append((line, []))
    if not blocks:
        raise ParseError(command, "no interfaces in output")
    return [_interface(header, body, command) for header, body in blocks]


class _Iface:
    """Mutable accumulator for one interface block."""

    def __init__(self, name: str, flags: set[str]) -> None:
        self.name = name
        self.flags = flags
        self.mac: str | None = None
        self.addresses: list[str] = []
        self.status: str | None = None
        self.media: str | None = None
        self.speed: int | None = None
        self.duplex: str | None = None
        self.kind: Kind | None = None
        self.group_kind: Kind | None = None
        self.over: str | None = None
        self.members: list[str] = []
        self.supported: set[int] = set()
        self.extra: list[tuple[str, str]] = []


def _interface(header: str, body: list[str], command: str) -> IfaceRecord:
    m = _HEADER.match(header)
    assert m is not None  # checked by the caller
    iface = _Iface(m.group("name"), {f.strip().upper() for f in m.group("flags").split(",") if f.strip()})
    mtu_m = _MTU.search(m.group("rest"))
    index_m = _INDEX.search(m.group("rest"))
    if index_m:
        iface.extra.append(("index", index_m.group(1)))
    for line in body:
        _body_line(iface, line, command)
    return _record(iface, numbers.mtu(numbers.integer(mtu_m.group(1), "the MTU", command, header)) if mtu_m else None)


def _body_line(iface: _Iface, line: str, command: str) -> None:  # noqa: C901, PLR0912 - one branch per ifconfig line form
    key, _, rest = line.partition(" ")
    if key == "hwaddr":
        # jc's cxl3 capture fused "hwaddr X     media: …" onto one line.
        hw, _, fused = rest.partition("media:")
        iface.extra.append(("hwaddr", hw.strip()))
        if fused:
            _media(iface, fused.strip())
    elif key in ("ether", "lladdr", "address:"):
        iface.mac = rest.split()[0] if rest.split() else None
    elif key == "inet":
        iface.addresses.append(_inet(rest, line, command))
    elif key == "inet6":
        iface.addresses.append(_inet6(rest, line, command))
    elif key == "media:":
        _media(iface, rest.strip())
    elif key == "media":  # a supported-media line of ifconfig -m
        speed = _subtype_speed(rest.split()[0]) if rest.split() else None
        if speed is not None:
            iface.supported.add(speed)
    elif key == "status:":
        iface.status = rest.strip().lower()
    elif key == "laggproto":
        iface.kind = Kind.BOND
        iface.extra.append(("laggproto", rest.split()[0] if rest.split() else ""))
    elif key in ("laggport:", "trunkport") and rest.split():
        iface.kind = Kind.BOND
        iface.members.append(rest.split()[0])
    elif key == "member:" and rest.split():
        iface.kind = Kind.BRIDGE
        iface.members.append(rest.split()[0])
    elif key in ("vlan:", "encap:"):
        _vlan(iface, line)
    elif key == "groups:":
        for group in rest.split():
            if group in _GROUP_KINDS and iface.group_kind is None:
                iface.group_kind = _GROUP_KINDS[group]
        iface.extra.append(("groups", rest.strip()))


def _inet(rest: str, line: str, command: str) -> str:
    tokens = rest.split()
    if not tokens:
        raise ParseError(command, "inet without an address", line)
    addr = tokens[0]
    try:
        if "/" in addr:
            return str(ipaddress.IPv4Interface(addr))
        mask = tokens[tokens.index("netmask") + 1] if "netmask" in tokens else None
        if mask is None:
            return f"{ipaddress.IPv4Address(addr)}/32"
        if mask.lower().startswith("0x"):
            mask = str(ipaddress.IPv4Address(int(mask, 16)))
        return str(ipaddress.IPv4Interface(f"{addr}/{mask}"))
    except (ValueError, IndexError):
        raise ParseError(command, "unreadable IPv4 address or netmask", line) from None


def _inet6(rest: str, line: str, command: str) -> str:
    tokens = rest.split()
    if not tokens:
        raise ParseError(command, "inet6 without an address", line)
    m = re.fullmatch(r"([0-9a-fA-F:.]+)(?:%[^/\s]+)?(?:/(\d+))?", tokens[0])
    try:
        if m is None:
            raise ValueError
        prefix = m.group(2)
        if prefix is None and "prefixlen" in tokens:
            prefix = tokens[tokens.index("prefixlen") + 1]
        return str(ipaddress.IPv6Interface(f"{m.group(1)}/{prefix or 128}"))
    except (ValueError, IndexError):
        raise ParseError(command, "unreadable IPv6 address or prefixlen", line) from None


def _media(iface: _Iface, text: str) -> None:
    iface.media = text
    paren = re.search(r"\(([^)]*)\)", text)
    if paren:
        active = paren.group(1)
    else:
        words = text.split(None, 1)
        active = words[1] if len(words) == 2 and words[0].lower() in _MEDIA_TYPES else text
    words = active.replace("<", " ").replace(">", " ").replace(",", " ").split()
    if not words or words[0].lower() in _NO_MEDIA:
        return
    iface.speed = _subtype_speed(words[0])
    if iface.speed is None:
        return
    options = {w.lower() for w in words[1:]}
    if "full-duplex" in options or "fdx" in options:
        iface.duplex = "full"
    elif "half-duplex" in options or "hdx" in options:
        iface.duplex = "half"


def _subtype_speed(subtype: str) -> int | None:
    m = _SUBTYPE_SPEED.match(subtype)
    if not m:
        return None
    value = float(m.group(1)) * (1000 if m.group(2).upper() == "G" else 1)
    return speed_mbps(int(value))


def _vlan(iface: _Iface, line: str) -> None:
    iface.kind = Kind.VLAN
    tag = re.search(r"(?:vlan:|vnetid:?)\s*(\d+)", line)
    parent = re.search(r"parent(?: interface)?:?\s+(\S+)", line)
    if tag:
        iface.extra.append(("vlan", tag.group(1)))
    if parent and parent.group(1) not in ("<none>", "none"):
        iface.over = parent.group(1)


def _kind(iface: _Iface) -> Kind:
    if "LOOPBACK" in iface.flags:
        return Kind.LOOPBACK
    if iface.kind:
        return iface.kind
    guessed = guess_kind(iface.name)
    if guessed != Kind.UNKNOWN:
        return guessed
    if iface.group_kind:
        return iface.group_kind
    if "POINTOPOINT" in iface.flags:
        return Kind.TUNNEL
    if iface.mac:
        return Kind.PHYSICAL
    return Kind.UNKNOWN


def _oper(iface: _Iface) -> str:
    if "UP" not in iface.flags:
        return "down"
    if iface.status is not None:
        if iface.status in ("active", "associated", "running"):
            return "up"
        if iface.status in ("no carrier", "inactive", "down", "no network"):
            return "down"
        return "unknown"
    return "up" if "RUNNING" in iface.flags else "down"


def _record(iface: _Iface, mtu: int | None) -> IfaceRecord:
    kind = _kind(iface)
    oper = _oper(iface)
    extra = list(iface.extra)
    if iface.media is not None:
        extra.append(("media", iface.media))
    return IfaceRecord(
        name=iface.name,
        kind=kind,
        oper=oper,
        mtu=mtu or None,
        speed_mbps=iface.speed,
        duplex=iface.duplex if iface.speed is not None else None,
        addresses=tuple(dict.fromkeys(iface.addresses)),
        mac=iface.mac,
        over=iface.over,
        members=tuple(iface.members),
        supported_speeds_mbps=tuple(sorted(iface.supported)),
        extra=tuple(extra),
    )


def _parse_entry(text: str, os_name: str) -> list[IfaceRecord]:
    return parse(text)


COMMANDS = (
    Entry(
        r"ifconfig(?: -[a-zA-Z]+)*(?: [A-Za-z][\w.]*)?",
        frozenset({"bsd"}),
        _parse_entry,
        "ifconfig -a / -m / -v / IF: "
        "flags, mtu, status, media speed and duplex, addresses, lagg/vlan/bridge membership",
    ),
)
