"""One loop per host: open its adapter, turn samples into rates, report HostUpdates.

The loop reports only through the ``on_update`` callback (the UI wraps it into a message,
the headless commands into a list), reconnects with capped exponential backoff on transport
failures, and never retries authentication or host-key failures on its own.
"""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import replace
from typing import Awaitable, Callable, Protocol

from ..core.fleetstate import pin_malloc_thresholds
from ..core.freshness import fresh_until
from ..core.model import NO_DETAIL, HostDetail, HostSample, HostState, HostUpdate, Interface, InterfaceView, replaced
from ..core.rates import RateTracker, TcpTracker
from ..platforms.adapter import Adapter, NotSamplerOutput, SampleError
from ..settings.config import ConfigError, HostSpec, Settings
from ..transport.runner import AuthFailed, HostKeyChanged, HostKeyUnknown, RequestUnanswered, TransportError

UpdateSink = Callable[[HostUpdate], None]


class Opener(Protocol):
    """Opens a host's adapter (open_adapter). ``small_requests``: the path to the host dropped
    a large request (a black hole), so the opener sends nothing large."""

    def __call__(self, spec: HostSpec, settings: Settings, *, small_requests: bool = False) -> Awaitable[Adapter]: ...


class Tap(Protocol):
    """Where a recording (recording/recorder.py) hears a host: its connections, every raw read
    before it is parsed, every update."""

    def opened(self, host: str, adapter: Adapter) -> None: ...

    def read(self, host: str, read: dict, prime: bool = False) -> None: ...

    def update(self, update: HostUpdate) -> None: ...


BACKOFF_FIRST = 1.0
BACKOFF_CAP = 60.0


async def open_adapter(spec: HostSpec, settings: Settings, *, small_requests: bool = False) -> Adapter:
    """The adapter for a host: this machine's own (platforms.detect.open_local), or the one
    OS detection over SSH picks."""
    from ..platforms.detect import open_local, open_remote

    return await (open_local(settings) if spec.local else open_remote(spec, settings, small_requests))


class HostCollector:
    def __init__(
        self, spec: HostSpec, settings: Settings, on_update: UpdateSink, opener: Opener = open_adapter
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.on_update = on_update
        self.opener = opener
        self.last: HostUpdate = HostUpdate(host=spec.name, os=None, state=HostState.CONNECTING)
        self.samples_seen = 0
        self.adapter: Adapter | None = None  # while connected
        self.stream: Stream | None = None
        self.tap: Tap | None = None  # while recording
        self.transport = NO_DETAIL if spec.local else transport_detail(settings)
        self.last = replace(self.last, detail=self.transport)

    def _emit(self, **changes) -> None:
        if "detail" in changes:
            changes["detail"] = self._with_transport(changes["detail"])
        self.last = replaced(self.last, changes)
        if self.tap is not None:
            self.tap.update(self.last)
        self.on_update(self.last)

    def _with_transport(self, detail: HostDetail) -> HostDetail:
        said = self.transport
        if said.transport is None or (detail.transport, detail.transport_why) == (said.transport, said.transport_why):
            return detail
        return replace(detail, transport=said.transport, transport_why=said.transport_why)

    def _read(self, read: dict) -> None:
        if self.tap is not None:
            self.tap.read(self.spec.name, read)

    def record(self, tap: Tap | None) -> None:
        """Start (or with None stop) telling ``tap`` everything; a host already connected
        tells its connection and its last slow facts first."""
        self.tap = tap
        if tap is not None and self.adapter is not None:
            tap.opened(self.spec.name, self.adapter)
            primer = self.adapter.primer()
            if primer is not None:
                stream = self.stream.state() if self.stream is not None else None
                tap.read(self.spec.name, {**primer, "stream": stream}, prime=True)
        if tap is not None:
            tap.update(self.last)

    async def run(self) -> None:  # noqa: C901, PLR0912 - the host's one loop: connect, read, back off
        backoff = BACKOFF_FIRST
        first = True
        while True:
            if not first:  # trying now: the last failure's "next try" is over
                self._emit(
                    state=HostState.RECONNECTING, detail=replace(self.last.detail, retry_in_s=None, retry_at=None)
                )
            first = False
            adapter: Adapter | None = None
            # A black hole stays the likely story until a sample gets through; meanwhile nothing
            # large is sent (the sampler goes in pieces).
            blackhole = self.last.detail.blackhole_request_bytes
            try:
                adapter = self.adapter = await self.opener(
                    self.spec, self.settings, small_requests=blackhole is not None
                )
                adapter.on_read = self._read
                if self.tap is not None:
                    self.tap.opened(self.spec.name, adapter)
                kept = self._with_transport(HostDetail(blackhole_request_bytes=blackhole))
                self._emit(
                    os=adapter.os, os_detail=adapter.os_detail, reached_at=adapter.reached_at, error=None, detail=kept
                )
                stream = self.stream = Stream()
                async for item in adapter.samples(self.settings.interval):
                    if isinstance(item, HostSample):
                        self.samples_seen += 1
                        backoff = BACKOFF_FIRST
                    self._emit(**sample_changes(item, stream, self.spec.name, self.settings, time.time(), kept))
                raise TransportError(adapter.heard.ended())
            except asyncio.CancelledError:
                raise
            except TransportError as exc:
                if not exc.retryable:
                    self._emit(**_final_state(exc))
                    return
                detail = _retry(backoff)
                if isinstance(exc, NotSamplerOutput):
                    # Logged in, and something else answers: not unreachable, not a lost path.
                    self._emit(state=HostState.ERROR, error=str(exc), detail=detail)
                elif isinstance(exc, RequestUnanswered):
                    # Connected and logged in: not unreachable. Findings raise PATH_MTU_BLACKHOLE.
                    self._emit(
                        state=HostState.ERROR, error=str(exc), detail=replace(detail, blackhole_request_bytes=exc.size)
                    )
                else:
                    self._emit(
                        state=HostState.UNREACHABLE if self.samples_seen == 0 else HostState.RECONNECTING,
                        error=str(exc),
                        detail=detail,
                    )
            except ConfigError as exc:  # the user's ssh or linkdeck config: retrying cannot help
                self._emit(state=HostState.ERROR, error=str(exc), detail=NO_DETAIL)
                return
            except Exception as exc:  # a bug or an OS surprise: report it, keep the UI alive
                self._emit(state=HostState.ERROR, error=f"{type(exc).__name__}: {exc}", detail=_retry(backoff))
            finally:
                self.adapter = None
                if adapter is not None:
                    try:
                        await adapter.close()
                    except Exception:
                        pass
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_CAP)


