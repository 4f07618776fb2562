"""Public-key authentication on an open paramiko Transport: agent keys, identity files,
OpenSSH's default keys — each offered once, and a failure is final (raised as AuthFailed
with what to do about it, never retried).

No passwords or passphrases: an encrypted key file is used through ssh-agent or not at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import paramiko
from paramiko.pkey import PublicBlob

from ..core import bounded_read
from .known_hosts import fingerprint
from .runner import AuthFailed, ConnectionLost
from .ssh_config import SshTarget

PUB_ADVICE = "a public key is one line: rewrite it with `ssh-keygen -y -f {key} > {key}.pub`"
CERT_ADVICE = "is it the right file? the key is offered without a certificate until it is"
FIDO_PREFIX = "sk-"  # sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com and their certificates


@dataclass
class _Candidate:
    label: str  # what the error message calls it: a path or "agent key SHA256:…"
    key: paramiko.PKey


def _public_blob(path: str, notes: list[str] | None = None) -> str | None:
    """The base64 blob of ``path``.pub, to match agent keys against identity files; a note
    in ``notes`` when the file is there but past the key bound."""
    try:
        parts = bounded_read.read_text(
            path + ".pub",
            bounded_read.KEY_LIMIT,
            "an ssh public key",
            errors="replace",
            advice=PUB_ADVICE.format(key=path),
        ).split()
    except OSError:
        return None  # then only the private key is matched
    except bounded_read.TooLarge as exc:
        if notes is not None and str(exc) not in notes:
            notes.append(str(exc))  # a key of ssh-agent's it names would go unmatched, unsaid
        return None
    return parts[1] if len(parts) >= 2 else None


def _within_bound(path: str) -> None:
    """TooLarge when the key file, or the certificate paramiko takes beside it, passes the
    key bound; paramiko reads them whole."""
    bounded_read.read_bytes(path, bounded_read.KEY_LIMIT, "an ssh key file")
    if os.path.exists(path + "-cert.pub"):
        bounded_read.read_bytes(path + "-cert.pub", bounded_read.KEY_LIMIT, "an ssh certificate", CERT_ADVICE)


def _candidates(target: SshTarget, agent: paramiko.Agent | None) -> tuple[list[_Candidate], list[str]]:
    """Keys to offer, in order, and notes on identity files that could not be used."""
    notes: list[str] = []
    wanted_blobs = {b for b in (_public_blob(p, notes) for p in target.identity_files) if b}
    out = _agent_candidates(target, agent, wanted_blobs, notes)
    seen = {c.key.get_base64() for c in out}
    for path in target.identity_files:
        if not os.path.exists(path):
            if target.explicit_identity:
                notes.append(f"{path} does not exist")
            continue
        try:
            _within_bound(path)
            key = paramiko.PKey.from_path(path)
        except paramiko.PasswordRequiredException:
            if _public_blob(path) not in seen:
                notes.append(f"{path} is encrypted: load it with `ssh-add {path}`")
            continue
        except (paramiko.SSHException, OSError, ValueError) as exc:
            notes.append(f"{path} cannot be read: {exc}")
            continue
        except bounded_read.TooLarge as exc:
            notes.append(str(exc))
            continue
        blob = key.get_base64()
        if blob in seen:
            continue
        seen.add(blob)
        if key.public_blob is None:  # paramiko took KEY-cert.pub already, as ssh does
            _attach_certificate(key, target.certificate_files, notes)
        out.append(_Candidate(path, key))
    return out, notes


def _agent_candidates(
    target: SshTarget, agent: paramiko.Agent | None, wanted_blobs: set[str], notes: list[str]
) -> list[_Candidate]:
    """The agent's keys to offer, in its order (only those of the identity files when
    IdentitiesOnly); a note for each FIDO key left out."""
    out = []
    for key in agent.get_keys() if agent is not None else ():
        blob = key.get_base64()
        if target.identities_only and blob not in wanted_blobs:
            continue
        if key.get_name().startswith(FIDO_PREFIX):
            # paramiko signs before it asks whether the server takes a key: a FIDO key would
            # want a touch on every connection, and its agent's refusal ends the whole session
            notes.append(
                f"ssh-agent's FIDO key {fingerprint(blob)} is not offered over paramiko: "
                "`--transport openssh` offers it"
            )
            continue
        out.append(_Candidate(f"agent key {fingerprint(blob)}", key))
    return out


def _attach_certificate(key: paramiko.PKey, certificates: tuple[str, ...], notes: list[str]) -> None:
    """CertificateFile: the first certificate made for this key is offered with it (ssh pairs
    them the same way). paramiko's load_certificate checks only the key type, so whose key a
    certificate holds is compared here."""
    for path in certificates:
        try:
            blob = PublicBlob.from_string(
                bounded_read.read_text(path, bounded_read.KEY_LIMIT, "an ssh certificate", advice=CERT_ADVICE)
            )
            mine = blob.key_type.startswith(key.get_name()) and _holds(blob, key)
        except bounded_read.TooLarge as exc:
            # not knowing whose it is, say it: a refusal for want of it would read as the key's
            if str(exc) not in notes:
                notes.append(str(exc))
            continue
        except (OSError, ValueError, paramiko.SSHException):
            continue  # missing or unreadable: as ssh, try the next
        if mine:
            key.public_blob = blob
            return


def _holds(certificate: PublicBlob, key: paramiko.PKey) -> bool:
    """Whether ``certificate`` certifies ``key``: after its type and nonce, a certificate
    carries the same public key fields as the key's own blob after its type."""
    cert = paramiko.Message(certificate.key_blob)
    cert.get_text(), cert.get_binary()
    public = paramiko.Message(key.asbytes())
    public.get_text()
    return cert.get_remainder().startswith(public.get_remainder())


