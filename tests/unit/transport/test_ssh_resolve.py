"""Hosts resolve as OpenSSH resolves them: through `ssh -G`, and — with no ssh on PATH —
through the built-in reader, measured against the real client on the same configs.

The configs are constructed for these tests (Include with globs, nested and relative,
Match host/user/exec/final, negated Host patterns, tokens, ProxyJump lists and user@host:port).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from linkdeck.settings.config import ConfigError, HostSpec, Settings
from linkdeck.transport import ssh_options
from linkdeck.transport.ssh_config import resolve
from tests.cli import linkdeck, path_without_ssh

pytestmark = pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client (ssh -G)")

HOSTS = [
    "inc-a",
    "admin@inc-a",
    "inc-b",
    "rel",
    "bastion",
    "tok",
    "inner",
    "deep",
    "exec-target.example",
    "fin.example",
    "plain.example",
]


@pytest.fixture
def ssh_dir_scratch():
    """A directory inside ~/.ssh: OpenSSH reads a relative Include from there (the passwd
    entry's home, whatever HOME says), so a relative Include can only be tested there."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    if os.path.realpath(os.path.expanduser("~")) != os.path.realpath(home):
        pytest.skip("HOME is not the passwd home: ssh and the built-in reader would read different ~/.ssh")
    ssh_dir = Path(home) / ".ssh"
    made = not ssh_dir.exists()
    ssh_dir.mkdir(mode=0o700, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="linkdeck-test-", dir=ssh_dir))
    yield scratch
    shutil.rmtree(scratch)
    if made:
        ssh_dir.rmdir()


@pytest.fixture
def configs(tmp_path: Path, ssh_dir_scratch: Path) -> Settings:
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "10-a.conf").write_text(
        f"Host inc-a\n  HostName 192.0.2.20\n  Include {tmp_path}/nested.conf\n"
    )
    (tmp_path / "conf.d" / "20-b.conf").write_text(
        "Host inc-b\n  HostName 192.0.2.21\n  User bee\n  StrictHostKeyChecking yes\n  HashKnownHosts yes\n"
    )
    (tmp_path / "conf.d" / "not-included.txt").write_text("Host inc-a\n  Port 9\n")
    (tmp_path / "nested.conf").write_text("IdentitiesOnly yes\nIdentityFile ~/.ssh/inc_a\n")
    (ssh_dir_scratch / "rel.conf").write_text("Host rel\n  HostName 192.0.2.30\n  Port 2030\n")
    main = tmp_path / "main.conf"
    main.write_text(f"""\
Include {tmp_path}/conf.d/*.conf
Include {ssh_dir_scratch.name}/rel.conf
Host * !bastion
  ConnectTimeout 7
Match host 192.0.2.20 user admin
  Port 2020
Match exec "test %h = exec-target.example"
  User execuser
Match final host fin.example
  IdentityFile ~/.ssh/final_%r
Host tok
  HostName tok.example
  IdentityFile %d/.ssh/id_%h_%r
  IdentityFile ~/.ssh/second
  CertificateFile ~/.ssh/id_%r-cert.pub
  UserKnownHostsFile ~/.ssh/kh_%h
  ProxyCommand nc %h %p
Host bastion
  HostName 198.51.100.1
  User jump
  Port 2200
Host inner
  HostName 10.0.0.5
  ProxyJump admin@bastion:2201
Host deep
  HostName 10.0.0.9
  ProxyJump bastion,inner
""")
    return Settings(ssh_config=str(main))


def _spec(text: str) -> HostSpec:
    user, _, address = text.rpartition("@")
    return HostSpec(name=text, address=address, user=user or None)


def _without_source(target):
    jump = _without_source(target.jump) if target.jump else None
    return dataclasses.replace(target, source="", jump=jump)


def _ssh_g(settings: Settings, host: str, user: str | None = None) -> dict[str, list[str]]:
    argv = ["ssh", "-G", "-F", settings.ssh_config] + (["-l", user] if user else []) + ["--", host]
    out: dict[str, list[str]] = {}
    for line in subprocess.run(
        argv, capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL
    ).stdout.splitlines():
        key, _, value = line.partition(" ")
        out.setdefault(key, []).append(value)
    return out


