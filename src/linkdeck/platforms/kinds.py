"""Interface kinds from names and flags, for OSes that do not say the kind outright."""

from __future__ import annotations

import re

# Kinds whose reported speed is made up by the driver (veth says 10000, a bridge says the
# fastest member's, a vnic 0): their speed is shown as unknown, never as a real link speed.
VIRTUAL_SPEED_KINDS = frozenset({"loopback", "virtual", "bridge", "tunnel", "vnic"})

_NAME_KINDS = (
    (re.compile(r"^(lo|lo\d+)$"), "loopback"),
    (re.compile(r"^(bridge|br|vmbr|virbr|docker)\d*"), "bridge"),
    (re.compile(r"^(vlan\d+|.+\.\d+$)"), "vlan"),
    (re.compile(r"^(lagg|bond|aggr|team|trunk)\d*"), "bond"),
    (re.compile(r"^(tun|tap|utun|gif|gre|wg|ipsec|enc|ovpn|stf|pflog|pfsync|ipfw)\d*"), "tunnel"),
    (re.compile(r"^(veth|epair|vnet|vnic|vtnet|vif|xn|awdl|llw|anpi|ap|bridge)\d*"), "virtual"),
    (re.compile(r"^(wlan|wlp|wl|ath|iwn|iwm|iwx)\d*"), "wireless"),
)


def guess_kind(name: str, flags: str = "") -> str:
    if "loopback" in flags.lower():
        return "loopback"
    for pattern, kind in _NAME_KINDS:
        if pattern.match(name):
            return kind
    return "unknown"
