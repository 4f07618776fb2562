"""Interface kinds from names and flags, for OSes that do not say the kind outright; the rules
on an interface's reported speed and state that every layer shares."""

from __future__ import annotations

import enum
import re
from typing import Protocol


class Kind(str, enum.Enum):
    """An interface's kind, as far as its OS tells: what the parsers say and the rules compare.
    A str enum, so its JSON and its printed word are the value."""

    LOOPBACK = "loopback"
    PHYSICAL = "physical"
    VIRTUAL = "virtual"  # veth, epair, tap, vnic-like without more detail
    BRIDGE = "bridge"
    VLAN = "vlan"
    BOND = "bond"  # Linux bond/team, BSD lagg, illumos aggr
    VNIC = "vnic"  # illumos vnic, Linux macvlan/ipvlan
    TUNNEL = "tunnel"
    WIRELESS = "wireless"
    UNKNOWN = "unknown"
    HOST = "host"  # a host's totals row, never an interface a parser reports

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def read(cls, word: object) -> Kind:
        """The kind a recording or a JSON file names; a word this version has no member for
        (a newer or hand-edited file) reads as UNKNOWN rather than failing the whole read."""
        try:
            return cls(word)
        except ValueError:
            return cls.UNKNOWN


# Kinds whose reported speed is made up by the driver (veth says 10000, a bridge says the
# fastest member's): their speed is shown as unknown, never as a real link speed. A vnic
# (illumos vnic, Linux macvlan/ipvlan) is not among them: its driver reports the speed of the
# link it runs over, which is the real ceiling of its traffic.
VIRTUAL_SPEED_KINDS = frozenset({Kind.LOOPBACK, Kind.VIRTUAL, Kind.BRIDGE, Kind.TUNNEL})
# Links made in software, often by the hundred (a Kubernetes node's veths), whose traffic also
# crosses another interface of the host: idle ones fold on the dashboard, and a host's totals
# leave them out. A physical NIC, a bond, a vlan, loopback and wireless are not among them.
VIRTUAL_KINDS = frozenset({Kind.VIRTUAL, Kind.BRIDGE, Kind.TUNNEL, Kind.VNIC})


def speed_is_real(kind: Kind | None, oper: str | None) -> bool:
    """Whether a reported link speed means anything. The one place this rule lives: every
    adapter's interfaces and ``linkdeck parse`` go through it. A link that is not up has no
    negotiated speed (drivers keep the last one, or say 10 Mb/s); an unknown state keeps it."""
    return kind not in VIRTUAL_SPEED_KINDS and oper in (None, "up", "unknown")


# Operational states in which an interface carries nothing (Linux's operstate words; the
# parsers of the other OSes say "down").
DOWN_STATES = frozenset({"down", "lowerlayerdown", "notpresent"})


class HasState(Protocol):
    @property
    def oper(self) -> str | None: ...


def is_down(iface: HasState) -> bool:
    """The one "is this interface down" rule: findings, tests and the dashboard ask it."""
    return iface.oper in DOWN_STATES


# Whole-name patterns: a prefix alone would call "apple0" an access point or "lagoon" a lagg.
_NAME_KINDS = (
    (re.compile(r"^lo\d*$"), Kind.LOOPBACK),
    (re.compile(r"^((bridge|br|vmbr|virbr|docker)\d+|br-[0-9a-f]+|docker0)$"), Kind.BRIDGE),
    (re.compile(r"^(vlan\d+|.+\.\d+)$"), Kind.VLAN),
    (re.compile(r"^(lagg|bond|aggr|team|trunk)\d+$"), Kind.BOND),
    (re.compile(r"^(tun|tap|utun|gif|gre|wg|ipsec|enc|ovpn|stf|pflog|pfsync|ipfw)\d+$"), Kind.TUNNEL),
    (
        # veth names carry a hex suffix (docker's veth3f2a1b; Calico's cali…, Cilium's lxc… pods); para-virtual NIC
        # drivers of the hypervisors (vtnet, vioif, vmx, hn, xn) claim speeds they do not have.
        re.compile(
            r"^(veth\w*|cali[0-9a-f]{6,}|lxc[0-9a-f]{6,}|epair\d+[ab]?|(vnet|vnic|vtnet|vioif|vmx|hn|xn|p2p|awdl|llw|anpi|ap)\d+|vif\d+(\.\d+)?)$"
        ),
        Kind.VIRTUAL,
    ),
    (re.compile(r"^(wlan\d+|wlp\w+|wl\d+|ath\d+|iwn\d+|iwm\d+|iwx\d+)$"), Kind.WIRELESS),
)


def guess_kind(name: str, flags: str = "") -> Kind:
    if "loopback" in flags.lower():
        return Kind.LOOPBACK
    for pattern, kind in _NAME_KINDS:
        if pattern.match(name):
            return kind
    return Kind.UNKNOWN
