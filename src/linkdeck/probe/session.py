"""Hosts for tests: connections to run iperf3 through (``EndPool``), the session that plans and
runs each pair (``TestSession``), and for the headless commands a fleet of collectors that
watches the hosts while tests run (``Watch``).

The dashboard already has a fleet and owns one ``TestSession`` for its life; the headless
commands make a ``Watch`` and a session per run.
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import os
import time
from collections import deque
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..core.freshness import stale_since
from ..core.model import Cause, EndState, Finding, HostState, HostUpdate, MeasuredPath, PathMtu, SubnetMtu, TestResult
from ..findings.engine import diagnose
from ..findings.mtu import path_mtu_cause
from ..fleet.collector import Fleet, Opener, open_adapter
from ..flows.own_tests import RunningTest, announce, announced, client_addresses, withdraw
from ..platforms.adapter import Adapter
from ..recording.recorder import Recorder
from ..settings.config import HostSpec, Settings
from ..transport.runner import bounded
from ..verdict.rules import judge
from .failures import ProbeError
from .iperf import End
from .lingering import until_gone
from .watched import Outcome, iface_holding, plan_pair, probe_pair, run_watched, view_of

CONNECT_GRACE_S = 20.0
_GIVEN_UP = (HostState.AUTH_FAILED, HostState.HOST_KEY_UNKNOWN, HostState.HOST_KEY_CHANGED, HostState.UNREACHABLE)


class EndPool:
    """One connection per host for running iperf3, opened on first use and kept, so a second
    test from the same host starts without an SSH handshake."""

    def __init__(self, settings: Settings, opener: Opener = open_adapter) -> None:
        self.settings = settings
        self.opener = opener
        self._adapters: dict[str, Adapter] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, spec: HostSpec) -> End:
        lock = self._locks.setdefault(spec.name, asyncio.Lock())
        async with lock:
            adapter = self._adapters.get(spec.name)
            runner = getattr(adapter, "runner", None)
            if adapter is not None and getattr(runner, "is_active", True) is False:
                await self._drop(spec.name)
                adapter = None
            if adapter is None:
                try:
                    adapter = await self.opener(spec, self.settings)
                except ProbeError:
                    raise
                except Exception as exc:  # TransportError, UnsupportedOS, auth: all say why
                    raise ProbeError(f"cannot open {spec.name}: {exc}") from None
                self._adapters[spec.name] = adapter
                await adapter.release_stream()  # a test's end runs commands; it never samples
            return End(spec.name, adapter.runner, adapter.os, adapter)

    def opened(self) -> list[Adapter]:
        """The connections open now."""
        return list(self._adapters.values())

    async def pair(self, src: HostSpec, dst: HostSpec) -> tuple[End, End]:
        """Both ends of a test, their connections opened at once: a first test waits for one
        SSH handshake, not two. Raises the first end's ProbeError."""
        first, second = await asyncio.gather(self.get(src), self.get(dst), return_exceptions=True)
        if isinstance(first, BaseException):
            raise first
        if isinstance(second, BaseException):
            raise second
        return first, second

    async def _drop(self, name: str) -> None:
        adapter = self._adapters.pop(name, None)
        if adapter is not None:
            try:
                await adapter.close()
            except Exception:
                pass

    async def close(self) -> None:
        for name in list(self._adapters):
            await self._drop(name)


