"""Command line: the dashboard by default, headless sub-commands otherwise.

Sub-commands live in ``commands/``, one module each with ``add_arguments`` and ``run``; the
UI (and so textual) is imported only when the dashboard starts.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

from . import __version__

SUBCOMMANDS = {
    "snapshot": "take two samples and print every interface's rates",
    "parse": "show what linkdeck reads from a captured command output",
    "test": "run a bidirectional throughput test between two hosts",
    "matrix": "test every pair of hosts (each test measures both directions)",
    "hosts": "show how each host resolves through your ssh config",
    "diagnose": "find why a path is slow: both ends, their ceilings, the path, causes ranked",
    "mtu": "find the largest packet that gets through each way between two hosts",
    "flows": "show a host's busiest TCP flows and what limits each",
    "record": "record every host's raw samples, states and findings to a file",
    "report": "turn a recording into an HTML report with charts (or Markdown)",
    "replay": "open the dashboard on a recording",
}


def main_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="linkdeck",
        description="Watch the interfaces of this machine and of hosts over SSH, live.",
        epilog="sub-commands: "
        + "; ".join(f"{k}: {v}" for k, v in SUBCOMMANDS.items())
        + ". Run 'linkdeck COMMAND --help' for each.",
    )
    parser.add_argument("--version", action="version", version=f"linkdeck {__version__}")
    from .commands.shared import add_host_arguments

    add_host_arguments(parser)
    return parser


# Sub-commands that open the dashboard live in ui/ (commands/ stays headless).
_MODULES = {"replay": ".ui.replay_dashboard"}


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser ``linkdeck NAME`` reads its arguments with (the README's test parses its
    command lines with it)."""
    parser = argparse.ArgumentParser(prog=f"linkdeck {name}", description=SUBCOMMANDS[name])
    _module(name).add_arguments(parser)
    return parser


def _module(name: str) -> ModuleType:
    """The sub-command's module: ``add_arguments`` and ``run``."""
    return importlib.import_module(_MODULES.get(name, f".commands.{name}"), __package__)


def parse_subcommand(name: str, argv: list[str]) -> argparse.Namespace:
    """``argv`` read by sub-command ``name``'s parser, as ``linkdeck name ARGV`` reads it."""
    # intermixed: "record FILE --no-local h1 h2" takes h1 h2 as hosts after the option
    return subcommand_parser(name).parse_intermixed_args(join_dashed_values(argv))


# Options whose value may start with a dash: a time from a recording's end ("--at -30s"),
# which argparse would otherwise take for an option of its own.
_DASHED_VALUES = ("--at",)


def join_dashed_values(argv: list[str]) -> list[str]:
    """``argv`` with ``--at -30s`` written ``--at=-30s``; every other word as it was."""
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            out.append(word)
            out.extend(words)
            break
        if word in _DASHED_VALUES:
            value = next(words, None)
            if value is not None and value[:1] == "-" and value[1:2].isdigit():
                out.append(f"{word}={value}")
                continue
            out.append(word)
            if value is not None:
                out.append(value)
            continue
        out.append(word)
    return out


def _run_subcommand(name: str, argv: list[str]) -> int:
    return _module(name).run(parse_subcommand(name, argv))


# Options every command has: they may stand before the sub-command too, as in git and ip.
_SHARED_WITH_VALUE = ("--config", "--ssh-config")
_SHARED_FLAGS = ("--no-local",)


def split_command(argv: list[str]) -> tuple[str | None, list[str]]:
    """(sub-command or None for the dashboard, its arguments). The sub-command is the first
    word that is not a shared option or its value; shared options before it move after it, so
    ``linkdeck --config F snapshot`` is ``linkdeck snapshot --config F``. A word that names a
    sub-command is never read as a host."""
    before: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in _SHARED_WITH_VALUE and i + 1 < len(argv):
            before += argv[i : i + 2]
            i += 2
        elif word in _SHARED_FLAGS or word.split("=", 1)[0] in _SHARED_WITH_VALUE:
            before.append(word)
            i += 1
        elif word in SUBCOMMANDS:
            return word, argv[i + 1 :] + before
        else:
            break
    return None, argv


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from .core.logs import setup

    setup()
    name, argv = split_command(argv)
    if name is not None:
        from .commands.shared import PrintableStream

        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = PrintableStream(streams[0]), PrintableStream(streams[1])
        try:
            return _run_subcommand(name, argv)
        except KeyboardInterrupt:
            return 130
        finally:
            sys.stdout, sys.stderr = streams
    args = main_parser().parse_args(argv)
    misplaced = [h for h in args.hosts if h in SUBCOMMANDS]
    if misplaced:
        print(
            f"linkdeck: {misplaced[0]!r} is a sub-command, not a host: "
            f"put it before the hosts (linkdeck {misplaced[0]} …)",
            file=sys.stderr,
        )
        return 2
    from .commands.shared import ConfigError, resolve_hosts

    try:
        settings, hosts = resolve_hosts(args)
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    from .settings.config import find_config, ui_state_path
    from .ui.app import LinkdeckApp

    # the column choice (o) is kept in the user config dir, one file per config file
    LinkdeckApp(settings, hosts, state_path=ui_state_path(find_config(args.config))).run()
    return 0