def test_ssh_g_resolution_is_ssh_s_own(configs: Settings) -> None:
    home = os.path.expanduser("~")
    got = {h: resolve(_spec(h), configs) for h in HOSTS}
    assert {t.source for t in got.values()} == {"ssh -G"}
    for text, target in got.items():
        user, _, host = text.rpartition("@")
        raw = _ssh_g(configs, host, user or None)
        assert (target.hostname, str(target.port), target.user) == (
            raw["hostname"][0],
            raw["port"][0],
            raw["user"][0],
        ), text
        assert target.known_hosts_files[: len(raw["userknownhostsfile"][0].split())] == tuple(
            raw["userknownhostsfile"][0].split()
        )
    # the values that came from included files, Match blocks and tokens
    assert (got["inc-a"].hostname, got["inc-a"].port, got["inc-a"].identity_files) == (
        "192.0.2.20",
        22,
        (f"{home}/.ssh/inc_a",),
    )
    assert got["inc-a"].identities_only and got["inc-a"].explicit_identity
    assert got["admin@inc-a"].port == 2020  # Match host … user admin sees the -l user
    assert (got["inc-b"].user, got["inc-b"].strict_host_key_checking, got["inc-b"].hash_known_hosts) == (
        "bee",
        "yes",
        True,
    )
    assert (got["rel"].hostname, got["rel"].port) == ("192.0.2.30", 2030)  # relative Include: from ~/.ssh
    assert got["exec-target.example"].user == "execuser"
    assert got["fin.example"].identity_files == (f"{home}/.ssh/final_{got['fin.example'].user}",)
    tok = got["tok"]
    assert tok.identity_files == (f"{home}/.ssh/id_tok.example_{tok.user}", f"{home}/.ssh/second")
    assert tok.certificate_files == (f"{home}/.ssh/id_{tok.user}-cert.pub",)
    assert tok.known_hosts_files[0] == f"{home}/.ssh/kh_tok.example" and tok.proxy_command == "nc tok.example 22"
    # Host * !bastion, read again in the final pass (Match final) under bastion's HostName
    assert got["bastion"].connect_timeout == 7.0 and got["plain.example"].connect_timeout == 7.0
    assert (got["inner"].jump.user, got["inner"].jump.hostname, got["inner"].jump.port) == (
        "admin",
        "198.51.100.1",
        2201,
    )
    deep = got["deep"]
    assert [(h.hostname, h.port) for h in (deep.jump.jump, deep.jump)] == [("198.51.100.1", 2200), ("10.0.0.5", 22)]
    assert not got["plain.example"].explicit_identity


def test_the_built_in_reader_resolves_as_ssh_does(configs: Settings, tmp_path: Path, monkeypatch) -> None:
    by_ssh = {h: resolve(_spec(h), configs) for h in HOSTS}
    monkeypatch.setenv("PATH", path_without_ssh(tmp_path / "bin"))
    by_builtin = {h: resolve(_spec(h), configs) for h in HOSTS}
    assert {t.source for t in by_builtin.values()} == {"built-in parser"}
    for host in HOSTS:
        assert _without_source(by_builtin[host]) == _without_source(by_ssh[host]), host


def test_an_ssh_without_dash_g_leaves_it_to_the_built_in_reader(configs: Settings, tmp_path: Path, monkeypatch) -> None:
    by_ssh = resolve(_spec("deep"), configs)
    old = tmp_path / "old" / "ssh"
    old.parent.mkdir()
    # constructed: what OpenSSH before 6.8 prints for -G (its getopt's words, then usage)
    old.write_text(
        '#!/bin/sh\necho "unknown option -- G" >&2\n'
        'echo "usage: ssh [-1246AaCfgKkMNnqsTtVvXxYy] [-b bind_address]" >&2\nexit 255\n'
    )
    old.chmod(0o755)
    monkeypatch.setenv("PATH", f"{old.parent}{os.pathsep}{path_without_ssh(tmp_path / 'bin')}")
    by_builtin = resolve(_spec("deep"), configs)
    assert by_builtin.source == "built-in parser" and _without_source(by_builtin) == _without_source(by_ssh)


