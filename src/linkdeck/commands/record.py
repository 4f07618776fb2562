"""``linkdeck record FILE``: watch the hosts headless and record everything they say, until
``--duration`` seconds have passed or Ctrl-C (SIGINT or SIGTERM end it cleanly; a harder
kill loses at most the last few seconds, fileformat.FLUSH_EVERY_S)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from pathlib import Path

from ..collector import Fleet
from ..model import HostState
from ..units import size_bytes
from .common import ConfigError, add_host_arguments, resolve_hosts

# How long the hosts may take to connect and say what they run before the header is written.
CONNECT_GRACE_S = 15.0
FINDINGS_EVERY_S = 1.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the recording to write (a new file; docs/RECORDING.md has its format)")
    parser.add_argument("--duration", type=float, metavar="S", help="stop after S seconds (default: until Ctrl-C)")
    add_host_arguments(parser)


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        if args.duration is not None and not args.duration > 0:
            raise ConfigError(None, f"--duration {args.duration:g}: give a number of seconds above 0")
        if path.exists():
            raise ConfigError(None, f"{path} exists: name a new file (a recording is never overwritten)")
        settings, hosts = resolve_hosts(args)
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    try:
        recorder = asyncio.run(record(path, settings, hosts, args.duration))
    except OSError as exc:
        print(f"linkdeck: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    w = recorder.writer
    per = w.bytes_out / recorder.samples if recorder.samples else 0
    print(f"{path}: {recorder.samples} samples of {len(hosts)} hosts, {size_bytes(w.bytes_out)} ({per:.0f} bytes per host-sample)", file=sys.stderr)
    return 0


async def record(path: Path, settings, hosts, duration: float | None):
    from ..diagnose import Diagnoser
    from ..recording.recorder import Recorder

    diagnoser = Diagnoser(settings)
    fleet = Fleet(hosts, settings, diagnoser.observe)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    fleet.start()
    recorder = None
    try:
        # The header names each host's OS: wait (briefly) until every host has said it or failed.
        deadline = time.monotonic() + CONNECT_GRACE_S
        while any(c.last.state == HostState.CONNECTING for c in fleet.collectors.values()) and time.monotonic() < deadline and not stop.is_set():
            await asyncio.sleep(0.05)
        recorder = Recorder.for_fleet(path, fleet)
        fleet.record(recorder)
        print(f"recording {len(hosts)} hosts to {path}" + (f" for {duration:g} s" if duration else ": Ctrl-C stops"), file=sys.stderr)
        end = None if duration is None else time.monotonic() + duration
        while not stop.is_set() and (end is None or time.monotonic() < end):
            try:
                await asyncio.wait_for(stop.wait(), FINDINGS_EVERY_S if end is None else min(FINDINGS_EVERY_S, max(end - time.monotonic(), 0)))
            except asyncio.TimeoutError:
                pass
            recorder.findings(diagnoser.findings())
    finally:
        fleet.record(None)
        await fleet.stop()
        if recorder is not None:
            recorder.close()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return recorder
