"""``linkdeck snapshot``: sample every host twice, INTERVAL apart, and print the rates."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import replace

from ..core.freshness import as_seen
from ..core.levels import Severity
from ..core.model import Finding, HostState, HostUpdate
from ..core.selfcost import SelfCost
from ..core.units import printable
from ..fleet.collector import Fleet
from ..probe.subnet_mtu import probe_once
from ..settings.config import with_overrides
from ..transport.runner import bounded
from .shared import ConfigError, add_host_arguments, print_json, resolve_hosts
from .snapshot_format import snapshot_json, snapshot_table

# How long a remote host may take to connect and send its first two frames.
CONNECT_GRACE_S = 15.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--interval",
        type=float,
        metavar="SECONDS",
        help="time between the two samples (default: the config's interval, 1)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (fields in docs/JSON.md)")
    parser.add_argument("--bytes", action="store_true", help="rates in bytes/s instead of bits/s")
    parser.add_argument(
        "--from",
        dest="recording",
        metavar="FILE",
        help="print the snapshot of a recording (linkdeck record) instead of the hosts now",
    )
    parser.add_argument(
        "--at",
        metavar="TIME",
        help=(
            "with --from: seconds from the start (90, 1m30s), from the end (-30s), "
            "a time of day (14:05:30) or an ISO date-time (default: the end)"
        ),
    )
    parser.add_argument(
        "--fail-on",
        choices=("warning", "error"),
        help="exit 1 when a finding of this severity or worse is up (for scripts and cron), naming them on stderr",
    )
    add_host_arguments(parser)


def gate(findings: list[Finding], fail_on: str | None) -> int:
    """1 (and the findings named on stderr) when one at ``fail_on`` or worse is up, else 0."""
    if fail_on is None:
        return 0
    floor = Severity.of(fail_on).rank
    bad = [f for f in findings if f.severity.rank >= floor]
    if not bad:
        return 0
    named = ", ".join(
        f"{f.code} {printable(f.host)}" + (f"/{printable(f.interface)}" if f.interface else "") for f in bad
    )
    print(f"linkdeck: {len(bad)} finding{'s' if len(bad) != 1 else ''} at {fail_on} or worse: {named}", file=sys.stderr)
    return 1


def run(args: argparse.Namespace) -> int:
    if args.recording is not None or args.at is not None:
        return run_recorded(args)
    try:
        settings, hosts = resolve_hosts(args)
        settings = with_overrides(settings, interval=args.interval)
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    updates = asyncio.run(collect(settings, hosts, settings.interval + CONNECT_GRACE_S))
    from ..findings.engine import unmatched_keys
    from ..transport.ssh_options import config_knows

    for line in unmatched_keys(settings, updates, lambda host: config_knows(host, settings.ssh_config)):
        print(f"linkdeck: {printable(line)}", file=sys.stderr)
    # Which MTU each subnet with mixed MTUs carries, before MTU_MISMATCH names a side.
    probed = asyncio.run(probe_once(hosts, settings, updates))
    findings = _findings(updates, settings, probed=probed)
    _print(args, updates, findings, settings, time.time(), SelfCost().read())
    # Everything is printed; a script still learns that part of it is not live.
    down = [u for u in updates if u.state is not HostState.LIVE or u.stale]
    gated = gate(findings, args.fail_on)
    if down:
        listed = ", ".join(
            f"{printable(u.host)} ({'stale' if u.state is HostState.LIVE else u.state.value})" for u in down
        )
        print(f"linkdeck: {len(down)} of {len(updates)} hosts not live: {listed}", file=sys.stderr)
        return 1
    return gated


def run_recorded(args: argparse.Namespace) -> int:
    """The snapshot a recording held at ``--at``: its hosts' rows and findings, the same JSON
    as live."""
    from ..recording.replay import Player
    from .recorded import open_recording, parse_at, say_damage

    if args.recording is None:
        print("linkdeck: --at needs --from FILE (a recording made by linkdeck record)", file=sys.stderr)
        return 2
    if args.hosts or args.interval is not None:
        print(
            "linkdeck: --from prints the recording's hosts as recorded: drop the HOST names and --interval",
            file=sys.stderr,
        )
        return 2
    recording = open_recording(args.recording)
    if recording is None:
        return 2
    try:
        when = recording.end if args.at is None else parse_at(args.at, recording)
    except ValueError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    player = Player.at(recording, when, diagnose=False)
    # as a live snapshot taken at that moment: stale where the recording was
    updates = [as_seen(u, when) for u in player.updates()]
    # with the subnets' MTU probes recorded by then, as live judged
    findings = _findings(updates, player.settings, when, probed=list(player.probed.values()))
    _print(args, updates, findings, player.settings, when)
    say_damage(recording)
    return gate(findings, args.fail_on)


def _print(
    args: argparse.Namespace, updates, findings, settings, now: float, own: tuple[float, float] | None = None
) -> None:
    if args.json:
        print_json(snapshot_json(updates, findings, now, own))
    else:
        sys.stdout.write(
            snapshot_table(
                updates,
                findings,
                in_bytes=args.bytes or settings.units == "bytes",
                window_s=settings.thresholds.window_s,
            )
        )


def _findings(updates, settings, now: float | None = None, probed=()):
    from ..findings.engine import diagnose

    return diagnose(updates, settings, now, probed)


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
