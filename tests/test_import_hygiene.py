"""Only ui/ may import textual or rich, so the data layer runs headless and stays testable."""

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "linkdeck"
UI_ONLY = ("textual", "rich")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_nothing_outside_ui_imports_textual_or_rich():
    offenders = []
    files = [p for p in SRC.rglob("*.py") if "ui" not in p.relative_to(SRC).parts]
    assert len(files) > 10  # the walk really found the package
    for path in files:
        bad = _imports(path) & set(UI_ONLY)
        if bad:
            offenders.append(f"{path.relative_to(SRC)}: {', '.join(sorted(bad))}")
    assert offenders == []


def test_headless_commands_do_not_load_textual():
    code = (
        "import sys, linkdeck.cli, linkdeck.collector, linkdeck.commands.snapshot, linkdeck.report;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
