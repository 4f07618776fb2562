"""The samplers' sh and awk, kept as files in ``platforms/scripts/`` and made ready to send.

A script file holds ``@NAME@`` words where Python fills in a value: a number, or fixed text
(a frame marker, a list of counter names) that the file itself quotes. Filled values are
checked against a plain character set, so nothing filled in can end a quote or start a
command. :func:`sh_line` and :func:`awk_line` then make the one line a csh, tcsh or fish
login shell passes to ``sh -c`` unchanged (see shell.py).
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from typing import Mapping

from .shell import one_line

_WORD = re.compile(r"@([A-Z][A-Z0-9_]*)@")
# What a filled-in value may hold: frame markers, numbers, `|`-separated names, a regular
# expression; never a quote, a backslash, a `!`, a command separator or a substitution.
_PLAIN = re.compile(r"[A-Za-z0-9 @_|.:/()?$^*+,-]*")


@cache
def source(name: str) -> str:
    """The text of ``platforms/scripts/NAME``."""
    return (files(__package__) / "scripts" / name).read_text(encoding="utf-8")


def fill(text: str, values: Mapping[str, str | int], code: Mapping[str, str] | None = None) -> str:
    """``text`` with each ``@NAME@`` replaced by its value; ``code`` holds already-built
    script text (a loop, an awk program) placed as it is. ValueError for a word without a
    value, a value without a word or a value outside the plain set."""
    given: dict[str, str] = dict(code or {})
    for name, value in values.items():
        text_value = str(int(value)) if isinstance(value, int) else value
        if not _PLAIN.fullmatch(text_value) or "$(" in text_value:
            raise ValueError(f"{name}: {text_value!r} is not plain text to fill into a script")
        given[name] = text_value
    wanted = set(_WORD.findall(text))
    if wanted != set(given):
        raise ValueError(f"script words {sorted(wanted)} but values for {sorted(given)}")
    return _WORD.sub(lambda m: given[m.group(1)], text)


def sh_line(text: str) -> str:
    """A sh script file as one line: comment lines dropped, statements joined."""
    return one_line("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))


def awk_line(text: str) -> str:
    """An awk program file as one line, for single quotes inside the sh line: comment lines
    dropped, the rest joined by spaces (the files end each statement in ``;`` or a brace)."""
    lines = [line.strip() for line in text.splitlines()]
    program = " ".join(line for line in lines if line and not line.startswith("#"))
    if "'" in program or "!" in program:
        raise ValueError("an awk program sent inside single quotes has no ' and no !")
    return program
