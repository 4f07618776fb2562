"""The ssh config read without an ssh client (Windows without OpenSSH): paramiko's parser and
matcher, with ``Include`` followed here, since paramiko does not.

Only used when no ``ssh`` is on PATH; ``ssh -G`` (ssh_options.py) is the faithful reader. The
answer has the shape of ``ssh -G``'s: lowercase keywords, each with its values, defaults
filled in as the client fills them, so one conversion (ssh_config.py) serves both.
"""

from __future__ import annotations

import glob
import io
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import paramiko

from ..core import bounded_read
from ..settings.config import ConfigError
from .ssh_defaults import OPENSSH_DEFAULT_IDENTITIES, local_user

# OpenSSH's READCONF_MAX_DEPTH: deeper than this is an Include loop.
MAX_INCLUDE_DEPTH = 16
EXEC_TIMEOUT_S = 30.0
SYSTEM_CONFIG = Path("/etc/ssh/ssh_config")
# Keywords this reader acts on; any other in the config is named once as not acted on.
UNDERSTOOD = frozenset(
    {
        "host",
        "match",
        "include",
        "hostname",
        "port",
        "user",
        "identityfile",
        "identitiesonly",
        "certificatefile",
        "proxyjump",
        "proxycommand",
        "userknownhostsfile",
        "globalknownhostsfile",
        "stricthostkeychecking",
        "connecttimeout",
        "hashknownhosts",
        "hostkeyalias",
        "canonicalizehostname",
        "canonicaldomains",
        "canonicalizemaxdots",
        "canonicalizefallbacklocal",
    }
)
# paramiko's own line syntax: a keyword, then '=' or blanks, then a value.
_LINE = re.compile(r"(\w+)(?:\s*=\s*|\s+)(.+)")


@dataclass
class BuiltinConfig:
    config: paramiko.SSHConfig
    not_understood: tuple[str, ...]  # keywords in the files that this reader does not act on
    # A Match final/canonical makes OpenSSH read the config a second time, matching Host
    # lines against the HostName then: paramiko's second pass matches the name given.
    final_pass: bool


def read(path: str | None) -> BuiltinConfig:
    """``path`` (the --ssh-config file, read alone as ``ssh -F`` does), else ~/.ssh/config
    then the system-wide /etc/ssh/ssh_config, Includes followed."""
    lines: list[str] = []
    keywords: set[str] = set()
    if path:
        _append(Path(path).expanduser(), Path("~/.ssh").expanduser(), lines, keywords, 0, required=True)
    else:
        _append(Path("~/.ssh/config").expanduser(), Path("~/.ssh").expanduser(), lines, keywords, 0)
        lines.append("Host *")  # the system file starts at the top level again
        _append(SYSTEM_CONFIG, SYSTEM_CONFIG.parent, lines, keywords, 0)
    config = _Config()
    try:
        config.parse(io.StringIO("\n".join(lines)))
    except paramiko.ssh_exception.ConfigParseError as exc:  # a Match paramiko cannot read
        raise ConfigError(Path(path) if path else None, f"ssh config: {exc}") from None
    final_pass = any(m["type"] in ("final", "canonical") for block in config._config for m in block.get("matches", []))
    return BuiltinConfig(config, tuple(sorted(keywords - UNDERSTOOD)), final_pass)


def _append(path: Path, base: Path, out: list[str], keywords: set[str], depth: int, required: bool = False) -> None:  # noqa: C901 - one branch per ssh_config keyword
    """``path``'s lines into ``out``, each Include replaced by the files it names."""
    try:
        raw = bounded_read.read_bytes(path, bounded_read.SSH_CONFIG_LIMIT, "an ssh config file")
    except OSError as exc:
        if required:
            raise ConfigError(path, f"cannot read ssh config: {exc.strerror or exc}") from None
        return  # a missing default file, or an Include naming none: as for ssh
    except bounded_read.TooLarge as exc:
        raise ConfigError(path, exc.reason) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            path, "ssh config is not UTF-8 text (a binary file?)", raw[: exc.start].count(b"\n") + 1
        ) from None
    header: str | None = None  # the Host/Match line of the block an Include stands in
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.fullmatch(stripped)
        if not match:
            raise ConfigError(path, f"ssh config: cannot read {stripped!r} (a line is 'Keyword value')", number)
        key, value = match.group(1).lower(), match.group(2)
        keywords.add(key)
        if key in ("host", "match"):
            header = stripped
        if key != "include":
            out.append(stripped)
            continue
        if depth >= MAX_INCLUDE_DEPTH:
            raise ConfigError(path, f"ssh config: Include nested more than {MAX_INCLUDE_DEPTH} deep (a loop?)", number)
        for pattern in _words(value):
            pattern = os.path.expanduser(pattern)
            if not os.path.isabs(pattern):
                pattern = str(base / pattern)  # relative: to ~/.ssh (or /etc/ssh for the system file)
            for name in sorted(glob.glob(pattern)):
                _append(Path(name), base, out, keywords, depth + 1)
        # OpenSSH restores the including block once the file ends.
        out.append(header or "Host *")


