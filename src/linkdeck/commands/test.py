"""``linkdeck test SRC DST``: one bidirectional iperf3 test while both ends are watched, and
its verdict. The same host twice measures that host's own ceiling over loopback.

Exit status: 0 when the test completed (whatever the verdict), 1 when it could not
(verdict "error"), 2 on usage or config errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from ..config import ConfigError, HostSpec, Settings, host_from_arg, with_overrides
from .common import check_ssh_config, load_settings
from ..present import report_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("src", metavar="SRC", help="the sending host (iperf3 client): local, user@host, an ssh alias or a configured name")
    parser.add_argument("dst", metavar="DST", help="the receiving host (iperf3 server); the same as SRC for its loopback ceiling")
    add_test_options(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON (fields as in the README)")
    parser.add_argument("--address", metavar="A", help="DST's address to test (default: its address in a subnet SRC shares)")


def add_test_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--time", type=float, metavar="S", help="seconds per test (default: [test] duration, 5)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $LINKDECK_CONFIG, then the user config dir)")
    parser.add_argument("--ssh-config", metavar="FILE", help="ssh client config (default: ~/.ssh/config)")


def load_for_test(args: argparse.Namespace, names: list[str]) -> tuple[Settings, list[HostSpec], float]:
    """Settings, the named hosts in the order given and the duration; ConfigError on bad
    input."""
    settings = with_overrides(load_settings(args), test_duration=args.time)
    named = [host_from_arg(name, settings.hosts) for name in names]
    check_ssh_config(settings, named)
    return settings, named, settings.test_duration


def run(args: argparse.Namespace) -> int:
    from ..probe.templates import check_address
    from ..probe.errors import ProbeError

    try:
        settings, (src_spec, dst_spec), duration = load_for_test(args, [args.src, args.dst])
        if args.address:
            check_address(args.address)
    except (ConfigError, ProbeError) as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    src, dst = src_spec.name, dst_spec.name
    specs = {src: src_spec, dst: dst_spec}
    from ..probe.hosts import run_pairs
    from ..probe.matrix import outcome_json

    outcomes, _ = asyncio.run(run_pairs(specs, settings, [(src, dst)], duration, address=args.address))
    outcome = outcomes[0]
    if args.json:
        json.dump(outcome_json(outcome), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report_text(outcome))
    return 1 if outcome.verdict.status == "error" else 0
