"""``dladm show-link|show-phys|show-aggr|show-vnic|show-linkprop``: illumos / Solaris datalinks.

Two output shapes per sub-command:

- parseable (``-p -o f1,f2``; ``-c -o`` for show-linkprop): one line per row, fields joined by
  ``:``, and — only when more than one field is asked for — every ``:`` and ``\\`` inside a
  value escaped with a backslash (MAC addresses print as ``24\\:6e\\:96…``). No header.
- tabular: a header row, values padded into columns, ``--`` for "nothing". Values can
  overflow their column, a port row of ``show-aggr -x`` leaves LINK blank, and Solaris 11's
  ``show-link`` has no BRIDGE column where illumos has one — so columns are found by header
  name, and a row whose token count does not match the header is cut at the header offsets.

Topology: an aggr's OVER lists its ports (``,``-separated on illumos, spaces on old builds);
a vnic's/vlan's OVER names the one link it sits on. Aggr ports become ``members``, everything
else ``over``, so the dashboard can indent vnic → aggr → ports.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from typing import Any, Callable

from ..core.kinds import Kind
from ..core.model import Counters, IfaceRecord
from ..core.units import speed_mbps
from .dladm_rows import (
    CLASS_KINDS,
    EMPTY,
    duplex_field,
    int_field,
    link_name,
    mac,
    parseable_rows,
    row_text,
    state_field,
    table_rows,
)
from .parse_error import ParseError
from .registry import Entry

# ---------------------------------------------------------------- show-link


def parse_show_link(text: str, os_name: str = "illumos", fields: tuple[str, ...] | None = None) -> list[IfaceRecord]:
    command = "dladm show-link" + (f" -p -o {','.join(fields)}" if fields else "")
    rows = parseable_rows(text, command, fields) if fields else table_rows(text, command, ("link",))
    records = []
    for row in rows:
        line = row_text(row)
        name = link_name(row["link"], command, line)
        cls = row.get("class", "").lower()
        kind = CLASS_KINDS.get(cls, Kind.UNKNOWN) if cls else None
        over_val = row.get("over", "")
        over: str | None = None
        members: tuple[str, ...] = ()
        if over_val not in EMPTY:
            parts = tuple(p for p in re.split(r"[,\s]+", over_val) if p)
            if cls in ("aggr", "bridge"):
                members = parts
            elif parts:  # OVER "," names nothing
                over = parts[0]
        bridge = row.get("bridge", "")
        records.append(
            IfaceRecord(
                name=name,
                kind=kind,
                oper=state_field(row.get("state", "")),
                mtu=int_field(row.get("mtu", ""), command, line),
                over=over,
                members=members,
                extra=(("bridge", bridge),) if bridge not in EMPTY else (),
            )
        )
    return records


# ---------------------------------------------------------------- show-phys


def parse_show_phys(text: str, os_name: str = "illumos", fields: tuple[str, ...] | None = None) -> list[IfaceRecord]:
    command = "dladm show-phys" + (f" -p -o {','.join(fields)}" if fields else "")
    if fields:
        rows = parseable_rows(text, command, fields)
    else:
        if _phys_header(text):
            rows = [_phys_row(ln) for ln in text.splitlines()[1:] if ln.strip()]
        else:
            rows = table_rows(text, command, ("link", "state", "speed"))
    records = []
    for row in rows:
        line = row_text(row)
        speed = speed_mbps(row.get("speed", ""), "mbps")
        device = row.get("device", "")
        extra = tuple((k, row[k]) for k in ("media", "device") if row.get(k, "") not in EMPTY)
        records.append(
            IfaceRecord(
                name=link_name(row["link"], command, line),
                kind=Kind.PHYSICAL,
                oper=state_field(row.get("state", "")),
                speed_mbps=speed,
                duplex=duplex_field(row.get("duplex", ""), speed),
                driver=re.sub(r"\d+$", "", device) if device not in EMPTY else None,
                extra=extra,
            )
        )
    return records


def _phys_header(text: str) -> bool:
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return first.split()[:6] == ["LINK", "MEDIA", "STATE", "SPEED", "DUPLEX", "DEVICE"]


def _phys_row(line: str) -> dict[str, str]:
    # MEDIA can hold a space ("IEEE 802.11"): LINK is the first token, the last four are
    # STATE SPEED DUPLEX DEVICE, and MEDIA is whatever lies between.
    tokens = line.split()
    if len(tokens) < 6:
        raise ParseError("dladm show-phys", f"expected 6 columns, got {len(tokens)}", line)
    return {
        "link": tokens[0],
        "media": " ".join(tokens[1:-4]),
        "state": tokens[-4],
        "speed": tokens[-3],
        "duplex": tokens[-2],
        "device": tokens[-1],
    }


def parse_show_phys_mac(
    text: str, os_name: str = "illumos", fields: tuple[str, ...] | None = None
) -> list[IfaceRecord]:
    """``dladm show-phys -m``: the primary MAC address of every physical link."""
    command = "dladm show-phys -m" + (f" -p -o {','.join(fields)}" if fields else "")
    rows = parseable_rows(text, command, fields) if fields else table_rows(text, command, ("link", "address"))
    records = []
    for row in rows:
        if row.get("slot", "primary") != "primary":
            continue  # factory / secondary MAC slots are not the link's address
        records.append(IfaceRecord(name=link_name(row["link"], command, row_text(row)), mac=mac(row["address"])))
    return records


# ---------------------------------------------------------------- show-aggr


def parse_show_aggr(text: str, os_name: str = "illumos", fields: tuple[str, ...] | None = None) -> list[IfaceRecord]:
    """Any show-aggr listing: summary, -L, -x, -s, parseable ``-o link,port…`` or the Solaris 10
    ``key:`` layout. Every aggr comes back with kind "bond" and its ports as members."""
    command = "dladm show-aggr" + (f" -p -o {','.join(fields)}" if fields else "")
    if fields:
        rows = parseable_rows(text, command, fields)
    elif re.match(r"\s*key:", text):
        return _solaris10_aggr(text)
    else:
        rows = table_rows(text, command, ("link",))
    aggrs: dict[str, list[str]] = {}
    facts: dict[str, IfaceRecord] = {}
    current: str | None = None
    for row in rows:
        line = row_text(row)
        link, port = row.get("link", ""), row.get("port", "")
        if link not in ("", "--"):
            current = link_name(link, command, line)
            aggrs.setdefault(current, [])
        if current is None:
            raise ParseError(command, "a port row before any aggregation", line)
        if "port" in row and port not in EMPTY:
            port = link_name(port, command, line)
            aggrs[current].append(port)
            facts[port] = _aggr_row_record(port, row, Kind.PHYSICAL, command, line)
        elif link not in ("", "--"):
            facts[current] = _aggr_row_record(current, row, Kind.BOND, command, line)
    out = []
    for name, ports in aggrs.items():
        base = facts.get(name) or IfaceRecord(name=name, kind=Kind.BOND)
        out.append(replace(base, members=tuple(ports)))
    out.extend(rec for name, rec in facts.items() if name not in aggrs)
    return out


def _aggr_row_record(name: str, row: dict[str, str], kind: Kind, command: str, line: str) -> IfaceRecord:
    speed_text = row.get("speed", "")
    speed = speed_mbps(speed_text.lower().removesuffix("mb"), "mbps") if speed_text else None
    extra = tuple(
        (key, row[key])
        for key in ("policy", "addrpolicy", "lacpactivity", "lacptimer", "portstate")
        if row.get(key, "") not in EMPTY
    )
    counters = None
    if "rbytes" in row:
        counters = Counters(
            rx_packets=int_field(row.get("ipackets", ""), command, line),
            rx_bytes=int_field(row["rbytes"], command, line),
            tx_packets=int_field(row.get("opackets", ""), command, line),
            tx_bytes=int_field(row.get("obytes", ""), command, line),
        )
    return IfaceRecord(
        name=name,
        kind=kind,
        oper=state_field(row.get("state", "")),
        speed_mbps=speed,
        duplex=duplex_field(row.get("duplex", ""), speed),
        mac=mac(row.get("address", "")),
        counters=counters,
        extra=extra,
    )


def _solaris10_aggr(text: str) -> list[IfaceRecord]:
    """Solaris 10: ``key: 1 (0x0001) policy: L4 address: 0:15:… (auto)`` then a device table.
    The aggregation's link name there is ``aggr<key>``."""
    command = "dladm show-aggr"
    out: list[IfaceRecord] = []
    aggr: dict[str, Any] | None = None
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        if tokens[0] == "key:":
            m = re.match(r"\s*key:\s+(\d+).*?policy:\s+(\S+)\s+address:\s+(\S+)", line)
            if not m:
                raise ParseError(command, "unreadable key line", line)
            if aggr:
                out.append(IfaceRecord(**aggr))
            aggr = {
                "name": f"aggr{m.group(1)}",
                "kind": Kind.BOND,
                "mac": mac(m.group(3)),
                "members": (),
                "extra": (("policy", m.group(2)),),
            }
        elif tokens[0] == "device":
            continue
        else:
            if aggr is None or len(tokens) < 7:
                raise ParseError(command, "device row outside an aggregation or short", line)
            device, address, speed_text, _unit, duplex, link, state = tokens[:7]
            speed = speed_mbps(speed_text, "mbps")
            aggr["members"] += (device,)
            out.append(
                IfaceRecord(
                    name=link_name(device, command, line),
                    kind=Kind.PHYSICAL,
                    oper=state_field(link),
                    speed_mbps=speed,
                    duplex=duplex_field(duplex, speed),
                    mac=mac(address),
                    extra=(("portstate", state),),
                )
            )
    if aggr:
        out.append(IfaceRecord(**aggr))
    return out


