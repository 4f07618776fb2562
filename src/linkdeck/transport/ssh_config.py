"""A HostSpec plus the user's ssh client config → everything needed to open one connection.

ssh_options.py says what the config holds for a host (``ssh -G``'s answer, or the built-in
reader's in the same shape); this module turns it into a typed :class:`SshTarget`, with the
HostSpec's own fields taking precedence, expands the %-tokens ``ssh -G`` leaves for connect
time, and resolves each ProxyJump hop the same way (a jump host is just another alias).
"""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass, replace

from ..settings.config import ConfigError, HostSpec, Settings
from . import ssh_options
from .runner import Unreachable
from .ssh_defaults import OPENSSH_DEFAULT_IDENTITIES, local_user as _local_user

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
    certificate_files: tuple[str, ...]  # CertificateFile: user certificates, expanded
    connect_timeout: float
    known_hosts_files: tuple[str, ...]  # every file a key is looked up in
    known_hosts_write: str | None  # where trusted keys go: the user's own file; None: nowhere
    host_key_alias: str | None  # HostKeyAlias: the known_hosts name instead of hostname
    strict_host_key_checking: str | None  # as the config says: yes/no/accept-new/ask/off
    hash_known_hosts: bool
    proxy_command: str | None
    jump: "SshTarget | None"
    source: str = ssh_options.SSH_G  # who resolved it: "ssh -G" or the built-in parser
    # The config's own connection sharing (ControlMaster on and a ControlPath, as ``ssh -G``
    # prints it, tokens expanded): the OpenSSH transport uses that master. None: not set.
    control_path: str | None = None
    control_persist: str | None = None

    @property
    def display(self) -> str:
        where = self.hostname if self.port == DEFAULT_PORT else f"{self.hostname}:{self.port}"
        return f"{self.user}@{where}"

    @property
    def known_hosts_name(self) -> str:
        """The name this host's key is stored under: ``host`` or ``[host]:port``."""
        host = self.host_key_alias or self.hostname
        return host if self.port == DEFAULT_PORT else f"[{host}]:{self.port}"


def resolve(spec: HostSpec, settings: Settings) -> SshTarget:
    """Resolve a remote HostSpec as ``ssh`` would connect to it; the HostSpec's user and port
    are given to the resolution as ``ssh -l``/``-p`` would be (so ``Match user`` sees them),
    its identity file and jump replace the config's."""
    if spec.address is None:
        raise ValueError("the local host has no ssh target")
    user, host, port = split_destination(spec.address)
    target = _lookup(spec.address, host, spec.user or user, spec.port or port, settings, 0, jump=spec.jump is None)
    if spec.identity_file:
        target = replace(target, identity_files=(_expand(spec.identity_file),), explicit_identity=True)
    if spec.jump:
        target = replace(target, jump=_resolve_jump(spec.jump, settings, depth=1), proxy_command=None)
    return target


def _lookup(
    dest: str, host: str, user: str | None, port: int | None, settings: Settings, depth: int, jump: bool = True
) -> SshTarget:
    source, opts = ssh_options.options(host, user, port, settings.ssh_config)

    def one(key: str, default: str | None = None) -> str | None:
        values = opts.get(key)
        return values[0] if values else default

    hostname = one("hostname", host) or host
    port_n = _int(one("port"), DEFAULT_PORT, "Port", host)
    user_s = one("user") or _local_user()
    tokens = _tokens(host, hostname, port_n, user_s, one("hostkeyalias"))
    raw_identities = opts.get("identityfile", [])
    explicit = not _is_default_identities(raw_identities)
    known, write = _known_hosts_files(one("userknownhostsfile"), one("globalknownhostsfile"), settings, tokens)
    proxy_command = one("proxycommand")
    if proxy_command and proxy_command.strip().lower() == "none":
        proxy_command = None
    proxy_jump = one("proxyjump")
    target_jump = None
    if jump and proxy_jump and proxy_jump.strip().lower() != "none":
        target_jump = _resolve_jump(_expand_tokens(proxy_jump, tokens), settings, depth + 1)
        proxy_command = None  # OpenSSH: ProxyJump and ProxyCommand exclude each other; first wins
    timeout = one("connecttimeout")
    strict = (one("stricthostkeychecking") or "").lower()
    control_path = _control_path(one("controlmaster"), one("controlpath")) if source == ssh_options.SSH_G else None
    return SshTarget(
        alias=dest,
        hostname=hostname,
        port=port_n,
        user=user_s,
        identity_files=tuple(_expand(_expand_tokens(p, tokens)) for p in raw_identities)
        if explicit
        else tuple(_expand(p) for p in DEFAULT_IDENTITIES),
        identities_only=_yes(one("identitiesonly")),
        explicit_identity=explicit,
        certificate_files=tuple(_expand(_expand_tokens(p, tokens)) for p in opts.get("certificatefile", [])),
        connect_timeout=float(
            DEFAULT_CONNECT_TIMEOUT
            if timeout in (None, "none")
            else _int(timeout, DEFAULT_CONNECT_TIMEOUT, "ConnectTimeout", host)
        ),
        known_hosts_files=known,
        known_hosts_write=write,
        host_key_alias=one("hostkeyalias"),
        # ssh -G says true/false for yes/no
        strict_host_key_checking={"true": "yes", "false": "no"}.get(strict, strict) or None,
        hash_known_hosts=_yes(one("hashknownhosts")),
        proxy_command=_expand_tokens(proxy_command, tokens) if proxy_command else None,
        jump=target_jump,
        source=source,
        control_path=control_path,
        control_persist=one("controlpersist") if control_path else None,
    )


