"""The BSD family over one streaming ``sh`` loop: FreeBSD and its appliances (OPNsense,
pfSense, TrueNAS CORE), DragonFly, macOS, OpenBSD and NetBSD.

Each tick the loop prints a timestamp and ``netstat -i`` (with bytes, and drops where the
flag exists); every ``facts_every`` ticks, and on any tick where the set of ``<Link>`` rows
changed (an interface appeared or vanished), it adds ``ifconfig -a`` for MTU, media, status,
addresses and lagg/vlan/bridge membership, and ``route -n get default`` (IPv4 and IPv6) for
the interface that carries the default route. Every command is fixed text; option variants are
tried in order with ``||`` because the same flag is missing on some releases (``-W``, ``-d``,
``ifconfig -m``), and a usage error prints nothing on stdout.

Per-OS differences (the profiles below):
- FreeBSD-likes: ``netstat -i -b -d -n -W`` (``-W``: never truncate names; FreeBSD 14 prints
  Idrop and a trailing output Drop column), ``ifconfig -a -m`` (supported media for all).
- macOS: names are always cut to 5 chars by netstat, so facts come from ``ifconfig -a -v``
  whose ``index N`` matches netstat's ``<Link#N>``; ``-d`` adds an output Drop column.
- OpenBSD/NetBSD: ``netstat -i -b`` prints bytes *instead of* packets, so both tables are
  read each tick and merged per interface.

Ticks: the client asks for each one with a newline on the loop's stdin (delta.NEXT), on its
own schedule, so ticks come every interval whatever the tick's work took, and waiting forks
no ``sleep``.

Time: BSD ``date`` has no sub-second field and ``sysctl kern.boottime`` is a constant, so
the frame carries ``date +%s.%N``; when that yields a real fraction (GNU date) the remote
clock stamps the sample, otherwise the local monotonic clock at frame receipt does (the
choice is made on the first frame and kept, so one host's samples share one clock).
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass, replace
from typing import Collection, Mapping

from ..core.kinds import guess_kind
from ..core.model import Counters, HostSample, IfaceRecord, Interface, merge_records, record_to_interface
from ..core.oses import family
from ..core.tcpstats import TcpCounters
from ..parsers import ifconfig_bsd, netstat_bsd, netstat_tcp_bsd, route_get
from ..parsers.default_route import DefaultRoute
from ..parsers.parse_error import ParseError
from ..settings.limits import DEFAULT_FACTS_EVERY
from ..transport.runner import Runner
from . import delta, route_marks as default_route, script_text
from .adapter import FRAME_BEGIN, FRAME_END, SECTION, CountersUnavailable, StreamingAdapter, parsed, run_once
from .delta import FULL, FULL_EVERY


@dataclass(frozen=True)
class Profile:
    netstat: tuple[str, ...]  # alternatives, first that succeeds wins
    ifconfig: tuple[str, ...]
    netstat_packets: tuple[str, ...] = ()  # second table where -b replaces packets


_FREEBSD = Profile(
    netstat=("netstat -i -b -d -n -W", "netstat -i -b -d -n", "netstat -i -b -n"),
    ifconfig=("ifconfig -a -m", "ifconfig -a"),
)
_MACOS = Profile(netstat=("netstat -i -b -d -n", "netstat -i -b -n"), ifconfig=("ifconfig -a -v", "ifconfig -a"))
_OPENBSD = Profile(
    netstat=("netstat -i -b -n",), netstat_packets=("netstat -i -d -n", "netstat -i -n"), ifconfig=("ifconfig -a",)
)
_NETBSD = Profile(
    netstat=("netstat -i -b -n",),
    netstat_packets=("netstat -i -d -n", "netstat -i -n"),
    ifconfig=("ifconfig -a -m", "ifconfig -a"),
)
PROFILES = {"macos": _MACOS, "openbsd": _OPENBSD, "netbsd": _NETBSD}

_FRACTIONAL_TIME = re.compile(r"[0-9]{1,15}\.[0-9]{1,9}")


def profile_for(os_name: str) -> Profile:
    if family(os_name) != "bsd":
        raise ValueError(f"not a BSD-family OS: {os_name!r}")
    return PROFILES.get(os_name, _FREEBSD)


def _chain(commands: tuple[str, ...], suffix: str = "") -> str:
    """``a 2>/dev/null || b 2>/dev/null || c``: variants a release lacks fail quietly; the last
    one keeps its stderr for the user. ``suffix`` goes after each (``-I IFACE``)."""
    tried = [c + suffix for c in commands]
    return " || ".join([f"{c} 2>/dev/null" for c in tried[:-1]] + tried[-1:])


# BSD interface names: letters, digits and a few separators, at most IFNAMSIZ-1 characters.
_IFNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}")
_PACKETS = "@@LD SECTION packets"


def counters_script(profile: Profile, name: str) -> str:
    """netstat restricted to one interface (``-I`` keeps macOS's 5-character names from being
    confused), with the profile's fallbacks; OpenBSD and NetBSD print bytes instead of
    packets with ``-b``, so their packet table follows."""
    if not _IFNAME.fullmatch(name):
        raise CountersUnavailable(f"not a BSD interface name: {name!r}")
    suffix = f" -I {shlex.quote(name)}"
    script = _chain(profile.netstat, suffix)
    if profile.netstat_packets:
        script += f"; echo '{_PACKETS}'; " + _chain(profile.netstat_packets, suffix)
    return script


def counters_from(profile: Profile, name: str, text: str) -> Counters | None:
    """The interface's link-row counters from :func:`counters_script`'s output (None when
    netstat has no such interface)."""
    main, _, packets = text.partition(_PACKETS + "\n")
    if not main.strip():
        return None  # every variant refused: no such interface (or no netstat)
    found = _link_row(parsed(lambda t: netstat_bsd.parse(t, profile.netstat[0]), main), name)
    if found is not None and packets.strip():
        other = _link_row(parsed(lambda t: netstat_bsd.parse(t, profile.netstat_packets[0]), packets), name)
        found = netstat_bsd.merge_counters(found, other)
    return found


def _link_row(records: list[IfaceRecord], name: str) -> Counters | None:
    """The named interface's counters; on macOS netstat cuts names to 5 characters, and with
    ``-I`` the only link row with that prefix is the interface asked for."""
    rows = [r for r in records if r.counters is not None]
    exact = [r for r in rows if r.name == name]
    cut = [r for r in rows if len(r.name) < len(name) and name.startswith(r.name)]
    chosen = exact or (cut if len(cut) == 1 else [])
    return chosen[0].counters if chosen else None


class BsdAdapter(StreamingAdapter):
    os = "freebsd"
    TICK_SECTIONS = frozenset(("time", "netstat", "netstat_packets", "tcp"))

    def __init__(
        self,
        runner: Runner | None = None,
        os_name: str | None = None,
        os_detail: str | None = None,
        facts_every: int = DEFAULT_FACTS_EVERY,
    ) -> None:
        super().__init__(runner, os_name, os_detail, facts_every)
        self.profile = profile_for(self.os)
        self._facts: dict[str, IfaceRecord] = {}
        self._routes: tuple[DefaultRoute, ...] = ()
        self._remote_clock: bool | None = None

    # -- the remote side -------------------------------------------------------------------

    def script(self) -> str:
        """The sampler (scripts/bsd_sampler.sh) with this OS's command variants, piped
        through the delta filter."""
        p = self.profile
        packets = f"echo '{SECTION}netstat_packets'; {_chain(p.netstat_packets)}" if p.netstat_packets else ":"
        loop = script_text.fill(
            script_text.sh_line(script_text.source("bsd_sampler.sh")),
            {
                "FRAME_BEGIN": FRAME_BEGIN,
                "FRAME_END": FRAME_END,
                "SECTION": SECTION,
                "FULL": FULL,
                "FACTS_EVERY": int(self.facts_every),
                "FULL_EVERY_TICKS": int(self.facts_every) * FULL_EVERY,
            },
            # fixed text of this module and the parser's: command variants, a grep pattern
            code={
                "TCP_GREP": netstat_tcp_bsd.GREP_PATTERN,
                "NETSTAT": _chain(p.netstat),
                "IFCONFIG": _chain(p.ifconfig),
                "PACKETS": packets,
            },
        )
        return delta.piped(loop)

    async def read_counters(self, names: Collection[str]) -> dict[str, Counters]:
        out = {}
        for name in names:
            text = await run_once(self.runner, ("sh", "-c", counters_script(self.profile, name)))
            found = counters_from(self.profile, name, text)
            if found is not None:
                out[name] = found
        return out

    # -- the local side --------------------------------------------------------------------

    def parse_frame(self, sections: Mapping[str, str]) -> HostSample:
        received = time.monotonic() if self.received is None else self.received
        netstat_cmd = self.profile.netstat[0]
        if not sections.get("netstat", "").strip():
            raise ParseError(netstat_cmd, "printed nothing (is netstat installed and on PATH?)")
        records = netstat_bsd.parse(sections["netstat"], netstat_cmd)
        if self.profile.netstat_packets and sections.get("netstat_packets", "").strip():
            packets = netstat_bsd.parse(sections["netstat_packets"], self.profile.netstat_packets[0])
            records = _merge_tables(records, packets)
        if sections.get("ifconfig", "").strip():
            facts = ifconfig_bsd.parse(sections["ifconfig"], self.profile.ifconfig[0])
            self._facts = {rec.name: rec for rec in facts}
            self._routes = default_route.read(sections, route_get.parse_routes, self.os)
        interfaces: dict[str, Interface] = {}
        counters: dict[str, Counters] = {}
        for name, rec in zip(resolve_names(records, list(self._facts.values())), records):
            rec = replace(rec, name=name)
            fact = self._facts.get(name)
            # Facts first: netstat's MTU and down-marker are fresher than the last ifconfig.
            merged = merge_records([fact, rec] if fact else [rec])[name]
            interfaces[name] = _interface(merged)
            counters[name] = merged.counters or Counters()
        interfaces = default_route.mark(interfaces, self._routes)
        return HostSample(
            time=self._sample_time(sections.get("time", ""), received),
            interfaces=interfaces,
            counters=counters,
            tcp=_tcp(sections.get("tcp", "")),
        )

    def _sample_time(self, text: str, received: float) -> float:
        text = text.strip()
        if self._remote_clock is None:
            self._remote_clock = _FRACTIONAL_TIME.fullmatch(text) is not None
        if self._remote_clock:
            if not _FRACTIONAL_TIME.fullmatch(text):
                raise ParseError("date +%s.%N", "expected seconds with a fraction", text)
            return float(text)
        return received


def _tcp(text: str) -> TcpCounters | None:
    try:
        return netstat_tcp_bsd.parse(text) if text.strip() else None
    except ParseError:
        return None  # a netstat that words it otherwise: TCP unknown, the interfaces go on


def _interface(rec: IfaceRecord) -> Interface:
    if rec.kind is None:
        rec = replace(rec, kind=guess_kind(rec.name))
    return record_to_interface(rec)


def _link_index(rec: IfaceRecord) -> str | None:
    return dict(rec.extra).get("link_index")


def _merge_tables(primary: list[IfaceRecord], secondary: list[IfaceRecord]) -> list[IfaceRecord]:
    """Field-wise counter union of two netstat tables, matched by name and link index."""
    others = {(r.name, _link_index(r)): r for r in secondary}
    out = []
    for rec in primary:
        other = others.get((rec.name, _link_index(rec)))
        if other is not None:
            rec = replace(
                rec,
                counters=netstat_bsd.merge_counters(rec.counters, other.counters),
                nic_counters={**other.nic_counters, **rec.nic_counters},
            )
        out.append(rec)
    return out


def resolve_names(records: list[IfaceRecord], facts: list[IfaceRecord]) -> list[str]:
    """Full interface names for netstat rows whose names may be cut to 5 characters.

    In order of preference: the name as printed when ifconfig knows it; the ifconfig
    interface whose ``index N`` (macOS ``ifconfig -v``) equals the row's ``<Link#N>``; else
    the ifconfig names that start with the truncated name, handed out in ifconfig order to
    the rows sorted by link index (both list interfaces in index order). A row that still
    collides with a name already given out (two ``vmnet`` rows and no ifconfig yet) is called
    ``NAME#INDEX`` so neither interface's counters are lost.
    """
    known = [f.name for f in facts]
    by_index = {dict(f.extra).get("index"): f.name for f in facts if dict(f.extra).get("index")}
    exact = {r.name for r in records if r.name in known}
    names: list[str | None] = [None] * len(records)
    pending: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        idx = _link_index(rec)
        if rec.name in known:
            names[i] = rec.name
        elif idx is not None and idx in by_index:
            names[i] = by_index[idx]
        else:
            pending.setdefault(rec.name, []).append(i)
    taken = {n for n in names if n}
    for short, rows in pending.items():
        candidates = [n for n in known if n.startswith(short) and n not in taken and n not in exact]
        rows.sort(key=lambda i: int(_link_index(records[i]) or 0))
        for i, row in enumerate(rows):
            names[row] = candidates[i] if i < len(candidates) else records[row].name
    out: list[str] = []
    for name, rec in zip(names, records):
        name = name or rec.name
        if name in out and _link_index(rec) is not None:
            name = f"{name}#{_link_index(rec)}"
        out.append(name)
    return out
