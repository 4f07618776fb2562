"""The sampler's framing, shared by every adapter and the delta filter: the marker lines a
frame starts and ends with and the one that starts each named section."""

from __future__ import annotations

FRAME_BEGIN = "@@LD BEGIN"
FRAME_END = "@@LD END"
SECTION = "@@LD SECTION "


def section_header(name: str) -> str:
    """The sh line that starts a section, for use inside adapter scripts."""
    return f"echo '{SECTION}{name}'"
