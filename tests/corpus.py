"""Reading the fixtures copied from ../shared/corpus/ (and our own captures), which keep their
4-line provenance header (# source / # system / # command / # ---)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(rel: str | Path, base: Path = FIXTURES) -> str:
    """A fixture's captured output, without its provenance header."""
    lines = (base / rel).read_text().splitlines(keepends=True)
    assert all(line.startswith("# ") for line in lines[:4]), f"{rel}: no 4-line provenance header"
    return "".join(lines[4:])


def by_name(records) -> dict:
    return {r.name: r for r in records}
