"""Linux /sys/class/net attributes as printed by ``grep -Hs . /sys/class/net/*/ATTR ...``.

Every line is ``/sys/class/net/NAME/ATTR:VALUE``. Linux interface names cannot contain "/",
":" or whitespace, so the name is what sits between the prefix and the next "/", and the value
is what follows the first ":" — but nothing here relies on the name being tame beyond that: a
name is data, never split further.

Multi-line files (``uevent``) give one line per ``KEY=VALUE``; they are stored as
``"ATTR:KEY"`` so the caller can ask for ``"uevent:DEVTYPE"`` or ``"device/uevent:DRIVER"``.
"""

from __future__ import annotations

from ..core import units
from ..core.kinds import Kind
from ..core.model import IfaceRecord
from . import numbers
from .parse_error import ParseError
from .registry import Entry

PREFIX = "/sys/class/net/"
COMMAND = "grep -Hs . /sys/class/net/*/ATTR"

# ARPHRD_* values (include/uapi/linux/if_arp.h) that say "tunnel" on their own.
_TUNNEL_TYPES = {"768", "769", "776", "778", "823", "65534"}  # ipip, ip6tnl, sit, gre, ip6gre, none (tun, wg)
_DEVTYPE_KINDS = {
    "bridge": Kind.BRIDGE,
    "bond": Kind.BOND,
    "team": Kind.BOND,
    "vlan": Kind.VLAN,
    "wlan": Kind.WIRELESS,
    "wwan": Kind.PHYSICAL,
    "macvlan": Kind.VIRTUAL,
    "ipvlan": Kind.VIRTUAL,
    "vxlan": Kind.TUNNEL,
    "geneve": Kind.TUNNEL,
    "wireguard": Kind.TUNNEL,
}
_OPER = {"up", "down", "dormant", "lowerlayerdown", "notpresent", "testing", "unknown"}


def parse(text: str) -> dict[str, dict[str, str]]:
    """name → {attr: value}; ``uevent``-style files as ``attr:KEY``."""
    out: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        if not line:
            continue
        if not line.startswith(PREFIX):
            raise ParseError(COMMAND, "expected /sys/class/net/NAME/ATTR:VALUE", line)
        path, sep, value = line[len(PREFIX) :].partition(":")
        name, slash, attr = path.partition("/")
        if not sep or not slash or not name or not attr:
            raise ParseError(COMMAND, "expected /sys/class/net/NAME/ATTR:VALUE", line)
        attrs = out.setdefault(name, {})
        if attr.endswith("uevent") and "=" in value:
            key, _, val = value.partition("=")
            attrs[f"{attr}:{key}"] = val
        else:
            attrs[attr] = value.strip()
    return out


# The files kind_of reads, under /sys/class/net/NAME/: what a sampler (remote) or the local
# adapter reads for it.
KIND_ATTRS = ("type", "uevent", "device/uevent", "tun_flags", "bonding/slaves", "bridge/bridge_id")


def kind_of(name: str, attrs: dict[str, str]) -> Kind:
    """Link kind from sysfs facts: DEVTYPE first, then the directories only some kinds have."""
    arphrd = attrs.get("type")
    if arphrd == "772" or name == "lo":
        return Kind.LOOPBACK
    devtype = attrs.get("uevent:DEVTYPE")
    if devtype in _DEVTYPE_KINDS:
        return _DEVTYPE_KINDS[devtype]
    if "bridge/bridge_id" in attrs:
        return Kind.BRIDGE
    if "bonding/slaves" in attrs:
        return Kind.BOND
    if "tun_flags" in attrs or arphrd in _TUNNEL_TYPES:
        return Kind.TUNNEL
    if any(k.startswith("device/uevent") for k in attrs):
        return Kind.PHYSICAL
    return Kind.VIRTUAL  # veth, dummy, macvlan without DEVTYPE …


def records(values: dict[str, dict[str, str]]) -> list[IfaceRecord]:
    """The per-tick attributes (mtu, speed, duplex, operstate, carrier_changes) as records.
    Speed is kept only while the link is up (a down link reports its last or a sentinel);
    whether a virtual kind's speed is believable is the adapter's call."""
    out = []
    for name, attrs in values.items():
        oper = attrs.get("operstate")
        oper = oper if oper in _OPER else None
        if oper == "unknown" and (name == "lo" or attrs.get("type") == "772"):
            oper = "up"  # loopback has no carrier to report: "unknown" is how an up lo reads
        speed = units.speed_mbps(attrs.get("speed"), "mbps")
        duplex = attrs.get("duplex") if speed is not None and attrs.get("duplex") in ("full", "half") else None
        out.append(
            IfaceRecord(
                name=name,
                kind=kind_of(name, attrs) if "type" in attrs else None,
                oper=oper,
                mtu=numbers.mtu(_int(attrs.get("mtu"), name, "mtu")),
                speed_mbps=speed,
                duplex=duplex,
                carrier_changes=_int(attrs.get("carrier_changes"), name, "carrier_changes"),
            )
        )
    return out


def _int(value: str | None, name: str, attr: str) -> int | None:
    if value is None or value == "":
        return None
    return numbers.integer(value, f"{attr} of {name!r}", COMMAND, f"{PREFIX}{name}/{attr}:{value}")


def _entry(text: str, os_name: str) -> list[IfaceRecord]:
    return records(parse(text))


COMMANDS = (
    Entry(
        pattern=r"grep -Hs \. (/sys/class/net/\S+ ?)+",
        oses=frozenset({"linux"}),
        parse=_entry,
        description="Linux sysfs interface attributes (mtu, speed, duplex, operstate, carrier_changes, type, uevent)",
    ),
)
