"""The Runner protocol and the errors a transport may raise.

Adapters never touch files or processes themselves: every read goes through a Runner, so the
local host, a remote host and a test replay take the same path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator, Protocol, Sequence


@dataclass(frozen=True, slots=True)
class CommandResult:
    stdout: str
    stderr: str
    status: int

    @property
    def ok(self) -> bool:
        return self.status == 0


class TransportError(Exception):
    """A host could not be reached or stopped answering. Retryable unless a subclass says not."""

    retryable = True


class Unreachable(TransportError):
    pass


class ConnectionLost(TransportError):
    pass


class CommandTimeout(TransportError):
    pass


class AuthFailed(TransportError):
    retryable = False


class HostKeyUnknown(TransportError):
    retryable = False

    def __init__(self, message: str, fingerprint: str, key_type: str = "", key_b64: str = "") -> None:
        super().__init__(message)
        self.fingerprint = fingerprint
        self.key_type = key_type
        self.key_b64 = key_b64


class HostKeyChanged(TransportError):
    retryable = False

    def __init__(self, message: str, fingerprint: str) -> None:
        super().__init__(message)
        self.fingerprint = fingerprint


class Runner(Protocol):
    """Runs argv vectors on one host. Remote runners shell-quote every element."""

    name: str

    async def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        """Run to completion; raise CommandTimeout after ``timeout`` seconds."""
        ...

    def stream(self, argv: Sequence[str]) -> AsyncIterator[str]:
        """Run and yield stdout line by line (without newlines) until it exits.

        Raises ConnectionLost if the transport drops while streaming.
        """
        ...

    async def close(self) -> None: ...
