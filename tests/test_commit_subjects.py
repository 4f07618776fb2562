"""Commit subjects of at most 72 characters, the detail and the figures in the body (CONTRIBUTING).
Checked over every commit since the rule was set; the history before it stays as it was, and the
four subjects one character over that landed since are named here rather than rewritten."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 72
# The last commit before the rule: its subject is a whole paragraph, as many before it are.
RULE_SET_AFTER = "be13693"
# Landed at 73 characters before this test existed; history is not rewritten.
LANDED_OVER = {"028170d", "b0709b5", "a00e977", "44f6d34"}


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def test_every_subject_since_the_rule_fits_72_characters():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no history to read")
    if _git("cat-file", "-e", f"{RULE_SET_AFTER}^{{commit}}").returncode != 0:
        pytest.skip(f"a shallow clone without {RULE_SET_AFTER}: the history since the rule is not here")
    log = _git("log", "--format=%h %s", "--abbrev=7", f"{RULE_SET_AFTER}..HEAD")
    assert log.returncode == 0, log.stderr
    over = []
    for line in log.stdout.splitlines():
        short, _, subject = line.partition(" ")
        if len(subject) > LIMIT and short not in LANDED_OVER:
            over.append(f"{short} ({len(subject)}): {subject}")
    assert over == [], "subjects over 72 characters; put the detail in the body:\n" + "\n".join(over)


def test_the_named_exceptions_are_in_the_history_and_really_over():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no history to read")
    if _git("cat-file", "-e", f"{RULE_SET_AFTER}^{{commit}}").returncode != 0:
        pytest.skip(f"a shallow clone without {RULE_SET_AFTER}")
    for short in sorted(LANDED_OVER):
        subject = _git("log", "-1", "--format=%s", short).stdout.strip()
        assert len(subject) == LIMIT + 1, (short, subject)
