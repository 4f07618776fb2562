"""``linkdeck test`` on a terminal shows each second as it arrives (issue 21 §1): run in a
pseudo-terminal against this machine's loopback, once with the iperf3 3.21 that
scripts/test.sh builds first on PATH (--json-stream) and once with Debian's 3.12."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest

from tests.cli import isolated_env
from tests.lab import free_port
from tests.lab.iperf3_new import NEW_IPERF3_DIR, new_iperf3_missing
from tests.unit.probe.test_probe import INSTALLED_IPERF3

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v iperf3"], capture_output=True).returncode != 0, reason="needs iperf3"
)


def on_a_terminal(*args: str, path: str, tmp_path, columns: int = 200) -> str:
    """linkdeck's output on a terminal ``columns`` wide (its size set as a terminal sets it)."""
    config = tmp_path / "c.toml"
    config.write_text(f"[test]\nport = {free_port()}\n")
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "linkdeck", *args, "--config", str(config)],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=isolated_env(drop=("COLUMNS", "LINES"), PATH=path),
    )
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(60)
    os.close(leader)
    assert proc.returncode == 0, proc.stderr.read()
    return out.decode().replace("\r\n", "\n")


@pytest.mark.skipif(new_iperf3_missing() is not None, reason=new_iperf3_missing() or "")
def test_each_second_before_the_report_with_a_new_iperf3(tmp_path) -> None:
    text = on_a_terminal(
        "test", "local", "local", "--time", "2", path=f"{NEW_IPERF3_DIR}:{os.environ['PATH']}", tmp_path=tmp_path
    )
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if "counters: local lo tx / local lo rx" in line)
    assert [line.split()[0] for line in lines[header + 1 : header + 3]] == ["1", "2"]
    assert "Gb/s" in lines[header + 1] or "Mb/s" in lines[header + 1]
    report = next(i for i, line in enumerate(lines) if line.startswith("local ceiling (loopback)"))
    assert report > header + 2 and "iperf3 3.21" in lines[report]


@pytest.mark.skipif(
    tuple(map(int, (INSTALLED_IPERF3 or "0").split("."))) >= (3, 17),
    reason="this machine's own iperf3 streams its seconds",
)
def test_an_old_iperf3_says_why_there_are_no_seconds(tmp_path) -> None:
    text = on_a_terminal("test", "local", "local", "--time", "1", path=os.environ["PATH"], tmp_path=tmp_path)
    assert text.splitlines()[0].startswith(f"iperf3 {INSTALLED_IPERF3} on local reports only when the test ends")


def test_json_and_pipes_get_no_seconds(tmp_path) -> None:
    from tests.cli import linkdeck

    config = tmp_path / "c.toml"
    config.write_text(f"[test]\nport = {free_port()}\n")
    proc = linkdeck("test", "local", "local", "--time", "1", "--config", str(config))
    assert proc.returncode == 0 and proc.stdout.startswith("local ceiling (loopback)")


@pytest.mark.skipif(new_iperf3_missing() is not None, reason=new_iperf3_missing() or "")
def test_each_second_fits_an_80_column_terminal(tmp_path) -> None:
    text = on_a_terminal(
        "test",
        "local",
        "local",
        "--time",
        "2",
        path=f"{NEW_IPERF3_DIR}:{os.environ['PATH']}",
        tmp_path=tmp_path,
        columns=80,
    )
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("   s  local → local"))
    assert lines[header].endswith("│ rx local lo / local lo")  # the receivers' counters stay
    assert all(len(line) <= 80 for line in lines[header : header + 3]), lines[header : header + 3]
    assert [line.split()[0] for line in lines[header + 1 : header + 3]] == ["1", "2"]
