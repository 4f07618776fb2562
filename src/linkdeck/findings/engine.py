"""Fleet state → findings.

``Diagnoser`` is fed every HostUpdate (``observe``) and keeps what the window rules need: a
few numbers per interface per tick, for ``settings.thresholds.window_s`` seconds of that host's
clock. ``findings()`` runs every rule over the latest facts and the window, drops muted ones
and lists the rest newest first; a finding keeps its place (and ``since``) for as long as it
holds, so the UI can say "since 12:04". ``diagnose()`` is the one-shot form for snapshots.

A pass over 10,000 hosts takes half a second of CPU: ``view()`` copies what a pass reads (on
the thread that observes), ``judge(view)`` runs it on any other thread, one pass at a time,
while observing goes on (``findings_off_loop``).
"""

from __future__ import annotations

import asyncio
import math
import time
from bisect import bisect_right
from dataclasses import astuple, dataclass
from fnmatch import fnmatchcase
from itertools import compress, count, islice, repeat
from operator import attrgetter, is_, is_not, or_
from typing import TYPE_CHECKING, Any, Callable, Final, Iterable, Iterator, NamedTuple, Sequence

from ..core.codes import Code
from ..core.fleetstate import gc_paused
from ..core.freshness import stale_since
from ..core.levels import Severity
from ..core.model import Finding, HostState, HostUpdate, Interface, InterfaceView, MeasuredPath, SubnetMtu
from ..settings.config import MuteRule, Settings, Thresholds
from . import counters, mtu, outlier, speed, tcp
from .counters import Held
from .helpers import Port
from .tcp import TcpKept
from .window import EMPTY, NAMES, WINDOWS, History, HostWindows, Window, caught_up, observed, repeatable

if TYPE_CHECKING:
    from typing_extensions import TypeAlias, Unpack

Key = tuple[str, str, str | None]
Ends = tuple[tuple[str, str | None], tuple[str, str | None]]  # a MeasuredPath's
_IFACE = attrgetter("iface")
_NAME = attrgetter("iface.name")


def key_of(finding: Finding) -> Key:
    return (finding.code, finding.host, finding.interface)


def muted(finding: Finding, rules: Iterable[MuteRule]) -> bool:
    """A rule mutes a finding when each of its fields is None or matches (shell-style
    patterns allowed: interface = "veth*")."""
    for rule in rules:
        if all(
            pattern is None or (value is not None and fnmatchcase(value, pattern))
            for pattern, value in (
                (rule.code, finding.code),
                (rule.host, finding.host),
                (rule.interface, finding.interface),
            )
        ):
            return True
    return False


# The fields of an interface the speed and MTU rules (findings/speed.py, mtu.py) may read.
# They are the key their last answer is kept by, and the rules are given interfaces holding
# these fields alone (static_view): a rule that reads another reads its default every time,
# never an answer kept from facts that have since changed.
STATIC_FIELDS = (
    "name",
    "kind",
    "oper",
    "speed_mbps",
    "duplex",
    "supported_speeds_mbps",
    "mtu",
    "addresses",
    "over",
    "default_route",
)
_STATIC = attrgetter(*STATIC_FIELDS)
# What the speed and MTU rules read of one interface: its host, os and reached_at, then its
# STATIC_FIELDS' values.
StaticFacts = tuple[Any, ...]
# A host's static facts as the Diagnoser keeps them (_host_facts): one flat tuple, the os and
# reached_at they were made with, the facts, then the Interfaces they were made from, compared
# by identity; flat, so that it is one object the collector tracks per host. Read by these places.
if TYPE_CHECKING:
    KeptFacts: TypeAlias = tuple[str | None, str | None, tuple[StaticFacts, ...], Unpack[tuple[Interface, ...]]]
else:  # typing.Unpack is Python 3.11's
    KeptFacts = tuple
_OS: Final = 0
_REACHED_AT: Final = 1
_FACTS: Final = 2
_IFACES: Final = 3  # kept[_IFACES:]: the Interfaces


def _static_facts(update: HostUpdate, i: Interface) -> StaticFacts:
    return (update.host, update.os, update.reached_at, *_STATIC(i))


def static_view(i: Interface) -> Interface:
    """``i`` as the speed and MTU rules see it: STATIC_FIELDS, the rest at their defaults."""
    return Interface(**dict(zip(STATIC_FIELDS, _STATIC(i))))