def _retry(backoff: float) -> HostDetail:
    """A host waiting ``backoff`` seconds to try again, in the whole seconds its JSON form keeps."""
    return HostDetail(retry_in_s=float(round(backoff)), retry_at=float(round(time.time() + backoff)))


def transport_detail(settings: Settings) -> HostDetail:
    """HostUpdate.detail's words on how an SSH host is reached: ``transport`` (openssh or
    paramiko) and ``transport_why``."""
    from ..transport.choice import choose

    try:
        choice = choose(settings)
    except ConfigError:
        return NO_DETAIL  # said when the host connects: its state is that error
    return HostDetail(transport=choice.name, transport_why=choice.why)


class Stream:
    """What one connection's samples are judged against: the last counters (rates) and the
    sampler's last reported CPU (its cost per sample)."""

    def __init__(self) -> None:
        self.tracker = RateTracker()
        self.tcp = TcpTracker()
        self._cpu: float | None = None
        self._since = 0
        self.cpu_ms: float | None = None

    def state(self) -> dict:
        """What a recording started mid-stream needs to go on where live is (JSON)."""
        return {"cpu": self._cpu, "since": self._since, "cpu_ms": self.cpu_ms}

    def restore(self, state: object) -> None:
        if isinstance(state, dict):
            self._cpu, self._since, self.cpu_ms = state.get("cpu"), int(state.get("since") or 0), state.get("cpu_ms")

    def sampler_cost(self, cpu_s: float | None) -> float | None:
        self._since += 1
        if cpu_s is not None:
            if self._cpu is not None and cpu_s >= self._cpu:
                self.cpu_ms = (cpu_s - self._cpu) * 1000 / self._since
            self._cpu, self._since = cpu_s, 0
        return self.cpu_ms


def sample_changes(
    item: HostSample | SampleError,
    stream: Stream,
    host: str,
    settings: Settings,
    received: float,
    detail: HostDetail = NO_DETAIL,
) -> dict:
    """What one sample (or unreadable frame) received at ``received`` (wall clock) changes in
    its host's update, live or replayed; ``detail`` is what the host's state keeps saying."""
    if isinstance(item, SampleError):
        return {"state": HostState.ERROR, "error": item.message}
    views = stream.tracker.update(override_speeds(item, host, settings.speed_overrides))
    said = replace(detail, missing=tuple(item.missing)) if item.missing else detail
    return {
        "state": HostState.LIVE, "error": None, "time": item.time, "interfaces": views, "detail": said,
        "received": received, "fresh_until": fresh_until(received, settings.interval),
        "wire_bytes": item.wire_bytes, "remote_cpu_ms": stream.sampler_cost(item.sampler_cpu_s),
        "tcp": stream.tcp.update(item.time, item.tcp),
    }  # fmt: skip


