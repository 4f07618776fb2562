"""exit_status: a command run to its end for its status alone (an ssh master's login), started
off the event loop where the kernel has pidfds and through asyncio's watcher elsewhere. Its
status and its stderr file come back; past its time, or when the caller is cancelled (even
while the thread is still starting it), it is killed and reaped, never left running."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from linkdeck.transport import local_runner
from linkdeck.transport.local_runner import exit_status

pytestmark = pytest.mark.skipif(not local_runner._PIDFD, reason="the kernel gives no pidfds: spawn's path only")


@pytest.fixture(params=["pidfd", "asyncio"])
def path(request, monkeypatch) -> str:
    """Both ways exit_status starts a command: this kernel's pidfds, and asyncio's (no pidfds)."""
    monkeypatch.setattr(local_runner, "_PIDFD", request.param == "pidfd")
    return request.param


def _sleeper(marker: str) -> list[str]:
    """A command that waits 30 s, one process with ``marker`` in its command line."""
    return [sys.executable, "-c", "import time; time.sleep(30)", marker]


def _children(marker: str) -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if marker in " ".join(p.cmdline())]


async def test_the_status_and_the_stderr_file_come_back(path) -> None:
    with tempfile.TemporaryFile() as errors:
        status = await exit_status(
            ["sh", "-c", "echo said >&2; exit 7"], 5, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors
        )
        errors.seek(0)
        assert (status, errors.read()) == (7, b"said\n")


async def test_a_command_past_its_time_is_killed_and_reaped(path, tmp_path: Path) -> None:
    marker = str(tmp_path / "past-its-time")
    with pytest.raises(asyncio.TimeoutError):
        await exit_status(_sleeper(marker), 0.3, stdin=subprocess.DEVNULL)
    assert _children(marker) == []


async def test_a_cancelled_caller_leaves_no_process(path, tmp_path: Path) -> None:
    marker = str(tmp_path / "cancelled")
    task = asyncio.create_task(exit_status(_sleeper(marker), 60, stdin=subprocess.DEVNULL))
    for _ in range(500):  # until it runs, then cancel its caller
        if _children(marker):
            break
        await asyncio.sleep(0.01)
    assert _children(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _children(marker) == []


async def test_cancelled_while_the_thread_starts_it_the_command_is_ended_once_started(monkeypatch, tmp_path) -> None:
    """The cancel lands before the worker thread's Popen returns: whatever it starts is killed."""
    monkeypatch.setattr(local_runner, "_PIDFD", True)
    marker = str(tmp_path / "starting")
    started = []
    real = local_runner._popen

    def slow_popen(argv, popen):  # type: ignore[no-untyped-def]
        time.sleep(0.2)  # a fork waiting for a CPU: the cancel lands meanwhile
        started.append(real(argv, popen))
        return started[-1]

    monkeypatch.setattr(local_runner, "_popen", slow_popen)
    task = asyncio.create_task(exit_status(_sleeper(marker), 60, stdin=subprocess.DEVNULL))
    await asyncio.sleep(0)  # the thread is asked to start it; the caller is cancelled at once
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(500):
        if started and started[0].poll() is not None:
            break
        await asyncio.sleep(0.01)
    assert started and started[0].returncode is not None and _children(marker) == []