class _Config(paramiko.SSHConfig):
    """paramiko's matcher, but ``Match exec`` runs with stdin closed: paramiko runs it through
    invoke, which hands it our stdin — the dashboard's terminal."""

    def _does_match(self, match_list, target_hostname, canonical, final, options):
        for candidate in match_list:  # in order: OpenSSH stops at the first criterion that fails
            if candidate["type"] == "exec":
                command = self._tokenize(options, target_hostname, "match-exec", candidate["param"])
                if _exec_passes(command) == candidate["negate"]:
                    return False
            elif not super()._does_match([candidate], target_hostname, canonical, final, options):
                return False
        return bool(match_list)


def _exec_passes(command: str) -> bool:
    try:
        done = subprocess.run(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=EXEC_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise ConfigError(
            None, f"ssh config: Match exec {command!r} did not finish within {EXEC_TIMEOUT_S:g} s"
        ) from None
    return done.returncode == 0


def _words(value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError:
        return value.split()


def lookup(built: BuiltinConfig, host: str, user: str | None, port: int | None) -> dict[str, list[str]]:
    """The options for ``host`` in ``ssh -G``'s shape (a value list per keyword)."""
    seed = paramiko.SSHConfigDict()
    if user:
        seed["user"] = user  # as `ssh -l`: before the config, so first value wins and Match user sees it
    if port:
        seed["port"] = str(port)
    try:
        opts = _lookup_seeded(built, host, seed)
    except Exception as exc:  # paramiko raises several types for bad Match lines
        raise ConfigError(None, f"ssh config: cannot resolve {host!r}: {exc}") from None
    out: dict[str, list[str]] = {}
    for key, value in opts.items():
        if value is None:
            out[key] = ["none"]  # paramiko's ProxyCommand none
        else:
            out[key] = list(value) if isinstance(value, list) else [str(value)]
    home = os.path.expanduser("~")
    out.setdefault("hostname", [host])
    out.setdefault("port", ["22"])
    out.setdefault("user", [local_user()])
    out.setdefault("identityfile", list(OPENSSH_DEFAULT_IDENTITIES))
    out.setdefault("userknownhostsfile", [f"{home}/.ssh/known_hosts {home}/.ssh/known_hosts2"])
    out.setdefault("globalknownhostsfile", ["/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2"])
    out.setdefault("stricthostkeychecking", ["ask"])
    out.setdefault("connecttimeout", ["none"])
    out.setdefault("hashknownhosts", ["no"])
    return out


def _lookup_seeded(built: BuiltinConfig, host: str, seed: paramiko.SSHConfigDict) -> paramiko.SSHConfigDict:
    """SSHConfig.lookup, but with options known before the config (``ssh -l`` / ``-p``) and
    OpenSSH's final pass: lookup() has neither, so this is its body over paramiko's _lookup."""
    config = built.config
    options = config._lookup(host, seed)
    options.setdefault("hostname", host)
    if options.get("canonicalizehostname") in ("yes", "always") and host.count(".") <= int(
        options.get("canonicalizemaxdots", 1)
    ):
        host = config.canonicalize(host, options, options.get("canonicaldomains", "").split())
        options["hostname"] = host
        return config._lookup(host, options, canonical=True, final=True)
    return config._lookup(options["hostname"] if built.final_pass else host, options, canonical=False, final=True)
