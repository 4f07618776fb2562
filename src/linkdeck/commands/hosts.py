"""``linkdeck hosts [HOST ...] [--json]``: how each host resolves through the ssh config —
the first thing to run when a host will not connect, and what a bug report should contain.

Exit status: 0 when every host resolved, 1 when any did not, 2 on usage or config errors.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..config import ConfigError, host_from_arg
from .common import add_config_arguments, check_ssh_config, load_settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser)
    parser.add_argument("--json", action="store_true", help='print {"hosts": [...]} as JSON')
    parser.add_argument("hosts", nargs="*", metavar="HOST", help="user@host[:port], an ssh alias or a configured name (default: the configured hosts)")


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args)
        specs = [host_from_arg(h, settings.hosts) for h in args.hosts] if args.hosts else list(settings.hosts)
        if not specs:
            raise ConfigError(None, "no hosts: name one (linkdeck hosts HOST) or list them in linkdeck's config")
        check_ssh_config(settings, specs)
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    from ..transport.ssh_describe import as_json, lines, resolution

    resolved = [(spec.name, None if spec.local else resolution(spec, settings)) for spec in specs]
    if args.json:
        print(json.dumps({"hosts": [
            {"name": name, "local": True} if target is None else as_json(name, target, settings) for name, target in resolved
        ]}, indent=2))
    else:
        for i, (name, target) in enumerate(resolved):
            print(("\n" if i else "") + (f"{name}  (this machine: no SSH)" if target is None else
                                         f"{name}  (resolved by {getattr(target, 'source', 'nobody')})"))
            for label, value in [] if target is None else lines(target, settings):
                print(f"  {label:<16}{value}")
    return 1 if any(isinstance(target, str) for _, target in resolved) else 0
