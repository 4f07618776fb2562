"""The Prometheus source: every ``interval`` one query for the whole fleet (two when the slow
facts are due), each ``instance`` that exports node_network_* turned into a HostUpdate.

Rates come from the same RateTracker as over SSH, fed with the counters and the time of the
scrape that read them, so counter resets, wraps and the findings' windows follow one set of
rules whatever the source. A target Prometheus cannot scrape (``up == 0``) is ``unreachable``
with Prometheus's own error; a Prometheus that fails makes its hosts unreachable with its
error; neither shows the last rates as live.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from typing import AbstractSet
from urllib.parse import urlsplit

from ..core.fleetstate import Turns, collect_full, collect_young, gc_paused
from ..core.model import HostDetail, HostSample, HostState, HostUpdate, Interface, InterfaceView, Rates
from ..core.rates import RateTracker, TcpTracker
from ..core.tcpstats import TcpCounters
from ..settings.config import Settings
from ..settings.prometheus_section import PrometheusConfig
from . import metrics
from .client import PromClient, PrometheusError

SLOW_EVERY = 10  # refreshes between reads of addresses, names and drivers
FULL_COLLECTION_EVERY = 10  # refreshes between full collections of the cyclic collector
PARALLEL = 2  # queries waiting on Prometheus at once
YIELD_EVERY = 200  # hosts turned into updates between two returns to the event loop


@dataclass(slots=True)
class _Host:
    instance: str
    name: str
    tracker: RateTracker = field(default_factory=RateTracker)
    tcp: TcpTracker = field(default_factory=TcpTracker)
    last: HostUpdate | None = None
    scrape_time: float | None = None
    scrape_interval: float | None = None  # seen between two scrapes
    samples_seen: int = 0
    # device → the Interface last built, and the facts it was built from (with ``built_slow``,
    # the slow facts object): most refreshes change no fact, and building 40,000 Interfaces was
    # a third of a refresh. Two dicts, not one of (facts, slow, Interface) tuples: the facts are
    # plain tuples the cyclic collector stops tracking, where such a tuple would stay tracked.
    built: dict[str, Interface] = field(default_factory=dict)
    built_facts: dict[str, tuple] = field(default_factory=dict)
    built_slow: metrics.SlowFacts | None = None


class PrometheusSource:
    def __init__(
        self, cfg: PrometheusConfig, settings: Settings, on_update, skip: AbstractSet[str] = frozenset(), adjust=None
    ) -> None:
        self.cfg = cfg
        self.adjust = adjust  # (host name, HostSample) → HostSample: the collector's [speed] overrides
        self.settings = settings
        self.on_update = on_update
        self.skip = set(skip)  # names (and addresses) watched over SSH: SSH wins
        self.hosts: dict[str, _Host] = {}  # by instance
        self.slow: dict[str, metrics.SlowFacts] = {}
        self.refreshes = 0
        self.error: str | None = None
        self.source_name = f"prometheus@{urlsplit(cfg.url).netloc}"
        self._source_shown = False
        self._client: PromClient | None = None
        self._parallel = asyncio.Semaphore(PARALLEL)
        self._turns = Turns()  # each answer's scan and fold, each step of updates, the full collection
        self._node_jobs: set[str | None] = set()  # jobs with a target that exports interfaces

    # -- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            while True:
                started = time.monotonic()
                await self.refresh()
                await asyncio.sleep(max(0.0, self.cfg.interval - (time.monotonic() - started)))
        finally:
            if self._client is not None:
                await self._client.close()

    def settled(self) -> bool:
        """For a snapshot: every host has rates or a final word, or Prometheus failed."""
        if self.refreshes == 0:
            return False
        if not self.hosts:
            return self.error is not None or self.refreshes >= 2
        return all(
            h.samples_seen >= 2 or (h.last is not None and h.last.state is not HostState.LIVE)
            for h in self.hosts.values()
        )

    def updates(self) -> list[HostUpdate]:
        out = [h.last for h in self.hosts.values() if h.last is not None]
        if self.error is not None and not self.hosts:
            out.append(HostUpdate(host=self.source_name, os=None, state=HostState.UNREACHABLE, error=self.error))
        return out

    async def refresh(self) -> None:
        try:
            if self._client is None:
                self._client = PromClient(self.cfg, self._turns)
            targets: dict[str, metrics.Target] = {}
            slow: dict[str, metrics.SlowFacts] = {}
            jobs = [
                self._read(q, labels, lambda rows, c=c: metrics.read_into(targets, rows, c))
                for c, q, labels in metrics.fast_queries(self.cfg.match)
            ]
            if self.refreshes % SLOW_EVERY == 0:
                jobs += [
                    self._read(
                        q, labels, lambda rows, m=m, labels=labels: metrics.read_slow_into(slow, rows, m, labels)
                    )
                    for m, q, labels in metrics.slow_queries(self.cfg.match)
                ]
            # The cyclic collector stays paused while the answers come in, their waits
            # included: each answer's rows die before it runs again, and the targets they fill
            # (at 10,000 hosts ~40,000 containers) live until the last update; each collection
            # meanwhile walked them, then filed them among the long-lived objects, where they
            # set off full collections of everything alive only to be freed a moment later.
            # They make no cycles.
            with gc_paused():
                done = await asyncio.gather(*jobs, return_exceptions=True)
                # not in the last fold's turn: this collection and _apply's look at every
                # target that comes with it are one more piece
                async with self._turns.turn():
                    collect_young(0)
            for outcome in done:
                if isinstance(outcome, BaseException):
                    raise outcome
            if slow:
                self.slow = slow
            self._node_jobs = {job for t in targets.values() if t.devices for job in t.jobs}
            down = [t.instance for t in targets.values() if t.up == 0 and self._is_node(t)]
            errors = await self._client.target_errors() if down else {}
        except PrometheusError as exc:
            self.refreshes += 1
            self._fail(str(exc))
            return
        self.refreshes += 1
        if self.error is not None and self._source_shown:
            self.on_update(HostUpdate(host=self.source_name, os=None, state=HostState.LIVE))
        self.error = None
        await self._apply(targets, errors)
        if self.refreshes % FULL_COLLECTION_EVERY == 0:
            # A refresh collects its young objects itself, so it never sets off one of the
            # collector's full collections on top of its own work: one comes here instead.
            async with self._turns.turn():
                collect_full()

    async def _read(self, expr: str, labels: tuple[str, ...], fold) -> None:
        """One query, folded as soon as it is read: a few requests wait on Prometheus at
        once, but only one read answer is in memory at a time."""
        client = self._client
        if client is None:  # closed while this refresh was under way
            return
        async with self._parallel:
            await client.query(expr, labels, fold)

    # -- turning answers into updates -----------------------------------------------------

    def _is_node(self, target: metrics.Target) -> bool:
        """A target counts as a host when it exports interfaces, did before it went down, is
        scraped by a job whose other targets export them (a node_exporter down since before
        linkdeck started), or matches the selector the user gave."""
        if target.devices or target.instance in self.hosts or self.cfg.match:
            return True
        return not target.jobs.isdisjoint(self._node_jobs)

    async def _apply(self, targets: dict[str, metrics.Target], errors: dict[str, str]) -> None:
        now = time.time()
        # Paused throughout, waits included; each step collects its own young objects
        # before the next (collect_young), so the collector never starts a collection, now
        # and then a full one, on top of a step.
        with gc_paused():
            names = self._names([t for t in targets.values() if self._is_node(t)])
            items = list(targets.items())
            for step, start in enumerate(range(0, len(items), YIELD_EVERY)):
                async with self._turns.turn():  # a dashboard beside 5,000 hosts stays responsive
                    for instance, target in items[start : start + YIELD_EVERY]:
                        self._apply_one(instance, target, names.get(instance), errors, now)
                    collect_young(step)
            for instance, host in self.hosts.items():
                if instance not in targets:
                    self._down(host, f"{instance} is no longer among Prometheus's targets")
            collect_young(0)

    def _apply_one(
        self, instance: str, target: metrics.Target, name: str | None, errors: dict[str, str], now: float
    ) -> None:
        if name is None:
            return
        host = self.hosts.get(instance)
        if host is None or host.name != name:
            host = self.hosts[instance] = _Host(instance, name)
        if target.up == 0:
            why = errors.get(instance, "the target is down")
            self._down(host, f"Prometheus cannot scrape {instance}: {why}")
        elif target.scrape_time is not None and target.devices:
            self._sample(host, target, now)

    def _names(self, targets: list[metrics.Target]) -> dict[str, str]:
        """instance → host name: the node's own name, or the instance label where the node
        name is missing or shared by several instances; SSH-watched names are left out."""
        wanted: dict[str, str] = {}
        for t in targets:
            slow = self.slow.get(t.instance)
            wanted[t.instance] = (slow.nodename if slow and slow.nodename else None) or t.instance
        counts: dict[str, int] = {}
        for name in wanted.values():
            counts[name] = counts.get(name, 0) + 1
        out = {}
        for instance, name in wanted.items():
            name = name if counts[name] == 1 else instance
            address = instance.rsplit(":", 1)[0].strip("[]")
            if name in self.skip or instance in self.skip or address in self.skip:
                continue
            out[instance] = name
        return out

    def _sample(self, host: _Host, target: metrics.Target, now: float) -> None:
        if len(target.counter_times) > 1:
            return  # a scrape landed between two of the refresh's queries: the next one is whole
        scraped = next(iter(target.counter_times), target.scrape_time)
        if scraped is None:
            return  # no scrape time came with its numbers: nothing to date a sample by
        age = now - scraped
        # A scrape is overdue (its numbers stale) after three of its intervals.
        limit = max(3 * (host.scrape_interval or self.cfg.interval), 2 * self.cfg.interval)
        if scraped == host.scrape_time:
            # No new scrape since the last refresh: nothing new to show, unless it is overdue.
            if age > limit and host.last is not None and host.last.state is HostState.LIVE:
                self._down(host, f"Prometheus's last scrape of {host.instance} was {age:.0f} s ago")
            return
        if host.scrape_time is not None and scraped > host.scrape_time:
            host.scrape_interval = scraped - host.scrape_time
        host.scrape_time = scraped
        slow = self.slow.get(target.instance)
        ifaces = target.ifaces()
        sample = HostSample(
            time=scraped,
            interfaces={d: self._interface(host, d, raw, slow) for d, raw in ifaces.items()},
            counters={d: metrics.counters(raw) for d, raw in ifaces.items()},
            tcp=TcpCounters(**target.tcp) if target.tcp else None,  # no netstat collector: unknown
        )
        views = host.tracker.update(self.adjust(host.name, sample) if self.adjust else sample)
        host.samples_seen += 1
        os_detail = slow.os_detail if slow else None
        host.last = HostUpdate(
            host=host.name,
            os=(os_detail or "linux").split()[0].lower(),
            state=HostState.LIVE,
            time=scraped,
            interfaces=views,
            os_detail=os_detail,
            detail=HostDetail(source="prometheus", instance=host.instance, sample_age_s=max(age, 0)),
            received=scraped,
            fresh_until=scraped + limit,
            tcp=host.tcp.update(scraped, sample.tcp),
        )
        self.on_update(host.last)

    @staticmethod
    def _interface(host: _Host, device: str, raw, slow) -> Interface:
        if slow is not host.built_slow:
            host.built.clear()
            host.built_facts.clear()
            host.built_slow = slow
        facts = (raw.mtu, raw.speed_bytes, raw.carrier_changes, raw.oper, raw.duplex)
        built = host.built.get(device)
        if built is None or host.built_facts[device] != facts:
            built = host.built[device] = metrics.interface(device, raw, slow)
            host.built_facts[device] = facts
        return built

    def _down(self, host: _Host, error: str) -> None:
        """Unreachable, with the facts kept and every rate unknown: nothing stale looks live."""
        last = host.last or HostUpdate(host=host.name, os=None, state=HostState.UNREACHABLE)
        if last.state is HostState.UNREACHABLE and last.error == error:
            return
        views = tuple(InterfaceView(iface=v.iface, rates=Rates(), totals=v.totals) for v in last.interfaces)
        host.last = replace(last, state=HostState.UNREACHABLE, error=error, interfaces=views)
        host.tracker.reset()
        host.tcp = TcpTracker()
        host.scrape_time = None
        self.on_update(host.last)

    def _fail(self, error: str) -> None:
        self.error = error
        if not self.hosts:
            self._source_shown = True
            self.on_update(HostUpdate(host=self.source_name, os=None, state=HostState.UNREACHABLE, error=error))
        for host in self.hosts.values():
            self._down(host, error)
