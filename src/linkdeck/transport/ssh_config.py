"""A HostSpec plus the user's ssh client config → everything needed to open one connection.

paramiko.SSHConfig does the matching (Host/Match blocks, first value wins, %-tokens); this
module turns its dict into a typed :class:`SshTarget`, with the HostSpec's own fields taking
precedence over the config file, and resolves a ProxyJump hop through the same config (a jump
host is just another alias).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, replace
from pathlib import Path

import paramiko

from ..config import ConfigError, HostSpec, Settings
from .base import Unreachable

DEFAULT_PORT = 22
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_KNOWN_HOSTS = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
GLOBAL_KNOWN_HOSTS = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")
# The keys OpenSSH tries when the config names no IdentityFile.
DEFAULT_IDENTITIES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")
# A chain longer than this is a loop in the config (a ProxyJump naming itself, A↔B).
MAX_JUMPS = 4


@dataclass(frozen=True, slots=True)
class SshTarget:
    """One SSH destination, fully resolved."""

    alias: str  # what the user wrote (HostSpec.address or a ProxyJump element)
    hostname: str  # what to connect to (HostName)
    port: int
    user: str
    identity_files: tuple[str, ...]  # expanded paths, in the order to try them
    identities_only: bool  # only the identity files (and agent keys matching them)
    explicit_identity: bool  # IdentityFile was given: do not fall back to the default keys
    connect_timeout: float
    known_hosts_files: tuple[str, ...]  # every file a key is looked up in
    known_hosts_write: str | None  # where trusted keys go: the user's own file; None: nowhere
    host_key_alias: str | None  # HostKeyAlias: the known_hosts name instead of hostname
    strict_host_key_checking: str | None  # as the config says: yes/no/accept-new/ask/off
    hash_known_hosts: bool
    proxy_command: str | None
    jump: "SshTarget | None"

    @property
    def display(self) -> str:
        where = self.hostname if self.port == DEFAULT_PORT else f"{self.hostname}:{self.port}"
        return f"{self.user}@{where}"

    @property
    def known_hosts_name(self) -> str:
        """The name this host's key is stored under: ``host`` or ``[host]:port``."""
        host = self.host_key_alias or self.hostname
        return host if self.port == DEFAULT_PORT else f"[{host}]:{self.port}"


def load_ssh_config(path: str | None) -> paramiko.SSHConfig:
    """The ssh client config: ``path`` when given (it must exist), else ~/.ssh/config if
    present, else an empty one."""
    if path:
        p = Path(path).expanduser()
        try:
            return _parsed(p, p.read_bytes())
        except OSError as exc:
            raise ConfigError(p, f"cannot read ssh config: {exc.strerror or exc}") from None
    default = Path("~/.ssh/config").expanduser()
    if default.is_file():
        try:
            raw = default.read_bytes()
        except OSError:
            raw = None  # unreadable default config: behave as ssh does without one
        if raw is not None:
            return _parsed(default, raw)
    return paramiko.SSHConfig()


