"""OS detection from the one probe command: every family linkdeck knows, banners, unknowns."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from linkdeck.platforms import detect
from linkdeck.platforms.detect import (
    DETECT_SCRIPT,
    MARK,
    ShellRefused,
    UnsupportedOS,
    classify,
    detected_adapter,
    split_probe_output,
)
from linkdeck.settings.config import Settings
from linkdeck.transport.runner import CommandResult


def probe(**values: str) -> str:
    keys = ("uname_s", "uname_r", "uname_v", "os_release", "opnsense", "etc_version", "platform", "release", "sw_vers")
    return "".join(f"{MARK}{k}\n" + (values[k] + "\n" if values.get(k) else "") for k in keys)


@pytest.mark.parametrize(
    "values, expected",
    [
        (
            dict(
                uname_s="Linux",
                uname_r="6.1.0-18-amd64",
                os_release='NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"',
            ),
            ("linux", "Debian GNU/Linux 12 (bookworm) (kernel 6.1.0-18-amd64)"),
        ),
        (dict(uname_s="FreeBSD", uname_r="14.1-RELEASE-p3"), ("freebsd", "FreeBSD 14.1-RELEASE-p3")),
        (
            dict(uname_s="FreeBSD", uname_r="14.1-RELEASE-p5", opnsense="OPNsense 24.7.5 (amd64)"),
            ("opnsense", "OPNsense 24.7.5"),
        ),
        (
            dict(uname_s="FreeBSD", opnsense='{"product_name": "OPNsense", "product_version": "24.1"}'),
            ("opnsense", "OPNsense 24.1"),
        ),
        (
            dict(uname_s="FreeBSD", platform="pfSense", etc_version="2.7.2-RELEASE"),
            ("pfsense", "pfSense 2.7.2-RELEASE"),
        ),
        (dict(uname_s="FreeBSD", etc_version="TrueNAS-13.0-U6.1"), ("truenas", "TrueNAS-13.0-U6.1")),
        (dict(uname_s="Darwin", uname_r="23.4.0", sw_vers="14.4.1"), ("macos", "macOS 14.4.1")),
        (dict(uname_s="OpenBSD", uname_r="7.5"), ("openbsd", "OpenBSD 7.5")),
        (dict(uname_s="NetBSD", uname_r="10.0"), ("netbsd", "NetBSD 10.0")),
        (dict(uname_s="DragonFly", uname_r="6.4-RELEASE"), ("dragonfly", "DragonFly 6.4-RELEASE")),
        (
            dict(uname_s="SunOS", uname_r="5.11", uname_v="joyent_20240404T001020Z"),
            ("smartos", "SmartOS 20240404T001020Z"),
        ),
        (dict(uname_s="SunOS", uname_r="5.11", uname_v="omnios-r151050-1b2c3d4"), ("omnios", "OmniOS r151050-1b2c3d4")),
        (
            dict(
                uname_s="SunOS",
                uname_r="5.11",
                uname_v="illumos-abc123",
                release="  OpenIndiana Hipster 2024.04 (powered by illumos)",
            ),
            ("openindiana", "OpenIndiana Hipster 2024.04 (powered by illumos)"),
        ),
        (
            dict(uname_s="SunOS", uname_r="5.11", uname_v="11.4.0.15.0", release="  Oracle Solaris 11.4 X86"),
            ("solaris", "Oracle Solaris 11.4 X86"),
        ),
        (dict(uname_s="SunOS", uname_r="5.11", uname_v="tribblix-m34"), ("illumos", "illumos tribblix-m34")),
    ],
)
def test_classify(values: dict, expected: tuple[str, str]) -> None:
    assert classify(probe(**values)) == expected


def test_banner_before_the_markers_is_ignored() -> None:
    text = "Welcome to host!\nuname_s\nLinux\n" + probe(uname_s="FreeBSD", uname_r="13.2-RELEASE")
    assert classify(text) == ("freebsd", "FreeBSD 13.2-RELEASE")


def test_unknown_os_names_uname_output() -> None:
    with pytest.raises(UnsupportedOS, match="'Haiku'"):
        classify(probe(uname_s="Haiku", uname_r="1"))


def test_no_uname_output_says_so() -> None:
    with pytest.raises(UnsupportedOS, match="`uname -s` printed nothing"):
        classify(probe(uname_r="6.1"))


@pytest.mark.parametrize(
    "stdout, stderr, said",
    [
        ("This account is currently not available.\n", "", "it printed “This account is currently not available.”"),
        ("", "", "it printed nothing"),
        ("1) status\n2) reboot\n\n3) quit\n4) shell\n", "", "it printed “1) status / 2) reboot / 3) quit” …"),
        ("\x1b[2Jmenu\n", "", "it printed “\\x1b[2Jmenu”"),  # escaped, never acting on a terminal
    ],
)
async def test_a_shell_that_refuses_is_quoted_not_guessed_at(stdout: str, stderr: str, said: str) -> None:
    class Refusing(_Answers):
        name = "nas01"

        async def run(self, argv, timeout: float = 10.0):
            return CommandResult(stdout=stdout, stderr=stderr, status=1)

    with pytest.raises(ShellRefused) as caught:
        await detected_adapter(Refusing(""), Settings())
    assert str(caught.value) == (
        "nas01's login shell did not run linkdeck's command (exit status 1); "
        f"{said}: give the account a login shell that runs commands (/bin/sh, bash)"
    )
    assert not caught.value.retryable


def test_probe_script_runs_under_sh_on_this_machine() -> None:
    # The same argv the runner sends (shlex.join), through a login-shell-like `sh -c`.
    out = subprocess.run(
        ["sh", "-c", shlex.join(["sh", "-c", DETECT_SCRIPT])], capture_output=True, text=True, check=True
    )
    os_name, detail = classify(out.stdout)
    release = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
    assert os_name == "linux"
    assert detail.endswith(f"(kernel {release})")


def test_probe_script_has_nothing_other_shells_would_rewrite() -> None:
    assert "\n" not in DETECT_SCRIPT and "!" not in DETECT_SCRIPT and "\\" not in DETECT_SCRIPT


class _Answers:
    """A runner that answers the probe with ``text`` (detection reads nothing else)."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def run(self, argv, timeout: float = 10.0):
        return CommandResult(status=0, stdout=self.text, stderr="")


