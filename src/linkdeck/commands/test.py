"""``linkdeck test SRC DST``: one bidirectional iperf3 test while both ends are watched, and
its verdict. The same host twice measures that host's own ceiling over loopback.

Exit status: 0 when the test completed (whatever the verdict), 1 when it could not
(verdict "error"), 2 on usage or config errors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys

from ..core.levels import Status
from ..present.outcome import addresses_text, report_text
from ..settings.config import ConfigError, HostSpec, Settings, host_from_arg, with_overrides
from .shared import add_config_arguments, check_ssh_config, load_settings, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "src",
        metavar="SRC",
        help="the sending host (iperf3 client): local, user@host, an ssh alias or a configured name",
    )
    parser.add_argument(
        "dst", metavar="DST", help="the receiving host (iperf3 server); the same as SRC for its loopback ceiling"
    )
    add_test_options(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON (fields in docs/TESTS.md)")
    parser.add_argument(
        "--address",
        metavar="A",
        action="append",
        help=(
            "DST's address to test (default: its address in a subnet SRC shares); "
            "repeated, one test per address and a table"
        ),
    )
    parser.add_argument(
        "--all-addresses",
        action="store_true",
        help=(
            "one test per address of DST that SRC reaches in a shared subnet, "
            "one after another, and a table comparing them"
        ),
    )


def add_test_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--time", type=float, metavar="S", help="seconds per test (default: [test] duration, 5)")
    parser.add_argument(
        "-P",
        "--parallel",
        type=int,
        metavar="N",
        help=(
            "parallel TCP streams each way (iperf3 -P; default: "
            "[test] streams, 1): iperf3 >= 3.16 runs each on its own core"
        ),
    )
    parser.add_argument(
        "--from",
        dest="from_",
        metavar="IF|ADDR",
        help=(
            "send from this interface (or the interface holding this address) of SRC: "
            "iperf3 is bound to it (--bind-dev where the sender's iperf3 has it, else -B)"
        ),
    )
    add_config_arguments(parser)
    parser.add_argument(
        "--record", metavar="FILE", help="record the hosts and the result to this new file (see linkdeck record)"
    )


def load_for_test(args: argparse.Namespace, names: list[str]) -> tuple[Settings, list[HostSpec], float]:
    """Settings, the named hosts in the order given and the duration; ConfigError on bad
    input."""
    settings = with_overrides(load_settings(args), test_duration=args.time, test_streams=args.parallel)
    named = [host_from_arg(name, settings.hosts) for name in names]
    check_ssh_config(settings, named)
    return settings, named, settings.test_duration


def run(args: argparse.Namespace) -> int:
    from ..probe.failures import ProbeError
    from ..probe.templates import check_address

    addresses = args.address or []
    try:
        settings, (src_spec, dst_spec), duration = load_for_test(args, [args.src, args.dst])
        for address in addresses:
            check_address(address)
        if args.all_addresses and addresses:
            raise ConfigError(None, "give either --all-addresses or --address, not both")
        if (args.all_addresses or len(addresses) > 1) and src_spec.name == dst_spec.name:
            raise ConfigError(
                None,
                "several addresses are another host's: SRC and DST are the same host (its ceiling runs over loopback)",
            )
    except (ConfigError, ProbeError) as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    src, dst = src_spec.name, dst_spec.name
    specs = {src: src_spec, dst: dst_spec}
    if args.record and os.path.exists(args.record):
        print(f"linkdeck: {args.record} exists: name a new file (a recording is never overwritten)", file=sys.stderr)
        return 2
    if args.all_addresses or len(addresses) > 1:
        return _every_address(args, specs, settings, src, dst, addresses or None)
    from ..probe.pairs import outcome_json
    from ..probe.session import run_pairs

    live = (
        LivePrinter(sys.stdout, shutil.get_terminal_size().columns) if not args.json and sys.stdout.isatty() else None
    )
    outcomes, _ = asyncio.run(run_pairs(
        specs, settings, [(src, dst)], duration, address=addresses[0] if addresses else None,
        record_to=args.record, on_live=live, src_iface=args.from_,
    ))  # fmt: skip
    outcome = outcomes[0]
    if args.json:
        print_json(outcome_json(outcome))
    else:
        sys.stdout.write(report_text(outcome))
    return 1 if outcome.verdict.status is Status.ERROR else 0


class LivePrinter:
    """On a terminal, each second of the test as it arrives (or why there are none), before
    the report; the interface names come with the first second's counters."""

    def __init__(self, out, width: int | None = None) -> None:
        self.out = out
        self.width = width  # the terminal's columns: the seconds fit them
        self.layout: str | None = None

    def __call__(self, src: str, dst: str, kind: str, data) -> None:
        from ..present.outcome import live_header, live_layout, live_second, quiet_note

        if kind == "quiet":
            self.out.write(quiet_note(data.get("host", src), data.get("version", "?")) + "\n")
        elif kind == "interval":
            if self.layout is None:
                self.layout = live_layout(src, dst, data.get("src_if"), data.get("dst_if"), self.width)
                self.out.write(live_header(src, dst, data.get("src_if"), data.get("dst_if"), self.layout) + "\n")
            self.out.write(live_second(src, dst, data, self.layout) + "\n")
        self.out.flush()


def _every_address(
    args: argparse.Namespace,
    specs: dict[str, HostSpec],
    settings: Settings,
    src: str,
    dst: str,
    addresses: list[str] | None,
) -> int:
    """``--all-addresses`` / ``--address`` repeated: exit 1 when an address could not be tested."""
    from ..probe.every_address import addresses_json, run_addresses
    from ..probe.failures import ProbeError
    from ..probe.session import recorded, watching

    async def go():
        async with watching(specs, settings, [src, dst]) as (watch, session):
            with recorded(watch, session, args.record) as keep:
                return await run_addresses(session, src, dst, addresses, on_done=lambda _, outcome: keep(outcome))

    try:
        run = asyncio.run(go())
    except ProbeError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print_json(addresses_json(run))
    else:
        sys.stdout.write(addresses_text(run))
    return 1 if any(t.outcome.verdict.status is Status.ERROR for t in run.tested) else 0
