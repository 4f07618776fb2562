"""ssh client config → SshTarget: every option linkdeck honours, HostSpec precedence, jumps."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkdeck.settings.config import ConfigError, HostSpec, Settings
from linkdeck.transport.ssh_config import resolve, split_destination
from tests.cli import linkdeck

CONFIG = """
Host web
  HostName 192.0.2.10
  User deploy
  Port 2222
  IdentityFile ~/.ssh/web_key
  IdentityFile /keys/second
  IdentitiesOnly yes
  ConnectTimeout 3
  UserKnownHostsFile /kh/one /kh/two
  StrictHostKeyChecking accept-new

Host inner
  HostName 10.0.0.5
  ProxyJump bastion

Host bastion
  HostName 198.51.100.1
  User jump
  Port 2200

Host deep
  HostName 10.0.0.9
  ProxyJump bastion,inner

Host viaproxy
  HostName 10.1.1.1
  ProxyCommand nc -x proxy:1080 %h %p

Host loop1
  ProxyJump loop2
Host loop2
  ProxyJump loop1

Host *
  User fallback
"""


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    path = tmp_path / "ssh_config"
    path.write_text(CONFIG)
    return Settings(ssh_config=str(path))


def test_alias_resolves_every_option(settings: Settings) -> None:
    t = resolve(HostSpec(name="web", address="web"), settings)
    home = str(Path("~").expanduser())
    assert (t.hostname, t.port, t.user) == ("192.0.2.10", 2222, "deploy")
    assert t.identity_files == (f"{home}/.ssh/web_key", "/keys/second")
    assert t.identities_only and t.explicit_identity
    assert t.connect_timeout == 3.0
    assert t.known_hosts_files[:2] == ("/kh/one", "/kh/two")
    assert t.strict_host_key_checking == "accept-new"
    assert t.known_hosts_name == "[192.0.2.10]:2222"
    assert t.jump is None and t.proxy_command is None


def test_hostspec_fields_override_the_config(settings: Settings) -> None:
    spec = HostSpec(name="w", address="web", user="admin", port=22, identity_file="/k/mine")
    t = resolve(spec, settings)
    assert (t.user, t.port, t.identity_files) == ("admin", 22, ("/k/mine",))
    assert t.known_hosts_name == "192.0.2.10"


def test_unknown_host_gets_defaults_and_wildcard_block(settings: Settings) -> None:
    t = resolve(HostSpec(name="x", address="otherhost"), settings)
    assert (t.hostname, t.port, t.user) == ("otherhost", 22, "fallback")
    assert not t.explicit_identity
    assert t.identity_files[0].endswith("/.ssh/id_ed25519")
    assert t.connect_timeout == 10.0


def test_user_at_host_port_destination(settings: Settings) -> None:
    t = resolve(HostSpec(name="x", address="root@web"), settings)
    assert (t.user, t.hostname, t.port) == ("root", "192.0.2.10", 2222)
    assert split_destination("admin@[2001:db8::1]:2200") == ("admin", "2001:db8::1", 2200)
    assert split_destination("host:23") == (None, "host", 23)


def test_proxyjump_resolves_the_jump_through_the_config(settings: Settings) -> None:
    t = resolve(HostSpec(name="inner", address="inner"), settings)
    assert t.hostname == "10.0.0.5"
    assert t.jump is not None
    assert (t.jump.hostname, t.jump.port, t.jump.user) == ("198.51.100.1", 2200, "jump")
    assert t.jump.jump is None


def test_proxyjump_list_chains_hops_in_order(settings: Settings) -> None:
    t = resolve(HostSpec(name="deep", address="deep"), settings)
    # deep is reached through inner, which is reached through bastion.
    assert t.jump.hostname == "10.0.0.5"
    assert t.jump.jump.hostname == "198.51.100.1"


def test_hostspec_jump_overrides(settings: Settings) -> None:
    t = resolve(HostSpec(name="v", address="viaproxy", jump="root@bastion:2201"), settings)
    assert t.proxy_command is None
    assert (t.jump.user, t.jump.hostname, t.jump.port) == ("root", "198.51.100.1", 2201)


def test_proxycommand_tokens_expanded(settings: Settings) -> None:
    t = resolve(HostSpec(name="v", address="viaproxy"), settings)
    assert t.proxy_command == "nc -x proxy:1080 10.1.1.1 22"


def test_jump_loop_is_a_config_error(settings: Settings) -> None:
    with pytest.raises(ConfigError, match="ProxyJump chain longer"):
        resolve(HostSpec(name="l", address="loop1"), settings)


def test_missing_explicit_config_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read ssh config") as err:
        resolve(HostSpec(name="a", address="a"), Settings(ssh_config=str(tmp_path / "nope")))
    assert str(tmp_path / "nope") in str(err.value)


def test_settings_known_hosts_comes_first(settings: Settings, tmp_path: Path) -> None:
    kh = str(tmp_path / "kh")
    t = resolve(HostSpec(name="web", address="web"), Settings(ssh_config=settings.ssh_config, known_hosts=kh))
    assert t.known_hosts_files[:3] == (kh, "/kh/one", "/kh/two")


@pytest.mark.parametrize(
    "content, message, line",
    [
        (b"Host a\n  HostName 192.0.2.1\nPort\n", 'ssh config: no argument after keyword "port"', 3),
        (b"Host a\n  HostName 192.0.2.1\nPort\n", "ssh config: cannot read 'Port'", 3),  # the built-in reader
        (b"Host a\n  HostName \xff\xfe\x00\x01\n", "ssh config is not UTF-8 text", 2),
    ],
)
def test_a_broken_ssh_config_is_one_line_with_file_and_line(tmp_path, content, message, line) -> None:

    from tests.cli import path_without_ssh

    env = {"PATH": path_without_ssh(tmp_path / "bin")} if "cannot read" in message else {}
    path = tmp_path / "ssh_config"
    path.write_bytes(content)
    proc = linkdeck("snapshot", "--no-local", "--ssh-config", str(path), "a", timeout=30, env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"linkdeck: {path}:{line}: {message}" + proc.stderr.split(message, 1)[1]
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    missing = linkdeck("snapshot", "--no-local", "--ssh-config", str(tmp_path / "nope"), "a", timeout=30, env=env)
    assert missing.returncode == 2 and "nope: cannot read ssh config: No such file or directory" in missing.stderr
