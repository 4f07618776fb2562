"""docs/ARCHITECTURE.md stays true: every file and folder it names exists, every top-level part
of the package is placed in its layer table, and "Where a change goes" names what is really
there (each name it gives is in a file it names) and every place a new sub-command, finding,
OS family or column needs (what the existing ones have, the recipe lists)."""

import importlib
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


# -- "Where a change goes": each recipe names what really is there, and everything that is -----

README = (ROOT / "README.md").read_text()
RECIPES = {m.group(1): m.group(2) for m in re.finditer(r"^- \*\*(.+?)\*\*(.*?)(?=^- \*\*|\Z)", DOC.split("## Where a change goes", 1)[1], flags=re.S | re.M)}
IDENT = re.compile(r"[A-Za-z_][\w.]*(?:\([\w, ]*\))?")


def _text_of(paths: list[str]) -> str:
    parts = [README]
    for p in paths:
        path = ROOT / p
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        parts += [f.read_text() for f in files]
    return "\n".join(parts)


def test_the_recipes_are_there():
    assert {"A new OS.", "A new finding.", "A new column.", "A new sub-command."} <= set(RECIPES)


def test_every_name_a_recipe_gives_is_in_a_file_it_names():
    """`SUBCOMMANDS` in `src/linkdeck/cli.py`: renaming either without the recipe fails here."""
    stale = []
    for title, text in RECIPES.items():
        named = re.findall(r"`((?:src|tests|docs)/[\w./-]+)`", text)
        source = _text_of(named)
        for token in re.findall(r"`([^`]+)`", text):
            if token.startswith(("src/", "tests/", "docs/")) or token.endswith("_") or not IDENT.fullmatch(token):  # action_: a prefix
                continue
            for part in token.split("(")[0].split("."):
                if part and not re.search(rf"\b{re.escape(part)}\b", source):
                    stale.append(f"{title} `{token}`")
    assert stale == []


def test_a_new_sub_command_needs_only_what_its_recipe_says():
    from linkdeck import cli

    recipe = RECIPES["A new sub-command."]
    assert "`SUBCOMMANDS`" in recipe and "`src/linkdeck/cli.py`" in recipe and "`src/linkdeck/commands/`" in recipe
    for name in cli.SUBCOMMANDS:
        module = importlib.import_module(cli._MODULES.get(name, f".commands.{name}"), "linkdeck")
        assert callable(module.add_arguments) and callable(module.run), name
        assert f"linkdeck {name}" in README, f"the README has no section for `linkdeck {name}`"


FINDING_FAMILIES = ROOT / "src" / "linkdeck" / "findings"


def test_a_new_finding_needs_only_what_its_recipe_says():
    recipe = RECIPES["A new finding."]
    diagnose = (ROOT / "src" / "linkdeck" / "findings" / "engine.py").read_text()
    table = README
    for module in sorted(FINDING_FAMILIES.glob("*.py")):
        if module.stem in ("__init__", "helpers", "window", "engine"):
            continue
        assert f"`{module.name}`" in recipe, f"findings/{module.name} is a family the recipe does not list"
        assert re.search(rf"from \. import .*\b{module.stem}\b", diagnose), f"findings/engine.py does not call findings/{module.name}"
        for code in re.findall(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"', module.read_text()):
            assert re.search(rf"^\|[^|\n]*`{code}`[^|\n]*\|", table, re.M), f"{code} ({module.name}) has no row in the README's findings table"


def test_a_new_os_family_needs_only_what_its_recipe_says():
    from linkdeck.core.oses import FAMILIES, OSES
    from linkdeck.parsers.registry import entries
    from linkdeck.platforms.detect import ADAPTERS

    recipe = RECIPES["A new OS."]
    for key in ("`FAMILIES`", "`OSES`", "`ADAPTERS`", "`src/linkdeck/parsers/registry.py`", "`tests/fixtures/`"):
        assert key in recipe
    fixtures = {p.name for p in (ROOT / "tests" / "fixtures").iterdir()}
    for family in FAMILIES:
        assert family in ADAPTERS, family
        names = {name for name, facts in OSES.items() if facts.family == family} | {family}
        assert any(names & entry.oses for entry in entries()), f"no parser is registered for the {family} family"
        assert names & fixtures, f"no real captures of a {family} OS in tests/fixtures/"