@pytest.mark.parametrize(
    "ssh_connection, reached_at",
    [
        ("198.18.77.1 50022 198.18.77.11 22", "198.18.77.11"),
        ("2001:db8::1 50022 2001:db8::11 22", "2001:db8::11"),
        ("", None),  # not over SSH (this machine through the local runner)
        ("198.18.77.1 50022 $(reboot) 22", None),  # a host's text is never passed on as an address
        ("Welcome 1 2", None),
    ],
)
async def test_the_probe_says_which_address_the_session_came_in_on(ssh_connection: str, reached_at: str | None) -> None:
    text = probe(uname_s="Linux", uname_r="6.1") + f"{MARK}ssh_connection\n{ssh_connection}\n"
    adapter = await detected_adapter(_Answers(text), Settings())
    assert adapter.reached_at == reached_at


def test_probe_script_reads_ssh_connection_like_sshd_sets_it() -> None:
    env = {"PATH": "/usr/bin:/bin", "SSH_CONNECTION": "10.0.0.1 40000 10.0.0.11 22"}
    out = subprocess.run(
        ["sh", "-c", shlex.join(["sh", "-c", DETECT_SCRIPT])], capture_output=True, text=True, check=True, env=env
    )
    assert split_probe_output(out.stdout)["ssh_connection"] == "10.0.0.1 40000 10.0.0.11 22"


@pytest.mark.parametrize(
    "text",
    [
        'NAME="Debian GNU/Linux"\nVERSION_ID="12"\n',
        "pfSense\nno newline at the end",  # constructed: a last line without its newline
        "  leading spaces, a \\backslash\\n, a tab\there\n\n",
    ],
)
def test_a_file_probe_prints_what_cat_prints(tmp_path, text: str) -> None:
    path = tmp_path / "release"
    path.write_text(text)
    read = subprocess.run(["sh", "-c", detect._LINES + str(path)], capture_output=True, text=True, check=True)
    assert read.stdout == subprocess.run(["cat", str(path)], capture_output=True, text=True).stdout + (
        "" if text.endswith("\n") else "\n"
    )


def test_a_missing_file_probe_says_nothing_and_the_probes_go_on(tmp_path) -> None:
    read = subprocess.run(
        ["sh", "-c", detect._LINES + str(tmp_path / "none") + "; echo next"], capture_output=True, text=True
    )
    assert (read.stdout, read.stderr) == ("next\n", "")


def test_the_uname_probes_say_what_three_unames_say() -> None:
    got = split_probe_output(subprocess.run(["sh", "-c", DETECT_SCRIPT], capture_output=True, text=True).stdout)
    for key, flag in (("uname_s", "-s"), ("uname_r", "-r"), ("uname_v", "-v")):
        alone = subprocess.run(["uname", flag], capture_output=True, text=True).stdout.strip()
        assert got[key] == " ".join(alone.split()), key
