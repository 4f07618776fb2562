"""Which transport a run uses and the words that say why: --transport / [ssh] transport, and
what auto picks from the ssh client on PATH. The real client is this machine's OpenSSH; the
old and the non-OpenSSH clients are constructed (a script that prints such a version), since
neither can be installed here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from linkdeck.settings.config import ConfigError, Settings
from linkdeck.transport import choice
from tests.cli import path_without_ssh

pytestmark = pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client")


def fake_client(where: Path, version: str) -> str:
    """A PATH whose ssh answers ``ssh -V`` with ``version`` (on stderr, as OpenSSH does)."""
    where.mkdir()
    ssh = where / "ssh"
    ssh.write_text(f"#!/bin/sh\necho '{version}' >&2\n")
    ssh.chmod(0o755)
    return str(where)


def settings(transport: str, by: str | None = "--transport", **kw) -> Settings:
    return Settings(local=False, transport=transport, transport_set_by=by, **kw)


def test_openssh_asked_for_uses_the_client_on_path_and_says_which():
    got = choice.choose(settings("openssh"))
    assert (got.name, got.client) == ("openssh", shutil.which("ssh"))
    assert got.why.startswith(f"OpenSSH, as --transport asks: {shutil.which('ssh')} is OpenSSH_")
    assert got.why.endswith("with -G and ControlMaster")


def test_paramiko_asked_for_is_paramiko_whatever_is_on_path():
    got = choice.choose(settings("paramiko", "[ssh] transport in /etc/linkdeck.toml"))
    assert (got.name, got.client, got.why) == (
        "paramiko",
        None,
        "paramiko, as [ssh] transport in /etc/linkdeck.toml asks",
    )


def test_auto_picks_the_openssh_client_on_path_and_says_which():
    got = choice.choose(settings("auto", None))
    assert (got.name, got.client) == ("openssh", shutil.which("ssh"))
    assert got.why.startswith(f"auto (the default): {shutil.which('ssh')} is OpenSSH_")
    assert got.why.endswith("with -G and ControlMaster")
    got = choice.choose(settings("auto", "[ssh] transport in /etc/linkdeck.toml"))
    assert got.name == "openssh" and got.why.startswith("auto ([ssh] transport in /etc/linkdeck.toml): ")


@pytest.mark.parametrize(
    ("version", "said"),
    [
        (None, "no ssh client on PATH"),
        (
            "OpenSSH_6.6.1p1 Ubuntu-2ubuntu2, OpenSSL 1.0.1f 6 Jan 2014",
            "is OpenSSH_6.6, older than OpenSSH 6.8 (no -G)",
        ),
        ("Dropbear v2022.83", "is not OpenSSH (Dropbear v2022.83)"),
    ],
)
def test_openssh_asked_for_without_a_client_that_can_is_an_error_that_says_what_to_do(
    tmp_path, monkeypatch, version, said
):
    path = path_without_ssh(tmp_path) if version is None else fake_client(tmp_path / "bin", version)
    monkeypatch.setenv("PATH", path)
    with pytest.raises(ConfigError) as raised:
        choice.choose(settings("openssh"))
    assert said in str(raised.value)
    assert "install it, or use --transport paramiko" in str(raised.value)


@pytest.mark.parametrize(
    ("version", "said"),
    [
        (None, "auto (the default): no ssh client on PATH, so paramiko"),
        (
            "OpenSSH_5.3p1, OpenSSL 1.0.1e-fips 11 Feb 2013",
            "is OpenSSH_5.3, older than OpenSSH 6.8 (no -G), so paramiko",
        ),
        ("Dropbear v2022.83", "is not OpenSSH (Dropbear v2022.83), so paramiko"),
    ],
)
def test_auto_without_a_client_that_can_is_paramiko_and_says_why(tmp_path, monkeypatch, version, said):
    path = path_without_ssh(tmp_path) if version is None else fake_client(tmp_path / "bin", version)
    monkeypatch.setenv("PATH", path)
    got = choice.choose(settings("auto", None))
    assert (got.name, got.client) == ("paramiko", None)
    assert got.why.endswith(said), got.why


def test_a_transport_that_is_not_one_of_the_three_is_refused():
    with pytest.raises(ConfigError, match="transport must be one of auto, openssh, paramiko, not 'ssh'"):
        choice.choose(settings("ssh"))
