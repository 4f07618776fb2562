"""docs/ARCHITECTURE.md stays true: every file and folder it names exists, and every top-level
part of the package is placed in its layer table."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
PATHS = sorted(set(re.findall(r"`((?:src|tests|docs)/[\w./-]+)`", DOC)))


def test_every_named_path_exists():
    assert len(PATHS) > 20  # the pattern really finds the doc's paths
    missing = [p for p in PATHS if not (ROOT / p).exists()]
    assert missing == []


def test_every_top_level_module_is_in_the_layer_table():
    src = ROOT / "src" / "linkdeck"
    tops = {p.stem for p in src.glob("*.py") if p.stem not in ("__init__", "__main__")}
    tops |= {p.name for p in src.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    table = DOC.split("## Layers", 1)[1].split("## From", 1)[0]
    unplaced = [t for t in sorted(tops) if f"src/linkdeck/{t}" not in table]
    assert unplaced == []
