"""What the dashboard and the headless commands share: settings and the host list."""

from __future__ import annotations

import argparse
import io
import json
import sys
from dataclasses import replace
from typing import Any, Mapping, TextIO

from ..core.units import printable
from ..settings.config import LOCAL, TRANSPORTS, ConfigError, HostSpec, Settings, host_from_arg, load

# The version of every JSON document a command prints (docs/schema/ holds their schemas): it
# goes up when a field changes meaning or goes away; added fields keep it.
SCHEMA_VERSION = 1

__all__ = [
    "SCHEMA_VERSION",
    "ConfigError",
    "PrintableStream",
    "add_config_arguments",
    "add_host_arguments",
    "load_settings",
    "print_json",
    "resolve_hosts",
]


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", metavar="FILE", help="config file (default: $LINKDECK_CONFIG, then the user config dir)"
    )
    parser.add_argument("--ssh-config", metavar="FILE", help="ssh client config (default: ~/.ssh/config)")
    parser.add_argument(
        "--transport",
        choices=TRANSPORTS,
        help="how to reach SSH hosts: your OpenSSH client (its master connections, keys, agent, certificates), "
        "paramiko, or auto (default, or [ssh] transport: OpenSSH where a client with -G and ControlMaster is on PATH, "
        "else paramiko; docs/SSH.md)",
    )


def add_host_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser)
    parser.add_argument("--no-local", action="store_true", help="do not watch this machine")
    parser.add_argument(
        "--prometheus", metavar="URL", help="also watch every node_exporter target of this Prometheus server"
    )
    parser.add_argument(
        "--match",
        metavar="SELECTOR",
        help="only the Prometheus targets matching these labels, e.g. '{job=\"storage\"}'",
    )
    parser.add_argument(
        "hosts", nargs="*", metavar="HOST", help="user@host[:port], an ssh alias, or a configured host's name"
    )


def print_json(document: Mapping[str, Any], out: TextIO | None = None) -> None:
    """A command's JSON on stdout: its schema_version first, indented, one newline after."""
    out = out or sys.stdout
    json.dump({"schema_version": SCHEMA_VERSION, **document}, out, indent=2)
    out.write("\n")


def load_settings(args: argparse.Namespace) -> Settings:
    """The config file's settings with the command line's ``--ssh-config`` on top."""
    settings = load(getattr(args, "config", None))
    if getattr(args, "ssh_config", None):
        settings = replace(settings, ssh_config=args.ssh_config)
    if getattr(args, "transport", None):
        settings = replace(settings, transport=args.transport, transport_set_by="--transport")
    return settings


def resolve_hosts(args: argparse.Namespace) -> tuple[Settings, list[HostSpec]]:
    """Settings from the config file plus the hosts to watch: local (unless --no-local or
    ``local = false``), the configured hosts, then those named on the command line. Hosts
    named on the command line replace the configured list rather than adding to it."""
    settings = load_settings(args)
    named = [host_from_arg(h, settings.hosts) for h in getattr(args, "hosts", [])]
    remote = [h for h in named if not h.local] if named else list(settings.hosts)
    want_local = settings.local and not getattr(args, "no_local", False)
    if named:
        want_local = want_local or any(h.local for h in named)
    hosts = ([LOCAL] if want_local else []) + remote
    settings = with_prometheus(settings, args)
    if not hosts and settings.prometheus is None:
        raise ConfigError(None, "no hosts to watch: drop --no-local, name a HOST or give --prometheus URL")
    check_ssh_config(settings, remote)
    return settings, hosts


def check_ssh_config(settings: Settings, hosts: list[HostSpec]) -> None:
    """A broken ssh config is the user's to fix before anything connects: one ConfigError with
    file:line now, not a host that fails (or retries) later. Every remote host is resolved
    here, once for the run (``ssh -G`` each, then cached), so connecting costs no config reading."""
    remote = [h for h in hosts if not h.local]
    if not remote:
        return
    from concurrent.futures import ThreadPoolExecutor

    from ..transport.ssh_options import builtin_notes, check_readable, not_understood_note

    check_readable(settings.ssh_config)
    from ..transport.choice import choose

    choose(settings)  # --transport openssh without a client that can: said now, once
    # ssh -G costs a process start per host: a few at a time, so fifty hosts start quickly
    with ThreadPoolExecutor(max_workers=min(8, len(remote)), thread_name_prefix="linkdeck-resolve") as pool:
        problems = list(pool.map(lambda spec: _config_problem(spec, settings), remote))
    for problem in problems:
        if problem is not None:
            raise problem
    notes = builtin_notes(settings.ssh_config)
    if notes:
        print(f"linkdeck: {not_understood_note(notes)}", file=sys.stderr)


def _config_problem(spec: HostSpec, settings: Settings) -> ConfigError | None:
    from ..transport.runner import Unreachable
    from ..transport.ssh_config import resolve

    try:
        resolve(spec, settings)
    except ConfigError as exc:
        return exc
    except Unreachable:
        pass  # a destination that cannot be one is that host's state, shown on its row
    return None


def with_prometheus(settings: Settings, args: argparse.Namespace) -> Settings:
    """``--prometheus`` and ``--match`` over the config's ``[prometheus]`` section."""
    url, match = getattr(args, "prometheus", None), getattr(args, "match", None)
    if url is None and match is None:
        return settings
    from ..settings.prometheus_section import PrometheusConfig, SelectorError, check_url, matchers

    base = settings.prometheus
    try:
        if url is not None:
            cfg = replace(base, url=check_url(url)) if base is not None else PrometheusConfig(url=check_url(url))
        elif base is not None:
            cfg = base
        else:
            raise ConfigError(
                None, "--match needs a Prometheus: give --prometheus URL or [prometheus] url in the config"
            )
        if match is not None:
            cfg = replace(cfg, match=matchers(match))
    except SelectorError as exc:
        raise ConfigError(None, str(exc)) from None
    return replace(settings, prometheus=cfg)


class PrintableStream(io.TextIOBase):
    """An output stream that shows control characters (ESC, BEL, CR …) as ``\\xNN`` on the way
    out. Every headless command writes through one (cli.main wraps stdout and stderr), so an
    interface name or a host's message cannot drive the terminal, whichever line prints it."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write("\n".join(printable(line) for line in text.split("\n")))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()
