"""The README is the front page, and it stays true: every relative link (and its #anchor) leads
somewhere, every `linkdeck …` command line in it parses with linkdeck's own argument parser,
every path it names exists, the quick start is the two scripts CI runs, and the screenshot is
what the dashboard draws today (scripts/screenshot.py makes it again)."""

from __future__ import annotations

import contextlib
import html
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
PAGES = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "bench" / "README.md",
]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# each inline `linkdeck …` of the README's prose, its spaces as one
PROSE = [" ".join(span.split()) for span in re.findall(r"`(linkdeck(?: [^`]*)?)`", FENCE.sub("", README))]


def _anchors(page: Path) -> set[str]:
    """GitHub's ids for a page's headings: lower case, punctuation dropped, spaces as dashes."""
    text = FENCE.sub("", page.read_text())
    return {
        re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        for title in re.findall(r"^#+ (.+)$", text, re.M)
    }


def test_every_link_in_the_readme_and_docs_leads_to_a_file_and_heading_that_exist():
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert len(PAGES) > 8
    assert broken == []


def test_every_docs_page_and_the_benchmarks_are_linked_from_the_readme():
    linked = set(re.findall(r"\]\(((?:docs|bench)/[\w.-]+\.md)", README))
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} | {"bench/README.md"}
    assert pages - linked == set()


def test_the_readme_is_a_front_page_and_its_quick_start_the_scripts_ci_runs():
    assert 150 <= len(README.splitlines()) <= 250
    quick = README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0].split()
    assert quick == ["bash", "scripts/run.sh", "bash", "scripts/test.sh"]
    assert "exec bash scripts/test.sh\n" in (ROOT / ".ci" / "run").read_text()


def test_every_path_the_readme_names_exists():
    named = set(re.findall(r"(?<![\w./~-])((?:\.ci|bench|config|docs|scripts|src|tests)/[\w./-]*\w)", README))
    assert {"scripts/run.sh", "scripts/test.sh", "scripts/screenshot.py", "docs/screenshot.svg"} <= named
    assert sorted(p for p in named if not (ROOT / p).exists()) == []


# -- the command lines -------------------------------------------------------------------------


def _parse_error(argv: list[str]) -> str | None:
    """What linkdeck's own parsing says about ``linkdeck ARGV``: None when it takes the line,
    as ``linkdeck.cli.main`` reads it (the sub-command split, the same parser, no run)."""
    from linkdeck import cli

    name, rest = cli.split_command(argv)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            args = cli.main_parser().parse_args(rest) if name is None else cli.parse_subcommand(name, rest)
        except SystemExit as exc:
            return None if exc.code == 0 else out.getvalue().strip().splitlines()[-1]
    if name is None and set(args.hosts) & set(cli.SUBCOMMANDS):
        return "a sub-command after a host"
    return None


def _shell_lines() -> list[str]:
    """The `linkdeck` command of each line of the README's ```sh blocks, up to a pipe or
    redirection, and each inline `linkdeck …` in its prose."""
    lines = [line for lang, body in FENCE.findall(README) if lang == "sh" for line in body.splitlines() if line.strip()]
    lines += PROSE
    return [line for line in lines if line.split()[0] == "linkdeck"]


def _words(line: str) -> list[str]:
    words = shlex.split(line)
    cut = next((i for i, w in enumerate(words) if w in ("|", ">", ">>", "&&", "||", ";")), len(words))
    return words[1:cut]


def _synopsis() -> list[str]:
    (body,) = [body for lang, body in FENCE.findall(README) if lang == "" and body.startswith("linkdeck")]
    return body.splitlines()


# the synopsis's placeholders for numbers, as a value of their type
NUMBERS = {"S": "5", "SECONDS": "1", "N": "4"}


def _from_template(line: str) -> list[str]:
    """A synopsis line as a command: optional parts taken, the first of each choice (`a|b`,
    `[--json | --csv]`), `...` dropped, a number for a number's placeholder."""
    words, out = shlex.split(line.replace("[", " ").replace("]", " ")), []
    skip = False
    for word in words[1:]:
        if skip or word in ("...", "…"):
            skip = False
            continue
        if word == "|":
            skip = True
            continue
        word = word.split("|")[0]
        out.append(NUMBERS.get(word, word))
    return out


def test_the_readme_shows_real_commands():
    lines = _shell_lines()
    subs = {w[0] for line in lines if (w := _words(line)) and not w[0].startswith("-")}
    # the tasks' examples: each of these is shown with real arguments
    assert {"hosts", "snapshot", "mtu", "test", "matrix", "diagnose", "flows", "record", "replay", "report"} <= subs
    assert any("--prometheus" in line for line in lines) and any("--json" in line for line in lines)


@pytest.mark.parametrize("line", _shell_lines())
def test_every_readme_command_line_parses(line: str):
    from linkdeck import cli

    words = _words(line)
    if len(words) == 1 and words[0] in cli.SUBCOMMANDS and line in PROSE:
        return  # `linkdeck parse` in a sentence names the command; its synopsis line parses below
    assert _parse_error(words) is None, line


def test_the_synopsis_has_every_sub_command_and_each_line_parses():
    from linkdeck import cli

    lines = _synopsis()
    words = {line.split()[1] for line in lines if not line.split()[1].startswith("[")}
    assert words == set(cli.SUBCOMMANDS)
    errors = {line: _parse_error(_from_template(line)) for line in lines}
    assert {line: e for line, e in errors.items() if e} == {}


def test_a_wrong_option_fails_the_parse_check():
    """The checks above can fail: an option a command does not have, a missing argument."""
    assert _parse_error(["test", "a", "b", "--bogus"])
    assert _parse_error(["test", "a"])
    assert _parse_error(["snapshot", "--fail-on", "notice"])
    assert _parse_error(_from_template("linkdeck flows HOST [--top N] [--bogus | --json]"))
    assert _parse_error(["nas01", "snapshot"])
    assert _parse_error(["hosts", "--help"]) is None


# -- the screenshot ----------------------------------------------------------------------------

BLOCKS = re.compile(r"[▁▂▃▄▅▆▇█]")


def _screen_lines(svg: str) -> list[str]:
    """The text of each terminal line of a Textual SVG screenshot."""
    lines: dict[int, list[str]] = {}
    for n, text in re.findall(r'<text[^>]*clip-path="url\(#terminal-\d+-line-(\d+)\)"[^>]*>([^<]*)</text>', svg):
        lines.setdefault(int(n), []).append(html.unescape(text).replace("\xa0", " "))
    return ["".join(parts).rstrip() for _, parts in sorted(lines.items())]


def _comparable(lines: list[str]) -> list[str]:
    # the header ends with linkdeck's own CPU and memory, and the graphs' heights follow timing
    head = lines[0].rsplit("│", 1)[0]
    return [head, *(BLOCKS.sub("▮", line) for line in lines[1:])]


def test_the_screenshot_is_what_the_dashboard_draws(tmp_path: Path):
    out = tmp_path / "screenshot.svg"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "screenshot.py"), str(out)], check=True, timeout=120)
    drawn = _screen_lines(out.read_text())
    committed = _screen_lines((ROOT / "docs" / "screenshot.svg").read_text())
    assert any("100M half" in line for line in drawn) and any(" 9000 " in line for line in drawn)
    assert _comparable(committed) == _comparable(drawn), (
        "docs/screenshot.svg is not what the dashboard draws now: run .venv/bin/python scripts/screenshot.py"
    )
