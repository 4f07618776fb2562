"""What goes into a recording while linkdeck runs: the collector's tap (``opened``, ``read``,
``update``), the findings as they are raised and cleared, every test with iperf3's JSON and
every subnet's MTU probe.

The recorder keeps no samples itself: each raw read goes to the file as it arrives, so its
memory stays flat however long it records.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, fields
from typing import Callable, Iterable

from ..core.model import Finding, HostUpdate, SubnetMtu
from ..findings.engine import key_of
from ..fleet.collector import Fleet
from ..platforms.adapter import Adapter
from ..settings.config import Settings
from .fileformat import CHECKPOINT, Writer

# How often a checkpoint starts a new zstd frame holding every host's state (`resume`): a
# replay jumps to a time by decompressing from the checkpoint before it. Each one costs every
# host's last slow facts and last read compressed afresh (bench/bench_recording.py).
CHECKPOINT_S = 120.0


def settings_json(settings: Settings) -> dict:
    """The settings a recording was made with, as JSON (host specs and rules as dicts)."""
    out = {}
    for f in fields(Settings):
        value = getattr(settings, f.name)
        out[f.name] = _plain(value)
    return out


def _plain(value):
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def adapter_kind(adapter: Adapter) -> str:
    """How a host's reads are replayed: "psutil" for the local adapter's reads, "sh" for a
    sampler's frames (its parser picked by the OS, as live)."""
    return "sh" if hasattr(adapter, "parse_frame") else "psutil"