def override_speeds(sample: HostSample, host: str, overrides: dict[str, int]) -> HostSample:
    """The ``[speed]`` section's "host/interface" speeds over what the host reported."""
    if not overrides:
        return sample
    prefix = f"{host}/"
    changed: dict[str, Interface] = {}
    for key, mbps in overrides.items():
        if key.startswith(prefix):
            iface = sample.interfaces.get(key[len(prefix) :])
            if iface is not None:
                changed[iface.name] = replace(
                    iface,
                    speed_mbps=mbps,
                    duplex=iface.duplex or "full",
                    speed_configured=True,
                    reported_speed_mbps=iface.speed_mbps,
                )
    if not changed:
        return sample
    return replace(sample, interfaces={**sample.interfaces, **changed})


def _final_state(exc: TransportError) -> dict:
    if isinstance(exc, AuthFailed):
        return {"state": HostState.AUTH_FAILED, "error": str(exc), "detail": NO_DETAIL}
    if isinstance(exc, HostKeyUnknown):
        return {
            "state": HostState.HOST_KEY_UNKNOWN,
            "error": str(exc),
            "detail": HostDetail(fingerprint=exc.fingerprint, key_type=exc.key_type, key_b64=exc.key_b64, hop=exc.hop),
        }
    if isinstance(exc, HostKeyChanged):
        return {
            "state": HostState.HOST_KEY_CHANGED,
            "error": str(exc),
            "detail": HostDetail(fingerprint=exc.fingerprint),
        }
    return {"state": HostState.ERROR, "error": str(exc), "detail": NO_DETAIL}


def ssh_names(hosts: list[HostSpec]) -> set[str]:
    """What a Prometheus target may be called when it is one of these hosts: SSH wins."""
    names: set[str] = set()
    for h in hosts:
        names.update(
            n for n in ((h.name, h.address) if not h.local else ("local", socket.gethostname())) if n is not None
        )
    return names


class Fleet:
    """All host loops of one run, as asyncio tasks. A host that hangs delays no other."""

    def __init__(self, hosts: list[HostSpec], settings: Settings, on_update: UpdateSink, opener: Opener = open_adapter):
        self.settings = settings
        self.on_update = on_update
        self.opener = opener
        self.collectors = {h.name: HostCollector(h, settings, on_update, opener) for h in hosts}
        self.tasks: dict[str, asyncio.Task] = {}
        self.prometheus = None
        if settings.prometheus is not None:
            from ..prometheus.source import PrometheusSource  # httpx only when configured

            self.prometheus = PrometheusSource(
                settings.prometheus, settings, on_update, skip=ssh_names(hosts),
                adjust=lambda name, sample: override_speeds(sample, name, settings.speed_overrides),
            )  # fmt: skip

    def record(self, tap: Tap | None) -> None:
        """Tell ``tap`` everything every SSH and local host does from now on (None: stop)."""
        for collector in self.collectors.values():
            collector.record(tap)

    def start(self) -> None:
        # A watch runs for hours: without this glibc's heaps creep (see the function).
        pin_malloc_thresholds()
        for name, collector in self.collectors.items():
            self.tasks[name] = asyncio.create_task(collector.run(), name=f"collect:{name}")
        if self.prometheus is not None:
            self.tasks[self.prometheus.source_name] = asyncio.create_task(
                self.prometheus.run(), name="collect:prometheus"
            )

    def restart(self, name: str) -> None:
        """Start a host's loop again, after the user fixed what stopped it (trusted a key)."""
        task = self.tasks.get(name)
        if task and not task.done():
            task.cancel()
        collector = self.collectors[name]
        collector.samples_seen = 0
        collector.last = HostUpdate(host=name, os=None, state=HostState.CONNECTING)
        self.tasks[name] = asyncio.create_task(collector.run(), name=f"collect:{name}")

    async def stop(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    def views(self) -> dict[str, tuple[InterfaceView, ...]]:
        return {name: c.last.interfaces for name, c in self.collectors.items()}
