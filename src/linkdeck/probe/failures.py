"""What can stop a test, each with a message that says what to do next."""

from __future__ import annotations


class ProbeError(Exception):
    """A test could not run or could not finish; the message is for the user."""


class Iperf3Missing(ProbeError):
    def __init__(self, host: str, hint: str) -> None:
        super().__init__(f"iperf3 not found on {host}: `{hint}`")
        self.host, self.hint = host, hint


class PeerUnreachable(ProbeError):
    pass


class TestTimeout(ProbeError):
    __test__ = False  # not a pytest test class, whatever its name says


class PortsBusy(ProbeError):
    pass
