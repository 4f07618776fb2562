"""Code comments say why; history, measurements' provenance and references to the issues or
the seed stories that led to the code live in commit bodies and docs/, not in src/."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "linkdeck"
# "issue 20 §3", "seed 003", "(issue 19)"; a standard's section ("RFC 8878 §3.1.1.2") is fine
HISTORY = re.compile(r"\b(issue|seed)s? \d+|(?<!RFC \d{4} )§ ?\d")


def test_no_source_file_points_at_issues_or_seeds() -> None:
    found = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".py", ".sh", ".awk", ".tcss", ".css"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if HISTORY.search(line) and "RFC" not in line:
                found.append(f"{path.relative_to(SRC)}:{n}: {line.strip()}")
    assert found == []
