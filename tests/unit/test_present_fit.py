"""present.fit: a page laid out for a terminal's width. A long line wraps under its own start,
further in, never between a figure and its unit; `linkdeck diagnose` does this on a terminal
only, and prints each line whole to a pipe."""

from __future__ import annotations

import os
import pty

from linkdeck.commands.diagnose import page_for
from linkdeck.present.fit import HANG, hanging

# Lines of a diagnose page as printed by the constructed lab in an earlier session (d → a, lab-a
# eth1 at MTU 1400 in the subnet).
PAGE = "\n".join(
    (
        "linkdeck diagnose lab-d → lab-a",
        "",
        "2. The path",
        "    PATH_DIFFERS: lab-d → lab-a to 10.77.156.62 (eth1) moved next to nothing (23.1 kb/s) against 957 Mb/s"
        " to 10.77.156.11 (eth0): its path carries 1404-byte packets where 1500-byte ones are sent",
        "3. Verdict: BAD — lab-d → lab-a via 10.77.156.62 (eth1) carries 1404-byte packets; the sender's interface"
        " uses 1500: lab-d → lab-a moved 23.1 kb/s through it",
        "",
    )
)


def test_a_long_line_wraps_under_its_own_start_with_its_figures_whole():
    lines = PAGE.rstrip("\n").split("\n")
    out = hanging(lines, 60)
    assert all(len(line) <= 60 for line in out), out
    assert out[:3] == lines[:3]  # short lines and the blank one as they were
    cause = out[3 : out.index(next(x for x in out[4:] if x.startswith("3.")))]
    assert len(cause) > 2 and cause[0].startswith("    PATH_DIFFERS:")
    assert all(x.startswith(" " * (4 + HANG)) and x[4 + HANG] != " " for x in cause[1:]), cause
    assert " ".join(x.strip() for x in cause) == lines[3].strip()  # no word lost or cut
    verdict = out[out.index(next(x for x in out if x.startswith("3."))) :]
    assert all(x.startswith(" " * HANG) for x in verdict[1:]), verdict
    for figure in ("23.1 kb/s", "957 Mb/s"):
        assert any(figure in x for x in out), (figure, out)


def test_too_narrow_to_hang_wraps_plainly():
    out = hanging(["        " + "word " * 10], 24)
    assert all(len(x) <= 24 for x in out) and any(not x.startswith(" ") for x in out[1:]), out


def test_diagnose_wraps_for_a_terminal_and_prints_whole_lines_to_a_pipe(monkeypatch):
    monkeypatch.setenv("COLUMNS", "72")
    main, follower = pty.openpty()
    try:
        with os.fdopen(follower, "w", closefd=False) as tty:
            on_tty = page_for(PAGE, tty)
    finally:
        os.close(main)
        os.close(follower)
    assert on_tty != PAGE and all(len(line) <= 72 for line in on_tty.splitlines()), on_tty
    assert on_tty.endswith("\n") and on_tty.split() == PAGE.split()
    read, write = os.pipe()
    try:
        with os.fdopen(write, "w", closefd=False) as pipe:
            assert page_for(PAGE, pipe) == PAGE
    finally:
        os.close(read)
        os.close(write)
