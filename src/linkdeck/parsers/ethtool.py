"""ethtool's text outputs: ``ethtool IF`` (link settings), ``ethtool -S IF`` (NIC counters),
``ethtool -g IF`` (ring sizes), ``ethtool -i IF`` (driver) and ``ethtool -k IF`` (offloads).

ethtool prints error lines ("Cannot get device ring settings: Operation not supported",
"netlink error: Operation not permitted", "No data available") on the same stream as the
data, sometimes in the middle of it (an unprivileged run loses only the lines needing root).
Error lines next to real data are skipped; output made only of errors raises ParseError
carrying the first error line, and the caller decides that the information is not available.

A leading echoed command line ("# ethtool -S eth0", a root prompt pasted with the output) is
skipped too, because users paste that way into bug reports.
"""

from __future__ import annotations

import re

from ..core import units
from ..core.model import IfaceRecord
from . import numbers
from .parse_error import ParseError
from .registry import Entry

# The name ethtool -S/-g/-i output does not contain; `linkdeck parse` fills it from the command.
UNNAMED = ""

_ERROR_RE = re.compile(
    r"^\s*(cannot |netlink error|no data available|no stats available|no such device|"
    r"operation not (supported|permitted)|.*: no such device\b)",
    re.IGNORECASE,
)
_ECHO_RE = re.compile(r"^\s*[#$]\s*(sudo\s+)?ethtool\b")
# Lines are split with str.partition and the parts checked whole: a regex with a lazy value
# and trailing \s*$ took seconds on one long line of spaces (every host's UI waits on it).
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9 /()_-]*")
_MODE_SPEED_RE = re.compile(r"^([0-9]{1,7})base", re.IGNORECASE)
_RING_RE = re.compile(r"^\s*(RX|RX Mini|RX Jumbo|TX):\s+(\S+)\s*$")
_DUPLEX = {"full": "full", "half": "half"}


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not _ECHO_RE.match(ln)]


def _fail_on_errors(command: str, lines: list[str], what: str) -> None:
    for ln in lines:
        if _ERROR_RE.match(ln):
            raise ParseError(command, f"{what} not available: {ln.strip()}", ln)
    raise ParseError(command, f"no {what} found in the output", lines[0] if lines else None)


# --- ethtool IF ---------------------------------------------------------------------------


def parse_settings(text: str, name: str = UNNAMED) -> IfaceRecord:
    """Speed, duplex, link state, supported speeds and port from ``ethtool IF``.

    ``name`` is used when the output has no "Settings for IF:" line (a partial paste).
    """
    command = "ethtool IF"
    lines = _lines(text)
    values: dict[str, str] = {}
    key: str | None = None
    for ln in lines:
        head = re.match(r"^\s*Settings for (.+):\s*$", ln)
        if head:
            name = head.group(1)
            key = None
            continue
        if _ERROR_RE.match(ln):
            key = None
            continue
        setting = _setting(ln)
        if setting:
            key, values[key] = setting
        elif key is not None:  # a continuation: more link modes, message-level flag names
            values[key] = f"{values[key]} {ln.strip()}".strip()
        else:
            raise ParseError(command, "unexpected line before any setting", ln)
    known = {"speed", "duplex", "link detected", "supported link modes", "port", "auto-negotiation"}
    if not known & values.keys():
        _fail_on_errors(command, lines, "link settings")
    extra = []
    for label, k in (
        ("port", "port"),
        ("auto-negotiation", "auto-negotiation"),
        ("advertised link modes", "advertised link modes"),
        ("link partner advertised", "link partner advertised link modes"),
    ):
        if values.get(k):
            extra.append((label, values[k]))
    link = values.get("link detected", "").strip().lower()
    return IfaceRecord(
        name=name,
        oper={"yes": "up", "no": "down"}.get(link),
        speed_mbps=units.speed_mbps(values.get("speed")),
        duplex=_DUPLEX.get(values.get("duplex", "").strip().lower()),
        supported_speeds_mbps=link_mode_speeds(values.get("supported link modes", "")),
        driver=values.get("driver") or None,
        extra=tuple(extra),
    )


def _setting(line: str) -> tuple[str, str] | None:
    """("speed", "1000Mb/s") from "\tSpeed: 1000Mb/s"; None when the line is not "Key: value"."""
    key, sep, value = line.strip().partition(":")
    if not sep or not _KEY.fullmatch(key) or (value and not value[0].isspace()):
        return None
    return key.strip().lower(), value.strip()


def link_mode_speeds(modes: str) -> tuple[int, ...]:
    """Distinct speeds in Mb/s of ethtool link modes: "10baseT/Half 1000baseT/Full" → (10, 1000)."""
    speeds = set()
    for token in modes.split():
        m = _MODE_SPEED_RE.match(token)
        if m:
            speeds.add(int(m.group(1)))
    return tuple(sorted(speeds))


# --- ethtool -S IF ------------------------------------------------------------------------


def parse_stats(text: str) -> dict[str, int]:
    """Driver counters by their own names from ``ethtool -S IF``.

    Names are kept as printed (a driver may use spaces); a repeated name keeps its last value.
    """
    command = "ethtool -S"
    lines = _lines(text)
    stats: dict[str, int] = {}
    for ln in lines:
        if ln.strip() == "NIC statistics:":
            continue
        name, sep, value = ln.strip().rpartition(":")
        digits = value.strip().removeprefix("-")
        if sep and name.strip() and value[:1].isspace() and digits.isdigit():  # isdigit: also "²", refused next
            number = numbers.integer(digits, f"{name.strip()!r}", command, ln)
            stats[name.strip()] = -number if value.strip().startswith("-") else number
        elif not _ERROR_RE.match(ln):
            raise ParseError(command, "expected 'name: number'", ln)
    if not stats:
        _fail_on_errors(command, lines, "NIC statistics")
    return stats