def test_ssh_g_runs_once_per_host_and_again_only_when_the_config_changes(
    configs: Settings, tmp_path: Path, monkeypatch
) -> None:
    log = tmp_path / "calls"
    wrapper = tmp_path / "wrap" / "ssh"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("ssh")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    for _ in range(3):
        assert resolve(_spec("inc-b"), configs).user == "bee"
    assert log.read_text().splitlines() == [f"-G -F {configs.ssh_config} -- inc-b"]
    Path(configs.ssh_config).write_text(Path(configs.ssh_config).read_text() + "\nHost inc-b\n  User ignored\n")
    resolve(_spec("inc-b"), configs)
    assert len(log.read_text().splitlines()) == 2


@pytest.mark.parametrize("address", ["-oProxyCommand=touch@pwned", "a;touch pwned", "$(touch pwned)"])
def test_a_hostile_name_never_reaches_ssh(tmp_path: Path, address: str, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  User x\n")
    settings = Settings(ssh_config=str(config))
    with pytest.raises(ConfigError, match="not a host name ssh accepts"):
        ssh_options.options(address, None, None, settings.ssh_config)
    config.write_text(f"Host j\n  ProxyJump {address.replace(' ', '')}\n")
    with pytest.raises(ConfigError, match="not a (host|user) name ssh accepts"):
        resolve(HostSpec(name="j", address="j"), settings)
    assert not (tmp_path / "pwned").exists() and not list(tmp_path.glob("*pwned*"))
    assert ssh_options.ssh_g_argv("ssh", "h", None, None, None)[-2:] == ["--", "h"]


def test_an_include_loop_is_one_line_in_the_built_in_reader(tmp_path: Path, monkeypatch) -> None:
    config = tmp_path / "loop.conf"
    config.write_text(f"Include {config}\nHost a\n  Port 2\n")
    monkeypatch.setenv("PATH", path_without_ssh(tmp_path / "bin"))
    with pytest.raises(ConfigError, match=r"loop.conf.*Include nested more than 16 deep"):
        resolve(HostSpec(name="a", address="a"), Settings(ssh_config=str(config)))


def test_a_certificate_file_is_offered_with_the_key_it_was_made_for(tmp_path: Path) -> None:
    from linkdeck.transport.ssh_auth import _candidates

    for name in ("ca", "ops", "other"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / name)], check=True)
    subprocess.run(
        [
            "ssh-keygen",
            "-q",
            "-s",
            str(tmp_path / "ca"),
            "-I",
            "ops",
            "-n",
            "ops",
            "-V",
            "+1h",
            str(tmp_path / "ops.pub"),
        ],
        check=True,
    )
    (tmp_path / "ops-cert.pub").rename(tmp_path / "ops.certificate")  # not the name paramiko looks for itself
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host box\n  IdentityFile {tmp_path}/other\n  IdentityFile {tmp_path}/ops\n"
        f"  CertificateFile {tmp_path}/ops.certificate\n"
    )
    target = resolve(HostSpec(name="box", address="box"), Settings(ssh_config=str(config)))
    assert target.certificate_files == (f"{tmp_path}/ops.certificate",)
    candidates, notes = _candidates(target, None)
    assert [(Path(c.label).name, c.key.public_blob.key_type if c.key.public_blob else None) for c in candidates] == [
        ("other", None),
        ("ops", "ssh-ed25519-cert-v01@openssh.com"),
    ] and notes == []