class TestSession:
    """What a run of tests shares: one connection per host (``EndPool``), the hosts' latest
    updates and findings, and each interface's last outcome. ``run_pair`` is the one place a
    pair is planned and run; ``close`` closes every connection."""

    __test__ = False

    def __init__(
        self,
        specs: dict[str, HostSpec],
        settings: Settings,
        latest: Callable[[str], HostUpdate | None],
        findings_for: Callable[[str, str], tuple[Finding, ...]],
        opener: Opener = open_adapter,
        failed: Callable[[str], str | None] = lambda host: None,
    ) -> None:
        self.specs, self.settings, self.latest = specs, settings, latest
        self.findings_for, self.failed = findings_for, failed
        self.pool = EndPool(settings, opener)
        self.last: dict[tuple[str, str], Outcome] = {}  # (host, interface) → its last test
        self._running: dict[str, int] = {}  # tests under way through each host
        self._ended: dict[str, float] = {}  # when the last one through it ended (wall clock)
        # told of every outcome, and whether it is a matrix cell (the dashboard's recording)
        self.on_outcome: Callable[[Outcome, bool], None] | None = None
        # told when a test's traffic through a host has ended: its sockets gone (a recording
        # keeps it, so a replay judges the host's drops as the live session did)
        self.on_own_ended: Callable[[str, float], None] | None = None
        # told of every path MTU probe between two hosts (a test's, ``u``'s, a subnet's): what
        # it proved becomes a finding (the Diagnoser's ``measured``)
        self.on_path: Callable[[MeasuredPath], None] | None = None
        self._lingering: set[asyncio.Task] = set()
        # one test through a host at a time: two at once would measure each other
        self._through: dict[str, asyncio.Lock] = {}
        # the tests running now, each once its server listens (the flows view sets their flows apart)
        self._tests: dict[object, RunningTest] = {}

    async def warm(self, names: list[str]) -> None:
        """Open these hosts' connections ahead of a test (failures are the test's to report)."""
        await asyncio.gather(*(self.pool.get(self.specs[n]) for n in names if n in self.specs), return_exceptions=True)

    def running_tests(self) -> tuple[RunningTest, ...]:
        """The iperf3 tests linkdeck runs now, each with the port its server listens on: this
        session's, and those other linkdeck processes of this user announce."""
        return (*self._tests.values(), *announced(but_pid=os.getpid()))

    def own_traffic(self, host: str) -> float | None:
        """When a test through ``host`` last ended: inf while one runs or its sockets are still
        there (probe/lingering.py), None if none has."""
        return math.inf if self._running.get(host) else self._ended.get(host)

    async def run_pair(
        self, src: str, dst: str, address: str | None = None, src_iface: str | None = None,
        duration: float | None = None, on_phase=None, in_matrix: bool = False, streams: int | None = None, on_live=None,
    ) -> Outcome:  # fmt: skip
        hosts = {src, dst}
        for host in hosts:
            self._running[host] = self._running.get(host, 0) + 1
        outcome = None
        try:
            async with self._one_at_a_time(hosts, on_phase):
                outcome = await self._run_pair(src, dst, address, src_iface, duration, on_phase, streams, on_live)
            if src != dst:
                self._tell_path(outcome.result.path_mtu, outcome.src, outcome.dst, outcome.result.address)
            if self.on_outcome is not None:  # before any "own traffic ended" (a recording's order)
                self.on_outcome(outcome, in_matrix)
        finally:
            for host in hosts:
                if outcome is not None and outcome.result.address and src != dst:
                    task = asyncio.create_task(self._linger(host, outcome.result.address))
                    self._lingering.add(task)
                    task.add_done_callback(self._lingering.discard)
                else:
                    self._own_ended(host, time.time())
        return outcome

    @asynccontextmanager
    async def _one_at_a_time(self, hosts: set[str], on_phase=None):
        """Hold every host's test lock (in name order: two tests never wait on each other),
        saying so while another test through one of them runs."""
        async with AsyncExitStack() as stack:
            for host in sorted(hosts):
                lock = self._through.setdefault(host, asyncio.Lock())
                if lock.locked() and on_phase is not None:
                    on_phase(f"waiting for the test through {host} to end")
                await stack.enter_async_context(lock)
            yield

    async def _linger(self, host: str, address: str) -> None:
        """The test's own traffic through ``host`` lasts until its sockets are gone there."""
        when = time.time()
        try:
            end = await self.pool.get(self.specs[host])
            when = await until_gone(end, address, self.settings.test_port)
        except (ProbeError, KeyError):
            when = time.time()
        finally:
            self._own_ended(host, when)

    def _own_ended(self, host: str, when: float) -> None:
        self._running[host] -= 1
        self._ended[host] = max(when, self._ended.get(host, when))
        if self.on_own_ended is not None and not self._running[host]:
            self.on_own_ended(host, when)

    async def _run_pair(
        self, src: str, dst: str, address: str | None = None, src_iface: str | None = None,
        duration: float | None = None, on_phase=None, streams: int | None = None, on_live=None,
    ) -> Outcome:  # fmt: skip
        duration = self.settings.test_duration if duration is None else duration
        streams = self.settings.test_streams if streams is None else streams
        for name in (src, dst):
            why = self.failed(name)
            if why:
                return failed_outcome(src, dst, address or "", duration, why)
        token = object()
        told: dict[object, Path | None] = {}
        try:
            src_iface = from_iface(self.latest(src), src, src_iface)
            addr, src_if = plan_pair(src, dst, self.latest, address, src_iface)
            src_end, dst_end = await self.pool.pair(self.specs[src], self.specs[dst])

            def listening(port: int) -> None:
                test = RunningTest(src, dst, addr, port, client_addresses(self.latest(src)))
                self._tests[token] = test
                withdraw(told.pop(token, None))  # a forward then reverse run: its second server
                told[token] = announce(test)

            outcome = await run_watched(
                src_end, dst_end, addr, duration, self.latest, port=self.settings.test_port, src_iface=src_if,
                findings_for=self.findings_for, on_phase=on_phase, streams=streams, on_live=on_live,
                bind=src_iface is not None, bind_server=address is not None, on_port=listening,
            )  # fmt: skip
        except ProbeError as exc:
            return failed_outcome(src, dst, address or "", duration, str(exc))
        except Exception as exc:  # noqa: BLE001 - a host's answer linkdeck did not foresee
            # is this test's error, one line, never the caller's crash (the dashboard, a matrix)
            return failed_outcome(src, dst, address or "", duration, unforeseen(exc))
        finally:
            self._tests.pop(token, None)
            withdraw(told.pop(token, None))
        for host, ifname in {(outcome.result.src, outcome.src_iface), (outcome.result.dst, outcome.dst_iface)}:
            if ifname:
                self.last[(host, ifname)] = outcome
        return outcome

    def rejudged(self, before: Outcome, after: Outcome) -> None:
        """A test judged again beside others (every address of a host): the interfaces whose
        last test it was show the new verdict."""
        for key, last in self.last.items():
            if last is before:
                self.last[key] = after

    async def path_mtu(
        self, src: str, dst: str, address: str | None = None, src_iface: str | None = None
    ) -> "MtuOutcome":
        """The path MTU probe alone (``linkdeck mtu``, the dashboard's ``u``, a subnet's MTU
        probe): linkdeck's own traffic through both hosts while it runs."""
        with self._own({src, dst}):
            outcome = await self._path_mtu(src, dst, address, src_iface)
        self._tell_path(outcome.path, outcome.src_end, outcome.dst_end, outcome.address)
        return outcome

    def _tell_path(self, path: PathMtu | None, src: EndState, dst: EndState, address: str) -> None:
        if path is not None and self.on_path is not None:
            self.on_path(measured_path(path, src, dst, address, time.time()))

    @contextmanager
    def _own(self, hosts: set[str]):
        for host in hosts:
            self._running[host] = self._running.get(host, 0) + 1
        try:
            yield
        finally:
            ended = time.time()
            for host in hosts:
                self._running[host] -= 1
                self._ended[host] = ended

    async def _path_mtu(self, src: str, dst: str, address: str | None, src_iface: str | None) -> "MtuOutcome":
        for name in (src, dst):
            why = self.failed(name)
            if why:
                return MtuOutcome(src, dst, address or "", None, EndState(src), EndState(dst), why)
        try:
            addr, src_if = plan_pair(src, dst, self.latest, address, from_iface(self.latest(src), src, src_iface))
            dst_if = iface_holding(self.latest(dst), addr)
            ends = await self.pool.pair(self.specs[src], self.specs[dst])
            path = await probe_pair(*ends, addr, self.latest, src_if, dst_if)
        except ProbeError as exc:
            return MtuOutcome(src, dst, address or "", None, EndState(src), EndState(dst), str(exc))
        except Exception as exc:  # noqa: BLE001 - as in _run_pair: this probe's error, never the caller's crash
            return MtuOutcome(src, dst, address or "", None, EndState(src), EndState(dst), unforeseen(exc))
        src_view, dst_view = view_of(self.latest(src), src_if), view_of(self.latest(dst), dst_if)
        return MtuOutcome(
            src,
            dst,
            addr,
            path,
            EndState(src, src_view.iface if src_view else None),
            EndState(dst, dst_view.iface if dst_view else None),
        )

    async def close(self) -> None:
        for task in list(self._lingering):
            task.cancel()
        await asyncio.gather(*self._lingering, return_exceptions=True)
        await self.pool.close()


