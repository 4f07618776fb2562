"""Text laid out for a width: a figure stays on one line with its unit, and a line too long
wraps under its own start, further in, so a page's outline still reads down its left edge."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from typing import Any

HANG = 4  # a wrapped line goes on this far in from its own line's start, never at column 0

# a figure stays on one line with its unit ("17.0 Gb/s", "0.44 ms", "1400 bytes")
_FIGURE = re.compile(r"(?<=\d) (?=[kKMGT]?(?:b/s|B\b|bytes|ms\b|s\b))")


def wrap(value: str, width: int, **kw: Any) -> list[str]:
    """``value`` cut into lines of at most ``width`` (textwrap's keywords go through), never
    between a figure and its unit."""
    glued = _FIGURE.sub("\u00a0", value)
    return [line.replace("\u00a0", " ") for line in textwrap.wrap(glued, width, break_on_hyphens=False, **kw)]


def hanging(lines: Iterable[str], width: int) -> list[str]:
    """``lines`` for ``width`` columns: each too long wraps HANG further in than its own start
    (a plain wrap where that leaves under 20 columns); an empty line stays."""
    out: list[str] = []
    for line in lines:
        lead = len(line) - len(line.lstrip(" "))
        hang = lead + HANG if width >= lead + HANG + 20 else 0
        out += wrap(line, width, subsequent_indent=" " * hang) or [""]
    return out