class Recorder:
    """One recording. ``clock`` is wall time: what the replay's timeline and ``--at`` use."""

    def __init__(
        self, path: str | os.PathLike, settings: Settings, hosts: list[dict], clock: Callable[[], float] = time.time
    ) -> None:
        self.clock = clock
        self.path = path
        self._state: dict[str, tuple] = {}
        self._findings: dict[tuple, Finding] = {}
        self.samples = 0
        # what a checkpoint repeats: per host its connection, the connection's first read (the
        # totals count from it), last slow-facts read, last two reads and state (events as
        # written), and the last test of each tested interface
        self._adapters: dict[str, Adapter] = {}
        self._resume: dict[str, dict[str, dict | None]] = {}
        self._tests: dict[tuple, dict] = {}
        self._subnets: dict[str, dict] = {}  # the last subnet_mtu event of each subnet
        self.writer = Writer(path, {
            "started": round(clock(), 3),
            "hosts": hosts,
            "settings": settings_json(settings),
        })  # fmt: skip
        self._next_checkpoint = clock() + CHECKPOINT_S

    @classmethod
    def for_fleet(cls, path: str | os.PathLike, fleet: Fleet, clock: Callable[[], float] = time.time) -> "Recorder":
        """A recording of ``fleet``'s hosts, the header naming each one's OS as detected so far."""
        hosts = [
            {"name": name, "address": c.spec.address, "os": c.last.os, "os_detail": c.last.os_detail}
            for name, c in fleet.collectors.items()
        ]
        return cls(path, fleet.settings, hosts, clock)

    def _event(self, kind: str, **fields) -> dict:
        now = self.clock()
        if now >= self._next_checkpoint:
            self._checkpoint(now)
        event = {"t": round(now, 3), "ev": kind, **fields}
        self.writer.write(event)
        return event

    def _checkpoint(self, now: float) -> None:
        self._next_checkpoint = now + CHECKPOINT_S
        t = round(now, 3)
        events = [{"t": t, "ev": CHECKPOINT}]
        events += [{"t": t, "ev": "resume", "h": host, **state} for host, state in self._resume.items()]
        if self._tests:
            events.append({"t": t, "ev": "resume", "tests": list({id(e): e for e in self._tests.values()}.values())})
        if self._subnets:
            events.append({"t": t, "ev": "resume", "subnet_mtu": list(self._subnets.values())})
        self.writer.checkpoint(events)

    def _host(self, host: str) -> dict[str, dict | None]:
        # "flows": the last round of its flows (a replay's w after a jump shows it, with its time)
        return self._resume.setdefault(
            host, {"open": None, "first": None, "facts": None, "prev": None, "last": None, "state": None, "flows": None}
        )

    # -- the collector's tap --------------------------------------------------------------

    def opened(self, host: str, adapter: Adapter) -> None:
        self._adapters[host] = adapter
        event = self._event(
            "open",
            h=host,
            os=adapter.os,
            os_detail=adapter.os_detail,
            reached_at=adapter.reached_at,
            via=adapter_kind(adapter),
        )
        self._host(host).update(open=event, first=None, facts=None, prev=None, last=None)

    def read(self, host: str, read: dict, prime: bool = False) -> None:
        if not prime:
            self.samples += 1
        event = self._event("prime" if prime else "read", h=host, **read)
        adapter = self._adapters.get(host)
        state = self._host(host)
        if prime or (adapter is not None and adapter.carries_facts(read)):
            state["facts"] = event
        if not prime:
            state["first"] = state["first"] or event
            state["prev"], state["last"] = state["last"], event

    def update(self, update: HostUpdate) -> None:
        """Host state changes (a sample's own LIVE/ERROR included: replaying it is harmless)."""
        detail = update.detail.as_json()
        key = (update.state, update.error, tuple(sorted(detail.items())))
        if self._state.get(update.host) == key:
            return
        self._state[update.host] = key
        event = self._event("state", h=update.host, state=update.state.value, error=update.error, detail=detail)
        self._host(update.host)["state"] = event

    # -- what the owner reports -----------------------------------------------------------

    def findings(self, current: Iterable[Finding]) -> None:
        """Each finding raised, and raised again when its severity or hint changed (a probe
        named the side): the words a report shows are the latest. Its figures alone change every
        pass and are not written again."""
        now = {key_of(f): f for f in current}
        for key, finding in now.items():
            was = self._findings.get(key)
            if was is None or (was.severity, was.hint) != (finding.severity, finding.hint):
                self._event("finding", on=True, **finding.as_dict())
        for key, finding in self._findings.items():
            if key not in now:
                self._event("finding", on=False, code=finding.code, host=finding.host, interface=finding.interface)
        self._findings = now

    def test(self, outcome, matrix: bool = False) -> None:
        """A finished test (a ``probe.Outcome``: result with iperf3's JSON, verdict, both ends)."""
        # own: an "own" event follows for each end once the test's sockets are gone there;
        # none by the end of the recording means they were still there
        event = self._event("test", matrix=matrix, own=True, outcome=_plain(outcome))
        result = getattr(outcome, "result", None)
        for host, iface in (
            (getattr(result, "src", None), getattr(outcome, "src_iface", None)),
            (getattr(result, "dst", None), getattr(outcome, "dst_iface", None)),
        ):
            if host and iface:
                self._tests[(host, iface)] = event

    def subnet_mtu(self, found: SubnetMtu) -> None:
        """What a subnet's MTU probe found (probe/subnet_mtu.py): a replay's findings learn it
        as live did, so MTU_MISMATCH names the same side."""
        self._subnets[found.subnet] = self._event("subnet_mtu", **_plain(found))

    def flows(self, host: str, interface: str | None, lines) -> None:
        """One round of ``host``'s busiest flows (through ``interface``) as the host printed it
        (``platforms.flows.FlowRound.lines``): a replay reads it through the same parser."""
        event = self._event("flows", h=host, iface=interface, lines=list(lines))
        self._host(host)["flows"] = event

    def own_ended(self, host: str, when: float) -> None:
        """linkdeck's own traffic through ``host`` ended at ``when``: the last test's sockets
        were gone there (a replay's findings treat the host's drops as live did)."""
        self._event("own", h=host, ended=round(when, 3))

    def close(self) -> None:
        self._event("end")
        self.writer.close()
