"""known_hosts: look a server key up, decide by policy, and save keys the user trusts.

Read by hand rather than with paramiko.HostKeys so that markers (@revoked, @cert-authority),
negated and wildcard patterns and key types paramiko cannot load are all understood, and so
that an entry is compared as (type, base64 blob) without building key objects.

Policies:
- ``strict``: an unknown key raises HostKeyUnknown (with the fingerprint, so the UI can ask);
- ``accept-new``: an unknown key is written to known_hosts and accepted;
- a key that differs from a known one of the same type, or a revoked key, raises
  HostKeyChanged under every policy — it is never accepted automatically.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from ..core import bounded_read
from ..settings.config import HostSpec, Settings
from .runner import HostKeyChanged, HostKeyUnknown, TransportError
from .ssh_config import SshTarget, hops, resolve

POLICIES = ("strict", "accept-new")
# Keys trusted where there is no file of the user's to write them to (UserKnownHostsFile
# none): (known_hosts name, type, base64), for as long as this process runs.
_THIS_RUN: set[tuple[str, str, str]] = set()
THIS_RUN_ONLY = "this run only: no known_hosts file of yours to save it to (UserKnownHostsFile none)"

# Key type in known_hosts → host key algorithms that produce that key (for paramiko's
# preference list, so the server offers the key we already know).
ALGORITHMS_FOR_TYPE = {"ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa")}


@dataclass(frozen=True, slots=True)
class KnownKey:
    key_type: str
    key_b64: str
    marker: str | None  # None, "@revoked" or "@cert-authority"
    path: str
    line: int


def fingerprint(key_b64: str) -> str:
    """OpenSSH's SHA256 fingerprint of a base64 public key blob: ``SHA256:...`` unpadded."""
    try:
        blob = base64.b64decode(key_b64)
    except (binascii.Error, ValueError):
        return "(unreadable key)"  # a corrupt known_hosts line must not hide the real message
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def entry_name(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def _wildcard(pattern: str) -> re.Pattern:
    # OpenSSH patterns know only * and ?; "[host]:port" brackets are literal.
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern.lower()))


def _matches(pattern_field: str, name: str) -> bool:
    if pattern_field.startswith("|1|"):
        try:
            _, _, salt_b64, hash_b64 = pattern_field.split("|", 3)
            salt = base64.b64decode(salt_b64)
            want = base64.b64decode(hash_b64)
        except (ValueError, binascii.Error):
            return False
        return hmac.compare_digest(hmac.new(salt, name.encode(), hashlib.sha1).digest(), want)
    matched = False
    for pattern in pattern_field.split(","):
        negated = pattern.startswith("!")
        pattern = pattern[1:] if negated else pattern
        if _wildcard(pattern).fullmatch(name.lower()):
            if negated:
                return False
            matched = True
    return matched


class KnownHostsTooLarge(TransportError):
    """A known_hosts file past its bound: which keys it holds is unknown, so no key is trusted
    or refused on its word."""

    retryable = False


def read_known_hosts(path: str) -> str | None:
    """A known_hosts file's text; None when it is missing or unreadable (it knows no keys, as
    for ssh), KnownHostsTooLarge past its bound."""
    try:
        return bounded_read.read_text(path, bounded_read.KNOWN_HOSTS_LIMIT, "a known_hosts file", errors="replace")
    except OSError:
        return None
    except bounded_read.TooLarge as exc:
        raise KnownHostsTooLarge(str(exc)) from None


def lookup(files: tuple[str, ...] | list[str], name: str) -> list[KnownKey]:
    """Every known_hosts line (across ``files``) whose host patterns match ``name``."""
    found: list[KnownKey] = []
    for path in files:
        text = read_known_hosts(path)
        if text is None:
            continue  # a missing or unreadable file knows no keys, as for ssh
        for number, raw in enumerate(text.splitlines(), 1):
            parts = raw.split()
            if not parts or parts[0].startswith("#"):
                continue
            marker = None
            if parts[0].startswith("@"):
                marker, parts = parts[0], parts[1:]
            if len(parts) < 3 or not _matches(parts[0], name):
                continue
            found.append(KnownKey(parts[1], parts[2], marker, path, number))
    return found


