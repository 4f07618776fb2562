"""``linkdeck hosts [HOST ...] [--json]``: how each host resolves through the ssh config —
the first thing to run when a host will not connect, and what a bug report should contain.

Exit status: 0 when every host resolved, 1 when any did not, 2 on usage or config errors.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor

from ..settings.config import ConfigError, default_path, find_config, host_from_arg
from .shared import add_config_arguments, check_ssh_config, load_settings, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser)
    parser.add_argument("--json", action="store_true", help='print {"hosts": [...]} as JSON')
    parser.add_argument(
        "hosts",
        nargs="*",
        metavar="HOST",
        help="user@host[:port], an ssh alias or a configured name (default: the configured hosts)",
    )


def _config_read(args: argparse.Namespace) -> str:
    path = find_config(getattr(args, "config", None))
    return (
        str(path) if path is not None else f"a config file (none read: create {default_path()} or give --config FILE)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args)
        specs = [host_from_arg(h, settings.hosts) for h in args.hosts] if args.hosts else list(settings.hosts)
        if not specs:
            print(
                f"linkdeck: no hosts: name one (linkdeck hosts HOST) or list them as [[hosts]] in {_config_read(args)}",
                file=sys.stderr,
            )
            return 2
        check_ssh_config(settings, specs)
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    from ..transport.ssh_describe import as_json, lines, local_json, resolution, unresolvable

    def resolved_name(spec):
        target = resolution(spec, settings)
        return target if isinstance(target, str) else unresolvable(target) or target

    with ThreadPoolExecutor(max_workers=8) as pool:  # DNS answers one name at a time; hosts need not wait in line
        resolved = list(zip([s.name for s in specs], pool.map(lambda s: None if s.local else resolved_name(s), specs)))
    if args.json:
        print_json(
            {
                "hosts": [
                    local_json(name) if target is None else as_json(name, target, settings) for name, target in resolved
                ]
            }
        )
    else:
        for i, (name, target) in enumerate(resolved):
            print(
                ("\n" if i else "")
                + (
                    f"{name}  (this machine: no SSH)"
                    if target is None
                    else f"{name}  (does not resolve)"
                    if isinstance(target, str)
                    else f"{name}  (resolved by {target.source})"
                )
            )
            for label, value in [] if target is None else lines(target, settings):
                print(f"  {label:<16}{value}")
    return 1 if any(isinstance(target, str) for _, target in resolved) else 0
