"""How good or bad something is, as types: a finding's severity, a test's verdict status, a
matrix cell's level; each carries its rank and its tone, and ``Tone`` is the one table of how
a tone looks (the dashboard's colour, the HTML report's).

Headless: ``ui/widgets/marks.py`` turns a tone into a terminal style, ``commands/report_html.py`` uses
its HTML colour; neither keeps colours of its own for these words.
"""

from __future__ import annotations

import enum
from typing import TypeVar

# Share of the expected throughput, both ways: from OK_PCT a test is ok, under BAD_PCT bad,
# between them degraded (verdict.py judges; a matrix cell's level reads the same lines).
OK_PCT = 90.0
BAD_PCT = 50.0


class Tone(enum.Enum):
    """(terminal colour, HTML colour)."""

    GOOD = ("green", "#2e7d32")
    WARN = ("yellow", "#f9a825")
    BAD = ("red", "#c62828")
    FAILED = ("magenta", "#6a1b9a")  # nothing was measured: the test itself failed
    INFO = ("blue", "#1565c0")
    UNKNOWN = ("", "#9e9e9e")

    def __init__(self, terminal: str, html: str) -> None:
        self.terminal = terminal
        self.html = html


_W = TypeVar("_W", bound="_Word")


class _Word(str, enum.Enum):
    """A word that is also its JSON value, with a rank (higher is worse), a tone and whether
    it is drawn bold. ``str()`` and f-strings give the word on every Python version."""

    rank: int
    tone: Tone
    bold: bool

    def __new__(cls, value: str, rank: int, tone: Tone, bold: bool) -> "_Word":
        member = str.__new__(cls, value)
        member._value_ = value
        member.rank, member.tone, member.bold = rank, tone, bold
        return member

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def of(cls: type[_W], word: str) -> _W:
        """The member whose word (JSON value) is ``word``; ValueError for any other. (Not
        ``cls(word)``: type checkers read that as the four-field constructor.)"""
        member = cls._value2member_map_.get(word)
        if member is None:
            raise ValueError(f"{word!r} is not a {cls.__name__}")
        return member  # type: ignore[return-value]  # the map holds this class's members


class Severity(_Word):
    INFO = ("info", 0, Tone.INFO, False)
    WARNING = ("warning", 1, Tone.WARN, True)
    ERROR = ("error", 2, Tone.BAD, True)

    @property
    def mark(self) -> str:
        """The badge's mark, readable without colour (the colour is the second carrier)."""
        return _MARKS[self]


_MARKS = {Severity.ERROR: "✖", Severity.WARNING: "⚠", Severity.INFO: "ℹ"}


class Status(_Word):
    """A test's verdict."""

    OK = ("ok", 0, Tone.GOOD, True)
    DEGRADED = ("degraded", 1, Tone.WARN, True)
    BAD = ("bad", 2, Tone.BAD, True)
    ERROR = ("error", 3, Tone.FAILED, True)  # the test did not run or measured nothing

    @classmethod
    def of_pct(cls, pct: float) -> "Status":
        """The status the share of the expected throughput alone gives."""
        return cls.OK if pct >= OK_PCT else cls.BAD if pct < BAD_PCT else cls.DEGRADED


class Level(_Word):
    """A matrix cell: how much of the expected throughput the pair reached."""

    UNKNOWN = ("", 0, Tone.UNKNOWN, False)  # no expected figure: link speeds unknown
    GOOD = ("good", 1, Tone.GOOD, False)
    FAIR = ("fair", 2, Tone.WARN, False)
    POOR = ("poor", 3, Tone.BAD, False)
    ERROR = ("error", 4, Tone.FAILED, True)

    @classmethod
    def of_pct(cls, pct: float | None) -> "Level":
        if pct is None:
            return cls.UNKNOWN
        return {Status.OK: cls.GOOD, Status.DEGRADED: cls.FAIR, Status.BAD: cls.POOR}[Status.of_pct(pct)]
