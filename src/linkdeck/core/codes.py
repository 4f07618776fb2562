"""Every code a finding, a verdict's cause, a test's condition or a diagnosis names: the one
list of them, so a code mistyped where it is raised or compared is a type error. Each has its
row in docs/FINDINGS.md or docs/TESTS.md (tests/test_architecture_doc.py keeps both ways true)."""

from __future__ import annotations

import enum
from typing import Any


class Code(str, enum.Enum):
    """A str enum whose values are the names: a code's JSON and printed word stay its name, and
    [[mute]]'s code patterns match it as they match a word."""

    # Findings on the dashboard and in `snapshot` (docs/FINDINGS.md)
    SPEED_BELOW_CAPABILITY = "SPEED_BELOW_CAPABILITY"
    SPEED_BELOW_PEERS = "SPEED_BELOW_PEERS"
    HALF_DUPLEX = "HALF_DUPLEX"
    MTU_MISMATCH = "MTU_MISMATCH"  # also a verdict's cause
    PATH_MTU = "PATH_MTU"  # also a verdict's cause
    TWO_IFACES_ONE_SUBNET = "TWO_IFACES_ONE_SUBNET"
    ERRORS_RISING = "ERRORS_RISING"
    DROPS_RISING = "DROPS_RISING"
    NIC_DROPS = "NIC_DROPS"
    LINK_FLAPPING = "LINK_FLAPPING"
    THROUGHPUT_OUTLIER = "THROUGHPUT_OUTLIER"
    TCP_RETRANSMITS = "TCP_RETRANSMITS"
    RECEIVER_PRUNING = "RECEIVER_PRUNING"
    TCP_CHECKSUM_ERRORS = "TCP_CHECKSUM_ERRORS"
    PATH_MTU_BLACKHOLE = "PATH_MTU_BLACKHOLE"

    # What kept a test from measuring the path alone: a verdict's conditions (docs/TESTS.md)
    ANOTHER_TEST = "ANOTHER_TEST"
    SHARED_PATH = "SHARED_PATH"

    # A verdict's causes (docs/TESTS.md)
    ROUTED_ELSEWHERE = "ROUTED_ELSEWHERE"
    PATH_MTU_SUSPECTED = "PATH_MTU_SUSPECTED"
    SPEED_WRONG = "SPEED_WRONG"
    SPEED_SUSPECT = "SPEED_SUSPECT"
    SPEED_LOW = "SPEED_LOW"
    ERRORS = "ERRORS"
    DROPS = "DROPS"
    SENDER_CPU = "SENDER_CPU"
    RECEIVER_CPU = "RECEIVER_CPU"
    BOTTLENECK = "BOTTLENECK"
    RETRANSMITS = "RETRANSMITS"
    ASYMMETRY = "ASYMMETRY"
    BIDIR_ONLY = "BIDIR_ONLY"
    ALONE_ALSO_SLOW = "ALONE_ALSO_SLOW"
    CEILING_LOW = "CEILING_LOW"
    PATH_DIFFERS = "PATH_DIFFERS"

    # `linkdeck diagnose`'s own: an end that sends no samples (docs/TESTS.md)
    HOST_DOWN = "HOST_DOWN"

    def __str__(self) -> str:
        return str(self.value)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, tuple[str]]:
        # copy, deepcopy and pickle rebuild a code through read, so an unlisted one survives them
        return (type(self).read, (str(self.value),))

    @classmethod
    def read(cls, word: str) -> Code:
        """The code a recording or a JSON file names. A word this version has no member for
        (a recording made by a newer linkdeck) is kept as an unlisted Code that prints, dumps
        and compares as that word, so its report still names it; it is no member of the enum."""
        try:
            return cls(word)
        except ValueError:
            unlisted = str.__new__(cls, str(word))
            unlisted._name_ = unlisted._value_ = str(word)
            return unlisted
