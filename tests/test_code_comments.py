"""Code comments say why; history, measurements' provenance and references to the issues or
the seed stories that led to the code live in commit bodies and docs/, not in src/."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "linkdeck"
# "issue 20 §3", "Seed 003", "(seed⏎ 004)" across a line break; a standard's section
# ("RFC 8878 §3.1.1.2") is fine
HISTORY = re.compile(r"\b(issue|seed)s?\s+\d+|(?<!RFC \d{4} )§ ?\d", re.IGNORECASE)


def test_no_source_file_points_at_issues_or_seeds() -> None:
    found = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".py", ".sh", ".awk", ".tcss", ".css"):
            continue
        text = path.read_text()
        for match in HISTORY.finditer(text):
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            lines = text[start : end if end >= 0 else None]
            if "RFC" not in lines:
                found.append(f"{path.relative_to(SRC)}:{text.count(chr(10), 0, start) + 1}: {' '.join(lines.split())}")
    assert found == []


# a time measured ("~7 µs an interface", "15-25 us", "0.55 s") in a comment, outside quotes
TIMING = re.compile(r"\d[\d.,]*(?:\s?[-–]\s?\d[\d.,]*)?\s?(?:µs|us|ns|ms)\b")
QUOTED = re.compile(r'"[^"]*"|`[^`]*`')


def test_no_comment_carries_a_measured_time() -> None:
    found = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".py", ".sh", ".awk"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith("#") and TIMING.search(QUOTED.sub("", stripped)):
                found.append(f"{path.relative_to(SRC)}:{n}: {stripped}")
    assert found == []