# ---------------------------------------------------------------- show-vnic


def parse_show_vnic(text: str, os_name: str = "illumos", fields: tuple[str, ...] | None = None) -> list[IfaceRecord]:
    """VNICs: what each sits over, and its speed — which is the underlying link's."""
    command = "dladm show-vnic" + (f" -p -o {','.join(fields)}" if fields else "")
    rows = parseable_rows(text, command, fields) if fields else table_rows(text, command, ("link", "over"))
    records = []
    for row in rows:
        line = row_text(row)
        vid = row.get("vid", row.get("vids", ""))
        zone = row.get("zone", "")
        extra: tuple[tuple[str, str], ...] = ()
        if vid not in EMPTY and vid != "0":
            extra += (("vid", vid),)
        if zone not in EMPTY:
            extra += (("zone", zone),)
        over = row.get("over", "")
        records.append(
            IfaceRecord(
                name=link_name(row["link"], command, line),
                kind=Kind.VNIC,
                over=over if over not in EMPTY else None,
                speed_mbps=speed_mbps(row.get("speed", ""), "mbps"),
                mac=mac(row.get("macaddress", "")),
                extra=extra,
            )
        )
    return records


def parse_show_vnic_stats(text: str, os_name: str = "illumos") -> list[IfaceRecord]:
    """``dladm show-vnic -s``: a lower-case header, a ``Total`` row, then one row per VNIC with
    cumulative ipackets rbytes opackets obytes and two share-of-total percentages."""
    command = "dladm show-vnic -s"
    records = []
    header: list[str] | None = None
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        if header is None:
            header = [t.lower() for t in tokens]
            if header[:4] != ["ipackets", "rbytes", "opackets", "obytes"]:
                raise ParseError(command, "expected an ipackets rbytes opackets obytes header", line)
            continue
        if tokens[0] == "Total":
            continue
        if len(tokens) < 5:
            raise ParseError(command, "expected a link and four counters", line)
        ipk, rby, opk, oby = (int_field(t, command, line) for t in tokens[1:5])
        records.append(
            IfaceRecord(
                name=link_name(tokens[0], command, line),
                kind=Kind.VNIC,
                counters=Counters(rx_bytes=rby, tx_bytes=oby, rx_packets=ipk, tx_packets=opk),
            )
        )
    return records


