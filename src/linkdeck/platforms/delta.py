"""Delta frames: the sampler sends only the lines that changed since its last frame.

A node with hundreds of idle interfaces prints the same lines tick after tick; sending them
all cost 200 KB a sample. The sampler's loop is piped through one long-running
``awk`` (started once per connection, so no process per tick) that holds each section's lines
from the frame before and replaces every run of unchanged lines with ``@@LD SAME n``: the
lines at the same positions in that section of the last frame. A frame with a ``@@LD FULL``
line anywhere in it is sent whole (the sampler asks for one on its first frame, when the set
of interfaces changes and every few slow-facts frames), so a receiver that lost its base —
a frame it could not read, a recording picked up mid-stream — is whole again soon after.

Positions rather than keys make it one rule for every OS's output: an interface that comes or
goes shifts the lines after it, which costs that one frame its savings and nothing else.
"""

from __future__ import annotations

from typing import Mapping

from . import script_text
from .frames import FRAME_END, SECTION

SAME = "@@LD SAME "
FULL = "@@LD FULL"
# A full frame every this many slow-facts frames (5 minutes at the defaults: 1 s, 10 ticks)
# besides the first and those on a change of the set of links.
FULL_EVERY = 30

# How every sampler loop begins and waits (no fork per tick). The client drives
# the ticks: it writes one newline to the command's stdin per interval (transport.base.Ticker)
# and the loop waits for it with the shell's built-in `read`, where a `sleep` cost a fork and
# an exec every tick (the read is the shell's own, no process). The first frame
# goes out unasked. Samples are timed by the host's own clock in the frame, so the client's
# jitter does not bend rates. stdin moves to fd 3 and the loop's commands get /dev/null, so
# none of them can swallow a tick. When the client goes (the channel or the runner closed),
# `read` meets EOF and the loop ends, and the delta filter's awk with it: no process is left
# holding the output pipe.
LOOP = "exec 3<&0 </dev/null; while :; do"
NEXT = "read -r tk <&3 || break"


def piped(loop: str, awk: str = "awk", rules: str = "") -> str:
    """The sampler ``loop`` (one line of sh) with its output sent through the delta filter
    (scripts/filter.sh, scripts/delta.awk), run by ``awk`` (a fixed name: illumos's ``awk`` is
    the old one, its ``nawk`` is POSIX). ``rules`` (one line of awk) go before the filter's
    own: a sampler's lines they consume with ``next`` never reach the frame, and what they
    add to ``frame_lines[++frame_count]`` does."""
    program = script_text.fill(
        script_text.awk_line(script_text.source("delta.awk")),
        {"SAME": SAME, "SECTION": SECTION, "FULL": FULL, "FRAME_END": FRAME_END},
    )
    pipe = script_text.sh_line(script_text.source("filter.sh"))
    return script_text.fill(
        pipe, {"AWK": awk}, code={"LOOP": loop, "PROGRAM": (rules + " " if rules else "") + program}
    )


_LINE_SAME = "\n" + SAME


class DeltaError(Exception):
    """A delta frame whose base this receiver does not hold."""


def expand(frame: Mapping[str, str], base: dict[str, list[str]]) -> dict[str, str]:
    """The whole frame a delta ``frame`` stands for, given ``base`` (each section's lines as
    last expanded; updated in place). DeltaError when a run reaches past what ``base`` holds;
    the base is then cleared, so nothing is built on it until a full frame."""
    out: dict[str, str] = {}
    for name, body in frame.items():
        lines = body.split("\n")
        if lines[-1] == "":
            lines.pop()
        if not body.startswith(SAME) and _LINE_SAME not in body:  # no line begins with SAME
            base[name] = lines
            out[name] = body
            continue
        old = base.get(name, [])
        whole: list[str] = []
        for line in lines:
            if not line.startswith(SAME):
                whole.append(line)
                continue
            count = line[len(SAME) :]
            start = len(whole)
            if not count.isdigit() or start + int(count) > len(old):
                base.clear()
                raise DeltaError(
                    f"a delta frame refers to lines {start + 1}… of section {name!r} that the frame before did not have"
                )
            whole += old[start : start + int(count)]
        base[name] = whole
        out[name] = "\n".join(whole) + ("\n" if whole else "")
    return out
