"""Nothing writes to the terminal but linkdeck's own output: paramiko's records (a host that
never sends its SSH banner is a traceback in paramiko's log) go to linkdeck's log file, and
over OpenSSH ssh's words are quoted on the host's line."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from tests.cli import linkdeck


@pytest.mark.parametrize("transport", ["paramiko", "openssh"])
def test_a_host_that_never_sends_its_banner_is_one_line_and_the_log_keeps_the_rest(
    tmp_path: Path, transport: str
) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []  # accepted and never answered, like a wedged sshd

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host quiet\n  HostName 127.0.0.1\n  Port {listener.getsockname()[1]}\n  ConnectTimeout 1\n  User nobody\n"
    )
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    try:
        proc = linkdeck(
            "snapshot", "--no-local", "--transport", transport, "--ssh-config", str(config), "quiet", env=env
        )
    finally:
        listener.close()
        for conn in held:
            conn.close()
    # paramiko's noise goes to the log; the terminal gets the one line saying a host is not live
    assert proc.stderr == "linkdeck: 1 of 1 hosts not live: quiet (unreachable)\n" and proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith("quiet  [?]  unreachable  — ")
    if transport == "openssh":  # ssh's own words, quoted
        assert "ssh says “Connection timed out during banner exchange”" in proc.stdout
        return
    assert "Error reading SSH protocol banner" in proc.stdout
    log = (tmp_path / "state" / "linkdeck" / "log" / "linkdeck.log").read_text()
    assert "paramiko.transport ERROR" in log and "Traceback" in log


def test_log_records_are_printable(tmp_path: Path, monkeypatch) -> None:
    import logging

    from linkdeck.core import logs

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    path = logs.setup()
    try:
        logging.getLogger("linkdeck.test").warning("iface \x1b]0;owned\x07 gone")
        for handler in logging.getLogger("linkdeck").handlers:
            handler.flush()
        assert path is not None and "iface \\x1b]0;owned\\x07 gone" in path.read_text()
    finally:
        for name, _ in logs.LOGGERS:
            logging.getLogger(name).handlers.clear()
            logging.getLogger(name).propagate = True
