"""How a host resolved, in words and as JSON: ``linkdeck hosts`` and the host screen show the
same thing, the first thing to look at when a host will not connect."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from ..core.jsonfields import Field, write
from ..settings.config import ConfigError, HostSpec, Settings
from .choice import choose
from .known_hosts import effective_policy
from .runner import Unreachable
from .ssh_config import SshTarget, hops, resolve
from .ssh_options import builtin_notes, not_understood_note


def resolution(spec: HostSpec, settings: Settings) -> SshTarget | str:
    """The target ``spec`` resolves to, or why it does not (one line)."""
    try:
        return resolve(spec, settings)
    except (ConfigError, Unreachable) as exc:
        return str(exc)


def unresolvable(target: SshTarget) -> str | None:
    """Why the first host linkdeck dials itself does not resolve (one line), or None. A name
    behind a ProxyJump is resolved by the jump host and one behind a ProxyCommand by that
    command, so neither is looked up here."""
    first = hops(target)[0]
    if first.proxy_command:
        return None
    try:
        socket.getaddrinfo(first.hostname, first.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        why = exc.strerror if isinstance(exc, socket.gaierror) and exc.strerror else str(exc)
        via = "" if first is target else f" (the jump host {first.alias} on the way to {target.alias})"
        return (
            f"{first.alias}: HostName {first.hostname!r}{via} does not resolve: {why}; "
            "check its HostName in the ssh config (`ssh -G` shows it) or the DNS"
        )
    return None


def uses_agent() -> bool:
    # what ssh_auth.authenticate does: the agent's keys are offered when SSH_AUTH_SOCK is set
    return bool(os.environ.get("SSH_AUTH_SOCK"))


@dataclass(frozen=True, slots=True)
class _Hop:
    """One host on the way, named as the JSON names it, with what its words read."""

    name: str
    target: SshTarget
    settings: Settings
    transport: tuple[str, str] = ("", "")  # (name, why), for the host itself


# One host on the way to a host (and the host itself): how it resolved.
HOP_JSON: tuple[Field[_Hop], ...] = (
    Field("name", ("string",), "the host as named (a jump host: as the ProxyJump names it)", lambda h: h.name),
    Field("hostname", ("string",), "what linkdeck connects to (HostName)", lambda h: h.target.hostname),
    Field("port", ("integer",), "its SSH port", lambda h: h.target.port),
    Field("user", ("string",), "the user logged in as", lambda h: h.target.user),
    Field(
        "identity_files",
        ("array",),
        "the keys tried, in order",
        lambda h: list(h.target.identity_files),
        items="string",
    ),
    Field(
        "explicit_identity",
        ("boolean",),
        "IdentityFile was given: OpenSSH's default keys are not tried",
        lambda h: h.target.explicit_identity,
    ),
    Field(
        "identities_only",
        ("boolean",),
        "IdentitiesOnly: only the identity files (and agent keys matching them)",
        lambda h: h.target.identities_only,
    ),
    Field("uses_agent", ("boolean",), "the agent's keys are offered (SSH_AUTH_SOCK is set)", lambda _: uses_agent()),
    Field(
        "certificate_file",
        ("string", "null"),
        "the user certificate offered (CertificateFile); null: none",
        lambda h: h.target.certificate_files[0] if h.target.certificate_files else None,
    ),
    Field(
        "known_hosts_files",
        ("array",),
        "every file its key is looked up in",
        lambda h: list(h.target.known_hosts_files),
        items="string",
    ),
    Field(
        "known_hosts_write",
        ("string", "null"),
        "where a key you trust is kept; null: nowhere (kept for this run only)",
        lambda h: h.target.known_hosts_write,
    ),
    Field(
        "known_hosts_name",
        ("string",),
        "the name its key is stored under: host or [host]:port",
        lambda h: h.target.known_hosts_name,
    ),
    Field(
        "hash_known_hosts",
        ("boolean",),
        "HashKnownHosts: names are hashed in the file",
        lambda h: h.target.hash_known_hosts,
    ),
    Field(
        "strict_host_key_checking",
        ("string", "null"),
        "StrictHostKeyChecking as the ssh config says it; null: not set",
        lambda h: h.target.strict_host_key_checking,
    ),
    Field(
        "host_key_policy",
        ("string",),
        "what linkdeck does with an unknown host key, from [ssh] host_key_policy and StrictHostKeyChecking",
        lambda h: effective_policy(h.settings.host_key_policy, h.target.strict_host_key_checking),
    ),
    Field("connect_timeout", ("number",), "seconds to wait for the connection", lambda h: h.target.connect_timeout),
    Field(
        "proxy_command",
        ("string", "null"),
        "the ProxyCommand it is reached through; null: none",
        lambda h: h.target.proxy_command,
    ),
    Field("source", ("string",), "what resolved it: ssh -G or linkdeck's built-in reader", lambda h: h.target.source),
)
# A host that resolved: itself, the transport, and the jump hosts on the way.
RESOLVED_JSON: tuple[Field[_Hop], ...] = (
    *HOP_JSON,
    Field(
        "transport", ("string",), "openssh or paramiko; none when no transport can be used", lambda h: h.transport[0]
    ),
    Field("transport_why", ("string",), "what chose the transport", lambda h: h.transport[1]),
    Field(
        "jump",
        ("array",),
        "the jump hosts on the way (ProxyJump), first first",
        lambda h: [_Hop(hop.alias, hop, h.settings) for hop in hops(h.target)[:-1]],
        of=HOP_JSON,
    ),
)
# A host that did not resolve.
UNRESOLVED_JSON: tuple[Field[tuple[str, str]], ...] = (
    Field("name", ("string",), "the host as named", lambda n: n[0]),
    Field("error", ("string",), "why it does not resolve, and what to check", lambda n: n[1]),
)
# This machine, read without SSH.
LOCAL_JSON: tuple[Field[str], ...] = (
    Field("name", ("string",), "the host as named", lambda n: n),
    Field("local", ("boolean",), "always true: this machine, read without SSH", lambda _: True),
)


def as_json(name: str, target: SshTarget | str, settings: Settings) -> dict:
    if isinstance(target, str):
        return write((name, target), UNRESOLVED_JSON)
    return write(_Hop(name, target, settings, _transport(settings)), RESOLVED_JSON)


def local_json(name: str) -> dict:
    return write(name, LOCAL_JSON)


def _transport(settings: Settings) -> tuple[str, str]:

    try:
        choice = choose(settings)
    except ConfigError as exc:
        return "none", str(exc)
    return choice.name, choice.why


def lines(target: SshTarget | str, settings: Settings) -> list[tuple[str, str]]:
    """(label, value) rows for one host; a host that does not resolve is one "error" row."""
    if isinstance(target, str):
        return [("error", target)]
    t = target
    keys = (
        ", ".join(t.identity_files)
        if t.explicit_identity
        else "OpenSSH's default keys that exist (" + ", ".join(os.path.basename(p) for p in t.identity_files) + ")"
    )
    if t.identities_only:
        keys += "; IdentitiesOnly: no other key"
    agent = (
        "yes: its keys are offered first" + (", only those matching the identity files" if t.identities_only else "")
        if uses_agent()
        else "no (SSH_AUTH_SOCK is not set)"
    )
    known = ", ".join(t.known_hosts_files) or "none"
    write = t.known_hosts_write or "nowhere (keys you trust are kept for this run only)"
    policy = effective_policy(settings.host_key_policy, t.strict_host_key_checking)
    transport, why = _transport(settings)
    rows = [
        ("transport", f"{transport}: {why}"),
        ("connects to", t.display),
        ("identity files", keys),
        ("ssh-agent", agent),
        ("certificate", ", ".join(t.certificate_files) or "none"),
        ("jump", " → ".join(f"{h.display} ({h.alias})" for h in hops(t)[:-1]) or "none (direct)"),
        ("known_hosts", f"{known}; new keys go to {write}" + (", hashed" if t.hash_known_hosts else "")),
        ("host key name", t.known_hosts_name),
        (
            "host keys",
            f"{policy} (StrictHostKeyChecking {t.strict_host_key_checking or 'unset'}, "
            f"linkdeck's host_key_policy {settings.host_key_policy})",
        ),
        ("connect timeout", f"{t.connect_timeout:g} s"),
    ]
    if t.proxy_command:
        rows.append(("proxy command", t.proxy_command))
    if transport == "openssh":
        rows.append(
            (
                "master",
                f"yours at {t.control_path} when it runs (else linkdeck starts it there)"
                if t.control_path
                else "linkdeck's own, ended when linkdeck exits",
            )
        )
    notes = builtin_notes(settings.ssh_config) if t.source != "ssh -G" else ()
    if notes:
        rows.append(("note", not_understood_note(notes)))
    return rows


__all__ = ["as_json", "lines", "resolution", "uses_agent"]
