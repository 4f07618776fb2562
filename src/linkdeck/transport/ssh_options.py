"""What the user's ssh config says for one host: asked of the ssh client itself (``ssh -G``),
or, with no client on PATH, of the built-in reader (ssh_builtin.py).

The only faithful reader of an OpenSSH config is OpenSSH: ``ssh -G`` evaluates Include, every
Match criterion, negated patterns, tokens, CanonicalizeHostname and the system-wide config,
and prints the result without connecting. Each (host, user, port) is asked once per run —
again only if the config file itself changes — so reconnects and ticks never run it.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import bounded_read
from ..settings.config import ConfigError

if TYPE_CHECKING:
    from . import ssh_builtin

SSH_G = "ssh -G"
BUILTIN = "built-in parser"
# A Match exec command that hangs must not hold a host's start for ever.
SSH_G_TIMEOUT_S = 30.0
# What may reach ssh's command line as a host or user name: no option ('-…'), no shell
# metacharacter (Match exec and ProxyCommand substitute %h and %r into shell commands).
_HOST = re.compile(r"[\w:][\w.:%-]*")
_USER = re.compile(r"[\w.][\w.@+-]*")
# getopt's words for an option it does not know: OpenSSH before 6.8, or an ssh that is not
# OpenSSH's ("unknown option -- G", glibc's "invalid option -- 'G'", "illegal option -- G")
_NO_DASH_G = re.compile(r"(unknown|invalid|illegal) option\W{0,4}G\b", re.IGNORECASE)
# "/path/config line 3: Bad configuration option: foo"
_WHERE = re.compile(r"(?P<path>.+?) line (?P<line>\d+): (?P<message>.+)")

Options = dict[str, list[str]]
_log = logging.getLogger("linkdeck.ssh")
_cache: dict[tuple, tuple[str, Options]] = {}
_cache_lock = threading.Lock()
_key_locks: dict[tuple, threading.Lock] = {}
_builtin: dict[tuple, ssh_builtin.BuiltinConfig] = {}
_said: set[tuple[str, ...]] = set()
_said_no_g: set[str] = set()


def ssh_client() -> str | None:
    return _which_ssh(os.environ.get("PATH", os.defpath))


@functools.lru_cache(maxsize=8)
def _which_ssh(path: str) -> str | None:
    return shutil.which("ssh", path=path)


def options(host: str, user: str | None, port: int | None, config_path: str | None) -> tuple[str, Options]:
    """(source, options) for ``host`` as ``ssh [-F config_path] [-l user] [-p port] host``
    would connect to it."""
    if not _HOST.fullmatch(host):
        raise ConfigError(
            None,
            f"not a host name ssh accepts: {host!r} (letters, digits, '.', '-', '_', ':' only, not starting with '-')",
        )
    if user is not None and not _USER.fullmatch(user):
        raise ConfigError(
            None,
            "not a user name ssh accepts: "
            f"{user!r} (letters, digits, '.', '-', '_', '@', '+' only, not starting with '-')",
        )
    client = ssh_client()
    key = (client, config_path, _signature(config_path), host, user, port)
    with _cache_lock:
        lock = _key_locks.setdefault(key, threading.Lock())
    with lock:  # one run per key even when several hosts' threads ask at once
        if key not in _cache:
            answer = _ssh_g(client, host, user, port, config_path) if client is not None else None
            if answer is not None:
                _cache[key] = (SSH_G, answer)
            else:  # no ssh, or one that does not know -G
                from . import ssh_builtin  # paramiko's parser: loaded only when it is used

                _cache[key] = (BUILTIN, ssh_builtin.lookup(_builtin_config(config_path), host, user, port))
        return _cache[key]


# A name no Host or Match block can be about: what ssh says of every host alike.
_NOBODY = "linkdeck-no-such-host.invalid"
_NAMES_ITSELF = frozenset({"host", "hostname", "originalhost"})


def config_knows(host: str, config_path: str | None) -> bool:
    """Whether the ssh config says something of ``host`` that it does not say of every host (a
    Host or Match block for it): ``ssh -G`` answers for any name, so compare with a name no
    block can match. A name ssh would not accept is known to nobody."""
    try:
        _, mine = options(host, None, None, config_path)
        _, anyone = options(_NOBODY, None, None, config_path)
    except ConfigError:
        return False
    strip = lambda o: {k: v for k, v in o.items() if k not in _NAMES_ITSELF}  # noqa: E731
    return strip(mine) != strip(anyone) or mine.get("hostname") != [host]


def _signature(config_path: str | None) -> tuple:
    """The named config file's identity and age: a changed file is read again."""
    path = Path(config_path or "~/.ssh/config").expanduser()
    try:
        st = path.stat()
    except OSError:
        return ()
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def check_readable(config_path: str | None) -> None:
    """The file named by --ssh-config / ssh_config must be there (ssh would only say "Can't open
    user config file"), and be text."""
    if not config_path:
        return
    path = Path(config_path).expanduser()
    try:
        raw = bounded_read.read_bytes(path, bounded_read.SSH_CONFIG_LIMIT, "an ssh config file")
    except OSError as exc:
        raise ConfigError(path, f"cannot read ssh config: {exc.strerror or exc}") from None
    except bounded_read.TooLarge as exc:
        raise ConfigError(path, exc.reason) from None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            path, "ssh config is not UTF-8 text (a binary file?)", raw[: exc.start].count(b"\n") + 1
        ) from None


