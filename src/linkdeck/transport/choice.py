"""Which SSH transport a run uses, and why: the user's OpenSSH client (openssh.py) or
paramiko (ssh.py).

``auto`` picks OpenSSH where an ``ssh`` on PATH is OpenSSH 6.8 or later (``-G`` to read the
config; ControlMaster and ControlPersist are older), paramiko otherwise (Windows without the
OpenSSH client, very old clients). ``--transport`` or ``[ssh] transport`` choose one outright.
"""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass

from ..settings.config import TRANSPORTS, ConfigError, Settings
from .ssh_options import ssh_client

OPENSSH = "openssh"
PARAMIKO = "paramiko"
# OpenSSH 6.8 brought -G (ControlMaster came with 3.9, ControlPersist with 5.6).
MIN_OPENSSH = (6, 8)
_VERSION = re.compile(r"OpenSSH_(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class Choice:
    name: str  # "openssh" or "paramiko"
    why: str  # one line: what chose it
    client: str | None = None  # the ssh client, for openssh


@functools.lru_cache(maxsize=8)
def _client_version(client: str) -> str:
    try:
        done = subprocess.run([client, "-V"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"(cannot run: {exc})"
    return (
        (done.stderr or done.stdout).strip().splitlines()[0] if (done.stderr or done.stdout).strip() else "(no version)"
    )


def openssh_client() -> tuple[str | None, str]:
    """(the ssh client to use, or None; one line on what it is or why it will not do)."""
    client = ssh_client()
    if client is None:
        return None, "no ssh client on PATH"
    version = _client_version(client)
    found = _VERSION.search(version)
    if not found:
        return None, f"{client} is not OpenSSH ({version})"
    if (int(found[1]), int(found[2])) < MIN_OPENSSH:
        return None, f"{client} is {found[0]}, older than OpenSSH {MIN_OPENSSH[0]}.{MIN_OPENSSH[1]} (no -G)"
    return client, f"{client} is {found[0]}, with -G and ControlMaster"


def choose(settings: Settings) -> Choice:
    """The transport for this run's SSH hosts. ConfigError when OpenSSH is asked for and there
    is no client that can do it."""
    asked = settings.transport
    by = settings.transport_set_by or "the default"
    if asked not in TRANSPORTS:
        raise ConfigError(None, f"transport must be one of {', '.join(TRANSPORTS)}, not {asked!r}")
    if asked == PARAMIKO:
        return Choice(PARAMIKO, f"paramiko, as {by} asks")
    client, what = openssh_client()
    if asked == OPENSSH:
        if client is None:
            raise ConfigError(
                None, f"--transport openssh needs the OpenSSH client: {what}; install it, or use --transport paramiko"
            )
        return Choice(OPENSSH, f"OpenSSH, as {by} asks: {what}", client)
    if client is not None:
        return Choice(OPENSSH, f"auto ({by}): {what}", client)
    return Choice(PARAMIKO, f"auto ({by}): {what}, so paramiko")


__all__ = ["OPENSSH", "PARAMIKO", "Choice", "choose", "openssh_client"]
