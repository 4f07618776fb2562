"""Every file or answer linkdeck reads whole has a size bound: past it, one line naming the
file, the bound and what to do, and never more than the bound read (``/dev/zero`` is endless).
The CLI runs under an address-space limit, so a reader without a bound fails with a
MemoryError instead of growing until the test's timeout."""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from linkdeck.core import bounded_read
from linkdeck.core.fleetstate import Turns
from linkdeck.prometheus.client import PromClient, PrometheusError, _read_secret
from linkdeck.recording import fileformat, zstdframes
from linkdeck.settings.config import ConfigError, load
from linkdeck.settings.prometheus_section import PrometheusConfig
from linkdeck.transport import ssh_builtin, ssh_options
from linkdeck.transport.known_hosts import KnownHostsTooLarge, lookup
from linkdeck.transport.ssh_auth import _candidates
from linkdeck.transport.ssh_config import SshTarget
from tests.cli import isolated_env

ADDRESS_SPACE = 1536 << 20  # room for linkdeck's imports, far less than an endless read


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def linkdeck_limited(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``linkdeck ARGS`` with its address space capped at ADDRESS_SPACE."""
    return subprocess.run(
        [sys.executable, "-m", "linkdeck", *args],
        input="",
        capture_output=True,
        text=True,
        timeout=timeout,
        env=isolated_env(),
        preexec_fn=_limited,
    )


def oversized(path: Path, limit: int) -> Path:
    """A sparse file one byte past ``limit`` (zeros: no disk used)."""
    with open(path, "wb") as f:
        f.truncate(limit + 1)
    return path


def one_line(out: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


# -- the command line -------------------------------------------------------------------------


def test_a_config_of_dev_zero_is_one_line_and_exit_2() -> None:
    out = linkdeck_limited("snapshot", "--config", "/dev/zero", "--no-local")
    assert out.returncode == 2
    assert one_line(out) == "linkdeck: /dev/zero: more than 4 MiB, the bound for a config file: is it the right file?"


def test_the_dashboard_with_a_config_of_dev_zero_is_one_line_and_exit_2() -> None:
    out = linkdeck_limited("--config", "/dev/zero")
    assert out.returncode == 2
    assert one_line(out).startswith("linkdeck: /dev/zero: more than 4 MiB, the bound for a config file")


def test_an_ssh_config_of_dev_zero_is_one_line_and_exit_2() -> None:
    out = linkdeck_limited("snapshot", "--no-local", "--ssh-config", "/dev/zero", "somehost")
    assert out.returncode == 2
    assert "/dev/zero: more than 4 MiB, the bound for an ssh config file" in one_line(out)


def test_parse_of_dev_zero_is_one_line_and_exit_2() -> None:
    out = linkdeck_limited("parse", "--os", "linux", "--command", "ip -j addr", "/dev/zero")
    assert out.returncode == 2
    assert (
        one_line(out)
        == "linkdeck parse: /dev/zero: more than 64 MiB, the bound for one command's output: is it the right file?"
    )


# -- each reader --------------------------------------------------------------------------------


def test_read_bytes_reads_one_byte_past_the_bound_and_no_more(tmp_path: Path) -> None:
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * 100)
    assert bounded_read.read_bytes(exact, 100, "a thing") == b"x" * 100
    with pytest.raises(bounded_read.TooLarge) as caught:
        bounded_read.read_bytes(oversized(tmp_path / "big", 100), 100, "a thing")
    assert str(caught.value) == f"{tmp_path / 'big'}: more than 100 bytes, the bound for a thing: is it the right file?"
    with open("/dev/zero", "rb") as endless:
        with pytest.raises(bounded_read.TooLarge):
            bounded_read.read_from(endless, "/dev/zero", 1 << 20, "a thing")
        assert endless.tell() <= (1 << 20) + 1 + 65536  # the bound, and at most one buffer


def test_the_config_loader_refuses_a_file_past_its_bound(tmp_path: Path) -> None:
    path = oversized(tmp_path / "config.toml", bounded_read.CONFIG_LIMIT)
    with pytest.raises(
        ConfigError, match="config.toml: more than 4 MiB, the bound for a config file: is it the right file"
    ):
        load(str(path))


def test_the_ssh_config_readers_refuse_a_file_past_their_bound(tmp_path: Path) -> None:
    path = oversized(tmp_path / "ssh_config", bounded_read.SSH_CONFIG_LIMIT)
    with pytest.raises(ConfigError, match="ssh_config: more than 4 MiB, the bound for an ssh config file"):
        ssh_builtin.read(str(path))
    with pytest.raises(ConfigError, match="ssh_config: more than 4 MiB, the bound for an ssh config file"):
        ssh_options.check_readable(str(path))


def test_an_included_ssh_config_past_its_bound_is_named(tmp_path: Path) -> None:
    big = oversized(tmp_path / "big.conf", bounded_read.SSH_CONFIG_LIMIT)
    main = tmp_path / "ssh_config"
    main.write_text(f"Include {big}\nHost x\n  User y\n")
    with pytest.raises(ConfigError, match="big.conf: more than 4 MiB"):
        ssh_builtin.read(str(main))


def test_a_known_hosts_file_past_its_bound_is_said_not_taken_as_empty(tmp_path: Path) -> None:
    path = oversized(tmp_path / "known_hosts", bounded_read.KNOWN_HOSTS_LIMIT)
    with pytest.raises(
        KnownHostsTooLarge, match="known_hosts: more than 16 MiB, the bound for a known_hosts file"
    ) as caught:
        lookup([str(path)], "somehost")
    assert caught.value.retryable is False
    assert lookup([str(tmp_path / "missing")], "somehost") == []  # a missing file still knows no keys


def _target(identity: Path) -> SshTarget:
    return SshTarget(
        alias="h",
        hostname="h",
        port=22,
        user="u",
        identity_files=(str(identity),),
        identities_only=True,
        explicit_identity=True,
        certificate_files=(),
        connect_timeout=5,
        known_hosts_files=(),
        known_hosts_write=None,
        host_key_alias=None,
        strict_host_key_checking=None,
        hash_known_hosts=False,
        proxy_command=None,
        jump=None,
    )


def test_a_key_file_past_its_bound_is_a_note_naming_it(tmp_path: Path) -> None:
    key = oversized(tmp_path / "id_ed25519", bounded_read.KEY_LIMIT)
    candidates, notes = _candidates(_target(key), None)
    assert candidates == []
    assert notes == [f"{key}: more than 1 MiB, the bound for an ssh key file: is it the right file?"]


def test_a_secret_file_past_its_bound_is_one_line(tmp_path: Path) -> None:
    token = oversized(tmp_path / "token", bounded_read.KEY_LIMIT)
    with pytest.raises(PrometheusError, match="token: more than 1 MiB, the bound for a bearer token file"):
        _read_secret(str(token), "bearer token")


# -- Prometheus answers --------------------------------------------------------------------------


class _Flood:
    """An HTTP server on loopback whose every answer is a 200 with a body that never ends."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._flood, args=(conn,), daemon=True).start()

    @staticmethod
    def _flood(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
            chunk = b'{"status":"success","data":{"resultType":"vector","result":[' + b" " * 65536
            try:
                while True:
                    conn.sendall(chunk)
                    chunk = b" " * 65536
            except OSError:
                return  # the client stopped reading

    def close(self) -> None:
        self.sock.close()


async def test_a_prometheus_answer_past_its_bound_is_one_line() -> None:
    server = _Flood()
    client = PromClient(PrometheusConfig(url=server.url), Turns())
    try:
        with pytest.raises(PrometheusError) as caught:
            await client.query("up", ("instance",), lambda rows: None)
    finally:
        await client.close()
        server.close()
    assert str(caught.value) == (
        f"Prometheus at {server.url}: more than 64 MiB, the bound for one answer: "
        "watch fewer targets with --match (or match in [prometheus])"
    )


# -- recording lines ------------------------------------------------------------------------------


def test_a_recording_line_past_its_bound_is_skipped_and_counted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fileformat, "FRAME_EVERY_S", 0.0)
    path = tmp_path / "rec.ldrec"
    writer = fileformat.Writer(path, {"started": 1000.0, "hosts": []})
    writer.write({"t": 1001.0, "ev": "state", "h": "a", "state": "live"})
    writer.write({"t": 1002.0, "ev": "state", "h": "a", "state": "live", "pad": "x" * 5000})
    writer.flush()
    writer.write({"t": 1003.0, "ev": "state", "h": "a", "state": "live"})
    writer.write({"t": 1004.0, "ev": "end"})
    writer.close()
    monkeypatch.setattr(zstdframes, "RECORDING_LINE_LIMIT", 1000)
    recording = fileformat.read(path)
    assert [e["t"] for e in recording.events()] == [1001.0, 1003.0, 1004.0]
    assert recording.damage.notes() == ["1 line skipped: longer than 1000 bytes (not read) (the first: line 2)"]


def test_lines_never_hold_more_of_a_line_than_the_bound(tmp_path: Path) -> None:
    import zstandard

    path = tmp_path / "frames"
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    with open(path, "wb") as f, cctx.stream_writer(f) as w:
        w.write(b"short\n")
        for _ in range(64):
            w.write(b"y" * 65536)  # 4 MiB without a newline
        w.write(b"\nafter\n")
    seen: list[int] = []
    with open(path, "rb") as raw:
        lines = zstdframes.Lines(raw, 0, line_limit=1 << 20)
        for line in lines:
            seen.append(len(line))
            assert len(line) <= 1 << 20
        assert not lines.damaged and not lines.cut
    assert seen == [5, len(zstdframes.OVERLONG), 5]


def test_the_bounds_are_the_documented_ones() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "CONFIG.md").read_text()
    for limit in (
        bounded_read.CONFIG_LIMIT,
        bounded_read.KNOWN_HOSTS_LIMIT,
        bounded_read.KEY_LIMIT,
        bounded_read.PROMETHEUS_ANSWER_LIMIT,
    ):
        assert bounded_read.size_words(limit) in doc