# ---------------------------------------------------------------- show-linkprop


def parse_show_linkprop(
    text: str, os_name: str = "illumos", fields: tuple[str, ...] | None = None
) -> list[IfaceRecord]:
    """``show-linkprop -p speed[,mtu]``: the current speed and the speeds the NIC can do."""
    command = "dladm show-linkprop" + (f" -c -o {','.join(fields)}" if fields else "")
    if fields:
        rows = parseable_rows(text, command, fields)
    else:
        rows = table_rows(text, command, ("link", "property", "value"))
    records = []
    for row in rows:
        line = row_text(row)
        prop = row.get("property", "speed")
        name = link_name(row["link"], command, line)
        if prop == "speed":
            possible = tuple(
                s
                for s in (speed_mbps(p, "mbps") for p in re.split(r"[,\s]+", row.get("possible", "")) if p)
                if s is not None
            )
            records.append(
                IfaceRecord(
                    name=name,
                    speed_mbps=speed_mbps(row.get("value", ""), "mbps"),
                    supported_speeds_mbps=tuple(sorted(set(possible))),
                )
            )
        elif prop == "mtu":
            records.append(IfaceRecord(name=name, mtu=int_field(row.get("value", ""), command, line)))
    return records


# ---------------------------------------------------------------- registry

SHOW_LINK_FIELDS = ("link", "class", "mtu", "state", "over")
SHOW_PHYS_FIELDS = ("link", "media", "state", "speed", "duplex", "device")
SHOW_PHYS_MAC_FIELDS = ("link", "slot", "address")
SHOW_AGGR_FIELDS = ("link", "port")
SHOW_VNIC_FIELDS = ("link", "over", "speed", "vid", "zone")
SHOW_VNIC_MIN_FIELDS = ("link", "over", "speed")  # Solaris 11 has no "vid" field (it is "vids")
SHOW_LINKPROP_FIELDS = ("link", "property", "value", "possible")

