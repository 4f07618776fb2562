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
from ..parsers import ethtool, ip_link, ip_route, numbers, proc_net_dev, proc_net_snmp, sysfs_linux
from ..parsers.parse_error import ParseError
from ..settings.limits import DEFAULT_FACTS_EVERY
from ..transport.runner import Runner
from . import delta, route_marks as default_route
from .adapter import FRAME_BEGIN, FRAME_END, SECTION, StreamingAdapter, counters_of, parsed, run_once, section_header
from .delta import FULL, FULL_EVERY
from .linux_tick import TickReader

# Read every tick on a host of at most FEW_LINKS interfaces: a link going down shows within a
# tick, and carrier_changes moving brings the slow attributes too. Each sysfs file costs the
# host 15–25 µs (a 602-link node: 42 ms for speed, duplex and carrier_changes), so a larger
# host reads them every tick, and its speed and duplex every slow-facts frame, only for its
# links whose speed means something (SPEED_LINKS); the rest have their MTU and state from
# `ip -j addr` every slow-facts frame.
FAST_ATTRS = ("operstate", "carrier_changes")
FEW_LINKS = 64
# Every slow-facts frame (section "attrs"): what changes rarely but matters at a glance. The
# MTU and state come with `ip -j addr` in the same frame, so sysfs is asked for them only
# where that fails (busybox, iproute2 before 4.13): 1,200 fewer files on a 600-link node.
SLOW_ATTRS = ("mtu", "speed", "duplex", "operstate", "carrier_changes")
SLOW_ATTRS_BESIDE_IP = ("speed", "duplex", "carrier_changes")
SPEED_ATTRS = ("speed", "duplex")
# A larger host's links whose speed is real (kinds.speed_is_real): a NIC (`device`), a bond
# (`bonding`) and whatever runs over other links (`lower_*`: vlan, macvlan, a bond's or a
# bridge's ports). A veth's speed is a constant of its driver, a tunnel's or a dummy's none,
# and linkdeck shows neither. Found in each full frame (the kind of a link does not change
# while the set of links stays the same), kept in $S as their directories.
SPEED_LINKS = 'S=; for d in $P/*; do set -- "$d"/lower_*; if [ -e "$d/device" ] || [ -e "$d/bonding" ] || [ -e "$1" ]; then S="$S $d"; fi; done;'
# A larger host's offloads (one ethtool per link, 0.6–0.9 s of CPU on a 602-link node) are
# read on its first frame, when its set of links changes and every OFFLOAD_FULLS-th full
# frame (an hour at the defaults), and kept by the receiver in between (KEPT_SECTIONS).
OFFLOAD_FULLS = 12
# What rarely changes but a user may change while troubleshooting (`ethtool -K`, `-G`, a
# driver update) is read on the first frame, when the set of links changes and every
# RARE_FACTS-th slow-facts frame (a minute at the defaults: about as long as a user waits
# for a change to show), and kept by the receiver in between: a NIC's driver and ring sizes
# (`ethtool -i`, `-g`) on every host, and a small host's offloads (`ethtool -k`, one per
# link, 1.2 ms each: half of a 5-link host's slow-facts frame). Speed and duplex (`ethtool`)
# and the NIC's counters (`ethtool -S`, which the drops findings compare) stay in every one.
RARE_FACTS = 6
KIND_ATTRS = ("type", "uevent", "device/uevent", "tun_flags", "bonding/slaves", "bridge/bridge_id")


def grep_sysfs(attrs: tuple[str, ...], files: str = "") -> str:
    """One grep printing ``FILE:LINE`` for every file: a single process and, grep's stdout
    being a pipe (fully buffered), a single write for the whole tick."""
    return f"grep -Hs . {files}" + " ".join(f"$P/*/{a}" for a in attrs) + ";"


# The tick's files are read by the delta filter's awk (delta.py), already running for the
# connection, with getline: no process per tick. The loop asks with a READ line (awk puts
# /proc/uptime, /proc/net/dev and the TCP values in its place, each line as `FILE:LINE`, the
# way `grep -H` printed them before) and, after the sysfs lines the shell read itself (it
# needs carrier_changes to know when to send the slow facts), a TCP line for the TCP values.
READ = "@@LD READ"
TCP = "@@LD TCP"
SHIFTS = "@@LD SHIFTS"