def test_a_certificate_file_past_its_bound_is_a_note_naming_it(tmp_path: Path) -> None:
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    cert = oversized(tmp_path / "ops.certificate", bounded_read.KEY_LIMIT)
    candidates, notes = _candidates(replace(_target(key), certificate_files=(str(cert),)), None)
    assert [c.label for c in candidates] == [str(key)] and candidates[0].key.public_blob is None  # the key, without it
    assert notes == [
        f"{cert}: more than 1 MiB, the bound for an ssh certificate: "
        "is it the right file? the key is offered without a certificate until it is"
    ]


def test_an_oversized_public_key_beside_a_key_is_a_note_naming_it(tmp_path: Path) -> None:
    """KEY.pub matches ssh-agent's keys to identity files: past the bound it was skipped
    unsaid, and with IdentitiesOnly the agent's key went unoffered."""
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    oversized(tmp_path / "id_ed25519.pub", bounded_read.KEY_LIMIT)
    candidates, notes = _candidates(_target(key), None)
    assert [c.label for c in candidates] == [str(key)]  # the key itself is still offered
    assert notes == [
        f"{key}.pub: more than 1 MiB, the bound for an ssh public key: "
        f"a public key is one line: rewrite it with `ssh-keygen -y -f {key} > {key}.pub`"
    ]