@dataclass(frozen=True, slots=True)
class MtuOutcome:
    """What ``TestSession.path_mtu`` found: the path each way (None when it could not run,
    ``error`` then says why) between the ends' interfaces, and PATH_MTU when it applies."""

    src: str
    dst: str
    address: str
    path: PathMtu | None
    src_end: EndState
    dst_end: EndState
    error: str | None = None

    @property
    def cause(self) -> Cause | None:
        return path_mtu_cause(self.path, self.src_end, self.dst_end)


class Watch:
    """A fleet over the test's hosts that keeps each host's latest update (and every update's
    local arrival time, for the benchmark's gap figure)."""

    def __init__(self, specs: list[HostSpec], settings: Settings, opener: Opener = open_adapter) -> None:
        self.settings = settings
        self.updates: dict[str, HostUpdate] = {}
        self.probed: list[SubnetMtu] = []  # what the subnets' MTU probes found (learn)
        self.paths: list[MeasuredPath] = []  # what path MTU probes between two ends found (measured)
        # update times per host, for the benchmark's gap figure; bounded for long runs
        self.arrivals: dict[str, deque[float]] = {s.name: deque(maxlen=3600) for s in specs}
        self._live = asyncio.Event()
        self.clock: Callable[[], float] = time.time  # the wall clock samples' ``received`` is on
        self.fleet = Fleet(list({s.name: s for s in specs}.values()), settings, self._on_update, opener)

    def _on_update(self, update: HostUpdate) -> None:
        self.updates[update.host] = update
        if update.state == HostState.LIVE:
            self.arrivals.setdefault(update.host, deque(maxlen=3600)).append(asyncio.get_running_loop().time())
        if all(self._settled(n) for n in self.fleet.collectors):
            self._live.set()

    def _settled(self, name: str) -> bool:
        # ERROR (one unreadable frame) and RECONNECTING may still turn into samples: wait. A
        # black hole (the sampler's request vanished) will not heal by itself.
        c = self.fleet.collectors[name]
        return c.samples_seen >= 1 or c.last.state in _GIVEN_UP or c.last.detail.blackhole_request_bytes is not None

    def latest(self, host: str) -> HostUpdate | None:
        return self.updates.get(host)

    async def start(self, grace_s: float = CONNECT_GRACE_S) -> None:
        """Start the collectors; return once every host sent a sample or failed."""
        self.fleet.start()
        try:
            await bounded(self._live.wait(), grace_s)
        except asyncio.TimeoutError:
            pass

    def failed(self, host: str) -> str | None:
        """Why a host has no live sample (its state and error, or how old its last one is once
        its frames stopped), or None when it is live."""
        c = self.fleet.collectors[host]
        u = c.last
        if c.samples_seen:
            now = self.clock()
            since = stale_since(u, now)
            if since is None:
                return None
            # as the dashboard's AppWatch: old numbers are not a live end to test from
            word = "stale" if u.state is HostState.LIVE else u.state.value  # present.outcome.state_word's
            why = f"{host}: {word}" + (f": {u.error}" if u.error else "")
            return why + f"; its last sample is {max(0.0, now - since):.0f} s old"
        return f"{host}: {u.state.value}" + (f": {u.error}" if u.error else "")

    def learn(self, found: SubnetMtu) -> None:
        """A subnet's MTU probe: the MTU rule reads it from the next ``findings`` on."""
        self.probed.append(found)

    def measured(self, path: MeasuredPath) -> None:
        """A path MTU probe between two hosts (the session's ``on_path``): PATH_MTU reads it."""
        self.paths.append(path)

    def findings(self) -> list[Finding]:
        """Every watched host's findings now."""
        return diagnose(list(self.updates.values()), self.settings, probed=self.probed, paths=self.paths)

    def findings_for(self, host: str, ifname: str) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings() if f.host == host and f.interface in (ifname, None))

    async def stop(self) -> None:
        await self.fleet.stop()