# The TCP counters (issue 19): their files are 5 KB; a tick carries only the dozen values
# linkdeck reads (about 70 bytes):
# - once, at the start, the shell reads the two headers (snmp's Tcp:, netstat's TcpExt:) and
#   notes the words it wants, F (printed with every slow-facts frame), and the shifts from one
#   to the next, D, counted over both headers' words in a row, which it tells awk in a SHIFTS
#   line (with whether each header was there);
# - each tick awk drops every header line and the other protocols' values, so the first two
#   lines left are the Tcp: and TcpExt: values, and picks the wanted words by the shifts.
#   Should a line be missing that the headers had, it picks nothing rather than the wrong
#   words; a line of a protocol a newer kernel added goes into the tick for the parser to skip.
TCP_SETUP = (
    "N=$(printf '\\n_'); N=${N%_}; F=; D=; T=; X=;",
    "[ -r /proc/net/snmp ] && while read -r h && read -r v; do case $h in Tcp:*) T=$h;; esac; done < /proc/net/snmp;",
    "[ -r /proc/net/netstat ] && read -r X < /proc/net/netstat;",
    f'i=0; j=0; for w in $T $X; do case $w in {"|".join(proc_net_snmp.SAMPLER_NAMES)}) F="$F $w"; D="$D $((i-j))"; j=$i;; esac; i=$((i+1)); done;',
    f'u=0; e=0; [ -n "$T" ] && u=1; [ -n "$X" ] && e=1; echo "{SHIFTS} $u $e$D";',
)
# awk (no `!`, no quotes of either kind: see shell.py); tu/te: the headers were there, td:
# the shifts, ts: this tick's TCP values. The filter's own globals are o, r, n, full, q, c,
# P, L, s0, sh, ls, nl.
TCP_AWK = (
    'function tq(f,  x) { while ((getline x < f) > 0) { if (x == "" || x ~ /^(Ip|Icmp|IcmpMsg|IpExt|Udp|UdpLite|MPTcpExt): / || x ~ /^[A-Za-z]+: [A-Za-z]/) continue; W[++tw] = f ":" x } close(f) } '
    'function tcp(  i, k, a, b, p, nw) { tw = 0; ts = ""; tq("/proc/net/snmp"); tq("/proc/net/netstat"); i = 1; a = ""; b = ""; '
    'if (i <= tw && index(W[i], "/proc/net/snmp:Tcp:") == 1) a = W[i++]; '
    'if (i <= tw && index(W[i], "/proc/net/netstat:TcpExt:") == 1) b = W[i++]; '
    "for (; i <= tw; i++) L[++n] = W[i]; "
    'if ((tu == 1 && a == "") || (te == 1 && b == "")) return; '
    'nw = split(a " " b, V, " "); p = 1; for (k = 1; k <= tn; k++) { if (td[k] + 0 >= nw - p + 1) break; p += td[k]; ts = ts " " V[p] } } '
    f'index($0, "{SHIFTS} ") == 1 {{ tu = $3; te = $4; tn = 0; for (k = 5; k <= NF; k++) td[++tn] = $k; next }} '
)
TCP_LINE_AWK = f'$0 == "{TCP}" {{ L[++n] = "tcp:" ts; next }}'
TICK_AWK = (
    'function rd(f,  x) { while ((getline x < f) > 0) if (x ~ /./) L[++n] = f ":" x; close(f) } '
    + TCP_AWK
    + f'$0 == "{READ}" {{ tcp(); rd("/proc/uptime"); rd("/proc/net/dev"); next }} '
    + TCP_LINE_AWK
)


# One sysfs file read by the shell's `read` (built in: no process) into the tick's lines $y,
# carrier_changes also into $k, whose moving brings the slow facts at once.
_READ_FAST = 'v=; { read -r v < "$z"; } 2>/dev/null; [ -n "$v" ] || continue; y="$y$z:$v$N"; case $z in */carrier_changes) k="$k $z:$v";; esac;'
# The same printed as `grep -H` would: for a handful of links, cheaper than starting a grep.
_PRINT_ONE = 'v=; { read -r v < "$z"; } 2>/dev/null; [ -n "$v" ] && printf \'%s:%s\\n\' "$z" "$v";'


def _every_link(attrs: tuple[str, ...]) -> str:
    return " ".join(f"$P/*/{a}" for a in attrs)


def _this_link(attrs: tuple[str, ...]) -> str:
    """The files of the link whose directory is $d (a loop over $S, with globbing off)."""
    return " ".join(f'"$d/{a}"' for a in attrs)


