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
# The reference the README links to: each sub-command has its section there or in docs/.
REFERENCE = "\n".join([README, *(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))])
# the codes a finding or a verdict can carry, each with its row
CODES_DOC = (ROOT / "docs" / "FINDINGS.md").read_text() + (ROOT / "docs" / "TESTS.md").read_text()
RECIPES = {
    m.group(1): m.group(2)
    for m in re.finditer(
        r"^- \*\*(.+?)\*\*(.*?)(?=^- \*\*|\Z)", DOC.split("## Where a change goes", 1)[1], flags=re.S | re.M
    )
}
IDENT = re.compile(r"[A-Za-z_][\w.]*(?:\([\w, ]*\))?")


# What a recipe's names are looked up in besides the files it names: the reference, but not this
# document itself, where every name a recipe gives is found by being written there.
BESIDES_RECIPES = "\n".join(
    [README, *(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "ARCHITECTURE.md")]
)


def _text_of(paths: list[str]) -> str:
    parts = [BESIDES_RECIPES]
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
            if (
                token.startswith(("src/", "tests/", "docs/")) or token.endswith("_") or not IDENT.fullmatch(token)
            ):  # action_: a prefix
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
        assert f"linkdeck {name}" in REFERENCE, f"neither the README nor docs/ has a section for `linkdeck {name}`"


FINDING_FAMILIES = ROOT / "src" / "linkdeck" / "findings"


def test_a_new_finding_needs_only_what_its_recipe_says():
    recipe = RECIPES["A new finding."]
    diagnose = (ROOT / "src" / "linkdeck" / "findings" / "engine.py").read_text()
    for module in sorted(FINDING_FAMILIES.glob("*.py")):
        if module.stem in ("__init__", "helpers", "window", "engine"):
            continue
        assert f"`{module.name}`" in recipe, f"findings/{module.name} is a family the recipe does not list"
        assert re.search(rf"from \. import .*\b{module.stem}\b", diagnose), (
            f"findings/engine.py does not call findings/{module.name}"
        )


def _documented_codes() -> set[str]:
    """The codes in the first cell of a row of docs/FINDINGS.md's or docs/TESTS.md's tables."""
    cells = re.findall(r"^\|([^|\n]*)\|", CODES_DOC, re.M)
    return {code for cell in cells for code in re.findall(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)`", cell)}


def test_every_code_has_its_row_and_every_row_its_code():
    from linkdeck.core.codes import Code

    members = {code.value for code in Code}
    assert members - _documented_codes() == set(), "codes with no row in docs/FINDINGS.md's or docs/TESTS.md's tables"
    assert _documented_codes() - members == set(), "rows of docs/FINDINGS.md or docs/TESTS.md naming no Code"


def test_codes_are_raised_and_compared_as_members_not_words():
    """A code written as a string in the source would dodge the type check that a mistyped
    ``Code.X`` fails: every one goes through core/codes.py."""
    from linkdeck.core.codes import Code

    word = re.compile(r"""["']({})["']""".format("|".join(code.value for code in Code)))
    written = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "src" / "linkdeck").rglob("*.py"))
        if path.name != "codes.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if word.search(line)
    ]
    assert written == []


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


def test_every_column_has_its_row_in_the_dashboard_doc():
    """The column recipe's "the columns table in docs/DASHBOARD.md gets its row": a column's
    title (or one word of it: `pps` for "RX pps TX pps") names a row there, and every row a column."""
    from linkdeck.core import cells

    doc = (ROOT / "docs" / "DASHBOARD.md").read_text()
    table = doc.split("| column | meaning |", 1)[1].split("\n\n", 1)[0]
    rows = {name.strip() for cell in re.findall(r"^\| ([^|]+) \|", table, re.M) for name in cell.split(",")}
    rows -= {"---", "(host row)"}  # the separator; a host row's totals are no column
    columns = (cells.NAME, *cells.COLUMNS.values())
    undocumented = [c.id for c in columns if c.title not in rows and not rows & set(c.title.split())]
    assert undocumented == [], "columns without a row in docs/DASHBOARD.md's columns table"
    titles = {t for c in columns for t in (c.title, *c.title.split())}
    assert rows - titles == set(), "rows of docs/DASHBOARD.md's columns table naming no column"