def _ports(update: HostUpdate) -> list[Port]:
    """A host's ports as the rules see them, made for one pass and dropped with it: kept, they
    would be 80,000 objects the cyclic collector walks at 10,000 hosts."""
    host, os, reached_at = update.host, update.os, update.reached_at
    return [Port(host, os, v.iface, reached_at) for v in update.interfaces]


def _listed(names: Iterable[str], most: int = 12) -> str:
    names = list(dict.fromkeys(names))
    return (
        ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "") if names else "none"
    )


def _is_pattern(name: str) -> bool:
    return any(c in name for c in "*?[")


class _Names:
    """Each host's interfaces' names, sorted, made only for a host a key asks about (a fleet
    with no [speed] key nor [[mute]] rule sorts none); the hosts asked about are kept in
    ``asked``. ``host in`` says whether the host has reported its interfaces."""

    __slots__ = ("_updates", "_sorted", "asked")

    def __init__(self, updates: Iterable[HostUpdate], asked: set[str]) -> None:
        self._updates = {u.host: u for u in updates if u.interfaces}
        self._sorted: dict[str, list[str]] = {}
        self.asked = asked

    def __contains__(self, host: str) -> bool:
        return host in self._updates

    def __getitem__(self, host: str) -> list[str]:
        names = self._sorted.get(host)
        if names is None:
            self.asked.add(host)
            names = self._sorted[host] = sorted(v.iface.name for v in self._updates[host].interfaces)
        return names


def unmatched_keys(
    settings: Settings,
    updates: Iterable[HostUpdate],
    known: Callable[[str], bool] = lambda host: False,
    asked: set[str] | None = None,
) -> list[str]:
    """One line for each ``[speed]`` key and ``[[mute]]`` rule that is wrong, named with what
    exists: a watched host that has reported its interfaces and has none of that name ("speed:
    lab-a/eht0 matches no interface of lab-a (eth0, eth1, lo)"), or a host name nothing knows —
    not watched, not configured, not ``local``, and not one ``known`` knows (the ssh config).
    A key for a known host that is not watched right now is not a mistake. Beside the settings,
    ``known`` and the hosts (whether each has reported interfaces), the answer reads the
    interfaces' names of the hosts it adds to ``asked``, and of no other."""
    updates = list(updates)
    watched = list(dict.fromkeys(u.host for u in updates))
    hosts = list(dict.fromkeys(["local", *(h.name for h in settings.hosts), *watched]))
    ifaces = _Names(updates, set() if asked is None else asked)
    out = []
    for key in settings.speed_overrides:
        host, _, name = key.partition("/")
        if host not in hosts and not known(host):
            out.append(f"speed: {key} matches no host linkdeck or your ssh config knows (watched: {_listed(watched)})")
        elif host in ifaces and name not in ifaces[host]:
            out.append(f"speed: {key} matches no interface of {host} ({_listed(ifaces[host])})")
    for rule in settings.mute:
        mine = [h for h in hosts if rule.host is None or fnmatchcase(h, rule.host)]
        if not mine:
            if not (rule.host is not None and not _is_pattern(rule.host) and known(rule.host)):
                out.append(
                    f"mute: host = {rule.host!r} matches no host linkdeck or your ssh config knows "
                    f"(watched: {_listed(watched)})"
                )
            continue
        heard = [h for h in mine if h in ifaces]
        if rule.interface is None or not heard or any(fnmatchcase(n, rule.interface) for h in heard for n in ifaces[h]):
            continue
        where = heard[0] if len(heard) == 1 else f"{len(heard)} hosts"
        out.append(
            f"mute: interface = {rule.interface!r} matches no interface of {where} "
            f"({_listed(n for h in heard for n in ifaces[h])})"
        )
    return out


@dataclass(frozen=True, slots=True)
class View:
    """What one findings pass reads, copied from the Diagnoser's dicts at one moment: every
    value in them is immutable (windows and TCP windows are tuples, updates frozen), so
    observing may go on while a pass runs on another thread."""

    latest: dict[str, HostUpdate]
    states: dict[str, HostUpdate]
    windows: dict[str, HostWindows]  # a window may be left behind its host's last tick: see times
    tcp: dict[str, TcpKept]
    subnet_mtu: dict[str, SubnetMtu]
    paths: dict[Ends, MeasuredPath]
    now: float
    ended: dict[str, float | None]  # when linkdeck's own test traffic through each host ended
    # each host's tick times a window left as it was repeats its last tick at (window.History)
    times: dict[str, tuple[float, ...]]
    window_s: float