def build_script(facts_every: int, full_every: int = FULL_EVERY) -> str:
    every = facts_every
    ethtool_loop = (
        "if command -v ethtool >/dev/null 2>&1; then "
        f"if [ $m -le {FEW_LINKS} ]; then set -- $P/*; else set -f; set -- $S; set +f; fi; "
        'for d in "$@"; do [ -e "$d/device" ] || continue; i=${d##*/}; '
        'case "$i" in -*) continue;; esac; '
        'printf \'@@LD SECTION ethtool %s\\n\' "$i"; ethtool "$i" 2>&1; '
        'printf \'@@LD SECTION ethtool_S %s\\n\' "$i"; ethtool -S "$i" 2>&1; '
        "if [ $rf -le 0 ]; then "
        'printf \'@@LD SECTION ethtool_g %s\\n\' "$i"; ethtool -g "$i" 2>&1; '
        'printf \'@@LD SECTION ethtool_i %s\\n\' "$i"; ethtool -i "$i" 2>&1; '
        "fi; done; fi;"
    )
    # Every interface's offloads (veths and bridges too: theirs are what make a sender's
    # packet count a fraction of the wire's), one grep keeping only the three lines read.
    # One ethtool per link: on a 600-link node 0.6–0.9 s of CPU, so there (more than
    # FEW_LINKS) it rides in some full frames (OFFLOAD_FULLS); on a host of few links, in
    # the slow-facts frames of the rare facts (RARE_FACTS).
    offload_loop = (
        "if command -v ethtool >/dev/null 2>&1; then "
        'for d in $P/*; do i=${d##*/}; case "$i" in -*) continue;; esac; '
        f'printf \'{SECTION}ethtool_k %s\\n\' "$i"; ethtool -k "$i" 2>&1; '
        f"done | grep -E '^({SECTION}ethtool_k |({'|'.join(ethtool.OFFLOADS)}): )'; fi;"
    )
    next_frame = f"'{FRAME_END}' '{FRAME_BEGIN}' '{SECTION}tick'"
    parts = [
        "PATH=$PATH:/usr/sbin:/sbin; export LC_ALL=C; P=/sys/class/net; n=0; m=0; f=0; g=0; rf=0; p=; pk=; S=;",
        *TCP_SETUP,
        f"printf '%s\\n%s\\n' '{FRAME_BEGIN}' '{SECTION}tick';",
        delta.LOOP,
        # The set of links (a readdir of /sys/class/net, which lists every namespace's links
        # for the kernel to filter: 0.3 ms a tick on a 602-link node): every tick on a host
        # of few links, on the slow-facts ticks on a larger one, so a link that comes or
        # goes there brings its full frame within the facts cadence (its counters come or
        # go with /proc/net/dev at once).
        f'if [ $m -le {FEW_LINKS} ] || [ $n -eq 0 ]; then set -- $P/*; l="$*"; m=$#; fi;',
        # The tick: the shell reads the sysfs state on a host of few links (`read`, built in;
        # carrier_changes moving brings the slow facts at once: the speed and duplex a link
        # renegotiated come with its new state); awk reads the rest where the READ and TCP
        # lines stand. An ordinary tick is printed with this frame's end and the next one's
        # start, so awk sends it in one write, one SSH packet, one wake-up here.
        f"y=; k=; if [ $m -le {FEW_LINKS} ]; then for z in {_every_link(FAST_ATTRS)}; do {_READ_FAST} done;",
        f"else set -f; for d in $S; do for z in {_this_link(FAST_ATTRS)}; do {_READ_FAST} done; done; set +f; fi;",
        'if [ "$l" = "$p" ] && [ "$k" = "$pk" ] && [ $n -gt 0 ]; then n=$((n-1));',
        f"printf '%s\\n%s%s\\n%s\\n%s\\n%s\\n' '{READ}' \"$y\" '{TCP}' {next_frame};",
        f"else pk=$k; n={every - 1}; printf '%s\\n%s%s\\n' '{READ}' \"$y\" '{TCP}';",
        # A full frame (delta.py) on the first, when the set of links changed and every
        # full_every slow-facts frames: with the link kinds, which only change with the set,
        # and on a larger host its SPEED_LINKS, and its offloads when g (full frames to the
        # next reading) runs out or the set changed.
        # rf: slow-facts frames to the next reading of the rare facts (RARE_FACTS), at once
        # when the set of links changed.
        'rf=$((rf-1)); [ "$l" = "$p" ] || rf=0;',
        f'if [ "$l" = "$p" ] && [ $f -gt 0 ]; then f=$((f-1)); else g=$((g-1)); [ "$l" = "$p" ] || g=0; p=$l; f={full_every - 1};',
        f"echo '{FULL}'; {section_header('kinds')}; {grep_sysfs(KIND_ATTRS)}",
        f"if [ $m -gt {FEW_LINKS} ]; then {SPEED_LINKS} if [ $g -le 0 ]; then g={OFFLOAD_FULLS}; {offload_loop} fi; fi; fi;",
        f'{section_header("tcp_names")}; echo "$F";',
        f"{section_header('ip_addr')}; if ip -j addr 2>/dev/null; then echo; {section_header('attrs')};",
        f"if [ $m -le {FEW_LINKS} ]; then {grep_sysfs(SLOW_ATTRS_BESIDE_IP)}",
        f"else set -f; for d in $S; do for z in {_this_link(SPEED_ATTRS)}; do {_PRINT_ONE} done; done; set +f; fi;",
        f"else echo; {section_header('attrs')}; {grep_sysfs(SLOW_ATTRS)} fi;",
        f"{section_header('route')}; ip -j route show default 2>/dev/null; echo;",
        f"{section_header('route6')}; ip -j -6 route show default 2>/dev/null; echo;",
        ethtool_loop,
        f"if [ $m -le {FEW_LINKS} ] && [ $rf -le 0 ]; then {offload_loop} fi;",
        f"if [ $rf -le 0 ]; then rf={RARE_FACTS}; fi;",
        # the sampler's own CPU so far (the shell and every command it ran): its cost per
        # sample is the difference between two of these over the ticks between them
        f"{section_header('times')}; times;",
        f"printf '%s\\n%s\\n%s\\n' {next_frame};",
        "fi;",
        # the next tick when the client asks for it (delta.NEXT: no fork while waiting)
        f"{delta.NEXT};",
        "done",
    ]
    return delta.piped(" ".join(parts), rules=TICK_AWK)


