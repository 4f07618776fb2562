"""Which parser reads which command's output on which OS, for `linkdeck parse` and the
adapters' contract tests.

Every parser module lists what it reads in a module-level ``COMMANDS`` tuple of
:class:`Entry`; this module only knows the module names, so adding a parser touches one line.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..core.oses import canonical, family

# Modules that hold parsers; each defines COMMANDS.
MODULES = (
    "proc_net_dev",
    "sysfs_linux",
    "ip_link",
    "ethtool",
    "iperf3",
    "netstat_bsd",
    "ifconfig_bsd",
    "ifconfig_linux",
    "dladm",
    "kstat",
    "ipadm",
    "ip_route",
    "route_get",
    "netstat_route",
    "proc_net_snmp",
    "netstat_tcp_bsd",
    "kstat_tcp",
    "ss_tcp",
    "connstat",
)


@dataclass(frozen=True)
class Entry:
    """One command a parser reads.

    ``pattern`` is matched (re.fullmatch) against the command with runs of spaces collapsed;
    ``oses`` are names from ``oses.OSES`` or families ("linux", "bsd", "illumos");
    ``parse(text, os_name)`` returns a list of IfaceRecord, or for iperf3 its own result type,
    and raises ParseError on output it cannot read.
    """

    pattern: str
    oses: frozenset[str]
    parse: Callable[..., Any]
    description: str = ""
    # For a parser that reads on past a part it cannot read: ``read(text, os_name)`` gives what
    # ``parse`` gives and one line for each part left out, so the caller can say what is missing.
    read: Callable[..., tuple[Any, list[str]]] | None = None

    def matches(self, os_name: str, command: str) -> bool:
        if canonical(os_name) not in self.oses and family(os_name) not in self.oses:
            return False
        return re.fullmatch(self.pattern, command) is not None


def normalise(command: str) -> str:
    return " ".join(command.split())


def entries() -> list[Entry]:
    out: list[Entry] = []
    for name in MODULES:
        module = importlib.import_module(f"{__package__}.{name}")
        out.extend(getattr(module, "COMMANDS", ()))
    return out


def find(os_name: str, command: str) -> Entry | None:
    command = normalise(command)
    for entry in entries():
        if entry.matches(os_name, command):
            return entry
    return None