class Diagnoser:
    def __init__(
        self,
        settings: Settings,
        clock: Callable[[], float] = time.time,
        own_traffic: Callable[[str], float | None] = lambda host: None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        # When linkdeck's own test traffic through a host last ended (inf while a test runs):
        # its window then measures the test, not the host.
        self.own_traffic = own_traffic
        self._latest: dict[str, HostUpdate] = {}
        self._states: dict[str, HostUpdate] = {}  # each host's last update, with or without interfaces
        # Each host's interfaces' windows, in the order of its last observed update
        self._windows: dict[str, HostWindows] = {}
        # Each host's views its windows last saw: a view that is the same object again is
        # the same facts and rates, so its window is left as it was, to repeat its last tick
        # at each of the host's ticks since when it is next read (window.caught_up).
        self._seen: dict[str, tuple[InterfaceView, ...]] = {}
        self._times: dict[str, tuple[float, ...]] = {}  # each host's tick times a window may catch up on
        self._unrepeatable: dict[str, tuple[int, ...]] = {}  # where a host's windows are read every tick
        self._tcp: dict[str, TcpKept] = {}  # each host's TCP rates in the window
        self._last_time: dict[str, float] = {}
        self._since: dict[Key, float] = {}
        self._facts: dict[str, KeptFacts] = {}  # per host: see _host_facts
        self._static_key: list[tuple[StaticFacts, ...]] | None = None
        self._static_mtu: dict[str, SubnetMtu] = {}
        self._static_found: list[Finding] = []
        # Each live host's window rules' answers from the last pass, kept by _judged_host
        self._judged: dict[str, tuple[Any, ...]] = {}
        self._th: Thresholds | None = None
        self._th_values: tuple[Any, ...] = ()  # the fields of _th, as the last pass judged with them
        self.ports_judged = 0  # ports the window rules were run over, all passes together
        self.subnet_mtu: dict[str, SubnetMtu] = {}  # what linkdeck measured each subnet to carry
        self.paths: dict[Ends, MeasuredPath] = {}  # the last path MTU probe between each pair of ends

    def learn(self, found: SubnetMtu) -> None:
        """A subnet's probe (probe/subnet_mtu.py): the MTU rule reads it from the next pass on."""
        self.subnet_mtu = {**self.subnet_mtu, found.subnet: found}

    def measured(self, path: MeasuredPath) -> None:
        """A path MTU probe between two ends (every test's, ``u``, ``d``, a subnet's): it
        replaces the last one between them, unless nothing crossed (a probe that could not
        run says nothing about the path)."""
        if path.largest is not None:
            self.paths = {**self.paths, path.ends: path}

    def observe(self, update: HostUpdate) -> None:
        self._states[update.host] = update
        if update.interfaces or update.host not in self._latest:
            self._latest[update.host] = update
        if update.state != HostState.LIVE or update.time is None or not math.isfinite(update.time):
            return  # a state change re-sends the last sample's time: nothing new to count
        last_time = self._last_time.get(update.host)
        if last_time is not None and update.time <= last_time:
            if update.time < last_time:  # the host's clock went back: it rebooted
                self._windows.pop(update.host, None)
                self._times.pop(update.host, None)
                self._tcp.pop(update.host, None)
                self._last_time[update.host] = update.time
            return
        self._last_time[update.host] = update.time
        host, views, window_s, now = update.host, update.interfaces, self.settings.thresholds.window_s, update.time
        seen, before = self._seen.get(host, ()), self._times.get(host, ())
        self._seen[host] = views
        kept = self._windows.get(host)
        todo: Iterable[int] | None = None
        if kept is not None and len(seen) == len(views) == len(kept) - WINDOWS:
            # a view that is the one its window saw last tick (idle links keep theirs) has the
            # same rates and carrier: its window is left, its ticks added when it is read
            changed = () if views is seen else compress(count(), map(is_not, views, seen))
            todo = sorted({*changed, *self._unrepeatable.get(host, ())})
            names = kept[NAMES]
            if any(views[i].iface.name != names[i] for i in todo):
                todo = None  # links moved around: every view read
        windows: HostWindows
        if todo is None or kept is None:
            windows = self._observed(kept, now, views, before, window_s)
        elif todo:
            each: list[Any] = list(kept)
            for i in todo:
                each[WINDOWS + i] = observed(caught_up(each[WINDOWS + i], before, window_s), now, views[i], window_s)
            windows = tuple(each)
        else:
            windows = kept
        self._windows[host] = windows
        # those read every tick: a window following NIC drop counters (their times move on)
        read = range(len(views)) if todo is None else todo
        self._unrepeatable[host] = tuple(i for i in read if not repeatable(windows[WINDOWS + i]))
        # the ticks a window left as it was may have to catch up on: those in the window, and
        # the last one out of it (where the window's first interval begins)
        self._times[host] = (*before[max(bisect_right(before, now - window_s) - 1, 0) :], now)
        if update.tcp is not None:
            window = tcp.TcpWindow(*self._tcp.get(update.host, ())).added(update.time, update.tcp, window_s)
            self._tcp[update.host] = (window.ticks, window.start)  # TcpKept, a plain tuple: never the NamedTuple

    @staticmethod
    def _observed(
        kept: HostWindows | None,
        now: float,
        views: tuple[InterfaceView, ...],
        before: tuple[float, ...],
        window_s: float,
    ) -> HostWindows:
        """A host's windows with the tick of each of ``views`` added, each caught up to the
        host's ticks ``before`` first; an interface gone from the update takes its window with it."""
        names = tuple(map(_NAME, views))
        by_name = dict(zip(kept[NAMES], islice(kept, WINDOWS, None))) if kept is not None else {}
        if kept is not None and kept[NAMES] == names:
            names = kept[NAMES]  # the same names: keep the one tuple of them
        return (
            names,
            *(
                observed(caught_up(by_name.get(name, EMPTY), before, window_s), now, v, window_s)
                for name, v in zip(names, views)
            ),
        )

    def forget(self, host: str) -> None:
        """A host removed from the fleet takes its findings with it."""
        self._latest.pop(host, None)
        self._states.pop(host, None)
        self._windows.pop(host, None)
        self._times.pop(host, None)
        self._unrepeatable.pop(host, None)
        self._seen.pop(host, None)
        self._tcp.pop(host, None)
        self._last_time.pop(host, None)

    def _host_facts(self, update: HostUpdate) -> tuple[StaticFacts, ...]:
        """A host's static facts (``_static_facts`` of each interface), kept while its
        Interfaces stay the same objects: a source that rebuilds nothing that did not change
        (the Prometheus source keeps each Interface) costs no new facts per update, so the
        static rules' key compares 10,000 hosts by identity instead of 80,000 tuples by value.
        Kept per host as one flat tuple (KeptFacts): one object the collector tracks per host,
        not one per interface (a source that makes new Interfaces on each update has the last
        pass's kept alive until the next pass)."""
        cached = self._facts.get(update.host)
        views = update.interfaces
        if (
            cached is not None
            and cached[_OS] == update.os
            and cached[_REACHED_AT] == update.reached_at
            and len(cached) == _IFACES + len(views)
            and all(map(is_, islice(cached, _IFACES, None), map(_IFACE, views)))
        ):
            return cached[_FACTS]
        ifaces = tuple(map(_IFACE, views))
        facts = tuple(_static_facts(update, i) for i in ifaces)
        self._facts[update.host] = (update.os, update.reached_at, facts, *ifaces)
        return facts

    def view(self) -> View:
        """What a pass reads, now (on the thread that observes)."""
        return View(
            dict(self._latest),
            dict(self._states),
            dict(self._windows),
            dict(self._tcp),
            self.subnet_mtu,  # replaced whole by learn(), never changed in place
            self.paths,  # likewise by measured()
            self.clock(),
            {host: self.own_traffic(host) for host in self._windows},
            dict(self._times),
            self.settings.thresholds.window_s,
        )

    def _watched(self, view: View | None = None) -> list[tuple[Port, History]]:
        return [w for _, watched in self._watched_hosts(view or self.view()) for w in watched]

    @classmethod
    def _watched_hosts(cls, view: View) -> list[tuple[str, list[tuple[Port, History]]]]:
        """Each live host's interfaces with a window, as the window rules read them."""
        return [
            (host, _watched_ports(view, host, update, views, windows))
            for host, update, views, windows in cls._live(view)
        ]

    @staticmethod
    def _live(view: View) -> list[tuple[str, HostUpdate, Sequence[InterfaceView], Sequence[Window]]]:
        """Each live host with its interfaces that have a window, and those windows, in one order."""
        out = []
        for host, kept in view.windows.items():
            update = view.latest.get(host)
            if update is None or update.state != HostState.LIVE or stale_since(update, view.now) is not None:
                continue  # a host we cannot hear (or no longer hear) has no rates worth judging
            views: Sequence[InterfaceView] = update.interfaces
            windows: Sequence[Window] = kept[WINDOWS:]
            if tuple(map(_NAME, views)) != kept[NAMES]:  # its last update with interfaces was not observed
                by_name = dict(zip(kept[NAMES], windows))
                views = [v for v in views if v.iface.name in by_name]
                windows = [by_name[v.iface.name] for v in views]
            if views:
                out.append((host, update, views, windows))
        return out

    def _static(self, view: View) -> list[Finding]:
        """The speed and MTU rules: they compare every port with its subnet's, but read only
        facts that rarely change, so their last answer stands while those facts and the
        subnets' probes are the same (and the fleet's list of ports is not even made)."""
        key = [self._host_facts(u) for u in view.latest.values()]
        if key != self._static_key or view.subnet_mtu is not self._static_mtu:
            self._static_key, self._static_mtu = key, view.subnet_mtu
            ports = [p._replace(iface=static_view(p.iface)) for u in view.latest.values() for p in _ports(u)]
            self._static_found = [
                *speed.below_capability(ports),
                *speed.below_peers(ports),
                *speed.half_duplex(ports),
                *mtu.mtu_mismatch(ports, view.subnet_mtu),
                *mtu.two_ifaces_one_subnet(ports),
            ]
        return self._static_found

    def evaluate(self, view: View | None = None) -> list[Finding]:
        """Every rule once, unmuted, in no particular order."""
        view = view or self.view()
        self._facts = {h: c for h, c in self._facts.items() if h in view.latest}
        live = self._live(view)
        th = self.settings.thresholds
        # A test fills its hosts' links: their drops and their place among peers are the test's
        # doing until its traffic has left the window. Errors are not: a sound link at full
        # load counts none, so a test that brings them out has found something.
        calm_host = {host: (end := view.ended.get(host)) is None or view.now - end > th.window_s for host, *_ in live}
        held = self._since  # the last pass's findings: a rate finding stays until well below its threshold
        errors: list[Finding] = []
        drops: list[Finding] = []
        nic: list[Finding] = []
        flapping: list[Finding] = []
        busy: list[tuple[Port, History, float]] = []
        judged: dict[str, tuple[Any, ...]] = {}
        if th is not self._th:
            self._th, self._th_values = th, astuple(th)
        for host, update, views, windows in live:
            judged[host] = self._judged_host(
                view, host, update, views, windows, calm_host[host], held, (errors, drops, nic, flapping, busy)
            )
        self._judged = judged
        # Each host's TCP window beside its interfaces' (a test's retransmits and full buffers
        # are the test's doing, like its drops; a bad checksum is not, like an error).
        hosts = [
            (host, tcp.TcpWindow(*view.tcp[host]), _LazyPorts(view, host, update, views, windows))
            for host, update, views, windows in live
            if host in view.tcp
        ]
        calm_hosts = [h for h in hosts if calm_host[h[0]]]
        static = self._static(view)
        found = [
            *static,
            *errors,
            *drops,
            *nic,
            *flapping,
            *outlier.outliers(busy, th.outlier_ratio),
            *mtu.path_mtu_blackhole(view.states.values()),
            *_not_told(mtu.path_mtu_measured(view.paths.values(), view.latest), static),
            *tcp.retransmits(calm_hosts, th),
            *tcp.receiver_pruning(calm_hosts, th),
            *tcp.checksum_errors(hosts, th),
        ]
        return [f for f in found if not muted(f, self.settings.mute)]

    def _judged_host(
        self,
        view: View,
        host: str,
        update: HostUpdate,
        views: Sequence[InterfaceView],
        windows: Sequence[Window],
        calm: bool,
        held: Held,
        into: tuple[list[Finding], list[Finding], list[Finding], list[Finding], list[tuple[Port, History, float]]],
    ) -> tuple[Any, ...]:
        """The window rules over one host's ports, each port's findings added to ``into`` (by
        rule, in the ports' order), and what the host keeps for the next pass: what every port
        was judged with, then each port's window, Interface and answer (_Answer), flat.

        A port whose window and Interface are the objects its kept answer was given for, and
        whose answer the window gives at any later tick (History.lasting) and the last pass's
        findings it asked about are as they were, is not judged again: its answer is the one
        kept. A Port is its host, os, Interface and reached_at: with the calm, thresholds and
        window length, all that the rules read beside the window and ``held``."""
        errors, drops, nic, flapping, busy = into
        with_ = (update.os, update.reached_at, calm, *self._th_values, view.window_s)
        kept = self._judged.get(host)
        ifaces = tuple(map(_IFACE, views))
        todo: Iterable[int]
        if kept is None or kept[0] != with_ or len(kept) != 1 + 3 * len(views):
            kept, todo = None, range(len(views))
        else:  # a port whose window or Interface is another object, or whose answer is more than None
            changed = map(or_, map(is_not, kept[1::3], windows), map(is_not, kept[2::3], ifaces))
            todo = sorted({*compress(count(), changed), *compress(count(), map(is_not, kept[3::3], repeat(None)))})
        times = view.times.get(host, ())
        out: list[Any] | None = None if kept is not None else [with_]
        for n in todo:
            at, w, iface = 1 + 3 * n, windows[n], ifaces[n]
            answer = kept[at + 2] if kept is not None and kept[at] is w and kept[at + 1] is iface else _AGAIN
            if answer is not _AGAIN and answer is not None and not answer.holds(held):
                answer = _AGAIN
            if answer is None:
                continue  # nothing found, nothing busy, nothing asked: the common idle port
            if answer is _AGAIN:
                self.ports_judged += 1
                port, hist = Port(host, update.os, iface, update.reached_at), History(w, times, view.window_s)
                answer = _judged_port(port, hist, calm, self.settings.thresholds, held)
                if out is None:
                    out = list(kept or ())
                out[at : at + 3] = (w, iface, answer if hist.lasting else _AGAIN)
                if answer is None:
                    continue
                if answer.busy is not None:
                    busy.append((port, hist, answer.busy))
            elif answer.busy is not None:  # a kept busy port: its peers are compared afresh, with its window
                busy.append(
                    (Port(host, update.os, iface, update.reached_at), History(w, times, view.window_s), answer.busy)
                )
            errors += answer.errors
            drops += answer.drops
            nic += answer.nic
            flapping += answer.flapping
        if out is None:
            assert kept is not None  # out is made wherever nothing is kept
            return kept
        return tuple(out)

    def findings(self) -> list[Finding]:
        """Current findings, newest first (then most severe first)."""
        return self.judge(self.view())

    def judge(self, view: View) -> list[Finding]:
        """The findings of ``view``, newest first (then most severe first). Any thread, one
        pass at a time: only passes touch what this reads and writes beyond the view."""
        with gc_paused():  # 80,000 interfaces' worth of short-lived lists and tuples, no cycles
            found = self.evaluate(view)
        keys = {key_of(f) for f in found}
        # built whole, then swapped in: since() reads it from the event loop meanwhile
        since = {key: self._since.get(key, view.now) for key in keys}
        self._since = since
        return sorted(found, key=lambda f: (-since[key_of(f)], -f.severity.rank, f.code, f.host, f.interface or ""))

    def since(self, finding: Finding) -> float | None:
        """When this finding (code, host, interface) was first seen in its current stretch, on
        the Diagnoser's clock."""
        return self._since.get(key_of(finding))


class _Asked:
    """The last pass's findings as one port's rules ask them, each question and its answer
    kept: a port's answer stands for a later pass while each gets the same answer again."""

    __slots__ = ("held", "asked")

    def __init__(self, held: Held) -> None:
        self.held = held
        self.asked: list[tuple[Key, bool]] = []

    def __contains__(self, key: object) -> bool:
        answer = key in self.held
        self.asked.append((key, answer))  # type: ignore[arg-type]  # the rules ask by Key
        return answer


class _Answer(NamedTuple):
    """The window rules' answer for one port: what each found, its mean rate where it is busy
    enough for THROUGHPUT_OUTLIER to compare, and what it asked of the last pass's findings."""

    errors: tuple[Finding, ...]
    drops: tuple[Finding, ...]
    nic: tuple[Finding, ...]
    flapping: tuple[Finding, ...]
    busy: float | None
    asked: tuple[tuple[Key, bool], ...]

    def holds(self, held: Held) -> bool:
        return all((key in held) is answer for key, answer in self.asked)


_AGAIN: Final[Any] = object()  # a port to judge (again): no answer kept, or one a later tick may change


def _judged_port(port: Port, hist: History, calm: bool, th: Thresholds, held: Held) -> _Answer | None:
    """The window rules over one port, as evaluate runs them over all (the drops, NIC drops
    and outlier rules only where the host is calm); None when nothing was found, nothing is
    busy and nothing was asked."""
    asked = _Asked(held)
    one = ((port, hist),)
    errors = counters.errors_rising(one, th, asked)
    drops = counters.drops_rising(one, th, asked) if calm else []
    nic = counters.nic_drops(one, th, asked) if calm else []
    flapping = counters.link_flapping(one, th)
    busy = outlier.busy(one) if calm else []
    if not (errors or drops or nic or flapping or busy or asked.asked):
        return None
    return _Answer(
        tuple(errors), tuple(drops), tuple(nic), tuple(flapping), busy[0][2] if busy else None, tuple(asked.asked)
    )


def _watched_ports(
    view: View, host: str, update: HostUpdate, views: Sequence[InterfaceView], windows: Sequence[Window]
) -> list[tuple[Port, History]]:
    times = view.times.get(host, ())
    return [
        (Port(host, update.os, v.iface, update.reached_at), History(w, times, view.window_s))
        for v, w in zip(views, windows)
    ]


class _LazyPorts:
    """A host's ports and windows for the TCP rules, made only if a rule reads them (a host
    retransmitting names the interfaces that carried its traffic)."""

    __slots__ = ("_args", "_made")

    def __init__(
        self, view: View, host: str, update: HostUpdate, views: Sequence[InterfaceView], windows: Sequence[Window]
    ) -> None:
        self._args = (view, host, update, views, windows)
        self._made: list[tuple[Port, History]] | None = None

    def __iter__(self) -> Iterator[tuple[Port, History]]:
        if self._made is None:
            self._made = _watched_ports(*self._args)
        return iter(self._made)


def _not_told(paths: list[Finding], static: list[Finding]) -> list[Finding]:
    """PATH_MTU where a probed MTU_MISMATCH does not already say what the subnet carries on
    that interface (the subnet's probe is a path MTU probe too: one finding, not two)."""
    told = {(f.host, f.interface) for f in static if f.code == Code.MTU_MISMATCH and f.severity is Severity.ERROR}
    return [f for f in paths if (f.host, f.interface) not in told] if told else paths


async def findings_off_loop(diagnoser: Diagnoser) -> list[Finding]:
    """``diagnoser.findings()`` with the pass on a worker thread: at 10,000 hosts it would
    hold the event loop for half a second. The loop still gets the interpreter every few
    milliseconds (sys.getswitchinterval) while the pass runs."""
    view = diagnoser.view()
    return await asyncio.to_thread(diagnoser.judge, view)


def diagnose(
    updates: Iterable[HostUpdate],
    settings: Settings,
    now: float | None = None,
    probed: Iterable[SubnetMtu] = (),
    paths: Iterable[MeasuredPath] = (),
) -> list[Finding]:
    """Findings for one moment of the fleet (``linkdeck snapshot``; ``now`` for a moment of a
    recording): the rates of each host's last tick stand in for the window; ``probed``, what
    the subnets' MTU probes found; ``paths``, what path MTU probes between two ends found."""
    diagnoser = Diagnoser(settings, clock=time.time if now is None else lambda: now)
    for found in probed:
        diagnoser.learn(found)
    for path in paths:
        diagnoser.measured(path)
    for update in updates:
        diagnoser.observe(update)
    return diagnoser.findings()