def from_iface(update: HostUpdate | None, host: str, chosen: str | None) -> str | None:
    """The interface ``--from IF|ADDR`` means on ``host``: an address is the interface that
    holds it; ProbeError when the host has no such address."""
    if chosen is None:
        return None
    try:
        ipaddress.ip_address(chosen.split("%", 1)[0])
    except ValueError:
        return chosen
    held = iface_holding(update, chosen)
    if held is None:
        raise ProbeError(
            f"{host} has no address {chosen}: give one of its own addresses or an interface name to --from"
        )
    return held


def measured_path(path: PathMtu, src: EndState, dst: EndState, address: str, at: float) -> MeasuredPath:
    """A probe's answer with both ends' interfaces and their MTUs (the one each search went up
    to where the end's interface is not known), as the Diagnoser keeps it."""
    s_if, d_if = src.iface, dst.iface
    return MeasuredPath(
        src.host, s_if.name if s_if else None, (s_if.mtu if s_if else None) or path.forward_mtu,
        dst.host, d_if.name if d_if else None, (d_if.mtu if d_if else None) or path.reverse_mtu,
        address, path, at,
    )  # fmt: skip


def unforeseen(exc: Exception) -> str:
    """An error no check foresaw (a host's answer read wrong, a bug), as a test's one line."""
    return f"unreadable answer ({type(exc).__name__}: {str(exc)[:120]})"