def ssh_g_argv(client: str, host: str, user: str | None, port: int | None, config_path: str | None) -> list[str]:
    argv = [client, "-G"]
    if config_path:
        argv += ["-F", str(Path(config_path).expanduser())]
    if user:
        argv += ["-l", user]
    if port:
        argv += ["-p", str(port)]
    return argv + ["--", host]  # after "--" a name is never read as an option


def _ssh_g(client: str, host: str, user: str | None, port: int | None, config_path: str | None) -> Options | None:
    """ssh's own resolution; None when this ssh has no -G."""
    check_readable(config_path)
    argv = ssh_g_argv(client, host, user, port, config_path)
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=SSH_G_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ConfigError(
            None,
            f"`ssh -G {host}` did not finish within {SSH_G_TIMEOUT_S:g} s: "
            "does a Match exec command in your ssh config hang?",
        ) from None
    except OSError as exc:
        raise ConfigError(None, f"cannot run {client}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        stderr = proc.stderr.decode(errors="replace")
        if _NO_DASH_G.search(stderr):
            if client not in _said_no_g:
                _said_no_g.add(client)
                _log.warning(
                    "%s does not know -G (OpenSSH before 6.8, or not OpenSSH): "
                    "reading the ssh config with the built-in parser",
                    client,
                )
            return None
        raise _ssh_error(host, stderr)
    out: Options = {}
    for line in proc.stdout.decode(errors="replace").splitlines():
        key, _, value = line.partition(" ")
        if key:
            out.setdefault(key.lower(), []).append(value)
    return out


def _ssh_error(host: str, stderr: str) -> ConfigError:
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("Pseudo-terminal")]
    for line in lines:
        where = _WHERE.fullmatch(line.strip())
        if where:
            return ConfigError(Path(where["path"]), f"ssh config: {where['message']}", int(where["line"]))
    first = lines[0].strip() if lines else "no message"
    return ConfigError(None, f"`ssh -G {host}` failed: {first}")


def _builtin_config(config_path: str | None) -> ssh_builtin.BuiltinConfig:
    key = (config_path, _signature(config_path))
    with _cache_lock:
        if key not in _builtin:
            from . import ssh_builtin  # paramiko's parser: loaded only when it is used

            _builtin[key] = built = ssh_builtin.read(config_path)
            if built.not_understood and built.not_understood not in _said:
                _said.add(built.not_understood)
                _log.warning("%s", not_understood_note(built.not_understood))
        return _builtin[key]


def builtin_notes(config_path: str | None) -> tuple[str, ...]:
    """The keywords the built-in reader did not act on, once it has been used for this
    config (never when every host came from ssh -G)."""
    with _cache_lock:
        built = _builtin.get((config_path, _signature(config_path)))
    return built.not_understood if built else ()


def not_understood_note(keywords: tuple[str, ...]) -> str:
    return (
        f"no ssh client that knows -G: linkdeck read the ssh config itself and does not act on "
        f"{', '.join(keywords)}; install the OpenSSH client for ssh's own reading"
    )


__all__ = ["BUILTIN", "SSH_G", "Options", "builtin_notes", "check_readable", "options", "ssh_client", "ssh_g_argv"]
