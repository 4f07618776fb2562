"""Only ui/ may import textual or rich, so the data layer runs headless and stays testable."""

import ast
import re
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
        "import sys, linkdeck.cli, linkdeck.fleet.collector, linkdeck.commands.snapshot, linkdeck.commands.snapshot_format;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# Layers, lowest first: a module may import its own layer and those below, never above. A new
# top-level module or package must be placed here (the test fails until it is), so the layering
# is decided once, when the module is made. ``cli`` (and ``__main__``) sit on top of everything.
LAYERS = (
    ("core", {"__init__", "core", "settings"}),
    ("parsers", {"parsers"}),
    ("transport", {"transport"}),
    ("platforms", {"platforms", "prometheus"}),
    ("domain", {"fleet", "findings", "verdict", "recording", "flows"}),
    ("probe", {"probe"}),
    ("present", {"present"}),
    ("commands", {"commands"}),
    ("ui", {"ui"}),
    ("entry", {"cli", "__main__"}),
)
MAX_LINES = 400


def _layer_of(top: str) -> int:
    for rank, (_, members) in enumerate(LAYERS):
        if top in members:
            return rank
    raise AssertionError(f"linkdeck.{top} is in no layer: add it to LAYERS in {Path(__file__).name}")


def _linkdeck_imports(source: str, rel: tuple[str, ...]) -> set[str]:
    """Top-level linkdeck names (``model``, ``parsers`` …) that the module at ``rel`` (its path
    parts under src/linkdeck, without .py) imports."""
    package = rel[:-1]  # where relative imports start from
    tops = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = (*base, *(node.module.split(".") if node.module else ()))
            elif node.module and node.module.split(".")[0] == "linkdeck":
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            if target:
                tops.add(target[0])
            else:  # `from linkdeck import x`: x is a module, or a name defined in __init__
                tops.update(a.name if _is_module(a.name) else "__init__" for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "linkdeck":
                    tops.add(parts[1] if len(parts) > 1 else "__init__")
    return tops


def _is_module(name: str) -> bool:
    return (SRC / f"{name}.py").exists() or (SRC / name).is_dir()


def test_no_import_reaches_a_higher_layer():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("").parts
        own = _layer_of(rel[0])
        for top in _linkdeck_imports(path.read_text(), rel) - {rel[0]}:
            if _layer_of(top) > own:
                offenders.append(f"{path.relative_to(SRC)} imports linkdeck.{top} ({LAYERS[_layer_of(top)][0]} is above {LAYERS[own][0]})")
    assert offenders == []


def test_layer_check_sees_an_upward_import():
    """The walk above really resolves imports (a check that cannot fail is no check)."""
    source = "from ..platforms import base\nfrom .. import cli, __version__\nfrom .errors import E\nimport linkdeck.ui.app\n"
    tops = _linkdeck_imports(source, ("parsers", "ethtool"))
    assert tops == {"platforms", "cli", "__init__", "parsers", "ui"}
    assert [t for t in tops if _layer_of(t) > _layer_of("parsers")] != []


def test_no_module_is_over_the_size_limit():
    long = [f"{p.relative_to(SRC)}: {n} lines" for p in SRC.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert long == []


def test_every_test_file_the_code_names_exists():
    """A comment pointing at "the test that checks this" is a promise; a renamed or never
    written test breaks it silently."""
    root = SRC.parents[1]
    named = {(p.relative_to(SRC), m) for p in SRC.rglob("*.py") for m in re.findall(r"\btests/[\w/]+\.py\b", p.read_text())}
    assert len(named) > 3  # the scan really found references
    assert [f"{where}: {test}" for where, test in sorted(named) if not (root / test).exists()] == []