_ILLUMOS = frozenset({"illumos"})
_LINK = r"(?: [\w.]+)?"  # an optional link name argument


def _p(fields: tuple[str, ...]) -> str:
    return re.escape(",".join(fields))


def _entry(
    pattern: str, fn: Callable[..., list[IfaceRecord]], fields: tuple[str, ...] | None, description: str
) -> Entry:
    return Entry(pattern, _ILLUMOS, partial(fn, fields=fields) if fields else fn, description)


COMMANDS = (
    *(
        _entry(rf"dladm show-link -p -o {_p(f)}{_LINK}", parse_show_link, f, "links: class, MTU, state, over")
        for f in (SHOW_LINK_FIELDS, SHOW_LINK_FIELDS[:4])
    ),
    _entry(rf"dladm show-link{_LINK}", parse_show_link, None, "links: class, MTU, state, bridge, over"),
    *(
        _entry(rf"dladm show-phys -p -o {_p(f)}{_LINK}", parse_show_phys, f, "physical links: state, speed, duplex")
        for f in (SHOW_PHYS_FIELDS, ("link", "state", "speed", "duplex"))
    ),
    _entry(rf"dladm show-phys{_LINK}", parse_show_phys, None, "physical links: media, state, speed, duplex, device"),
    *(
        _entry(rf"dladm show-phys -m -p -o {_p(f)}{_LINK}", parse_show_phys_mac, f, "primary MAC address")
        for f in (SHOW_PHYS_MAC_FIELDS, ("link", "address"))
    ),
    _entry(rf"dladm show-phys -m{_LINK}", parse_show_phys_mac, None, "primary MAC address"),
    *(
        _entry(rf"dladm show-aggr (?:-p -L|-L -p) -o {_p(f)}{_LINK}", parse_show_aggr, f, "aggregations and ports")
        for f in (SHOW_AGGR_FIELDS, ("link", "port", "aggregatable", "sync", "coll", "dist", "defaulted", "expired"))
    ),
    _entry(
        rf"dladm show-aggr(?: -[LxPs])?{_LINK}(?: -[LxPs])?",
        parse_show_aggr,
        None,
        "aggregations: summary, -L ports, -x port speeds, -s counters, Solaris 10 key layout",
    ),
    *(
        _entry(rf"dladm show-vnic -p -o {_p(f)}{_LINK}", parse_show_vnic, f, "VNICs: over, speed, VLAN, zone")
        for f in (SHOW_VNIC_FIELDS, SHOW_VNIC_MIN_FIELDS)
    ),
    _entry(rf"dladm show-vnic -s{_LINK}", parse_show_vnic_stats, None, "VNIC cumulative packets and bytes"),
    _entry(rf"dladm show-vnic{_LINK}", parse_show_vnic, None, "VNICs: over, speed, MAC, VLAN, zone"),
    _entry(
        rf"dladm show-linkprop -c -o {_p(SHOW_LINKPROP_FIELDS)} -p speed{_LINK}",
        parse_show_linkprop,
        SHOW_LINKPROP_FIELDS,
        "speed and possible speeds",
    ),
    _entry(
        rf"dladm show-linkprop -p (?:speed|mtu|speed,mtu|mtu,speed){_LINK}",
        parse_show_linkprop,
        None,
        "speed (and mtu) with possible speeds",
    ),
)
