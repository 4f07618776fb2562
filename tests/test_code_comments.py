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
