"""What the ``ssh`` client said when it could not connect, as linkdeck's transport errors.

ssh's own words are quoted (the line that decided, control characters escaped), then what to
do next. The host-key cases say which known_hosts name ssh looked up (the target's, or a jump
host's), so the review-and-trust flow files a key under the host that offered it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.units import printable
from .runner import AuthFailed, HostKeyChanged, TransportError, Unreachable

# "No ED25519 host key is known for [10.0.0.1]:2222 and you have requested strict checking."
_NOT_KNOWN = re.compile(r"No (?P<type>\S+) host key is known for (?P<name>\S+) and you have requested strict checking")
# "Host key for 10.0.0.1 has changed and you have requested strict checking."
_CHANGED_LINE = re.compile(r"Host key for (?P<name>\S+) has changed and you have requested strict checking")
_CHANGED = re.compile(f"{_CHANGED_LINE.pattern}|REMOTE HOST IDENTIFICATION HAS CHANGED")
_REVOKED = re.compile(r"REVOKED HOST KEY DETECTED|Host key for (?P<name>\S+) was revoked")
_FINGERPRINT = re.compile(r"\b(SHA256:[A-Za-z0-9+/]{43})")
_OFFENDING = re.compile(r"Offending \S+ key in (?P<where>\S+:\d+)")
_DENIED = re.compile(
    r"Permission denied \(|Too many authentication failures|no authentication methods? available|Authentication failed"
)
_REFUSED = re.compile(r"Connection refused")
_TIMED_OUT = re.compile(r"timed out|Operation timed out|Connection timed out")
_NAME = re.compile(r"Could not resolve hostname|Name or service not known|nodename nor servname")
VERIFY = "Host key verification failed."


@dataclass(frozen=True, slots=True)
class UnknownKey:
    """ssh refused a host key it does not know: ``name`` is the known_hosts name it looked up
    (the hop that offered it), ``key_type`` what ssh called the key (ED25519, ECDSA …)."""

    name: str
    key_type: str
    said: str


def lines(stderr: str) -> list[str]:
    return [
        printable(line.strip())
        for line in stderr.replace("\r", "\n").splitlines()
        if line.strip() and not set(line.strip()) <= {"@"}
    ]


def last_words(stderr: str) -> str:
    got = lines(stderr)
    return got[-1] if got else "(ssh printed nothing)"


def unknown_key(stderr: str) -> UnknownKey | None:
    for line in lines(stderr):
        m = _NOT_KNOWN.search(line)
        if m:
            return UnknownKey(m["name"], m["type"], line)
    return None


def unverified(stderr: str) -> bool:
    """ssh failed a host key check without saying the key changed or was revoked."""
    text = "\n".join(lines(stderr))
    return VERIFY in text and not _CHANGED.search(text) and not _REVOKED.search(text)


def unexplained(stderr: str) -> bool:
    """ssh said only that the connection closed: what went wrong was said elsewhere (a jump
    host's ssh) or not at all."""
    return isinstance(failure(stderr, ""), Unreachable) and not any(
        p.search("\n".join(lines(stderr))) for p in (_REFUSED, _TIMED_OUT, _NAME)
    )


def failure(stderr: str, display: str, identities: tuple[str, ...] = ()) -> TransportError:
    """The error for an ssh that exited 255 before the session started (host keys unknown to
    ssh are unknown_key's: they need the key fetched first)."""
    said = lines(stderr)
    text = "\n".join(said)

    def line(pattern: re.Pattern | str) -> str:
        """The first line ssh said that matches ``pattern``: the one that decided."""
        for candidate in said:
            if (pattern.search(candidate) is not None) if isinstance(pattern, re.Pattern) else pattern in candidate:
                return candidate
        return said[-1] if said else "(ssh printed nothing)"

    fp = _FINGERPRINT.search(text)
    if _REVOKED.search(text):
        return HostKeyChanged(
            f"the host key of {display} is revoked: ssh says “{line(_REVOKED)}”; refusing to connect",
            fp[1] if fp else "",
        )
    if _CHANGED.search(text):
        where = _OFFENDING.search(text)
        old = f" ({where['where']} holds another)" if where else ""
        name = next((m["name"] for m in map(_CHANGED.search, said) if m and m["name"]), display)
        return HostKeyChanged(
            f"HOST KEY CHANGED for {display}: "
            f"ssh says “{line(_CHANGED_LINE if _CHANGED_LINE.search(text) else _CHANGED)}”; "
            f"it now offers {fp[1] if fp else 'another key'}{old}. "
            "This can be a reinstall or someone intercepting the connection; if you know the host was reinstalled, "
            f"remove the old entry with `ssh-keygen -R {name}` and connect again",
            fp[1] if fp else "",
        )
    if _DENIED.search(text):
        said_line = line(_DENIED)
        if "Too many authentication failures" in said_line:
            why = (
                "the server's MaxAuthTries ran out before a key it accepts was offered: "
                "set IdentitiesOnly yes and the right IdentityFile for this host"
            )
        else:
            keys = ", ".join(identities) or "your identity files and ssh-agent"
            why = (
                f"none of the keys ssh offered ({keys}) is in the user's ~/.ssh/authorized_keys on the host: "
                "add the public key there, or load the right key into ssh-agent"
            )
        return AuthFailed(f"{display}: ssh could not log in: “{said_line}”: {why}")
    if (
        VERIFY in text
    ):  # a check ssh failed that names no unknown or changed key (a CA's signature, a KnownHostsCommand)
        return HostKeyChanged(
            f"{display}: ssh refused the host key: “{line(VERIFY)}”; `ssh -v {display}` says why", fp[1] if fp else ""
        )
    if _REFUSED.search(text):
        return Unreachable(
            f"{display}: ssh says “{line(_REFUSED)}”: the connection was refused: is sshd running there, on that port?"
        )
    if _TIMED_OUT.search(text):
        return Unreachable(
            f"{display}: ssh says “{line(_TIMED_OUT)}”: no answer (host down, or a firewall dropping the connection?)"
        )
    if _NAME.search(text):
        return Unreachable(
            f"{display}: ssh says “{line(_NAME)}”: the name does not resolve; "
            "check its HostName in the ssh config (`ssh -G` shows it) or the DNS"
        )
    return Unreachable(f"{display}: ssh could not connect: “{last_words(stderr)}”")


__all__ = ["VERIFY", "UnknownKey", "failure", "last_words", "lines", "unexplained", "unknown_key", "unverified"]
