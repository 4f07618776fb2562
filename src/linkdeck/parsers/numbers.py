"""The one reader of numbers in command output, for every parser.

What a host prints is not trusted to be a number a kernel could report: ASCII digits only
(``²`` passes ``str.isdigit`` and then ``int`` raises), at most 20 of them (2**64 has 20; a
5,000-digit "counter" is garbage, and past 4,300 digits ``int`` itself refuses), finite, and
within what hardware can be: an MTU above 65,536 is unknown (speeds: ``units.speed_mbps``,
which also knows the drivers' sentinels, makes one above 1.6 Tb/s unknown). Anything else is a ParseError naming the
command and the line.
"""

from __future__ import annotations

import math
import re

from .parse_error import ParseError

MAX_DIGITS = 20
MAX_MTU = 65536
_INTEGER = re.compile(r"[0-9]{1,%d}" % MAX_DIGITS)
# A row of unsigned counters, checked in one C call (the rows every tick brings); a row it
# does not pass is read field by field, for the error naming the field.
DIGITS_ROW = re.compile(r"\s*[0-9]{1,%d}(?:\s+[0-9]{1,%d})*\s*" % (MAX_DIGITS, MAX_DIGITS), re.ASCII)
_SIGNED = re.compile(r"-?[0-9]{1,%d}" % MAX_DIGITS)
_DECIMAL = re.compile(r"[0-9]{1,%d}(?:\.[0-9]{1,%d})?" % (MAX_DIGITS, MAX_DIGITS))


def integer(text: str, what: str, command: str, line: str | None = None, signed: bool = False) -> int:
    """An integer written in ASCII digits (non-negative unless ``signed``: a state such as
    illumos's link_state -1, never a counter), or ParseError."""
    if not isinstance(text, str) or not (_SIGNED if signed else _INTEGER).fullmatch(text):
        raise ParseError(command, f"{what} is not a number: {shown(text)}", line if line is not None else shown(text))
    return int(text)


def counter(text: str, what: str, command: str, line: str | None = None) -> int:
    """A kernel counter: an integer below 2**64 (no kernel keeps a wider one, so a larger
    number is garbled output, not a value a rate may be taken from), or ParseError."""
    value = integer(text, what, command, line)
    if value >= 2**64:
        raise ParseError(
            command, f"{what} is wider than a 64-bit counter: {shown(text)}", line if line is not None else shown(text)
        )
    return value


def decimal(text: str, what: str, command: str, line: str | None = None) -> float:
    """A non-negative decimal (``123.456``) in ASCII digits, or ParseError."""
    if not isinstance(text, str) or not _DECIMAL.fullmatch(text):
        raise ParseError(command, f"{what} is not a number: {shown(text)}", line if line is not None else shown(text))
    return float(text)


def json_number(value: object, what: str, command: str) -> float:
    """A finite, non-negative JSON number (not a bool, not a string), or ParseError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(command, f"{what} is not a non-negative number: {shown(value)}")
    if isinstance(value, int):
        ok = 0 <= value < 10**MAX_DIGITS
    else:
        ok = math.isfinite(value) and 0 <= value < 10.0**MAX_DIGITS
    if not ok:
        raise ParseError(command, f"{what} is not a non-negative number: {shown(value)}")
    return float(value)


def json_integer(value: object, what: str, command: str) -> int:
    return int(json_number(value, what, command))


def mtu(value: int | None) -> int | None:
    """An MTU a link can have, else unknown."""
    return value if value is not None and 0 < value <= MAX_MTU else None


def shown(value: object) -> str:
    if isinstance(value, int) and value.bit_length() > 64:
        return f"a {value.bit_length()}-bit number"  # repr() itself refuses past 4,300 digits
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


_SHELL_TIME = re.compile(r"([0-9]{1,9})m([0-9]{1,9}(?:\.[0-9]{1,9})?)s")


def shell_times(text: str) -> float:
    """The CPU seconds in POSIX ``times`` output (the shell's and its children's user and
    system times, ``0m0.004000s 0m0.012000s`` per line), added up."""
    found = _SHELL_TIME.findall(text)
    if not found:
        raise ParseError("times", "expected minutes and seconds like 0m0.01s", text[:80] or "(nothing)")
    return sum(int(m) * 60 + float(s) for m, s in found)
