"""Sampler scripts as one line of sh.

sshd runs the command through the user's login shell (``$SHELL -c '…'``), and csh/tcsh — root's
shell on FreeBSD up to 13 and on TrueNAS CORE — rejects a newline inside quotes ("Unmatched
'."). So a script is written readably, one statement a line, and sent as one line.
"""

from __future__ import annotations

# A line ending in one of these continues into the next without a separator ("do;" and
# "then;" are syntax errors in sh, and "&;" is too).
_OPENERS = ("do", "then", "else", "{", "|", "&&", "||", "&")


def one_line(script: str) -> str:
    lines = [line.strip() for line in script.splitlines()]
    lines = [line.rstrip(";").rstrip() if not line.endswith(";;") else line for line in lines if line]
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i < len(lines) - 1:
            out.append(" " if line.endswith(_OPENERS) or line.split()[-1] in _OPENERS else "; ")
    return "".join(out)
