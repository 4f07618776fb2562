"""The package's metadata as an index shows it: an SPDX license with its file, authors,
classifiers, and no project URL that does not exist."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_pyproject_names_license_authors_and_classifiers() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert project["authors"] == [{"name": "the linkdeck authors"}]
    assert "Topic :: System :: Networking :: Monitoring" in project["classifiers"]
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # PEP 639: the expression says it
    assert "urls" not in project  # none is known to exist


def test_the_license_file_is_mit_by_the_linkdeck_authors() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the linkdeck authors" in text
    assert "WITHOUT WARRANTY OF ANY KIND" in text
