"""``ip addr`` as text: what busybox's ``ip`` (no ``-j``) and iproute2 before 4.13 print.

Only what the sampler lacks without ``ip -j`` is read: each link's MAC (``link/ether``) and
addresses (``inet``/``inet6`` with a prefix length); the MTU and state come from sysfs.
"""

from __future__ import annotations

import re

from ..core.model import IfaceRecord
from .parse_error import ParseError

_COMMAND = "ip addr"
_HEAD = re.compile(r"^\d+:\s+([^\s:@]+)(?:@[^\s:]+)?:\s+<")


def parse(text: str) -> list[IfaceRecord]:
    """One record per link, in the order ``ip addr`` lists them."""
    names: list[str] = []
    macs: dict[str, str] = {}
    addresses: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        head = _HEAD.match(line)
        if head:
            names.append(head.group(1))
            addresses[head.group(1)] = []
            continue
        if not names or not line[0].isspace():
            raise ParseError(_COMMAND, "expected 'N: NAME: <FLAGS> mtu …' or an indented detail line", line)
        words = line.split()
        if words[0] == "link/ether" and len(words) > 1:
            macs[names[-1]] = words[1]
        elif words[0] in ("inet", "inet6") and len(words) > 1 and "/" in words[1]:
            addresses[names[-1]].append(words[1])
    if not names:
        raise ParseError(_COMMAND, "no link found; is this 'ip addr' output?")
    return [IfaceRecord(name=n, mac=macs.get(n), addresses=tuple(addresses[n])) for n in names]
