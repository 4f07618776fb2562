"""``linkdeck snapshot``: sample every host twice, INTERVAL apart, and print the rates."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace

from ..collector import Fleet
from ..freshness import as_seen
from ..model import HostState, HostUpdate
from .snapshot_format import snapshot_json, snapshot_table
from ..transport.base import bounded
from ..config import with_overrides
from .common import ConfigError, add_host_arguments, resolve_hosts

# How long a remote host may take to connect and send its first two frames.
CONNECT_GRACE_S = 15.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interval", type=float, metavar="SECONDS", help="time between the two samples (default: the config's interval, 1)")
    parser.add_argument("--json", action="store_true", help="print JSON (documented in the README)")
    parser.add_argument("--bytes", action="store_true", help="rates in bytes/s instead of bits/s")
    add_host_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        settings, hosts = resolve_hosts(args)
        settings = with_overrides(settings, interval=args.interval)
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    updates = asyncio.run(collect(settings, hosts, settings.interval + CONNECT_GRACE_S))
    findings = _findings(updates, settings)
    if args.json:
        json.dump(snapshot_json(updates, findings), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(snapshot_table(updates, findings, in_bytes=args.bytes or settings.units == "bytes", window_s=settings.thresholds.window_s))
    return 0


def _findings(updates, settings):
    from ..diagnose import diagnose

    return diagnose(updates, settings)


async def collect(settings, hosts, timeout: float) -> list[HostUpdate]:
    """Run the fleet until every host has two samples (so it has rates) or has failed."""

    def finished(name: str) -> bool:
        c = fleet.collectors[name]
        if c.samples_seen >= 2:
            return True
        # A host that failed before its first sample will not do better within a snapshot.
        return c.samples_seen == 0 and c.last.state not in (HostState.CONNECTING, HostState.LIVE)

    def all_done() -> bool:
        if fleet.prometheus is not None and not fleet.prometheus.settled():
            return False
        return all(finished(n) for n in fleet.collectors)

    async def done() -> None:
        while not all_done():
            await asyncio.sleep(0.05)

    fleet = Fleet(hosts, settings, lambda update: None)
    fleet.start()
    try:
        await bounded(done(), timeout)
    except asyncio.TimeoutError:
        pass
    finally:
        await fleet.stop()
    out = []
    for c in fleet.collectors.values():
        u = c.last
        if c.samples_seen == 0 and u.state == HostState.CONNECTING:
            u = replace(u, state=HostState.UNREACHABLE, error=f"no answer within {timeout:.0f} s")
        out.append(u)
    if fleet.prometheus is not None:
        out.extend(fleet.prometheus.updates())
    now = time.time()
    return [as_seen(u, now) for u in out]
