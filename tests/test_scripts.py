"""The quick start's scripts: set up once, then start without installing (and without a
package index) every later time."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _project(tmp_path: Path) -> Path:
    """A copy of venv.sh beside a pyproject, with a stand-in .venv/bin/python that logs each
    pip install it is asked for (constructed: no real install happens)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "venv.sh", tmp_path / "scripts" / "venv.sh")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$*" >>{tmp_path}/installs\n')
    python.chmod(0o755)
    return tmp_path


def _ensure(project: Path, extras: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_INDEX_URL": "http://127.0.0.1:9/"}  # no index: a real install would fail
    return subprocess.run(
        ["bash", "-c", f'. scripts/venv.sh && ensure_venv "{extras}"'],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_linkdeck_is_installed_once_and_again_only_when_pyproject_changes(tmp_path):
    project = _project(tmp_path)
    first = _ensure(project, "")
    assert first.returncode == 0, first.stderr
    assert "linkdeck setup: installing linkdeck and its dependencies into ./.venv (once" in first.stderr
    assert (project / "installs").read_text().splitlines() == ["-m pip install -q --disable-pip-version-check -e ."]
    again = _ensure(project, "")
    assert again.returncode == 0 and again.stderr == ""
    assert len((project / "installs").read_text().splitlines()) == 1  # straight to linkdeck
    # the test extras are their own install, once too
    assert _ensure(project, "[test]").returncode == 0 and _ensure(project, "[test]").stderr == ""
    assert (project / "installs").read_text().splitlines()[1:] == [
        "-m pip install -q --disable-pip-version-check -e .[test]"
    ]
    # a changed pyproject (new dependencies) installs again
    (project / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["y"]\n')
    assert _ensure(project, "").returncode == 0
    assert len((project / "installs").read_text().splitlines()) == 3


def test_a_change_to_a_tools_settings_in_pyproject_installs_nothing(tmp_path):
    # a lint or type-checker setting is not an install's business, and reinstalling would need a
    # package index the second start must not need
    project = _project(tmp_path)
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.mypy]\nstrict = false\n')
    assert _ensure(project, "").returncode == 0
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.mypy]\nstrict = true\n')
    again = _ensure(project, "")
    assert again.returncode == 0 and again.stderr == ""
    assert len((project / "installs").read_text().splitlines()) == 1


def _apt_get_installs(hint: bool) -> set[str]:
    """The Debian packages scripts/test.sh asks apt-get for (``hint``: the ones it tells a
    non-root user to install), its arrays expanded."""
    text = (ROOT / "scripts" / "test.sh").read_text()
    arrays = {m[1]: m[2].split() for m in re.finditer(r"^(\w+)=\(([^)]*)\)", text, re.M)}
    got: set[str] = set()
    for line in text.splitlines():
        if "apt-get install" not in line or line.lstrip().startswith("echo") != hint:
            continue
        for word in line.split("apt-get install", 1)[1].split(">", 1)[0].strip('" ').split():
            array = re.fullmatch(r"\"?\$\{(\w+)\[[@*]\]\}\"?", word)
            got |= set(arrays[array[1]]) if array else ({word} if not word.startswith("-") else set())
    return got


def test_the_readme_names_what_test_sh_installs_and_so_does_its_hint_without_root():
    installed = _apt_get_installs(hint=False)
    assert {"iperf3", "openssh-server", "tcsh", "prometheus-node-exporter", "chromium", "build-essential"} <= installed
    readme = " ".join((ROOT / "README.md").read_text().split())
    (listed,) = re.findall(r"as root with apt-get: ([^;]+);", readme)
    named = set(re.split(r", | and ", listed)) | ({"build-essential"} if "with build-essential" in readme else set())
    assert named == installed
    # without root it says what to install instead: the same packages (a compiler is optional)
    assert _apt_get_installs(hint=True) == installed - {"build-essential"}
