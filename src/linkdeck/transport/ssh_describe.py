"""How a host resolved, in words and as JSON: ``linkdeck hosts`` and the host screen show the
same thing, the first thing to look at when a host will not connect."""

from __future__ import annotations

import os
import socket

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


def as_json(name: str, target: SshTarget | str, settings: Settings) -> dict:
    if isinstance(target, str):
        return {"name": name, "error": target}
    out = _hop_json(target, settings)
    out["name"] = name
    out["transport"], out["transport_why"] = _transport(settings)
    out["jump"] = [_hop_json(hop, settings) for hop in hops(target)[:-1]]
    return out


def _hop_json(t: SshTarget, settings: Settings) -> dict:
    return {
        "name": t.alias,
        "hostname": t.hostname,
        "port": t.port,
        "user": t.user,
        "identity_files": list(t.identity_files),
        "explicit_identity": t.explicit_identity,
        "identities_only": t.identities_only,
        "uses_agent": uses_agent(),
        "certificate_file": t.certificate_files[0] if t.certificate_files else None,
        "known_hosts_files": list(t.known_hosts_files),
        "known_hosts_write": t.known_hosts_write,
        "known_hosts_name": t.known_hosts_name,
        "hash_known_hosts": t.hash_known_hosts,
        "strict_host_key_checking": t.strict_host_key_checking,
        "host_key_policy": effective_policy(settings.host_key_policy, t.strict_host_key_checking),
        "connect_timeout": t.connect_timeout,
        "proxy_command": t.proxy_command,
        "source": t.source,
    }


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
