"""iproute2: ``ip -s -j link`` / ``ip -d -s -s -j link`` (JSON), ``ip -s link`` (text) and
``ip -j addr`` (addresses).

JSON gives counters in ``stats64`` (or 32-bit ``stats`` from very old builds), the kind in
``linkinfo.info_kind`` (only with ``-d``), the lower device in ``link`` and the bridge/bond in
``master``; members are the other links naming an interface as their master.

The text form has changed over the years (old fixed-width ``RX: bytes  packets  errors
dropped overrun mcast`` vs the right-aligned ``RX:  bytes packets errors dropped  missed
mcast`` of iproute2 >= 5.x); columns are read from each block's own header line.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any, Callable

from ..core.kinds import Kind
from ..core.model import Counters, IfaceRecord
from . import numbers
from .parse_error import ParseError
from .registry import Entry

_JSON = "ip -s -j link"
_TEXT = "ip -s link"
_ADDR = "ip -j addr"

_KIND_BY_INFO = {
    "bridge": Kind.BRIDGE,
    "bond": Kind.BOND,
    "team": Kind.BOND,
    "vlan": Kind.VLAN,
    "veth": Kind.VIRTUAL,
    "dummy": Kind.VIRTUAL,
    "vrf": Kind.VIRTUAL,
    "ifb": Kind.VIRTUAL,
    "macvlan": Kind.VNIC,
    "macvtap": Kind.VNIC,
    "ipvlan": Kind.VNIC,
    "tun": Kind.TUNNEL,
    "vxlan": Kind.TUNNEL,
    "geneve": Kind.TUNNEL,
    "gre": Kind.TUNNEL,
    "gretap": Kind.TUNNEL,
    "ipip": Kind.TUNNEL,
    "sit": Kind.TUNNEL,
    "ip6tnl": Kind.TUNNEL,
    "wireguard": Kind.TUNNEL,
}
# Kinds whose "link"/"@peer" is the other end of a pair, not the device they sit on.
_PEER_KINDS = frozenset({"veth"})
_COUNTER_KEYS = {"bytes": "bytes", "packets": "packets", "errors": "errors", "dropped": "drops"}


# --- JSON ---------------------------------------------------------------------------------


def parse_json(text: str) -> list[IfaceRecord]:
    """Every link in ``ip [-d] -s [-s] -j link`` output: counters, mtu, oper state, kind,
    lower device (``over``), master and the members derived from it. A link that cannot be
    read is left out (``read_json`` says which and why); the others are whole."""
    return read_json(text)[0]


def read_json(text: str) -> tuple[list[IfaceRecord], list[str]]:
    """``parse_json``'s records, and one line for each link it had to leave out."""
    links, problems = _load_links(text, _JSON)
    masters = _members_by_master(links)
    paired = _paired(_links_lower(links))
    return _each(links, problems, lambda d: _link_record(d, masters, _JSON, paired))


def parse_addr_json(text: str) -> list[IfaceRecord]:
    """Addresses ("192.0.2.1/24", "fe80::1/64") per interface from ``ip -j addr``, plus the
    link facts that output repeats (mtu, oper state, mac, master). A link that cannot be read
    is left out (``read_addr_json`` says which and why); the others are whole."""
    return read_addr_json(text)[0]


def read_addr_json(text: str) -> tuple[list[IfaceRecord], list[str]]:
    """``parse_addr_json``'s records, and one line for each link it had to leave out."""
    links, problems = _load_links(text, _ADDR)
    masters = _members_by_master(links)
    paired = _paired(_links_lower(links))

    def record(d: dict[str, Any]) -> IfaceRecord:
        rec = _link_record(d, masters, _ADDR, paired)
        addrs = []
        for info in _list(d, "addr_info", _ADDR):
            if not isinstance(info, dict):
                raise ParseError(_ADDR, f"{rec.name}: addr_info entry is not an object")
            local, plen = info.get("local"), info.get("prefixlen")
            if isinstance(local, str) and isinstance(plen, int) and not isinstance(plen, bool):
                addrs.append(f"{local}/{plen}")
        return replace(rec, addresses=tuple(addrs))

    return _each(links, problems, record)


