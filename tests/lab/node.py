"""A Kubernetes-like node in one lab host: eth0 plus ``pairs`` veth pairs inside its own
namespace, named like a Calico node's (``cali`` + 11 hex digits, the pod end ``veth`` + the
same digits), the cali ends at Calico's MTU. Made with one ``ip -batch`` (a fraction of a
second for 300 pairs); IPv6 is off in the namespace so idle links stay idle (no router
solicitations, no MLD), as a node's pod links are between pods' traffic."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import netns

if TYPE_CHECKING:
    from .host import LabHost

CALI_MTU = 1440


def node_names(pairs: int) -> list[tuple[str, str]]:
    return [(f"cali{i * 7919:011x}", f"veth{i * 7919:011x}") for i in range(1, pairs + 1)]


def make_node(host: "LabHost", pairs: int = 300) -> list[tuple[str, str]]:
    """Add the veth pairs to ``host`` (all up); they go with its namespace."""
    host.exec("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
    names = node_names(pairs)
    lines = [f"link add {cali} mtu {CALI_MTU} type veth peer name {veth}" for cali, veth in names]
    lines += [f"link set {name} up" for pair in names for name in pair]
    netns.run(["ip", "-n", host.netns, "-batch", "-"], input="\n".join(lines) + "\n", timeout=120)
    return names