def _parsed(path: Path, raw: bytes) -> paramiko.SSHConfig:
    """paramiko's reading of the file, its complaints as one ConfigError with file:line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(path, "ssh config is not UTF-8 text (a binary file?)", line) from None
    config = paramiko.SSHConfig()
    try:
        config.parse(io.StringIO(text))
    except paramiko.ssh_exception.ConfigParseError as exc:
        bad = str(exc).removeprefix("Unparsable line").strip()
        line = next((n for n, ln in enumerate(text.splitlines(), 1) if ln.strip() == bad), None)
        raise ConfigError(path, f"ssh config: cannot read {bad!r} (a line is 'Keyword value')", line) from None
    return config


def resolve(spec: HostSpec, settings: Settings, config: paramiko.SSHConfig | None = None) -> SshTarget:
    """Resolve a remote HostSpec; HostSpec fields override what the ssh config says."""
    if spec.address is None:
        raise ValueError("the local host has no ssh target")
    if config is None:
        config = load_ssh_config(settings.ssh_config)
    target = _lookup(spec.address, config, settings)
    changes: dict[str, object] = {}
    if spec.user:
        changes["user"] = spec.user
    if spec.port:
        changes["port"] = spec.port
    if spec.identity_file:
        changes["identity_files"] = (_expand(spec.identity_file),)
        changes["explicit_identity"] = True
    if spec.jump:
        changes["jump"] = _resolve_jump(spec.jump, config, settings, depth=1)
        changes["proxy_command"] = None
    return replace(target, **changes) if changes else target


def _lookup(dest: str, config: paramiko.SSHConfig, settings: Settings, depth: int = 0) -> SshTarget:
    user, host, port = split_destination(dest)
    try:
        opts = config.lookup(host)
    except Exception as exc:  # paramiko raises several types for bad Match/Include lines
        raise ConfigError(None, f"ssh config: cannot resolve {host!r}: {exc}") from None
    identity = [_expand(p) for p in opts.get("identityfile", [])]
    known, write = _known_hosts_files(opts, settings)
    jump = None
    proxy_command = opts.get("proxycommand")
    if proxy_command and proxy_command.strip().lower() == "none":
        proxy_command = None
    proxy_jump = opts.get("proxyjump")
    if proxy_jump and proxy_jump.strip().lower() != "none":
        jump = _resolve_jump(proxy_jump, config, settings, depth + 1)
        proxy_command = None  # OpenSSH: ProxyJump and ProxyCommand exclude each other; first wins
    return SshTarget(
        alias=dest,
        hostname=opts.get("hostname", host),
        port=port or _int(opts.get("port"), DEFAULT_PORT, "Port", host),
        user=user or opts.get("user") or _local_user(),
        identity_files=tuple(identity) if identity else tuple(_expand(p) for p in DEFAULT_IDENTITIES),
        identities_only=_yes(opts.get("identitiesonly")),
        explicit_identity=bool(identity),
        connect_timeout=float(_int(opts.get("connecttimeout"), DEFAULT_CONNECT_TIMEOUT, "ConnectTimeout", host)),
        known_hosts_files=known,
        known_hosts_write=write,
        host_key_alias=opts.get("hostkeyalias"),
        strict_host_key_checking=(opts.get("stricthostkeychecking") or "").lower() or None,
        hash_known_hosts=_yes(opts.get("hashknownhosts")),
        proxy_command=proxy_command,
        jump=jump,
    )


def _resolve_jump(value: str, config: paramiko.SSHConfig, settings: Settings, depth: int) -> SshTarget:
    """``ProxyJump a,b``: connect to a, through it to b, through b to the target."""
    if depth > MAX_JUMPS:
        raise ConfigError(None, f"ssh config: ProxyJump chain longer than {MAX_JUMPS} hops (a loop?) at {value!r}")
    hops = [h.strip() for h in value.split(",") if h.strip()]
    if not hops:
        raise ConfigError(None, f"ssh config: empty ProxyJump {value!r}")
    last = _lookup(hops[-1].removeprefix("ssh://"), config, settings, depth)
    if len(hops) > 1:
        last = replace(last, jump=_resolve_jump(",".join(hops[:-1]), config, settings, depth + 1), proxy_command=None)
    return last


def hops(target: SshTarget) -> list[SshTarget]:
    """The connection chain: jump hosts first (outermost first), the target last."""
    chain = [target]
    while chain[0].jump is not None:
        chain.insert(0, chain[0].jump)
    return chain


def split_destination(dest: str) -> tuple[str | None, str, int | None]:
    """``[user@]host[:port]`` (``[v6addr]:port`` too) → (user, host, port)."""
    user = None
    if "@" in dest:
        user, dest = dest.rsplit("@", 1)
    port = None
    if dest.startswith("["):
        host, _, rest = dest[1:].partition("]")
        if rest.startswith(":") and rest[1:].isdigit():
            port = int(rest[1:])
    elif dest.count(":") == 1:
        host, _, p = dest.partition(":")
        if not p.isdigit():
            raise Unreachable(f"not a destination: {dest!r} (port must be a number)")
        port = int(p)
    else:
        host = dest
    if not host:
        raise Unreachable(f"not a destination: {dest!r}")
    return user or None, host, port


def _known_hosts_files(opts: paramiko.SSHConfigDict, settings: Settings) -> tuple[tuple[str, ...], str | None]:
    """(every file to look keys up in, the file trusted keys are written to).

    Keys are written only to the user's own file: linkdeck's ``known_hosts`` setting, else the
    first UserKnownHostsFile. ``none`` names no file (never one called "none"), and the
    system-wide files are only read: with ``UserKnownHostsFile none`` there is nowhere to write.
    """
    user: list[str] = []
    if settings.known_hosts:
        user.append(_expand(settings.known_hosts))
    user_files = opts.get("userknownhostsfile")
    user.extend(_expand(p) for p in (user_files.split() if user_files else DEFAULT_KNOWN_HOSTS) if p.lower() != "none")
    global_files = opts.get("globalknownhostsfile")
    system = [_expand(p) for p in (global_files.split() if global_files else GLOBAL_KNOWN_HOSTS) if p.lower() != "none"]
    return tuple(dict.fromkeys(user + system)), (user[0] if user else None)


def _expand(path: str) -> str:
    return os.path.expandvars(os.path.expanduser(path))


def _yes(value: str | None) -> bool:
    return (value or "").lower() in ("yes", "true")


def _int(value: str | None, default: float, key: str, host: str):
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ConfigError(None, f"ssh config: {key} for {host!r} is not a number: {value!r}") from None


def _local_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no USER and no passwd entry (a bare container)
        return "root"
