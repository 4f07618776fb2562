"""``kstat -p link:::``: per-datalink counters on illumos / Solaris 11.

Each line is ``module:instance:name:statistic<TAB>value`` (some copies have spaces instead of
the TAB). The ``link`` module has one kstat per datalink, named after the link, carrying both
32-bit (``rbytes``) and 64-bit (``rbytes64``) counters, ``ifspeed`` in bit/s, ``link_duplex``
(0 unknown, 1 half, 2 full), ``link_state`` (0 down, 1 up) and ``snaptime`` — the
high-resolution time (seconds since boot) at which that kstat was read, which is the right
clock to divide the counter deltas by.
"""

from __future__ import annotations

import re

from ..core.model import Counters, IfaceRecord
from ..core.units import speed_mbps
from . import numbers
from .parse_error import ParseError
from .registry import Entry

COMMAND = "kstat -p link:::"

# 64-bit name, 32-bit fallback, Counters field.
_COUNTERS = (
    ("rbytes64", "rbytes", "rx_bytes"),
    ("obytes64", "obytes", "tx_bytes"),
    ("ipackets64", "ipackets", "rx_packets"),
    ("opackets64", "opackets", "tx_packets"),
)
# 32-bit only in every release.
_PLAIN = {"ierrors": "rx_errors", "oerrors": "tx_errors", "norcvbuf": "rx_drops", "noxmtbuf": "tx_drops"}
_DUPLEX: dict[int | None, str] = {1: "half", 2: "full"}
_STATE: dict[int | None, str] = {0: "down", 1: "up"}
# Known statistics that are not counters.
_NOT_COUNTERS = {"class", "crtime", "snaptime", "zonename", "ifspeed", "link_duplex", "link_state", "link_up"}
_KNOWN = _NOT_COUNTERS | set(_PLAIN) | {n for triple in _COUNTERS for n in triple[:2]}

# The statistics the adapter asks for, as a kstat /regex/ on the statistic field: keeps a
# tick's output to a dozen lines per link instead of thirty.
STATISTICS = (
    "rbytes64",
    "obytes64",
    "ipackets64",
    "opackets64",
    "rbytes",
    "obytes",
    "ipackets",
    "opackets",
    "ierrors",
    "oerrors",
    "norcvbuf",
    "noxmtbuf",
    "ifspeed",
    "link_duplex",
    "link_state",
    "snaptime",
)
FILTERED_COMMAND = "kstat -p 'link:::/^(" + "|".join(STATISTICS) + ")$/'"

_LINE = re.compile(r"^([^:\s]+):(\d+):(\S+):(\S+)(?:\s+(.*))?$")


def read_stats(text: str, command: str = COMMAND) -> dict[str, dict[str, str]]:
    """{link name: {statistic: raw value}} for every ``link`` module line."""
    links: dict[str, dict[str, str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _LINE.match(line)
        if not m:
            raise ParseError(command, "expected module:instance:name:statistic<TAB>value", raw)
        module, _instance, name, stat, value = m.groups()
        if module != "link":
            continue
        links.setdefault(name, {})[stat] = (value or "").strip()
    return links


_SIGNED = frozenset({"link_state", "link_duplex"})


def _int(stats: dict[str, str], key: str, command: str, name: str) -> int | None:
    value = stats.get(key)
    if value is None or value == "":
        return None
    # link_state and link_duplex say -1 for unknown
    return numbers.integer(value, f"{name}:{key}", command, f"{name}:{key} {value}", signed=key in _SIGNED)


def parse_with_time(
    text: str, os_name: str = "illumos", command: str = COMMAND
) -> tuple[list[IfaceRecord], float | None]:
    """Records with counters, speed, duplex and state, and the latest ``snaptime`` (or None)."""
    records = []
    snaptime: float | None = None
    for name, stats in read_stats(text, command).items():
        if "snaptime" in stats:
            t = numbers.decimal(stats["snaptime"], f"{name}:snaptime", command)
            snaptime = t if snaptime is None else max(snaptime, t)
        values: dict[str, int | None] = {}
        wide = True
        for name64, name32, field in _COUNTERS:
            v = _int(stats, name64, command, name)
            if v is None:
                v = _int(stats, name32, command, name)
                if v is not None:
                    wide = False
            values[field] = v
        for stat, field in _PLAIN.items():
            values[field] = _int(stats, stat, command, name)
        have = any(v is not None for v in values.values())
        duplex = _DUPLEX.get(_int(stats, "link_duplex", command, name))
        speed = speed_mbps(_int(stats, "ifspeed", command, name), "bps")
        nic = {}
        for stat, raw in stats.items():
            if stat not in _KNOWN and re.fullmatch(r"[0-9]{1,20}", raw):
                nic[stat] = int(raw)
        zone = stats.get("zonename")
        records.append(
            IfaceRecord(
                name=name,
                oper=_STATE.get(_int(stats, "link_state", command, name)),
                speed_mbps=speed,
                duplex=duplex if speed is not None else None,
                counters=Counters(**values, bits=64 if wide else 32) if have else None,
                nic_counters=nic,
                extra=(("zone", zone),) if zone and zone != "global" else (),
            )
        )
    return records, snaptime


def parse(text: str, os_name: str = "illumos") -> list[IfaceRecord]:
    return parse_with_time(text, os_name)[0]


COMMANDS = (
    Entry(
        r"kstat -p '?link:[\d*]*:[\w.*]*(?::\S*)?'?",
        frozenset({"illumos"}),
        parse,
        "per-link 64-bit counters, ifspeed (bit/s), link_duplex, link_state, snaptime",
    ),
)