def _resolve_jump(value: str, settings: Settings, depth: int) -> SshTarget:
    """``ProxyJump a,b``: connect to a, through it to b, through b to the target — each hop
    resolved as ``ssh -J a b`` does: b's own ProxyJump only when it is the first hop."""
    if depth > MAX_JUMPS:
        raise ConfigError(None, f"ssh config: ProxyJump chain longer than {MAX_JUMPS} hops (a loop?) at {value!r}")
    hops = [h.strip() for h in value.split(",") if h.strip()]
    if not hops:
        raise ConfigError(None, f"ssh config: empty ProxyJump {value!r}")
    dest = hops[-1].removeprefix("ssh://")
    user, host, port = split_destination(dest)
    last = _lookup(dest, host, user, port, settings, depth, jump=len(hops) == 1)
    if len(hops) > 1:
        last = replace(last, jump=_resolve_jump(",".join(hops[:-1]), settings, depth + 1), proxy_command=None)
    return last


def _control_path(master: str | None, path: str | None) -> str | None:
    if (master or "no").lower() in ("no", "false") or not path or path.lower() == "none":
        return None
    return _expand(path)


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


def _known_hosts_files(
    user_files: str | None, global_files: str | None, settings: Settings, tokens: dict[str, str]
) -> tuple[tuple[str, ...], str | None]:
    """(every file to look keys up in, the file trusted keys are written to).

    Keys are written only to the user's own file: linkdeck's ``known_hosts`` setting, else the
    first UserKnownHostsFile. ``none`` names no file (never one called "none"), and the
    system-wide files are only read: with ``UserKnownHostsFile none`` there is nowhere to write.
    """
    user: list[str] = []
    if settings.known_hosts:
        user.append(_expand(settings.known_hosts))
    names = user_files.split() if user_files else DEFAULT_KNOWN_HOSTS
    user.extend(_expand(_expand_tokens(p, tokens)) for p in names if p.lower() != "none")
    names = global_files.split() if global_files else GLOBAL_KNOWN_HOSTS
    system = [_expand(_expand_tokens(p, tokens)) for p in names if p.lower() != "none"]
    return tuple(dict.fromkeys(user + system)), (user[0] if user else None)


def _is_default_identities(files: list[str]) -> bool:
    """ssh -G lists its default keys when the config names none: that list (whichever of them
    this OpenSSH version has) is not an IdentityFile the user gave."""
    defaults = {_expand(p) for p in OPENSSH_DEFAULT_IDENTITIES}
    return not files or (len(files) >= 3 and {_expand(p) for p in files} <= defaults)


def _tokens(original: str, hostname: str, port: int, user: str, host_key_alias: str | None) -> dict[str, str]:
    """ssh_config's TOKENS, for the values ``ssh -G`` prints unexpanded (IdentityFile,
    CertificateFile, ProxyCommand, ProxyJump)."""
    local = _local_user()
    fqdn = socket.gethostname()
    short = fqdn.split(".")[0]
    return {
        "%": "%",
        "d": os.path.expanduser("~"),
        "h": hostname,
        "p": str(port),
        "r": user,
        "u": local,
        "n": original,
        "l": fqdn,
        "L": short,
        "i": str(os.getuid()) if hasattr(os, "getuid") else "",
        "k": host_key_alias or hostname,
        "C": hashlib.sha1(f"{fqdn}{hostname}{port}{user}".encode()).hexdigest(),
    }


def _expand_tokens(value: str, tokens: dict[str, str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(value):
        if value[i] == "%" and i + 1 < len(value) and value[i + 1] in tokens:
            out.append(tokens[value[i + 1]])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


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
