"""``linkdeck flows HOST``: the host's busiest established TCP flows over one interval, each
with its rates, RTT, window, retransmits, path MTU and what limits it. linkdeck's own SSH
connection to the host is said in one line, not listed (``--all`` lists it, marked own); the
flows of a test another linkdeck of this user runs through it are listed last, marked.

Two reads ``--interval`` seconds apart on the host (ranked and cut to ``--top`` there); the
configured hosts are watched meanwhile, so a flow's far end is named when linkdeck watches it
and its link speed counts. Exit status: 0 when the flows were read, 1 when they could not be
(the host is down, has no per-flow view, or ss is missing), 2 on usage or config errors.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ..settings.config import ConfigError, host_from_arg
from .shared import add_config_arguments, check_ssh_config, load_settings, print_json

CONNECT_S = 20.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", metavar="HOST", help="local, user@host, an ssh alias or a configured name")
    parser.add_argument(
        "--interval", type=float, default=1.0, metavar="S", help="seconds between the two reads (default 1)"
    )
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="how many flows, the busiest first (default 10)"
    )
    parser.add_argument("--interface", metavar="IF", help="only the flows whose local address is on this interface")
    parser.add_argument(
        "--all", action="store_true", help="list linkdeck's own SSH connection to the host too (marked own)"
    )
    parser.add_argument("--json", action="store_true", help='print {"host", "flows": [...]} as JSON')
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from ..flows.sampler import TOP_MAX

    try:
        settings = load_settings(args)
        spec = host_from_arg(args.host, settings.hosts)
        if not 0.2 <= args.interval <= 3600:
            raise ConfigError(None, "--interval: between 0.2 and 3600 seconds")
        if not 1 <= args.top <= TOP_MAX:
            raise ConfigError(None, f"--top: between 1 and {TOP_MAX}")
        others = [h for h in settings.hosts if h.name != spec.name]
        check_ssh_config(settings, [spec, *others])
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    report, error = asyncio.run(_read(spec, others, settings, args))
    if error is not None:
        print(f"linkdeck: {error}", file=sys.stderr)
        return 1
    return emit(report, args.json, args.top, args.all)


def emit(report, as_json: bool, top: int, show_all: bool = False) -> int:
    """The report on stdout; a host with no per-flow view gets its data (its TCP health) there
    too, and the reason on stderr, exit 1, on every OS."""
    from ..present.flow_words import report_json, report_text, unavailable_line

    if as_json:
        print_json(report_json(report, show_all))
    else:
        sys.stdout.write(report_text(report, top, show_all))
    why = unavailable_line(report)
    if why is None:
        return 0
    print(f"linkdeck: {why}", file=sys.stderr)
    return 1


async def _read(spec, others, settings, args):
    """(the report of the second read, None) or (None, why not)."""
    from ..flows.held import held, master_pids, set_apart
    from ..flows.own_tests import announced, set_apart_tests
    from ..flows.round_report import FlowReport, addresses_of, report
    from ..flows.sampler import FlowsUnavailable, no_flows_reason, read_rounds
    from ..probe.session import Watch
    from ..transport.runner import TransportError

    watch = Watch([spec, *others], settings)
    # every watched host's first sample (or failure, within the watch's grace) while the
    # flows are read: a flow's far end is named only from what its host reported
    settled = asyncio.ensure_future(watch.start())
    try:
        # the flows loop rides the watch's own connection to the host: linkdeck holds one
        # there, the one the loop names as its own
        adapter, error = await _connection(watch, spec.name)
        if adapter is None:
            return None, error
        why = no_flows_reason(adapter.os)
        if why is not None:  # the host's TCP health is all there is: its rates need two samples
            await _first_sample(watch, spec.name, samples=2)
            update = watch.latest(spec.name)
            return FlowReport(
                spec.name, args.interface, None, None, 0, unavailable=why, tcp=update.tcp if update else None
            ), None
        addresses: list[str] = []
        if args.interface:
            await _first_sample(watch, spec.name)
            addresses = addresses_of(watch.latest(spec.name), args.interface)
            if not addresses:
                return None, f"{spec.name} {args.interface}: no such interface, or it has no address"
        rounds = read_rounds(adapter.runner, args.interval, args.top, addresses, adapter.os)
        try:
            async for got in rounds:
                if got.prev_time is None:
                    continue
                await settled
                await _first_sample(watch, spec.name, samples=2)  # rates: the host's TCP health
                if spec.local:  # linkdeck's own connections, by the sockets it holds
                    adapters = [c.adapter for c in watch.fleet.collectors.values()]
                    got = set_apart(got, held(master_pids(adapters)), adapter.os)
                # the flows of a test another linkdeck of this user runs through the host
                got = set_apart_tests(got, spec.name, announced(), dict(watch.updates), adapter.os)
                return report(spec.name, got, dict(watch.updates), args.interface), None
        except FlowsUnavailable as exc:
            return None, f"{spec.name}: {exc}"
        except TransportError as exc:
            return None, f"{spec.name}: {exc}"
        finally:
            await rounds.aclose()
        return None, f"{spec.name}: the flows command ended before its second read"
    finally:
        if not settled.done():
            settled.cancel()
        await watch.stop()


async def _connection(watch, name: str):
    """(the watch's connection to the host, None) or (None, why there is none)."""
    collector = watch.fleet.collectors[name]
    for _ in range(int(CONNECT_S * 10)):
        if collector.adapter is not None:
            return collector.adapter, None
        if collector.last.error and collector.last.state.value not in ("connecting", "live"):
            return None, f"cannot open {name}: {collector.last.error}"
        await asyncio.sleep(0.1)
    return None, f"{name}: no connection within {CONNECT_S:.0f} s"


async def _first_sample(watch, name: str, samples: int = 1) -> None:
    """Wait (a little) for the host's interfaces, which say each flow's link (and for a
    second sample, its TCP rates)."""
    collector = watch.fleet.collectors[name]
    for _ in range(int(CONNECT_S * 10)):
        if (
            collector.samples_seen >= samples
            or not collector.samples_seen
            and collector.last.state.value not in ("connecting", "live")
        ):
            return
        await asyncio.sleep(0.1)