def test_hosts_json_is_the_resolution(configs: Settings) -> None:
    proc = linkdeck("hosts", "--ssh-config", configs.ssh_config, "--json", "deep", "inc-b")
    assert proc.returncode == 0, proc.stderr
    hosts = json.loads(proc.stdout)["hosts"]
    assert [h["name"] for h in hosts] == ["deep", "inc-b"]
    deep = hosts[0]
    assert {
        "name",
        "hostname",
        "port",
        "user",
        "identity_files",
        "certificate_file",
        "jump",
        "known_hosts_files",
        "strict_host_key_checking",
        "source",
    } <= set(deep)
    assert (deep["hostname"], deep["port"], deep["source"]) == ("10.0.0.9", 22, "ssh -G")
    assert [(j["name"], j["hostname"], j["port"], j["user"]) for j in deep["jump"]] == [
        ("bastion", "198.51.100.1", 2200, "jump"),
        ("inner", "10.0.0.5", 22, deep["user"]),
    ]
    assert (hosts[1]["user"], hosts[1]["strict_host_key_checking"], hosts[1]["jump"]) == ("bee", "yes", [])


def test_hosts_text_names_the_source_and_the_fallback_says_what_it_ignores(configs: Settings, tmp_path: Path) -> None:
    proc = linkdeck("hosts", "--ssh-config", configs.ssh_config, "inner")
    assert proc.returncode == 0 and proc.stderr == ""
    assert "inner  (resolved by ssh -G)" in proc.stdout and "admin@198.51.100.1:2201" in proc.stdout
    Path(configs.ssh_config).write_text(
        Path(configs.ssh_config).read_text() + "Host *\n  ForwardAgent yes\n  ServerAliveInterval 5\n"
    )
    proc = linkdeck(
        "hosts", "--ssh-config", configs.ssh_config, "inner", env={"PATH": path_without_ssh(tmp_path / "bin")}
    )
    assert proc.returncode == 0
    assert "inner  (resolved by built-in parser)" in proc.stdout
    note = "does not act on forwardagent, serveraliveinterval"
    assert note in proc.stdout and proc.stderr.count(note) == 1


@pytest.mark.lab
def test_a_host_defined_only_in_an_included_file_goes_live(lab, tmp_path: Path) -> None:
    from tests.lab.sshd import ssh_config_block

    h1 = lab.hosts["h1"]
    (tmp_path / "config.d").mkdir()
    (tmp_path / "config.d" / "lab.conf").write_text(
        ssh_config_block("inc-h1", h1.address, h1.port, lab.client_key, lab.known_hosts)
    )
    main = tmp_path / "config"
    main.write_text(f"Include {tmp_path}/config.d/*\nHost *\n  ServerAliveInterval 5\n")
    log = tmp_path / "ssh-calls"
    wrapper = tmp_path / "bin" / "ssh"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("ssh")} "$@"\n')
    wrapper.chmod(0o755)
    (tmp_path / "config.toml").write_text("")
    env = {
        "LINKDECK_CONFIG": str(tmp_path / "config.toml"),
        "PATH": f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}",
        "SSH_AUTH_SOCK": "",
    }
    snap = linkdeck(
        "snapshot", "--json", "--interval", "0.5", "--ssh-config", str(main), "--no-local", "inc-h1", env=env
    )
    assert snap.returncode == 0, snap.stderr
    (host,) = json.loads(snap.stdout)["hosts"]
    assert (host["name"], host["state"], host["os"]) == ("inc-h1", "live", "linux")
    # resolved once at start; connecting used the cached answer (over OpenSSH, ssh itself
    # connects: those calls are not resolutions)
    assert [c for c in log.read_text().splitlines() if c.startswith("-G")] == [f"-G -F {main} -- inc-h1"]
    shown = linkdeck("hosts", "--ssh-config", str(main), "--json", "inc-h1", env=env)
    (resolved,) = json.loads(shown.stdout)["hosts"]
    assert (resolved["hostname"], resolved["port"], resolved["user"], resolved["source"]) == (
        h1.address,
        h1.port,
        "root",
        "ssh -G",
    )
    assert (resolved["identity_files"], resolved["known_hosts_files"]) == (
        [str(lab.client_key)],
        [str(lab.known_hosts), "/dev/null"],
    )
    assert resolved["strict_host_key_checking"] == "yes" and resolved["jump"] == []