def authenticate(transport: paramiko.Transport, target: SshTarget) -> None:
    """Offer each candidate key once; raise AuthFailed when none is accepted."""
    use_agent = bool(os.environ.get("SSH_AUTH_SOCK"))
    agent = paramiko.Agent() if use_agent else None
    try:
        candidates, notes = _candidates(target, agent)
        who = f"{target.user}@{target.hostname}"
        if not candidates:
            why = "; ".join(notes) if notes else "no identity file exists and ssh-agent offers no key"
            raise AuthFailed(
                f"auth failed for {who}: no key to offer ({why}) — create one with `ssh-keygen -t ed25519`, "
                f"add it to ~/.ssh/authorized_keys on {target.hostname}, or set identity_file"
            )
        refused: list[str] = []
        for cand in candidates:
            try:
                remaining = transport.auth_publickey(target.user, cand.key)
            except paramiko.BadAuthenticationType as exc:
                raise AuthFailed(
                    f"auth failed for {who}: the server does not accept public keys (it allows: "
                    f"{', '.join(exc.allowed_types) or 'nothing'}); linkdeck only uses keys — "
                    f"enable PubkeyAuthentication on {target.hostname}"
                ) from None
            except paramiko.AuthenticationException:
                refused.append(cand.label)
                continue
            except (paramiko.SSHException, EOFError, OSError) as exc:
                if not transport.is_active():
                    if refused:
                        # sshd hangs up once a client has offered MaxAuthTries keys; paramiko
                        # reports that as a refusal and then a dead session. Retrying would log
                        # in again every backoff, forever — what gets an address banned.
                        raise AuthFailed(
                            f"auth failed for {who}: the server closed the connection after refusing "
                            f"{', '.join(refused)} (too many keys offered — MaxAuthTries); set "
                            f"IdentitiesOnly yes and IdentityFile for {target.hostname} in your ssh config, "
                            "or identity_file in linkdeck's"
                        ) from None
                    raise ConnectionLost(f"{who}: the connection dropped during authentication: {exc}") from None
                refused.append(f"{cand.label} ({exc})")
                continue
            if remaining:
                raise AuthFailed(
                    f"auth failed for {who}: the server wants more than a key ({', '.join(remaining)}), "
                    "which linkdeck does not do"
                )
            return
        extra = f" ({'; '.join(notes)})" if notes else ""
        raise AuthFailed(
            f"auth failed for {who}: the server refused {'key' if len(refused) == 1 else 'keys'} "
            f"{', '.join(refused)}{extra} — add your public key to ~{target.user}/.ssh/authorized_keys "
            f"on {target.hostname} or set identity_file"
        )
    finally:
        if agent is not None:
            agent.close()


__all__ = ["authenticate"]
