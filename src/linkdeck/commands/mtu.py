"""``linkdeck mtu SRC DST``: the largest IP packet that gets through each way between two
hosts, found by each end's own ping with don't-fragment (the probe every test runs first).

Exit status: 0 when at least one direction was probed, 1 when neither could be, 2 on usage
or config errors.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ..settings.config import ConfigError, host_from_arg
from .shared import add_config_arguments, check_ssh_config, load_settings, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("src", metavar="SRC", help="one end: local, user@host, an ssh alias or a configured name")
    parser.add_argument("dst", metavar="DST", help="the other end")
    parser.add_argument(
        "--address", metavar="A", help="DST's address to probe (default: its address in a subnet SRC shares)"
    )
    parser.add_argument(
        "--json", action="store_true", help='print {"src", "dst", "address", "path_mtu", "mtu", "causes"} as JSON'
    )
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from ..probe.failures import ProbeError
    from ..probe.templates import check_address

    try:
        settings = load_settings(args)
        named = [host_from_arg(name, settings.hosts) for name in (args.src, args.dst)]
        check_ssh_config(settings, named)
        if args.address:
            check_address(args.address)
        if named[0].name == named[1].name:
            raise ConfigError(None, "SRC and DST are the same host: a path MTU needs two")
    except (ConfigError, ProbeError) as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    from ..present.outcome import mtu_json, mtu_text
    from ..probe.session import run_pairs

    specs = {s.name: s for s in named}
    outcomes, _ = asyncio.run(
        run_pairs(specs, settings, [(named[0].name, named[1].name)], 0, address=args.address, mtu_only=True)
    )
    outcome = outcomes[0]
    if args.json:
        print_json(mtu_json(outcome))
    else:
        sys.stdout.write(mtu_text(outcome))
    probed = outcome.path is not None and (outcome.path.forward is not None or outcome.path.reverse is not None)
    return 0 if probed else 1