class LinuxAdapter(StreamingAdapter):
    os = "linux"
    TICK_SECTIONS = frozenset(("tick",))
    KEPT_SECTIONS = frozenset(("kinds", "ethtool_k", "ethtool_i", "ethtool_g"))

    def __init__(self, runner: Runner | None = None, os_name: str | None = None, os_detail: str | None = None, facts_every: int = DEFAULT_FACTS_EVERY) -> None:
        super().__init__(runner, os_name, os_detail, facts_every)
        self._kinds: dict[str, dict[str, str]] = {}  # the kinds' sysfs files, as last sent
        self._kind_attrs: dict[str, dict[str, str]] = {}  # with the slow attributes over them
        self._addr: dict[str, IfaceRecord] = {}
        self._nic: dict[str, IfaceRecord] = {}
        self._routes: tuple[default_route.DefaultRoute, ...] = ()
        self._tcp_names: tuple[str, ...] = ()  # which TCP counters the tick line holds, in order
        self._ticks = TickReader()  # each tick read with what the last one left
        # The last tick's interfaces and what they were built from: sysfs lines and the set of
        # names change rarely, so most ticks only parse counters.
        self._built: tuple[tuple[str, tuple[str, ...]], dict[str, Interface]] | None = None
        # The sections the slow facts were last read from: reading the same again changes
        # nothing (a quiet node's facts are the same every facts_every ticks; a replay's jump
        # plays a minute of them), and a 602-link node's cost 50 ms to read
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
        merged = {name: {**self._kind_attrs.get(name, {}), **fast.get(name, {})} for name in self._kind_attrs.keys() | fast.keys()}
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
        kinds = dict(self._kinds)
        for name, attrs in sysfs_linux.parse(sections.get("attrs", "")).items():
            kinds[name] = {**kinds.get(name, {}), **attrs}
        self._kind_attrs = kinds
        text = sections.get("ip_addr", "").strip()
        # No `ip -j` (busybox, iproute2 < 4.13) or output it cannot read: addresses stay
        # unknown. Failing the frame instead would flip the host to "error" every
        # facts_every ticks while its counters are perfectly readable.
        try:
            self._addr = {rec.name: rec for rec in ip_link.parse_addr_json(text)} if text else {}
        except ParseError:
            self._addr = {}
        self._routes = default_route.read(sections, ip_route.parse_routes, "linux")
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
            return replace(rec, driver=info.driver, driver_version=info.driver_version, firmware_version=info.firmware_version)
        rx, rx_max, tx, tx_max = ethtool.parse_rings(body)
        return replace(rec, ring_rx=rx, ring_rx_max=rx_max, ring_tx=tx, ring_tx_max=tx_max)
    except ParseError:
        return rec


def _sampler_cpu(text: str | None) -> float | None:
    try:
        return None if text is None else numbers.shell_times(text)
    except ParseError:
        return None  # a shell whose `times` says something else: the cost stays unknown
