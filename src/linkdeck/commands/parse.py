"""``linkdeck parse``: show what linkdeck reads from a captured command output.

    linkdeck parse --os OS --command "COMMAND" [FILE] [--json]

Reads FILE (stdin when absent), finds the parser registered for COMMAND on OS and prints the
interfaces it read: a table, or with ``--json``::

    {"os": ..., "command": ..., "interfaces": [{"name", "kind", "oper", "mtu", "speed_mbps",
     "duplex", "supported_speeds_mbps", "over", "members", "addresses", "mac",
     "carrier_changes", "driver", "driver_version", "firmware_version", "offload", "ring_rx",
     "ring_rx_max", "ring_tx", "ring_tx_max", "counters": {"rx_bytes", ..., "tx_drops"},
     "nic_counters": {...}, "extra": [{"label", "value"}, ...]}]}

with null (or an empty list/object) for what the command does not tell. The field names are
those of ``snapshot --json``. The TCP counters' files (``cat /proc/net/snmp``…) print
``{"os", "command", "tcp": {"out_segs", "retrans_segs", …}}`` (running totals). iperf3 commands
print ``{"os", "command", "iperf3": {...}}``
instead: the fields of ``Iperf3Result`` (for ``--json-stream``: ``{"intervals": [...],
"result": {...}}``).

An unknown OS or command, or output the parser cannot read, prints one line on stderr and
exits with status 2. Output of which the parser reads all but some parts (``ip -j``: a link
whose fields it cannot read) prints what it read, one line on stderr per part left out, and
exits with status 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys

from ..core import bounded_read, units
from ..core.jsonfields import Field, write
from ..core.model import COUNTER_FIELDS, KINDS, Counters, IfaceRecord, with_real_speed
from ..core.oses import OSES, family
from ..core.tcpflow import FLOW_RECORD_JSON, FlowRecord
from ..core.tcpstats import TCP_COUNTERS, TCP_COUNTERS_JSON, TcpCounters
from ..parsers import ParseError, registry
from ..parsers.iperf3 import Iperf3Progress, Iperf3Result
from .shared import print_json


def _counter(name: str) -> Field[Counters | None]:
    direction, what = name.split("_", 1)
    said = f"{what} {'received' if direction == 'rx' else 'sent'}"
    return Field(name, ("integer", "null"), f"{said}, running total", lambda c: getattr(c, name) if c else None)


def _int(key: str, help: str) -> Field[IfaceRecord]:
    return Field(key, ("integer", "null"), help, lambda r: getattr(r, key))


def _text(key: str, help: str) -> Field[IfaceRecord]:
    return Field(key, ("string", "null"), help, lambda r: getattr(r, key))


# An interface's object in `parse --json`: what one command told of it, null (or empty) for
# what it does not tell; the names are those of snapshot --json.
RECORD_JSON: tuple[Field[IfaceRecord], ...] = (
    Field("name", ("string",), "the interface's name (empty when the command does not say it)", lambda r: r.name),
    _text("kind", "what it is: " + ", ".join(k.value for k in KINDS)),
    _text("oper", "its operational state as the command says it (up, down, …)"),
    _int("mtu", "largest IP packet it sends, bytes"),
    _int("speed_mbps", "its link speed, Mb/s; null when unknown or not a real speed"),
    _text("duplex", "full or half"),
    Field(
        "supported_speeds_mbps",
        ("array",),
        "the link speeds it can run at, Mb/s",
        lambda r: list(r.supported_speeds_mbps),
        items="integer",
    ),
    _text("over", "what it runs on: a vlan's parent, a vnic's link"),
    Field("members", ("array",), "a bond's or bridge's members", lambda r: list(r.members), items="string"),
    Field(
        "addresses", ("array",), "its addresses with their prefix length", lambda r: list(r.addresses), items="string"
    ),
    _text("mac", "its hardware address"),
    _int("carrier_changes", "times its link went up or down, running total"),
    _text("driver", "its driver"),
    _text("driver_version", "its driver's version (ethtool -i)"),
    _text("firmware_version", "its NIC's firmware version (ethtool -i)"),
    Field(
        "offload",
        ("array", "null"),
        "the segmentation and receive offloads switched on, by ethtool -k's names; null where the command does not say",
        lambda r: None if r.offload is None else list(r.offload),
        items="string",
    ),
    _int("ring_rx", "receive ring size, descriptors"),
    _int("ring_rx_max", "largest receive ring the NIC allows"),
    _int("ring_tx", "transmit ring size, descriptors"),
    _int("ring_tx_max", "largest transmit ring the NIC allows"),
    Field(
        "counters",
        ("object",),
        "its interface counters, running totals; null each where the command does not count it",
        lambda r: r.counters,
        of=tuple(_counter(name) for name in COUNTER_FIELDS),
    ),
    Field(
        "nic_counters",
        ("object",),
        "the driver's own counters (ethtool -S, kstat), by its names",
        lambda r: dict(r.nic_counters),
    ),
    Field(
        "extra",
        ("array",),
        "anything else the command said of it (a media line, a bridge, a zone), in its order",
        lambda r: list(r.extra),
        of=(
            Field("label", ("string",), "what it is", lambda pair: pair[0]),
            Field("value", ("string",), "what the command said", lambda pair: pair[1]),
        ),
    ),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--os", required=True, metavar="OS", help="one of: " + ", ".join(OSES))
    parser.add_argument(
        "--command",
        required=True,
        metavar="COMMAND",
        help='the command that printed the output, e.g. "ethtool -S eth0"',
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="the captured output (default: stdin)")
    parser.add_argument("--json", action="store_true", help="print JSON (fields as in 'snapshot --json')")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = commands_epilog()


def commands_epilog() -> str:
    """The --command values each --os accepts, read from the parser registry (OSes that take
    the same commands share one block), so the help never drifts from what parse reads."""
    by_commands: dict[tuple[str, ...], list[str]] = {}
    for os_name in OSES:
        commands = tuple(sorted({readable(e.pattern) for e in _entries_for(os_name)}))
        by_commands.setdefault(commands, []).append(os_name)
    blocks = [
        ", ".join(names) + ":\n" + "".join(f"  {c}\n" for c in commands) for commands, names in by_commands.items()
    ]
    return "accepted --command values, by --os (IFACE, ARG, N: any value):\n" + "".join(blocks)


def run(args: argparse.Namespace) -> int:
    os_name = args.os.strip().lower()
    if os_name not in OSES:
        return _fail(f"unknown OS {args.os!r}; choose one of: {', '.join(OSES)}")
    command = registry.normalise(args.command)
    entry = registry.find(os_name, command)
    if entry is None:
        known = "; ".join(sorted({readable(e.pattern) for e in _entries_for(os_name)}))
        return _fail(f"no parser for {units.printable(command)!r} on {os_name}; commands known for {os_name}: {known}")
    try:
        text = _read(args.file, command)
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror or exc}")
    except bounded_read.TooLarge as exc:
        return _fail(units.printable(str(exc)))
    try:
        parsed, left_out = entry.read(text, os_name) if entry.read else (entry.parse(text, os_name), [])
    except ParseError as exc:
        return _fail(units.printable(str(exc)))
    except Exception as exc:  # a parser bug must still end in one line, not a traceback
        return _fail(
            f"{command}: the parser failed ({type(exc).__name__}: "
            f"{units.printable(str(exc))[:200]}); please report it with this output attached"
        )
    try:
        _print(parsed, entry, os_name, command, args.json)
    except BrokenPipeError:  # `linkdeck parse … | head`: the reader is gone, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    # what was read is printed; each part left out is named, and the status says it was partial
    for problem in left_out:
        print(f"linkdeck parse: {units.printable(problem)}: left out", file=sys.stderr)
    return 1 if left_out else 0


def _print(parsed: object, entry: registry.Entry, os_name: str, command: str, as_json: bool) -> None:
    if isinstance(parsed, list) and parsed and isinstance(parsed[0], FlowRecord):
        if as_json:
            print_json({"os": os_name, "command": command, "flows": [write(f, FLOW_RECORD_JSON) for f in parsed]})
        else:
            sys.stdout.write(
                "".join(
                    f"{f.local} → {f.remote}: "
                    + ", ".join(
                        f"{k} {v}"
                        for k, v in dataclasses.asdict(f).items()
                        if k not in ("local", "remote") and v is not None
                    )
                    + "\n"
                    for f in parsed
                )
            )
    elif isinstance(parsed, list):
        records = [with_real_speed(r) for r in _named(parsed, entry, command)]
        if as_json:
            print_json({"os": os_name, "command": command, "interfaces": [record_json(r) for r in records]})
        else:
            sys.stdout.write(records_table(records))
    elif isinstance(parsed, TcpCounters):
        counts = dict(zip(TCP_COUNTERS, parsed.to_json()))
        if as_json:
            print_json({"os": os_name, "command": command, "tcp": write(parsed, TCP_COUNTERS_JSON)})
        else:
            width = max(map(len, TCP_COUNTERS))
            sys.stdout.write(
                "".join(f"{k:<{width}}  {'-' if v is None else v}  ({TCP_COUNTERS[k]})\n" for k, v in counts.items())
            )
    elif as_json:
        print_json({"os": os_name, "command": command, "iperf3": _plain(parsed)})
    elif isinstance(parsed, (Iperf3Result, Iperf3Progress)):
        sys.stdout.write(iperf3_text(parsed))
    else:  # every parser returns one of the above: a new one must say how it prints
        raise TypeError(f"no text form for {type(parsed).__name__}")
    sys.stdout.flush()


def _entries_for(os_name: str) -> list[registry.Entry]:
    return [e for e in registry.entries() if os_name in e.oses or family(os_name) in e.oses]


def _fail(message: str) -> int:
    print(f"linkdeck parse: {message}", file=sys.stderr)
    return 2


def _read(path: str | None, command: str) -> str:
    if path is None:
        if sys.stdin.isatty():
            print(f"reading the output of '{command}' from stdin (end with Ctrl-D)", file=sys.stderr)
        data = bounded_read.read_from(
            sys.stdin.buffer, "stdin", bounded_read.COMMAND_OUTPUT_LIMIT, "one command's output"
        )
    else:
        data = bounded_read.read_bytes(path, bounded_read.COMMAND_OUTPUT_LIMIT, "one command's output")
    # Remote output is data: undecodable bytes become U+FFFD rather than an exception.
    return data.decode("utf-8", errors="replace")


def _named(records: list[IfaceRecord], entry: registry.Entry, command: str) -> list[IfaceRecord]:
    """ethtool -S/-g/-i print no interface name; take it from the command line."""
    m = re.fullmatch(entry.pattern, command)
    iface = m.groupdict().get("iface") if m else None
    if not iface:
        return records
    return [dataclasses.replace(r, name=iface) if not r.name else r for r in records]


def record_json(rec: IfaceRecord) -> dict:
    return write(rec, RECORD_JSON)


def _plain(value: object) -> object:
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) and not isinstance(value, type) else value


# --- text output ---------------------------------------------------------------------------

_COLUMNS = (
    "IFACE",
    "KIND",
    "OPER",
    "MTU",
    "SPEED",
    "DUP",
    "RX bytes",
    "TX bytes",
    "RX pkts",
    "TX pkts",
    "RX err",
    "TX err",
    "RX drop",
    "TX drop",
)


def records_table(records: list[IfaceRecord]) -> str:
    if not records:
        return "(no interfaces in this output)\n"
    rows: list[tuple[str, ...]] = [_COLUMNS]
    for r in records:
        c = r.counters
        counts = (
            [c.rx_bytes, c.tx_bytes, c.rx_packets, c.tx_packets, c.rx_errors, c.tx_errors, c.rx_drops, c.tx_drops]
            if c
            else [None] * 8
        )
        rows.append(
            (
                units.printable(r.name) or "?",
                r.kind or "—",
                r.oper or "—",
                units.mtu(r.mtu),
                units.link_speed(r.speed_mbps),
                units.duplex(r.duplex),
                *("—" if v is None else str(v) for v in counts),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    for r in records:
        lines.extend(_details(r))
    return "\n".join(lines) + "\n"


def _details(r: IfaceRecord) -> list[str]:
    facts = []
    if r.supported_speeds_mbps:
        facts.append("supports " + ", ".join(units.link_speed(s) for s in r.supported_speeds_mbps))
    if r.over:
        facts.append(f"over {units.printable(r.over)}")
    if r.members:
        facts.append("members " + ", ".join(units.printable(m) for m in r.members))
    if r.addresses:
        facts.append("addresses " + ", ".join(units.printable(a) for a in r.addresses))
    if r.mac:
        facts.append(f"mac {units.printable(r.mac)}")
    if r.driver:
        facts.append(f"driver {units.printable(r.driver)}")
    if (r.ring_rx, r.ring_rx_max, r.ring_tx, r.ring_tx_max) != (None,) * 4:
        facts.append(
            f"ring rx {_opt(r.ring_rx)}/{_opt(r.ring_rx_max)} tx {_opt(r.ring_tx)}/{_opt(r.ring_tx_max)} (current/max)"
        )
    if r.carrier_changes is not None:
        facts.append(f"carrier changes {r.carrier_changes}")
    facts.extend(f"{units.printable(k)} {units.printable(v)}" for k, v in r.extra)
    lines = [f"{units.printable(r.name) or '?'}: " + "; ".join(facts)] if facts else []
    if r.nic_counters:
        lines.append(f"{units.printable(r.name) or '?'}: {len(r.nic_counters)} NIC counters")
        width = max(len(units.printable(k)) for k in r.nic_counters)
        lines.extend(f"    {units.printable(k).ljust(width)}  {v}" for k, v in r.nic_counters.items())
    return lines


def _opt(value: int | None) -> str:
    return "?" if value is None else str(value)


def iperf3_text(parsed: Iperf3Result | Iperf3Progress) -> str:
    """A few readable lines for an Iperf3Result or Iperf3Progress."""
    result = parsed.result if isinstance(parsed, Iperf3Progress) else parsed
    lines = []
    for iv in parsed.intervals if isinstance(parsed, Iperf3Progress) else ():
        lines.append(
            f"interval {_secs(iv.start_s)}–{_secs(iv.end_s)} s: "
            f"forward {units.rate(iv.forward_bps)}, reverse {units.rate(iv.reverse_bps)}"
            + (" (omitted)" if iv.omitted else "")
        )
    if result is None:
        lines.append("no end event yet (the run was cut short or is still going)")
        return "\n".join(lines) + "\n"
    if result.error:
        lines.append(f"error: {units.printable(result.error)}")
    head = [f"iperf {result.version}" if result.version else None, result.protocol, result.mode,
            f"{result.num_streams} stream(s)" if result.num_streams else None,
            f"{result.duration_s:.2f} s" if result.duration_s is not None else None]  # fmt: skip
    if any(head):
        lines.append(", ".join(h for h in head if h))
    for label, sent, received, retr, rtt in (
        (
            "forward (client → server)",
            result.forward_sent_bps,
            result.forward_received_bps,
            result.forward_retransmits,
            result.forward_rtt_ms,
        ),
        (
            "reverse (server → client)",
            result.reverse_sent_bps,
            result.reverse_received_bps,
            result.reverse_retransmits,
            result.reverse_rtt_ms,
        ),
    ):
        if sent is None and received is None:
            continue
        line = f"{label}: sent {units.rate(sent)}, received {units.rate(received)}"
        if retr is not None:
            line += f", {retr} retransmits"
        if rtt is not None:
            line += f", mean RTT {rtt:.3f} ms"
        lines.append(line)
    if result.cpu_local_pct is not None or result.cpu_remote_pct is not None:
        lines.append(
            f"CPU: client {units.percent(result.cpu_local_pct)}, server {units.percent(result.cpu_remote_pct)}"
        )
    return "\n".join(lines) + "\n"


def _secs(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f}"


# --- pattern → readable command ------------------------------------------------------------


def readable(pattern: str) -> str:
    """A registry pattern as a user reads it: ``ethtool -S (?P<iface>\\S+)`` → ``ethtool -S IFACE``."""
    text, _ = _render(pattern, 0)
    return re.sub(r"(?:ARG)+", "ARG", " ".join(text.split()))


_ARG_ATOMS = {"\\S": "ARG", "\\w": "ARG", "\\d": "N", ".": "ARG"}


def _render(p: str, i: int) -> tuple[str, int]:  # noqa: C901 - one branch per command's record shape
    """Render from p[i] up to the closing parenthesis of the current group (or the end)."""
    alts, cur = [], ""
    while i < len(p) and p[i] != ")":
        ch = p[i]
        if ch == "|":
            alts.append(cur)
            cur, i = "", i + 1
            continue
        if ch == "(":
            prefix = re.match(r"\(\?(?::|P<(\w+)>|=|!|<=|<!)?", p[i:])
            i += len(prefix.group(0)) if prefix else 1
            inner, i = _render(p, i)
            i += 1  # the ")"
            kind = prefix.group(0) if prefix else "("
            atom = (
                ""
                if kind in ("(?=", "(?!", "(?<=", "(?<!")
                else prefix.group(1).upper()
                if prefix and prefix.group(1)
                else inner
            )
        elif ch == "[":
            end = p.index("]", i + 2) if "]" in p[i + 2 :] else len(p) - 1
            atom, i = ("N" if p[i : end + 1] in ("[\\d]", "[0-9]") else "ARG"), end + 1
        elif ch == "\\" and i + 1 < len(p):
            atom = _ARG_ATOMS.get(p[i : i + 2], p[i + 1])
            i += 2
        else:
            atom = _ARG_ATOMS.get(ch, ch)
            i += 1
        quant = re.match(r"[?*+]|\{\d*,?\d*\}", p[i:])
        if quant:
            i += len(quant.group(0))
            q = quant.group(0)
            lead, trail = " " * atom.startswith(" "), " " * atom.endswith(" ")
            inner = atom.strip()
            if inner.startswith("{") and inner.endswith("}") and inner.count("{") == 1:
                inner = inner[1:-1]  # [a|b] reads better than [{a|b}]
            if atom in ("ARG", "N"):
                pass
            elif q == "?":
                atom = f"{lead}[{inner}]{trail}"
            elif q == "*":
                atom = f"{lead}[{inner} …]{trail}"
            elif q == "+":
                atom = f"{atom} …"
        cur += atom
    alts.append(cur)
    if len(alts) > 1:
        return "{" + "|".join(a.strip() for a in alts) + "}", i
    return cur, i