def preferred_key_types(files: tuple[str, ...], name: str) -> list[str]:
    """Host key algorithms for which a key is known, to offer them first (as ssh does)."""
    out: list[str] = []
    for k in lookup(files, name):
        if k.marker is None:
            out.extend(ALGORITHMS_FOR_TYPE.get(k.key_type, (k.key_type,)))
    return list(dict.fromkeys(out))


def check_host_key(
    files: tuple[str, ...],
    name: str,
    key_type: str,
    key_b64: str,
    policy: str,
    display: str,
    hash_new: bool = False,
    *,
    write: str | None = None,
) -> str:
    """Accept the server key or raise. Returns "known", or with accept-new "added" (to
    ``write``) or "added for this run" (no file to write to)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown host key policy {policy!r}")
    fp = fingerprint(key_b64)
    if (name, key_type, key_b64) in _THIS_RUN:
        return "known"
    entries = lookup(files, name)
    for k in entries:
        if k.marker == "@revoked" and k.key_b64 == key_b64:
            raise HostKeyChanged(
                f"the host key of {display} ({key_type} {fp}) "
                f"is marked @revoked in {k.path}:{k.line}; refusing to connect",
                fp,
            )
    plain = [k for k in entries if k.marker is None]
    if any(k.key_type == key_type and k.key_b64 == key_b64 for k in plain):
        return "known"
    same_type = [k for k in plain if k.key_type == key_type]
    if same_type:
        k = same_type[0]
        raise HostKeyChanged(
            f"HOST KEY CHANGED for {display}: it now offers {key_type} {fp}, but {k.path}:{k.line} "
            f"holds {fingerprint(k.key_b64)}. This can be a reinstall or someone intercepting the "
            f"connection; if you know the host was reinstalled, remove the old entry with "
            f"`ssh-keygen -R {shlex.quote(name)} -f {shlex.quote(str(k.path))}` and connect again",
            fp,
        )
    if policy == "accept-new":
        if write is None:
            _THIS_RUN.add((name, key_type, key_b64))
            return "added for this run"
        add_host_key(write, name, None, key_type, key_b64, hashed=hash_new)
        return "added"
    authorities = [k for k in entries if k.marker == "@cert-authority"]
    if authorities:
        ca = authorities[0]
        raise HostKeyUnknown(
            f"{display} is vouched for by a certificate authority you trust "
            f"(@cert-authority in {ca.path}:{ca.line}), but linkdeck cannot check host certificates (paramiko, "
            "its SSH library, does not verify a host certificate's signature, "
            f"names or validity), so it asked for the plain key: compare its plain key {key_type} {fp} "
            f"with `ssh-keygen -lf /etc/ssh/ssh_host_{_short(key_type)}_key.pub` on the host and trust it, "
            "or add that key to your known_hosts; --transport openssh checks the certificate with your ssh client",
            fp,
            key_type,
            key_b64,
            name,
        )
    other = f" (known_hosts has only {', '.join(sorted({k.key_type for k in plain}))} keys for it)" if plain else ""
    raise HostKeyUnknown(
        f"the host key of {display} is not known{other}: {key_type} {fp}. Check the fingerprint on the "
        f"host (`ssh-keygen -lf /etc/ssh/ssh_host_{_short(key_type)}_key.pub`) before trusting it",
        fp,
        key_type,
        key_b64,
        name,
    )


def _short(key_type: str) -> str:
    if key_type.startswith("ecdsa"):
        return "ecdsa"
    return key_type.removeprefix("ssh-")


def add_host_key(
    path: str | os.PathLike, host: str, port: int | None, key_type: str, key_b64: str, hashed: bool = False
) -> None:
    """Trust a key: append it to ``path`` (created 0600 in a 0700 directory if missing).

    ``host`` is a bare host name when ``port`` is given, or an already formed known_hosts name
    (``[host]:port``) when ``port`` is None.
    """
    base64.b64decode(key_b64, validate=True)  # refuse to write garbage into known_hosts
    if not key_type or any(c.isspace() for c in key_type + key_b64 + host):
        raise ValueError("host key type, key and host name must not contain whitespace")
    name = entry_name(host, port) if port is not None else host
    if hashed:
        salt = os.urandom(20)
        digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
        name = f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"
    p = Path(path).expanduser()
    if not p.parent.exists():
        p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if f.tell() > 0 and not _ends_with_newline(p):
            f.write("\n")
        f.write(f"{name} {key_type} {key_b64}\n")


def _ends_with_newline(p: Path) -> bool:
    with open(p, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _offering_hop(spec: HostSpec, settings: Settings, key_type: str, hop_name: str | None) -> SshTarget:
    """The hop of ``spec``'s chain that offered the key: the one named by the connection that
    met it (``hop_name``); without that name, the first hop with no key of that type known
    (the connection stops at the first host it cannot verify)."""
    chain = hops(resolve(spec, settings))
    if hop_name:
        for hop in chain:
            if hop.known_hosts_name == hop_name:
                return hop
        raise ValueError(f"{hop_name} is not on the way to {spec.name} any more (the ssh config changed?)")
    for hop in chain:
        if not any(
            k.marker is None and k.key_type == key_type for k in lookup(hop.known_hosts_files, hop.known_hosts_name)
        ):
            return hop
    return chain[-1]


def trust_target(
    spec: HostSpec, settings: Settings, key_type: str, key_b64: str, hop_name: str | None = None
) -> tuple[str, str, bool]:
    """Where a key the user is asked to trust would be saved: (file, name, already trusted).

    The name is that of the host that offered the key (the target, or a jump host on the way),
    never another hop's: a target's key filed under its jump host's name would let whoever holds
    it pass as the jump host. The file is the user's own known_hosts (never a system-wide one);
    without one the "file" says the key is trusted for this run only.
    """
    hop = _offering_hop(spec, settings, key_type, hop_name)
    name = hop.known_hosts_name
    known = lookup(hop.known_hosts_files, name)
    trusted = (name, key_type, key_b64) in _THIS_RUN or any(
        k.marker is None and k.key_type == key_type and k.key_b64 == key_b64 for k in known
    )
    return hop.known_hosts_write or THIS_RUN_ONLY, name, trusted


def trust_host(
    spec: HostSpec, settings: Settings, key_type: str, key_b64: str, hop_name: str | None = None
) -> tuple[str, str]:
    """Save a key the user accepted (the "trust this host?" answer); returns (file, name)."""
    hop = _offering_hop(spec, settings, key_type, hop_name)
    path, name, trusted = trust_target(spec, settings, key_type, key_b64, hop.known_hosts_name)
    if trusted:
        return path, name
    if hop.known_hosts_write is None:
        _THIS_RUN.add((name, key_type, key_b64))
    else:
        add_host_key(path, name, None, key_type, key_b64, hashed=hop.hash_known_hosts)
    return path, name


def effective_policy(setting: str, strict_host_key_checking: str | None) -> str:
    """Combine linkdeck's host_key_policy with the ssh config's StrictHostKeyChecking.

    An explicit ``yes`` in the ssh config keeps the host strict (a per-host setting is more
    specific than linkdeck's global one). ``accept-new`` — and ``no``/``off``, which linkdeck
    reads as accept-new because it never turns checking off — trusts a first key. ``ask`` is
    ssh's default, which ``ssh -G`` prints whether or not the config says it, so it leaves the
    choice to linkdeck's setting (whose default, strict, is asking). A changed key is refused
    whatever either setting says.
    """
    value = (strict_host_key_checking or "").lower()
    if value == "yes":
        return "strict"
    if value in ("accept-new", "no", "off"):
        return "accept-new"
    return setting if setting in POLICIES else "strict"
