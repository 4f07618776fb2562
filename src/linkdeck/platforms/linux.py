"""Remote Linux hosts: one POSIX sh loop per host, framed samples, nothing installed there.

Each tick the loop prints the uptime (a 10 ms remote clock that only moves forward until the
host reboots), /proc/net/dev, the TCP counters and the fast-changing sysfs attributes, with no
process at all: the delta filter's awk reads the /proc files, the shell the sysfs ones, and
the loop waits for the client's next tick on stdin with the shell's `read` (delta.NEXT).
Slow facts (link kinds, ``ip -j addr``, the default routes, ethtool) come every
``facts_every`` ticks and on the tick the set of interfaces changes, and are cached here
between those frames.

The script is built from fixed text only (the tick counts are integers formatted in).
Interface names are only ever expanded inside double quotes or passed to printf as an
argument, never evaluated. It is one line without ``!`` or backslash pairs so that a csh,
tcsh or fish login shell passes it to ``sh -c`` unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Collection, Mapping

from ..core.model import Counters, HostSample, IfaceRecord, Interface, merge_records, record_to_interface
from ..core.tcpstats import TcpCounters
from ..parsers import (
    ethtool,
    ifconfig_linux,
    ip_addr_text,
    ip_link,
    ip_route,
    numbers,
    proc_net_dev,
    proc_net_route,
    proc_net_snmp,
    sysfs_linux,
)
from ..parsers.default_route import DefaultRoute
from ..parsers.parse_error import ParseError
from ..settings.limits import DEFAULT_FACTS_EVERY
from ..transport.runner import Runner
from . import delta, route_marks as default_route, script_text
from .adapter import FRAME_BEGIN, FRAME_END, SECTION, StreamingAdapter, counters_of, parsed, run_once
from .delta import FULL, FULL_EVERY
from .linux_tick import TickReader

# Read every tick on a host of at most FEW_LINKS interfaces: a link going down shows within a
# tick, and carrier_changes moving brings the slow attributes too. Each sysfs file is one more
# read on the host, so a larger host reads them every tick, and its speed and duplex every
# slow-facts frame, only for its links whose speed means something (a NIC, a bond, whatever
# runs over other links: kinds.speed_is_real); the rest have their MTU and state from
# `ip -j addr` every slow-facts frame.
FEW_LINKS = 64
# A larger host's offloads (one ethtool per link) are read on its first frame, when its set
# of links changes and every OFFLOAD_FULLS-th full frame (an hour at the defaults), and kept
# by the receiver in between (KEPT_SECTIONS).
OFFLOAD_FULLS = 12
# What rarely changes but a user may change while troubleshooting (`ethtool -K`, `-G`, a
# driver update) is read on the first frame, when the set of links changes and every
# RARE_FACTS-th slow-facts frame (a minute at the defaults: about as long as a user waits
# for a change to show), and kept by the receiver in between: a NIC's driver and ring sizes
# (`ethtool -i`, `-g`) on every host, and a small host's offloads (`ethtool -k`). Speed and
# duplex (`ethtool`) and the NIC's counters (`ethtool -S`) stay in every one.
RARE_FACTS = 6

# The lines the loop (scripts/linux_sampler.sh) prints for its awk rules
# (scripts/linux_tick.awk, linux_tcp.awk): READ where the /proc files go, TCP where the TCP
# values go, SHIFTS once (from its TCP setup, linux_tcp.sh), telling which words of the TCP
# headers are wanted.
READ = "@@LD READ"
TCP = "@@LD TCP"
SHIFTS = "@@LD SHIFTS"


def build_script(facts_every: int, full_every: int = FULL_EVERY, *, tcp: bool = True) -> str:
    """The sampler (scripts/linux_sampler.sh) piped through its awk rules and the delta
    filter, as the one line ``sh -c`` runs.

    ``tcp=False`` leaves the TCP counters out: no TCP setup (scripts/linux_tcp.sh) and
    scripts/linux_no_tcp.awk for linux_tcp.awk, so no tick reads /proc/net/snmp or
    /proc/net/netstat, the tick has no tcp line and the slow facts' tcp_names are empty. It is
    the reference bench/bench_tcp.py measures the TCP reading's cost against; linkdeck's
    adapters always read them.
    """
    markers = {"FRAME_BEGIN": FRAME_BEGIN, "FRAME_END": FRAME_END, "SECTION": SECTION, "READ": READ, "TCP": TCP}
    setup = script_text.fill(
        script_text.sh_line(script_text.source("linux_tcp.sh")),
        {"SHIFTS": SHIFTS, "TCP_NAMES": "|".join(proc_net_snmp.SAMPLER_NAMES)},
    )
    loop = script_text.fill(
        script_text.sh_line(script_text.source("linux_sampler.sh")),
        {
            **markers,
            "FULL": FULL,
            "FEW_LINKS": FEW_LINKS,
            "TICKS_BETWEEN_FACTS": int(facts_every) - 1,
            "FULLS_BETWEEN": int(full_every) - 1,
            "OFFLOAD_FULLS": OFFLOAD_FULLS,
            "RARE_FACTS": RARE_FACTS,
            "OFFLOADS": "|".join(ethtool.OFFLOADS),
        },
        code={"TCP_SETUP": setup if tcp else ":"},
    )
    tick = script_text.fill(script_text.awk_line(script_text.source("linux_tick.awk")), {"READ": READ})
    if tcp:
        tcp_rules = script_text.fill(
            script_text.awk_line(script_text.source("linux_tcp.awk")), {"TCP": TCP, "SHIFTS": SHIFTS}
        )
    else:
        tcp_rules = script_text.fill(script_text.awk_line(script_text.source("linux_no_tcp.awk")), {"TCP": TCP})
    return delta.piped(loop, rules=f"{tick} {tcp_rules}")


class LinuxAdapter(StreamingAdapter):
    os = "linux"
    TICK_SECTIONS = frozenset(("tick",))
    KEPT_SECTIONS = frozenset(("kinds", "tools", "ethtool_k", "ethtool_i", "ethtool_g"))

    def __init__(
        self,
        runner: Runner | None = None,
        os_name: str | None = None,
        os_detail: str | None = None,
        facts_every: int = DEFAULT_FACTS_EVERY,
    ) -> None:
        super().__init__(runner, os_name, os_detail, facts_every)
        self._kinds: dict[str, dict[str, str]] = {}  # the kinds' sysfs files, as last sent
        self._kind_attrs: dict[str, dict[str, str]] = {}  # with the slow attributes over them
        self._addr: dict[str, IfaceRecord] = {}
        self._missing: tuple[str, ...] = ()  # what the last slow facts could not give, and why
        self._lacking: tuple[str, ...] = ()  # what the host's missing tools cannot give
        self._nic: dict[str, IfaceRecord] = {}
        self._routes: tuple[DefaultRoute, ...] = ()
        self._tcp_names: tuple[str, ...] = ()  # which TCP counters the tick line holds, in order
        self._ticks = TickReader()  # each tick read with what the last one left
        # The last tick's interfaces and what they were built from: sysfs lines and the set of
        # names change rarely, so most ticks only parse counters.
        self._built: tuple[tuple[str, tuple[str, ...]], dict[str, Interface]] | None = None
        # The sections the slow facts were last read from: reading the same again changes
        # nothing (a quiet node's facts are the same every facts_every ticks; a replay's jump
        # plays a minute of them), and a large node's are the costliest part of a frame to read
        self._slow_read: dict[str, str] | None = None

    def script(self) -> str:
        return build_script(self.facts_every)

    def parse_frame(self, sections: Mapping[str, str]) -> HostSample:
        if "tick" not in sections:
            raise ParseError("linkdeck linux sampler", "frame without its tick section")
        tick = self._ticks.read(sections["tick"])
        if "kinds" in sections or "attrs" in sections:
            slow = {k: v for k, v in sections.items() if k not in ("tick", "times")}
            if slow != self._slow_read:
                self._read_slow_facts(sections)
                self._built = None
                self._slow_read = slow
        if "tcp_names" in sections:
            self._tcp_names = tuple(sections["tcp_names"].split())
        key = (tick.sysfs, tick.names)
        if self._built is None or self._built[0] != key:
            self._built = (key, self._interfaces(tick.names, tick.sysfs))
        return HostSample(
            time=tick.time,
            interfaces=dict(self._built[1]),
            counters=dict(tick.counters),
            sampler_cpu_s=_sampler_cpu(sections.get("times")),
            tcp=self._tcp(tick.tcp),
            missing=self._lacking + self._missing,
        )

    def _tcp(self, line: str | None) -> TcpCounters | None:
        # Unreadable TCP numbers leave TCP unknown for this sample; the interfaces' counters
        # in the same frame are still good.
        if line is None or not self._tcp_names:
            return None
        try:
            return proc_net_snmp.sampler_line(self._tcp_names, line)
        except ParseError:
            return None

    def _interfaces(self, names: tuple[str, ...], sysfs_text: str) -> dict[str, Interface]:
        fast = sysfs_linux.parse(sysfs_text)
        merged = {
            name: {**self._kind_attrs.get(name, {}), **fast.get(name, {})}
            for name in self._kind_attrs.keys() | fast.keys()
        }
        sysfs = {rec.name: rec for rec in sysfs_linux.records(merged)}
        interfaces = {}
        for name in names:
            # Later records win: sysfs (read every tick) over `ip -j addr` (slow facts) for
            # the MTU and state, the NIC facts (ethtool) last.
            parts = [r for r in (self._addr.get(name), sysfs.get(name), self._nic.get(name)) if r is not None]
            rec = merge_records(parts)[name] if parts else IfaceRecord(name=name)
            interfaces[name] = record_to_interface(rec)
        return default_route.mark(interfaces, self._routes)

    async def read_counters(self, names: Collection[str]) -> dict[str, Counters]:
        return counters_of(parsed(proc_net_dev.parse, await run_once(self.runner, ("cat", "/proc/net/dev"))), names)

    def _read_slow_facts(self, sections: Mapping[str, str]) -> None:
        # The kinds (sent in full frames) with the slow attributes (every slow-facts frame)
        if "kinds" in sections:
            self._kinds = sysfs_linux.parse(sections["kinds"])
        if "tools" in sections:
            self._lacking = lacking(sections["tools"].split())
        kinds = dict(self._kinds)
        for name, attrs in sysfs_linux.parse(sections.get("attrs", "")).items():
            kinds[name] = {**kinds.get(name, {}), **attrs}
        self._kind_attrs = kinds
        self._addr, self._missing = _addresses(sections)
        self._routes = default_route.read(sections, ip_route.parse_routes, "linux")
        if not self._routes and "proc_route" in sections:
            try:
                self._routes = tuple(proc_net_route.parse_routes(sections["proc_route"]))
            except ParseError:
                self._routes = ()
        nic: dict[str, IfaceRecord] = {}
        for key, body in sections.items():
            what, _, name = key.partition(" ")
            if not name or what not in ("ethtool", "ethtool_S", "ethtool_g", "ethtool_i", "ethtool_k"):
                continue
            old = nic.get(name) or IfaceRecord(name=name)
            nic[name] = _ethtool_fact(old, what, body)
        self._nic = nic
        drivers = {n: a.get("device/uevent:DRIVER") for n, a in self._kind_attrs.items()}
        for name, driver in drivers.items():
            if driver:
                self._nic[name] = replace(self._nic.get(name) or IfaceRecord(name=name), driver=driver)


def _ethtool_fact(rec: IfaceRecord, what: str, body: str) -> IfaceRecord:
    """One ethtool output folded into the interface's NIC facts. ethtool answering only with
    errors (not permitted, not supported by the driver) leaves the fact unknown."""
    try:
        if what == "ethtool":
            settings = ethtool.parse_settings(body, rec.name)
            return replace(rec, supported_speeds_mbps=settings.supported_speeds_mbps)
        if what == "ethtool_S":
            return replace(rec, nic_counters=ethtool.parse_stats(body))
        if what == "ethtool_k":
            return replace(rec, offload=tuple(k for k, on in ethtool.parse_offload(body).items() if on))
        if what == "ethtool_i":
            info = ethtool.driver_record(body, rec.name)
            return replace(
                rec, driver=info.driver, driver_version=info.driver_version, firmware_version=info.firmware_version
            )
        rx, rx_max, tx, tx_max = ethtool.parse_rings(body)
        return replace(rec, ring_rx=rx, ring_rx_max=rx_max, ring_tx=tx, ring_tx_max=tx_max)
    except ParseError:
        return rec


def _sampler_cpu(text: str | None) -> float | None:
    try:
        return None if text is None else numbers.shell_times(text)
    except ParseError:
        return None  # a shell whose `times` says something else: the cost stays unknown


def _addresses(sections: Mapping[str, str]) -> tuple[dict[str, IfaceRecord], tuple[str, ...]]:
    """Each link's addresses, MAC and MTU, and what could not be read of them (the MTU is also
    read from sysfs every tick, so only addresses and MAC are lost with these commands).

    No `ip -j` (busybox, iproute2 < 4.13) means the text of `ip addr`, and no `ip` at all (a
    busybox built without it) `ifconfig -a`; output none can read leaves addresses unknown and
    says so. Failing the frame instead would flip the host to "error" every facts_every ticks
    while its counters are perfectly readable.
    """
    text = sections.get("ip_addr", "").strip()
    missing: tuple[str, ...] = ()
    if not text and not any(sections.get(key, "").strip() for key in _TEXT_FALLBACKS):
        # no `ip` nor `ifconfig` at all: nothing to read, which is not "no addresses"
        missing = (
            "addresses and MAC unavailable: none of `ip -j addr`, `ip addr` or `ifconfig -a` printed anything;"
            " MTU from sysfs",
        )
    try:
        records, problems = ip_link.read_addr_json(text) if text else ([], [])
        if problems:
            plural = "s" if len(problems) != 1 else ""
            missing = (f"facts of {len(problems)} link{plural} unavailable: {'; '.join(problems)}",)
    except ParseError as exc:
        records = []
        missing = (
            "addresses and MAC unavailable: `ip -j addr` printed output linkdeck could not read"
            f" ({exc}); MTU from sysfs",
        )
    for key, (command, parse) in _TEXT_FALLBACKS.items():
        if records or not sections.get(key, "").strip():
            continue
        try:
            records = list(parse(sections[key]))
            missing = ()
        except ParseError as exc:
            missing = (
                f"addresses and MAC unavailable: `{command}` printed text linkdeck could not read ({exc});"
                " MTU from sysfs",
            )
    return {rec.name: rec for rec in records}, missing


# Where the addresses come from without `ip -j addr`, in the order the sampler tries them.
_TEXT_FALLBACKS = {"ip_addr_text": ("ip addr", ip_addr_text.parse), "ifconfig": ("ifconfig -a", ifconfig_linux.parse)}


# What each tool the sampler looks for gives, said once on the host when it is missing.
TOOLS = {
    "ethtool": "no ethtool: no driver, rings, offloads or NIC counters (speed and duplex from sysfs)",
    "ss": "no ss: no per-flow view (w)",
}


def lacking(present: list[str]) -> tuple[str, ...]:
    """What the tools a host lacks cannot give, in TOOLS' order."""
    return tuple(words for tool, words in TOOLS.items() if tool not in present)