@pytest.mark.lab
async def test_a_key_known_to_sshd_only_through_its_certificate_logs_in(make_lab, tmp_path: Path, monkeypatch) -> None:
    from linkdeck.transport.runner import AuthFailed
    from linkdeck.transport.ssh import SshRunner
    from tests.lab.test_ssh_lab import write_config

    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    for name in ("ca", "ops"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / name)], check=True)
    subprocess.run(
        [
            "ssh-keygen",
            "-q",
            "-s",
            str(tmp_path / "ca"),
            "-I",
            "ops",
            "-n",
            "root",
            "-V",
            "+1h",
            str(tmp_path / "ops.pub"),
        ],
        check=True,
    )
    (tmp_path / "ops-cert.pub").rename(tmp_path / "ops.certificate")
    with make_lab({"c1": {}}) as lab:
        host = lab.hosts["c1"]
        host.stop_sshd()
        with open(host.dir / "sshd_config", "a") as f:
            f.write(f"\nTrustedUserCAKeys {tmp_path}/ca.pub\n")
        host.start_sshd()
        plain = write_config(tmp_path / "plain", lab, "c1", key=tmp_path / "ops")
        with pytest.raises(AuthFailed):  # ops is in no authorized_keys
            await SshRunner(resolve(HostSpec(name="c1", address="c1"), Settings(ssh_config=str(plain))), "c1").connect()
        certified = write_config(
            tmp_path / "cert", lab, "c1", key=tmp_path / "ops", extra=f"  CertificateFile {tmp_path}/ops.certificate\n"
        )
        runner = SshRunner(resolve(HostSpec(name="c1", address="c1"), Settings(ssh_config=str(certified))), "c1")
        await runner.connect()
        try:
            assert (await runner.run(["echo", "in"])).stdout == "in\n"
        finally:
            await runner.close()
        assert "Accepted publickey for root" in lab.sshd_log("c1") and "ED25519-CERT" in lab.sshd_log("c1")


def test_hosts_checks_that_the_final_hostname_resolves(configs: Settings, tmp_path: Path) -> None:
    # .invalid never resolves (RFC 6761): the name a typo in HostName would leave.
    config = Path(configs.ssh_config)
    config.write_text(
        config.read_text() + "Host typo\n  HostName nas01.invalid\nHost behind\n"
        "  HostName only-the-jump-knows.invalid\n  ProxyJump inner\n"
    )
    proc = linkdeck("hosts", "--ssh-config", str(config), "--json", "typo", "inc-b", "behind")
    assert proc.returncode == 1, proc.stderr
    typo, inc_b, behind = json.loads(proc.stdout)["hosts"]
    assert set(typo) == {"name", "error"} and typo["name"] == "typo"
    assert typo["error"].startswith("typo: HostName 'nas01.invalid' does not resolve: ")
    assert typo["error"].endswith("check its HostName in the ssh config (`ssh -G` shows it) or the DNS")
    assert inc_b["hostname"] == "192.0.2.21"
    assert behind["hostname"] == "only-the-jump-knows.invalid"  # the jump host resolves it, not this machine
    text = linkdeck("hosts", "--ssh-config", str(config), "typo")
    assert (
        text.returncode == 1
        and text.stdout.startswith("typo  (does not resolve)\n  error")
        and "nas01.invalid" in text.stdout
    )


def test_hosts_with_none_configured_names_the_config_file_it_read(tmp_path: Path) -> None:
    cfg = tmp_path / "linkdeck.toml"
    cfg.write_text("interval = 1\n")
    proc = linkdeck("hosts", "--config", str(cfg))
    assert proc.returncode == 2
    assert proc.stderr == f"linkdeck: no hosts: name one (linkdeck hosts HOST) or list them as [[hosts]] in {cfg}\n"
    proc = linkdeck("hosts", env={"LINKDECK_CONFIG": "", "XDG_CONFIG_HOME": str(tmp_path / "empty")})
    assert proc.returncode == 2 and "<config>" not in proc.stderr
    assert proc.stderr == (
        "linkdeck: no hosts: name one (linkdeck hosts HOST) or list them as [[hosts]] in a config file "
        f"(none read: create {tmp_path / 'empty' / 'linkdeck' / 'config.toml'} or give --config FILE)\n"
    )
