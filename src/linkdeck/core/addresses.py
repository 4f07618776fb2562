"""The addresses that put an interface on a shared segment, for the subnet rules and for
picking a test's peer address."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

IPInterface = ipaddress.IPv4Interface | ipaddress.IPv6Interface


@lru_cache(maxsize=4096)  # asked every tick about the same few address tuples
def routable(addresses: tuple[str, ...]) -> tuple[IPInterface, ...]:
    """``addr/prefix`` strings as interfaces, without loopback, link-local, unspecified and
    host routes (/32, /128: a VIP shared by many hosts is not a shared segment). Unreadable
    text is skipped."""
    out: list[IPInterface] = []
    for text in addresses:
        addr, _, prefix = text.partition("/")
        addr = addr.split("%", 1)[0]  # fe80::1%eth0
        try:
            ip_if = ipaddress.ip_interface(f"{addr}/{prefix}" if prefix else addr)
        except ValueError:
            continue
        ip = ip_if.ip
        if ip.is_loopback or ip.is_link_local or ip.is_unspecified:
            continue
        if ip_if.network.prefixlen == ip_if.max_prefixlen:
            continue
        out.append(ip_if)
    return tuple(out)


def ssh_server_address(ssh_connection: str) -> str | None:
    """The host's own address in ``$SSH_CONNECTION`` ("client port server port"): the one an
    SSH session reached it by. None for anything else, so a host's text never passes through."""
    fields = ssh_connection.split()
    return ip_text(fields[2]) if len(fields) == 4 else None


def ip_text(text: str) -> str | None:
    """``text`` as an IP address in its canonical form (scope dropped), or None if it is not one."""
    try:
        return str(ipaddress.ip_address(text.split("%", 1)[0]))
    except ValueError:
        return None


def holds(addresses: tuple[str, ...], ip: str) -> bool:
    """Whether one of ``addresses`` ("addr/prefix") is ``ip``."""
    for text in addresses:
        addr = text.partition("/")[0].split("%", 1)[0]
        try:
            if str(ipaddress.ip_address(addr)) == ip:
                return True
        except ValueError:
            continue
    return False
