"""Shared by the OpenSSH transport's tests with constructed masters: a short dir for their
control sockets, a constructed ssh client that logs how it was called, a runner for it.

Constructed: the ssh client is a script that logs its argv and answers ``-O check`` as
OpenSSH words it."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest

from linkdeck.settings.config import HostSpec, Settings
from linkdeck.transport.openssh import OpensshRunner
from linkdeck.transport.ssh_config import resolve

FAKE_PID = 4242
FAKE_SSH = f"""#!{sys.executable}
import json, os, sys
argv = sys.argv[1:]
with open(os.environ["FAKE_SSH_LOG"], "a") as log:
    log.write(json.dumps(argv) + "\\n")
for word in argv:  # whether a control socket file was in the way when ssh ran
    if word.startswith("ControlPath="):
        with open(os.environ["FAKE_SSH_LOG"] + ".paths", "a") as seen:
            seen.write(json.dumps([word[12:], os.path.lexists(word[12:])]) + "\\n")
if "-O" in argv and argv[argv.index("-O") + 1] == "check":
    print("Master running (pid={FAKE_PID})", file=sys.stderr)
sys.exit(0)
"""


@pytest.fixture
def short_dir():
    where = tempfile.mkdtemp(prefix="mux", dir="/tmp")  # a socket path fits in sun_path
    yield Path(where)
    shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def fake_ssh(tmp_path: Path, monkeypatch) -> tuple[str, Callable[[], list[list[str]]]]:
    """A constructed ssh client, and what it was asked, one argv per call."""
    client = tmp_path / "ssh"
    client.write_text(FAKE_SSH)
    client.chmod(0o755)
    log = tmp_path / "calls"
    log.write_text("")
    monkeypatch.setenv("FAKE_SSH_LOG", str(log))
    return str(client), lambda: [json.loads(line) for line in log.read_text().splitlines()]


def runner_for(client: str, tmp_path: Path, control_path: Path) -> OpensshRunner:
    config = tmp_path / "ssh_config"
    config.write_text("Host h1\n  HostName 192.0.2.1\n  User root\n")
    settings = Settings(local=False, ssh_config=str(config), transport="openssh")
    spec = HostSpec(name="h1", address="h1")
    runner = OpensshRunner(client, spec, resolve(spec, settings), settings)
    runner.control_path = str(control_path)
    return runner
