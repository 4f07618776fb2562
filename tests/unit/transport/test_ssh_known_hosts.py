"""known_hosts: fingerprints as ssh-keygen prints them, hashed and [host]:port entries,
policies, and trusting a key."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from linkdeck.settings.config import ConfigError
from linkdeck.transport import known_hosts as kh
from linkdeck.transport.runner import HostKeyChanged, HostKeyUnknown
from tests.cli import path_without_ssh


def _keygen(path: Path) -> tuple[str, str]:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    key_type, key_b64 = Path(f"{path}.pub").read_text().split()[:2]
    return key_type, key_b64


@pytest.fixture
def keys(tmp_path: Path):
    return _keygen(tmp_path / "k1"), _keygen(tmp_path / "k2"), tmp_path


def test_fingerprint_equals_ssh_keygen(keys) -> None:
    (key_type, key_b64), _, tmp = keys
    out = subprocess.run(["ssh-keygen", "-lf", str(tmp / "k1.pub")], capture_output=True, text=True, check=True).stdout
    assert kh.fingerprint(key_b64) == out.split()[1]
    assert kh.fingerprint(key_b64).startswith("SHA256:") and not kh.fingerprint(key_b64).endswith("=")


def test_known_key_with_port_is_accepted(keys) -> None:
    (t, b), _, tmp = keys
    f = tmp / "known_hosts"
    f.write_text(f"# comment\n[10.0.0.1]:2222 {t} {b}\n")
    assert kh.check_host_key((str(f),), "[10.0.0.1]:2222", t, b, "strict", "root@10.0.0.1:2222") == "known"
    # The same host on port 22 is a different entry.
    with pytest.raises(HostKeyUnknown):
        kh.check_host_key((str(f),), "10.0.0.1", t, b, "strict", "root@10.0.0.1")


def test_hashed_entry_from_ssh_keygen_H_matches(keys) -> None:
    (t, b), _, tmp = keys
    f = tmp / "known_hosts"
    f.write_text(f"[h1.example]:2200 {t} {b}\nother {t} {b}\n")
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(f)], check=True, capture_output=True)
    assert "h1.example" not in f.read_text()
    assert kh.check_host_key((str(f),), "[h1.example]:2200", t, b, "strict", "h1") == "known"
    with pytest.raises(HostKeyUnknown):
        kh.check_host_key((str(f),), "h2.example", t, b, "strict", "h2")


def test_patterns_wildcards_and_negation(keys) -> None:
    (t, b), _, tmp = keys
    f = tmp / "known_hosts"
    f.write_text(f"*.lab,!bad.lab {t} {b}\n")
    assert kh.lookup((str(f),), "good.lab")[0].key_b64 == b
    assert kh.lookup((str(f),), "bad.lab") == []


def test_unknown_key_strict_raises_with_fingerprint(keys) -> None:
    (t, b), _, tmp = keys
    with pytest.raises(HostKeyUnknown) as err:
        kh.check_host_key((str(tmp / "none"),), "h", t, b, "strict", "root@h")
    assert err.value.fingerprint == kh.fingerprint(b)
    assert (err.value.key_type, err.value.key_b64) == (t, b)
    assert kh.fingerprint(b) in str(err.value)


def test_a_host_vouched_for_by_a_trusted_ca_says_linkdeck_cannot_check_certificates(keys) -> None:
    (t, b), (ca_type, ca_b64), tmp = keys
    f = tmp / "known_hosts"
    f.write_text(f"# our CA\n@cert-authority *.example.org {ca_type} {ca_b64}\n")
    with pytest.raises(HostKeyUnknown) as err:
        kh.check_host_key((str(f),), "db.example.org", t, b, "strict", "root@db.example.org")
    assert str(err.value).startswith(
        f"root@db.example.org is vouched for by a certificate authority you trust (@cert-authority in {f}:2), "
        "but linkdeck cannot check host certificates"
    )
    assert f"compare its plain key {t} {kh.fingerprint(b)}" in str(err.value)
    assert (err.value.key_type, err.value.key_b64) == (t, b)  # so the host screen can trust it
    with pytest.raises(HostKeyUnknown) as other:  # a host the CA is not for: the plain message
        kh.check_host_key((str(f),), "db.example.com", t, b, "strict", "root@db.example.com")
    assert "certificate" not in str(other.value)


def test_changed_key_refused_under_every_policy(keys) -> None:
    (t, b), (t2, b2), tmp = keys
    f = tmp / "known_hosts"
    f.write_text(f"h {t} {b}\n")
    for policy in ("strict", "accept-new"):
        with pytest.raises(HostKeyChanged) as err:
            kh.check_host_key((str(f),), "h", t2, b2, policy, "root@h")
        assert err.value.fingerprint == kh.fingerprint(b2)
        assert "HOST KEY CHANGED" in str(err.value) and f"{f}:1" in str(err.value)
    assert f.read_text() == f"h {t} {b}\n"  # nothing was written


def test_revoked_key_refused(keys) -> None:
    (t, b), _, tmp = keys
    f = tmp / "known_hosts"
    f.write_text(f"@revoked * {t} {b}\nh {t} {b}\n")
    with pytest.raises(HostKeyChanged, match="revoked"):
        kh.check_host_key((str(f),), "h", t, b, "accept-new", "root@h")


def test_accept_new_saves_and_then_knows(keys) -> None:
    (t, b), _, tmp = keys
    f = tmp / "sub" / "known_hosts"
    assert kh.check_host_key((str(f),), "[h]:2222", t, b, "accept-new", "root@h:2222", write=str(f)) == "added"
    assert f.read_text() == f"[h]:2222 {t} {b}\n"
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(f.parent).st_mode) == 0o700
    assert kh.check_host_key((str(f),), "[h]:2222", t, b, "strict", "root@h:2222") == "known"


def test_add_host_key_hashed_and_ssh_keygen_finds_it(keys) -> None:
    (t, b), _, tmp = keys
    f = tmp / "known_hosts"
    f.write_text("x ssh-ed25519 AAAA")  # no trailing newline: the new entry must not join it
    kh.add_host_key(f, "10.9.9.9", 2022, t, b, hashed=True)
    lines = f.read_text().splitlines()
    assert lines[0] == "x ssh-ed25519 AAAA" and lines[1].startswith("|1|")
    found = subprocess.run(["ssh-keygen", "-F", "[10.9.9.9]:2022", "-f", str(f)], capture_output=True, text=True)
    assert b in found.stdout


def test_add_host_key_refuses_garbage(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        kh.add_host_key(tmp_path / "kh", "h", 22, "ssh-ed25519", "not base64!!")
    with pytest.raises(ValueError):
        kh.add_host_key(tmp_path / "kh", "h x", 22, "ssh-ed25519", "AAAA")


def test_preferred_key_types_lists_known_algorithms(keys) -> None:
    (t, b), _, tmp = keys
    f = tmp / "known_hosts"
    f.write_text(f"h ssh-rsa AAAAB3NzaC1yc2E=\nh {t} {b}\n")
    assert kh.preferred_key_types((str(f),), "h") == ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa", "ssh-ed25519"]


@pytest.mark.parametrize(
    "setting, ssh_value, expected",
    [
        ("strict", None, "strict"),
        ("accept-new", None, "accept-new"),
        ("accept-new", "yes", "strict"),
        ("strict", "accept-new", "accept-new"),
        ("strict", "no", "accept-new"),  # never "off": a changed key is still refused
        ("strict", "ask", "strict"),
        # ssh -G prints "ask", its default, for every host whose config says nothing
        ("accept-new", "ask", "accept-new"),
    ],
)
def test_effective_policy(setting: str, ssh_value: str | None, expected: str) -> None:
    assert kh.effective_policy(setting, ssh_value) == expected


def test_corrupt_known_hosts_key_does_not_break_the_changed_key_message():
    from linkdeck.transport.known_hosts import fingerprint

    assert fingerprint("not base64 at all!!") == "(unreadable key)"


def _resolve_with(tmp: Path, options: str, **settings_kw):
    from linkdeck.settings.config import HostSpec, Settings
    from linkdeck.transport.ssh_config import resolve

    config = tmp / "ssh_config"
    config.write_text(f"Host box\n  HostName 192.0.2.44\n{options}")
    settings = Settings(ssh_config=str(config), **settings_kw)
    return HostSpec(name="box", address="box"), settings, resolve(HostSpec(name="box", address="box"), settings)


def test_keys_are_written_only_to_the_users_own_known_hosts(keys, monkeypatch) -> None:
    (t, b), _, tmp = keys
    monkeypatch.chdir(tmp)
    # UserKnownHostsFile none and GlobalKnownHostsFile none: nothing to read named "none",
    # nothing to write — not /etc/ssh/ssh_known_hosts, not a file called "none" here.
    spec, settings, target = _resolve_with(tmp, "  UserKnownHostsFile none\n  GlobalKnownHostsFile none\n")
    assert target.known_hosts_files == () and target.known_hosts_write is None
    assert kh.trust_target(spec, settings, t, b) == (kh.THIS_RUN_ONLY, "192.0.2.44", False)
    assert kh.trust_host(spec, settings, t, b) == (kh.THIS_RUN_ONLY, "192.0.2.44")
    assert kh.trust_target(spec, settings, t, b)[2] is True  # trusted, for this run
    assert kh.check_host_key((), "192.0.2.44", t, b, "strict", "root@192.0.2.44") == "known"
    assert sorted(p.name for p in tmp.iterdir()) == ["k1", "k1.pub", "k2", "k2.pub", "ssh_config"]  # no "none"
    # only UserKnownHostsFile none: the system-wide files are read, never written
    spec, settings, target = _resolve_with(tmp, "  UserKnownHostsFile none\n")
    assert target.known_hosts_write is None and target.known_hosts_files == (
        "/etc/ssh/ssh_known_hosts",
        "/etc/ssh/ssh_known_hosts2",
    )
    # linkdeck's own known_hosts setting, or the first UserKnownHostsFile, is where keys go
    own = tmp / "linkdeck_known_hosts"
    _, _, target = _resolve_with(tmp, "  UserKnownHostsFile /kh/one /kh/two\n", known_hosts=str(own))
    assert target.known_hosts_write == str(own) and target.known_hosts_files[:3] == (str(own), "/kh/one", "/kh/two")
    # "none" beside a file: ssh refuses the line; the built-in reader skips the "none"
    with pytest.raises(
        ConfigError, match='ssh_config:3: ssh config: keyword userknownhostsfile "none" argument must appear alone'
    ):
        _resolve_with(tmp, "  UserKnownHostsFile none /kh/two\n")
    monkeypatch.setenv("PATH", path_without_ssh(tmp / "bin"))
    _, _, target = _resolve_with(tmp, "  UserKnownHostsFile none /kh/two\n")
    assert target.known_hosts_write == "/kh/two"


def test_accept_new_without_a_file_of_the_users_trusts_for_this_run(keys) -> None:
    _, (t, b), tmp = keys
    assert (
        kh.check_host_key((), "[run.example]:2200", t, b, "accept-new", "root@run.example:2200") == "added for this run"
    )
    assert kh.check_host_key((), "[run.example]:2200", t, b, "strict", "root@run.example:2200") == "known"
    with pytest.raises(HostKeyUnknown):  # under its own name only
        kh.check_host_key((), "other.example", t, b, "strict", "root@other.example")