def _each(
    links: list[dict[str, Any]], problems: list[str], record: Callable[[dict[str, Any]], IfaceRecord]
) -> tuple[list[IfaceRecord], list[str]]:
    """Each link's record; one whose fields cannot be read costs that link alone."""
    out = []
    for d in links:
        try:
            out.append(record(d))
        except ParseError as exc:
            problems.append(str(exc))
    return out, problems


def _load_links(text: str, command: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The links of ``ip -j`` output, and a line for each entry that is not one. Control
    characters inside its strings are data (ip prints an interface name's bytes as they are)."""
    try:
        data = json.loads(text, strict=False)
    except (ValueError, RecursionError) as exc:
        raise ParseError(command, f"not JSON ({exc.__class__.__name__}: {str(exc)[:80]})") from None
    if not isinstance(data, list):
        raise ParseError(command, "expected a JSON list of links")
    # ip prints an empty object for links it cannot dump (a link vanishing mid-dump).
    links, problems = [], []
    for d in data:
        if d == {}:
            continue
        if not isinstance(d, dict) or not isinstance(d.get("ifname"), str) or not d["ifname"]:
            problems.append(str(ParseError(command, "a link without an 'ifname' string")))
            continue
        links.append(d)
    return links, problems


def _paired(lower: dict[str, str | None]) -> set[str]:
    """Links whose lower link names them back: the two ends of a veth pair (``ip`` without
    ``-d`` does not say "veth"). A vlan's or macvlan's parent never points back at it."""
    return {name for name, other in lower.items() if other is not None and lower.get(other) == name}


def _links_lower(links: list[dict[str, Any]]) -> dict[str, str | None]:
    return {d["ifname"]: d.get("link") if isinstance(d.get("link"), str) else None for d in links}


def _members_by_master(links: list[dict[str, Any]]) -> dict[str, list[str]]:
    masters: dict[str, list[str]] = {}
    for d in links:
        master = d.get("master")
        if isinstance(master, str):
            masters.setdefault(master, []).append(d["ifname"])
    return masters


def _link_record(d: dict[str, Any], masters: dict[str, list[str]], command: str, paired: set[str]) -> IfaceRecord:
    name = d["ifname"]
    flags = _list(d, "flags", command)
    raw_info = d.get("linkinfo")
    linkinfo: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    info_kind = linkinfo.get("info_kind")
    if not isinstance(info_kind, str):  # a list or number where ip -j has a string: no kind
        info_kind = None
    kind = _kind(d, flags, info_kind)
    lower = d.get("link") if isinstance(d.get("link"), str) else None
    counters, nic, carrier_changes = _stats(d, name, command)
    extra = []
    if isinstance(d.get("master"), str):
        extra.append(("master", d["master"]))
    if isinstance(info_kind, str):
        extra.append(("linkinfo kind", info_kind))
    mac = d.get("address") if d.get("link_type") == "ether" and isinstance(d.get("address"), str) else None
    return IfaceRecord(
        name=name,
        kind=kind,
        oper=_oper(d.get("operstate"), flags),
        mtu=numbers.mtu(_int(d, "mtu", name, command)),
        mac=mac,
        over=None if info_kind in _PEER_KINDS or name in paired else lower,
        members=tuple(masters.get(name, ())),
        carrier_changes=carrier_changes,
        counters=counters,
        nic_counters=nic,
        extra=tuple(extra),
    )


def _kind(d: dict[str, Any], flags: list[Any], info_kind: object) -> Kind | None:
    if d.get("link_type") == "loopback":
        return Kind.LOOPBACK
    if "MASTER" in flags:  # IFF_MASTER: bonding/team masters only
        return Kind.BOND
    if isinstance(info_kind, str):
        return _KIND_BY_INFO.get(info_kind, Kind.VIRTUAL)
    if "parentbus" in d:  # -d output names the bus of real devices (pci, usb, virtio)
        return Kind.PHYSICAL
    return None


def _oper(state: object, flags: list[Any]) -> str | None:
    if not isinstance(state, str):
        return None
    state = state.lower()
    # lo, tun and some drivers never report an operstate; UP + LOWER_UP means it carries traffic.
    if state == "unknown" and "UP" in flags and "LOWER_UP" in flags:
        return "up"
    return state


def _stats(d: dict[str, Any], name: str, command: str) -> tuple[Counters | None, dict[str, int], int | None]:
    stats, bits = d.get("stats64"), 64
    if stats is None:
        stats, bits = d.get("stats"), 32
    if stats is None:
        return None, {}, None
    if not isinstance(stats, dict) or not all(isinstance(stats.get(k), dict) for k in ("rx", "tx")):
        raise ParseError(command, f"{name}: stats without rx/tx objects")
    counters: dict[str, int] = {}
    nic: dict[str, int] = {}
    carrier_changes = None
    for direction in ("rx", "tx"):
        for key in stats[direction]:
            value = _int(stats[direction], key, name, command)
            if value is None:
                continue
            if key == "carrier_changes":
                carrier_changes = value
            elif key in _COUNTER_KEYS:
                counters[f"{direction}_{_COUNTER_KEYS[key]}"] = value
            else:
                nic[f"{direction}_{key}"] = value
    return Counters(bits=bits, **counters), nic, carrier_changes


def _int(d: dict[str, Any], key: str, name: str, command: str) -> int | None:
    value = d.get(key)
    if value is None or isinstance(value, (dict, list)):
        return None
    if (
        not isinstance(value, int) or isinstance(value, bool) or value < 0
    ):  # a float or a string where ip -j has an integer
        raise ParseError(command, f"{name}: '{key}' is not a non-negative integer: {numbers.shown(value)}")
    return numbers.json_integer(value, f"{name}: '{key}'", command)


def _list(d: dict[str, Any], key: str, command: str) -> list[Any]:
    value = d.get(key, [])
    if not isinstance(value, list):
        raise ParseError(command, f"{d.get('ifname')}: '{key}' is not a list")
    return value


# --- text ---------------------------------------------------------------------------------

# "2: veth0@if2: <BROADCAST,...> mtu 1500 qdisc noqueue master br0 state UP ..."
_HEAD_RE = re.compile(r"^\d+:\s+([^\s:@]+)(?:@([^\s:]+))?:\s+<([^>]*)>(.*)$")
_STATS_HEAD_RE = re.compile(r"^\s+(RX|TX)( errors)?:\s+(.*\S)\s*$")
_TEXT_COUNTERS = {"bytes": "bytes", "packets": "packets", "errors": "errors", "dropped": "drops"}


def parse_text(text: str) -> list[IfaceRecord]:  # noqa: C901 - one branch per `ip link` line form
    """Every link in ``ip -s [-s] link [show DEV]`` text output."""
    blocks: list[dict[str, Any]] = []
    pending: tuple[str, list[str]] | None = None  # a stats header waiting for its values line
    for line in text.splitlines():
        if not line.strip():
            continue
        if pending is not None:
            _stats_values(blocks[-1], pending, line)
            pending = None
            continue
        head = _HEAD_RE.match(line)
        if head:
            blocks.append(_text_head(head))
            continue
        if not line[0].isspace() or not blocks:
            raise ParseError(_TEXT, "expected 'N: NAME: <FLAGS> mtu …' or an indented detail line", line)
        m = _STATS_HEAD_RE.match(line)
        if m:
            prefix = m.group(1).lower() + ("_err" if m.group(2) else "")
            pending = (prefix, m.group(3).split())
        elif line.strip().startswith("link/"):
            parts = line.split()
            blocks[-1]["link_type"] = parts[0][5:]
            if parts[0] == "link/ether" and len(parts) > 1:
                blocks[-1]["mac"] = parts[1]
    if pending is not None:
        raise ParseError(_TEXT, f"{blocks[-1]['name']}: stats header without values (truncated?)")
    if not blocks:
        raise ParseError(_TEXT, "no link found; is this 'ip -s link' output?")
    masters: dict[str, list[str]] = {}
    for b in blocks:
        if b.get("master"):
            masters.setdefault(b["master"], []).append(b["name"])
    paired = _paired({b["name"]: b["lower"] for b in blocks})
    return [_text_record(b, masters, paired) for b in blocks]


def _text_head(m: re.Match[str]) -> dict[str, Any]:
    words = m.group(4).split()
    attrs = {k: v for k, v in zip(words[::2], words[1::2])}
    mtu = attrs.get("mtu")
    return {
        "name": m.group(1),
        "lower": m.group(2),
        "flags": m.group(3).split(","),
        "mtu": numbers.mtu(numbers.integer(mtu, f"{m.group(1)}: mtu", _TEXT, m.group(0))) if mtu is not None else None,
        "state": attrs.get("state"),
        "master": attrs.get("master"),
        "counters": {},
        "nic": {},
    }


def _stats_values(block: dict[str, Any], pending: tuple[str, list[str]], line: str) -> None:
    prefix, columns = pending
    values = line.split()
    if len(values) != len(columns):
        raise ParseError(_TEXT, f"{block['name']}: {len(columns)} numbers expected under '{' '.join(columns)}'", line)
    direction = prefix[:2]
    for col, val in zip(columns, values):
        number = numbers.integer(val, f"{block['name']}: {col}", _TEXT, line)
        if prefix.endswith("_err") or col not in _TEXT_COUNTERS:
            block["nic"][f"{direction}_{col}"] = number
        else:
            block["counters"][f"{direction}_{_TEXT_COUNTERS[col]}"] = number


def _text_record(b: dict[str, Any], masters: dict[str, list[str]], paired: set[str]) -> IfaceRecord:
    lower = b["lower"]
    # "veth0@if2": the peer lives in another namespace (ifindex only); "@NONE": no lower link.
    if lower and (lower == "NONE" or re.fullmatch(r"if\d+", lower)) or b["name"] in paired:
        lower = None
    return IfaceRecord(
        name=b["name"],
        kind=Kind.LOOPBACK if b.get("link_type") == "loopback" else Kind.BOND if "MASTER" in b["flags"] else None,
        oper=_oper(b["state"], b["flags"]),
        mtu=b["mtu"],
        mac=b.get("mac"),
        over=lower,
        members=tuple(masters.get(b["name"], ())),
        counters=Counters(**b["counters"]) if b["counters"] else None,
        nic_counters=b["nic"],
        extra=(("master", b["master"]),) if b["master"] else (),
    )


# --- registry -----------------------------------------------------------------------------

_OPTS = r"(?:-(?:s|d|j|p|stats|statistics|details|json|pretty) )*"
_SHOW = r"(?: (?:show|sh|list|ls|lst))?(?: (?:dev )?\S+)?"
_WITH_J = r"(?=.* -j(?:son)?(?: |$))"
_WITHOUT_J = r"(?!.* -j(?:son)?(?: |$))"

COMMANDS = (
    Entry(
        rf"{_WITH_J}ip {_OPTS}link{_SHOW}",
        frozenset({"linux"}),
        lambda t, o: parse_json(t),
        "counters, mtu, state, kind (-d), master/members",
        lambda t, o: read_json(t),
    ),
    Entry(
        rf"{_WITHOUT_J}ip {_OPTS}link{_SHOW}",
        frozenset({"linux"}),
        lambda t, o: parse_text(t),
        "counters, mtu, state, master/members",
    ),
    Entry(
        rf"{_WITH_J}ip {_OPTS}(?:addr|address|a){_SHOW}",
        frozenset({"linux"}),
        lambda t, o: parse_addr_json(t),
        "addresses per interface",
        lambda t, o: read_addr_json(t),
    ),
)