def failed_outcome(src: str, dst: str, address: str, duration: float, message: str) -> Outcome:
    """An Outcome for a test that could not start (host down, no shared subnet …)."""
    result = TestResult(src=src, dst=dst, address=address, duration_s=float(duration), error=message)
    ends = EndState(host=src), EndState(host=dst)
    return Outcome(result, ends[0], ends[1], judge(result, *ends))


@asynccontextmanager
async def watching(specs: dict[str, HostSpec], settings: Settings, names: list[str], opener: Opener = open_adapter):
    """The headless commands' watch over ``names`` and a test session on it, both closed on
    the way out: ``async with watching(...) as (watch, session)``."""
    watch = Watch([specs[n] for n in names], settings, opener)
    session = TestSession(specs, settings, watch.latest, watch.findings_for, opener, failed=watch.failed)
    session.on_path = watch.measured
    await watch.start()
    try:
        yield watch, session
    finally:
        await session.close()
        await watch.stop()


@contextmanager
def recorded(watch: Watch, session: TestSession, path: str | None):
    """With ``path``, the watched hosts go to that new recording while the body runs, and
    each test's outcome handed to the yielded ``keep(outcome, matrix)`` with the findings then
    (``keep`` does nothing without a path)."""
    if path is None:
        yield lambda outcome, matrix=False: None
        return

    recorder = Recorder.for_fleet(path, watch.fleet)
    watch.fleet.record(recorder)
    session.on_own_ended = recorder.own_ended

    def keep(outcome: Outcome, matrix: bool = False) -> None:
        recorder.test(outcome, matrix=matrix)
        recorder.findings(watch.findings())

    try:
        yield keep
    finally:
        session.on_own_ended = None
        watch.fleet.record(None)
        recorder.close()


async def run_pairs(
    specs: dict[str, HostSpec],
    settings: Settings,
    pairs: list[tuple[str, str]],
    duration: float,
    *,
    address: str | None = None,
    on_done=None,
    opener: Opener = open_adapter,
    mtu_only: bool = False,
    record_to: str | None = None,
    matrix: bool = False,
    on_live=None,
    src_iface: str | None = None,
):
    """The headless commands' loop: watch every host named in ``pairs``, run each pair's test
    in turn (a host with itself is its loopback ceiling), return the outcomes in order.
    ``mtu_only``: the path MTU probe alone (MtuOutcomes). With ``record_to``, the hosts and
    every test's outcome are recorded to that new file. ``on_live(src, dst, kind, data)`` sees
    each test's seconds as they arrive (probe.iperf.Live). ``src_iface``: every test's sender
    sends from that interface or address (``--from``)."""
    names = list(dict.fromkeys(n for pair in pairs for n in pair))
    outcomes = []
    async with watching(specs, settings, names, opener) as (watch, session):
        with recorded(watch, session, record_to) as keep:
            for src, dst in pairs:
                if mtu_only:
                    outcome = await session.path_mtu(src, dst, address, src_iface)
                else:
                    live = (lambda kind, data, s=src, d=dst: on_live(s, d, kind, data)) if on_live else None
                    outcome = await session.run_pair(src, dst, address, src_iface, duration=duration, on_live=live)
                    keep(outcome, matrix)
                outcomes.append(outcome)
                if on_done is not None:
                    on_done(src, dst, outcome)
    return outcomes, watch
