"""``linkdeck record FILE``: watch the hosts headless and record everything they say, until
``--duration`` seconds have passed or Ctrl-C (SIGINT or SIGTERM end it cleanly; a harder
kill loses at most the last few seconds, fileformat.FLUSH_EVERY_S). A subnet whose hosts' MTUs
differ is probed as the dashboard probes it (probe/subnet_mtu.py), and the probe recorded."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from pathlib import Path
from typing import Awaitable, TypeVar

from ..core.model import HostState, HostUpdate
from ..core.units import size_bytes
from ..fleet.collector import Fleet
from .shared import ConfigError, add_host_arguments, resolve_hosts

# How long the hosts may take to connect and say what they run before the header is written.
CONNECT_GRACE_S = 15.0
FINDINGS_EVERY_S = 1.0

T = TypeVar("T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE", help="the recording to write (a new file; docs/RECORDING.md has its format)"
    )
    parser.add_argument("--duration", type=float, metavar="S", help="stop after S seconds (default: until Ctrl-C)")
    parser.add_argument(
        "--flows",
        action="append",
        default=[],
        metavar="HOST",
        help=(
            f"also record HOST's {FLOWS_TOP} busiest TCP flows every interval, as w shows them (repeatable; "
            "its flows loop runs as long as the recording)"
        ),
    )
    add_host_arguments(parser)


FLOWS_TOP = 10


async def _record_flows(spec, settings, recorder) -> None:
    """``spec``'s busiest flows every interval into the recording (each round as the host
    printed it), until cancelled; a host that cannot give them says why in one line, and the
    rest of the recording goes on."""
    from ..fleet.collector import open_adapter
    from ..flows.own_tests import announced, set_apart_tests
    from ..flows.sampler import no_flows_reason, read_rounds
    from ..transport.runner import bounded

    adapter = None
    try:
        adapter = await bounded(open_adapter(spec, settings), CONNECT_GRACE_S)
        why = no_flows_reason(adapter.os)
        if why is not None:
            print(f"linkdeck: {spec.name}: no flows recorded: {why}", file=sys.stderr)
            return
        if adapter.runner is None:  # a host linkdeck reads without a shell of its own
            print(
                f"linkdeck: {spec.name}: no flows recorded: it has no shell linkdeck runs commands in", file=sys.stderr
            )
            return
        async for got in read_rounds(adapter.runner, max(1.0, settings.interval), FLOWS_TOP, (), adapter.os):
            # a test another linkdeck runs meanwhile, known by its client's addresses
            got = set_apart_tests(got, spec.name, announced(), {}, adapter.os)
            recorder.flows(spec.name, None, got.lines)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a transport failure, a missing ss: one line, the recording goes on
        print(f"linkdeck: {spec.name}: flows no longer recorded: {exc or type(exc).__name__}", file=sys.stderr)
    finally:
        if adapter is not None:
            await adapter.close()


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        if args.duration is not None and not args.duration > 0:
            raise ConfigError(None, f"--duration {args.duration:g}: give a number of seconds above 0")
        if path.exists():
            raise ConfigError(None, f"{path} exists: name a new file (a recording is never overwritten)")
        settings, hosts = resolve_hosts(args)
        unknown = [h for h in args.flows if h not in {spec.name for spec in hosts}]
        if unknown:
            raise ConfigError(
                None, f"--flows {unknown[0]}: not one of the recorded hosts ({', '.join(spec.name for spec in hosts)})"
            )
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    try:
        recorder = asyncio.run(record(path, settings, hosts, args.duration, flows=args.flows))
    except OSError as exc:
        print(f"linkdeck: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    w = recorder.writer
    per = w.bytes_out / recorder.samples if recorder.samples else 0
    print(
        f"{path}: {recorder.samples} samples of {len(hosts)} hosts, "
        f"{size_bytes(w.bytes_out)} ({per:.0f} bytes per host-sample)",
        file=sys.stderr,
    )
    return 0


async def _unless_stopped(work: Awaitable[T], stop: asyncio.Event, end: float | None) -> T | None:
    """``work``'s answer, or None (and ``work`` cancelled) when the recording is stopped or its
    time is up first: a probe of a host that does not answer waits for its timeouts."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    left = None if end is None else max(end - time.monotonic(), 0.0)
    try:
        await asyncio.wait({task, stopped}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return None


async def record(path: Path, settings, hosts, duration: float | None, flows: list[str] | None = None):
    from ..findings.engine import Diagnoser, findings_off_loop
    from ..probe.session import TestSession
    from ..probe.subnet_mtu import SubnetProber
    from ..recording.recorder import Recorder

    latest: dict[str, HostUpdate] = {}
    # The subnets' MTU probes run over a session of their own, as the dashboard's: their pings
    # are linkdeck's own traffic through both ends, and what they prove is a path MTU too.
    session = TestSession({h.name: h for h in hosts}, settings, latest.get, lambda host, iface: ())
    diagnoser = Diagnoser(settings, own_traffic=session.own_traffic)
    session.on_path = diagnoser.measured
    prober = SubnetProber(session)
    observed = [0]

    def observe(update) -> None:
        observed[0] += 1
        latest[update.host] = update
        diagnoser.observe(update)

    fleet = Fleet(hosts, settings, observe)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    fleet.start()
    recorder = None
    readers: list[asyncio.Task] = []
    try:
        # The header names each host's OS: wait (briefly) until every host has said it or failed.
        deadline = time.monotonic() + CONNECT_GRACE_S
        while (
            any(c.last.state == HostState.CONNECTING for c in fleet.collectors.values())
            and time.monotonic() < deadline
            and not stop.is_set()
        ):
            await asyncio.sleep(0.05)
        recorder = Recorder.for_fleet(path, fleet)
        fleet.record(recorder)
        print(
            f"recording {len(hosts)} hosts to {path}" + (f" for {duration:g} s" if duration else ": Ctrl-C stops"),
            file=sys.stderr,
        )
        readers = [
            asyncio.create_task(_record_flows(spec, settings, recorder)) for spec in hosts if spec.name in (flows or ())
        ]
        end = None if duration is None else time.monotonic() + duration
        judged = -1  # how many updates the last pass had seen
        while not stop.is_set() and (end is None or time.monotonic() < end):
            try:
                await asyncio.wait_for(
                    stop.wait(),
                    FINDINGS_EVERY_S if end is None else min(FINDINGS_EVERY_S, max(end - time.monotonic(), 0)),
                )
            except asyncio.TimeoutError:
                pass
            # Only when something new came, as the dashboard: a Prometheus fleet's updates come
            # once per interval (15 s), and at 10,000 hosts a pass costs 0.6 s of CPU. On a
            # worker thread: it would hold up the loop every collector runs in.
            if observed[0] != judged:
                judged = observed[0]
                # A subnet whose MTUs differ is probed before the pass that would name a side
                # without knowing which MTU it carries (snapshot's order; the dashboard's answer
                # comes a pass later).
                for plan in prober.due(latest.values()):
                    found = await _unless_stopped(prober.probe(plan), stop, end)
                    if found is None:
                        break
                    diagnoser.learn(found)
                    recorder.subnet_mtu(found)
                recorder.findings(await findings_off_loop(diagnoser))
    finally:
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        fleet.record(None)
        await session.close()
        await fleet.stop()
        if recorder is not None:
            recorder.close()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return recorder