# --- ethtool -g IF ------------------------------------------------------------------------


def parse_rings(text: str) -> tuple[int | None, int | None, int | None, int | None]:
    """(rx, rx_max, tx, tx_max) ring sizes from ``ethtool -g IF``; "n/a" is None."""
    command = "ethtool -g"
    lines = _lines(text)
    section: str | None = None
    found: dict[tuple[str, str], int | None] = {}
    for ln in lines:
        stripped = ln.strip()
        if stripped.startswith("Ring parameters for"):
            continue
        if stripped == "Pre-set maximums:":
            section = "max"
            continue
        if stripped == "Current hardware settings:":
            section = "cur"
            continue
        m = _RING_RE.match(ln)
        if m and section is not None:
            found[(section, m.group(1))] = _ring_value(command, m.group(2), ln)
    if not any(k[1] in ("RX", "TX") for k in found):
        _fail_on_errors(command, lines, "ring settings")
    return (found.get(("cur", "RX")), found.get(("max", "RX")), found.get(("cur", "TX")), found.get(("max", "TX")))


def _ring_value(command: str, value: str, line: str) -> int | None:
    if value.lower() == "n/a":
        return None
    return numbers.integer(value, "ring size", command, line)


# --- ethtool -i IF ------------------------------------------------------------------------


def parse_driver(text: str) -> dict[str, str]:
    """The fields of ``ethtool -i IF`` (driver, version, firmware-version, bus-info, …);
    fields printed empty are left out."""
    command = "ethtool -i"
    lines = _lines(text)
    info: dict[str, str] = {}
    for ln in lines:
        m = re.match(r"^([a-z][a-z0-9-]*):\s*(.*?)\s*$", ln)
        if m and not _ERROR_RE.match(ln):
            if m.group(2):
                info[m.group(1)] = m.group(2)
    if "driver" not in info:
        _fail_on_errors(command, lines, "driver information")
    return info


# --- ethtool -k IF ------------------------------------------------------------------------

# The offloads that make the kernel count a burst of segments as one packet: TSO and GSO on
# the way out, GRO on the way in. (The sampler keeps only these lines of ethtool -k.)
OFFLOADS = ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload")


def parse_offload(text: str) -> dict[str, bool]:
    """Which of ``OFFLOADS`` are on, from ``ethtool -k IF`` ("on", "on [fixed]", "off
    [requested on]": the first word is the state); other features are not read."""
    command = "ethtool -k"
    lines = _lines(text)
    found: dict[str, bool] = {}
    for ln in lines:
        key, sep, value = ln.partition(":")
        if sep and key in OFFLOADS:
            state = (value.split() or [""])[0]
            if state not in ("on", "off"):
                raise ParseError(command, f"{key} is neither on nor off", ln)
            found[key] = state == "on"
    if not found:
        _fail_on_errors(command, lines, "offload settings")
    return found


# --- registry -----------------------------------------------------------------------------


def _settings_entry(text: str, os_name: str) -> list[IfaceRecord]:
    return [parse_settings(text)]


def _stats_entry(text: str, os_name: str) -> list[IfaceRecord]:
    return [IfaceRecord(name=UNNAMED, nic_counters=parse_stats(text))]


def _rings_entry(text: str, os_name: str) -> list[IfaceRecord]:
    rx, rx_max, tx, tx_max = parse_rings(text)
    return [IfaceRecord(name=UNNAMED, ring_rx=rx, ring_rx_max=rx_max, ring_tx=tx, ring_tx_max=tx_max)]


def driver_record(text: str, name: str = UNNAMED) -> IfaceRecord:
    """``ethtool -i IF`` as an interface's driver facts: its name, version and firmware (a
    field a driver fills with "N/A" is unknown), the bus address as an extra."""
    info = {k: v for k, v in parse_driver(text).items() if v.upper() != "N/A"}
    extra = (("bus-info", info["bus-info"]),) if "bus-info" in info else ()
    return IfaceRecord(
        name=name,
        driver=info.get("driver"),
        driver_version=info.get("version"),
        firmware_version=info.get("firmware-version"),
        extra=extra,
    )


def _driver_entry(text: str, os_name: str) -> list[IfaceRecord]:
    return [driver_record(text)]


def _offload_entry(text: str, os_name: str) -> list[IfaceRecord]:
    return [IfaceRecord(name=UNNAMED, offload=tuple(k for k, on in parse_offload(text).items() if on))]


# The interface is the named group "iface"; ethtool's output does not always repeat it.
_IFACE = r"(?P<iface>[^\s-]\S*)"
COMMANDS = (
    Entry(rf"ethtool {_IFACE}", frozenset({"linux"}), _settings_entry, "speed, duplex, link, supported speeds"),
    Entry(rf"ethtool -S {_IFACE}", frozenset({"linux"}), _stats_entry, "driver counters (as nic_counters)"),
    Entry(rf"ethtool -g {_IFACE}", frozenset({"linux"}), _rings_entry, "ring sizes and their maximums"),
    Entry(rf"ethtool -i {_IFACE}", frozenset({"linux"}), _driver_entry, "driver, version, firmware, bus"),
    Entry(
        rf"ethtool -k {_IFACE}",
        frozenset({"linux"}),
        _offload_entry,
        "segmentation and receive offloads on (TSO, GSO, GRO)",
    ),
)
