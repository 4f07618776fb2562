"""Command line: the dashboard by default, headless sub-commands otherwise.

Sub-commands live in ``commands/``, one module each with ``add_arguments`` and ``run``; the
UI (and so textual) is imported only when the dashboard starts.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

SUBCOMMANDS = {
    "snapshot": "take two samples and print every interface's rates",
    "parse": "show what linkdeck reads from a captured command output",
    "test": "run a bidirectional throughput test between two hosts",
    "matrix": "test every ordered pair of hosts",
}


def main_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="linkdeck",
        description="Watch the interfaces of this machine and of hosts over SSH, live.",
        epilog="sub-commands: " + "; ".join(f"{k}: {v}" for k, v in SUBCOMMANDS.items())
        + ". Run 'linkdeck COMMAND --help' for each.",
    )
    parser.add_argument("--version", action="version", version=f"linkdeck {__version__}")
    from .commands.common import add_host_arguments

    add_host_arguments(parser)
    return parser


def _run_subcommand(name: str, argv: list[str]) -> int:
    module = importlib.import_module(f".commands.{name}", __package__)
    parser = argparse.ArgumentParser(prog=f"linkdeck {name}", description=SUBCOMMANDS[name])
    module.add_arguments(parser)
    return module.run(parser.parse_args(argv))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from .logs import setup

    setup()
    if argv and argv[0] in SUBCOMMANDS:
        from .commands.common import PrintableStream

        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = PrintableStream(streams[0]), PrintableStream(streams[1])
        try:
            return _run_subcommand(argv.pop(0), argv)
        except KeyboardInterrupt:
            return 130
        finally:
            sys.stdout, sys.stderr = streams
    args = main_parser().parse_args(argv)
    from .commands.common import ConfigError, resolve_hosts

    try:
        settings, hosts = resolve_hosts(args)
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    from .config import default_path
    from .ui.app import LinkdeckApp

    # the column choice (o) is kept in the user config dir, beside the default config file
    LinkdeckApp(settings, hosts, state_path=default_path().parent / "ui-state.json").run()
    return 0
