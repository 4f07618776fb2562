"""``route -n get default`` (and ``route -n get -inet6 default``) on the BSDs and macOS.

The kernel answers for the one route it would use, so the output stays a few lines even on
a router holding a full table::

       route to: 0.0.0.0
    destination: 0.0.0.0
           mask: 0.0.0.0
        gateway: 140.211.10.65
            fib: 0
      interface: vtnet0
          flags: <UP,GATEWAY,DONE,STATIC>
     recvpipe  sendpipe  ssthresh  rtt,msec    mtu        weight    expire
           0         0         0         0      1500         1         0

A default onto a point-to-point link (a VPN's utun) has no ``gateway:`` line. Without a default
route ``route`` says "not in table" on stderr and prints nothing here.
"""

from __future__ import annotations

import re

from ..core.model import IfaceRecord
from .default_route import DefaultRoute, as_records, word
from .parse_error import ParseError
from .registry import Entry

COMMAND = "route -n get default"
_DEFAULT = {"default", "0.0.0.0", "::"}
_FIELD = re.compile(r"\s*([a-z][a-z ]{0,19}):\s*(.*)")
_NUMBER = re.compile(r"-?[0-9]{1,20}")
# The metrics table under the fields: its header and its row of numbers.
_TABLE_WORDS = {"recvpipe", "sendpipe", "ssthresh", "rtt,msec", "rttvar", "hopcount", "mtu", "weight", "expire"}


def parse_routes(text: str, os_name: str = "freebsd") -> list[DefaultRoute]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split()
        field = _FIELD.fullmatch(line)
        if not words:
            continue
        if field:
            fields.setdefault(field.group(1), field.group(2).strip())
        elif words[0] in _TABLE_WORDS or all(_NUMBER.fullmatch(w) for w in words):
            continue
        else:
            raise ParseError(COMMAND, "expected 'field: value' lines", line)
    if not fields:
        return []
    destination = fields.get("destination", fields.get("route to"))
    if destination is None:
        raise ParseError(COMMAND, "no 'destination:' or 'route to:' field: not the output of route get")
    if destination.split("%")[0] not in _DEFAULT or "interface" not in fields:
        return []  # the route asked about is not a default route, or leaves by no interface
    shown = f"interface: {fields['interface']}"
    gateway = fields.get("gateway")
    return [
        DefaultRoute(
            word(fields["interface"], "interface", COMMAND, shown),
            word(gateway, "gateway", COMMAND, f"gateway: {gateway}") if gateway else None,
        )
    ]


def _records(text: str, os_name: str = "freebsd") -> list[IfaceRecord]:
    return as_records(parse_routes(text, os_name))


COMMANDS = (
    Entry(
        r"route -n get(?: -inet6| -inet)? default",
        frozenset({"bsd"}),
        _records,
        "the interface that carries the default route",
    ),
)
