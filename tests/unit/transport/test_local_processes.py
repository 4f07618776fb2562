"""run_process and stream_process leave each child to asyncio's child watcher: a process they
kill is reaped by the watcher alone (no "Unknown child process pid …, will report returncode
255" from asyncio, and the real exit status), and a command cut short by its timeout logs
nothing either ("exception was never retrieved")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
import warnings

import pytest

from linkdeck.transport.local_runner import run_process, stream_process
from linkdeck.transport.runner import CommandTimeout

# The window a busy machine leaves between a child's death and the watcher's thread reaping it.
WATCHER_LAG_S = 0.2


class _LaggingWatcher(asyncio.ThreadedChildWatcher):
    def _do_waitpid(self, loop, expected_pid, callback, args):  # type: ignore[no-untyped-def]
        with contextlib.suppress(ChildProcessError):  # reaped behind its back: super() says so
            os.waitid(os.P_PID, expected_pid, os.WEXITED | os.WNOWAIT)
            time.sleep(WATCHER_LAG_S)
        super()._do_waitpid(loop, expected_pid, callback, args)


def _dead_on_return(real):  # type: ignore[no-untyped-def]
    """A kill that returns once the process is dead (not yet reaped): the watcher's lag is then
    certain to be open when the caller goes on."""

    def kill(pid: int, sig: int) -> None:
        real(pid, sig)
        if sig == signal.SIGKILL:
            with contextlib.suppress(ChildProcessError):
                os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)

    return kill


@pytest.fixture
def asyncio_said(monkeypatch):  # type: ignore[no-untyped-def]
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    handler = Keep(logging.WARNING)
    logging.getLogger("asyncio").addHandler(handler)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        policy = asyncio.get_event_loop_policy()
        before = policy.get_child_watcher()
        policy.set_child_watcher(_LaggingWatcher())
    monkeypatch.setattr(os, "kill", _dead_on_return(os.kill))
    monkeypatch.setattr(os, "killpg", _dead_on_return(os.killpg))
    yield said
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        policy.set_child_watcher(before)
    logging.getLogger("asyncio").removeHandler(handler)


async def test_a_stream_closed_early_leaves_its_process_to_the_watcher(asyncio_said) -> None:
    lines = stream_process(["sh", "-c", "echo hi; exec sleep 30"])
    async with contextlib.aclosing(lines):
        assert await anext(lines) == "hi"
    await asyncio.sleep(2 * WATCHER_LAG_S)
    assert not [s for s in asyncio_said if "Unknown child process" in s], asyncio_said


async def test_a_command_past_its_timeout_is_killed_and_nothing_is_logged(asyncio_said) -> None:
    with pytest.raises(CommandTimeout):
        await run_process(["sleep", "30"], 0.05)
    await asyncio.sleep(2 * WATCHER_LAG_S)
    assert asyncio_said == []


async def test_a_stream_to_its_end_keeps_its_exit_status(asyncio_said) -> None:
    from linkdeck.transport.local_runner import StreamEnd

    end = StreamEnd()
    got = [line async for line in stream_process(["sh", "-c", "echo a; echo oops >&2; exit 3"], end=end)]
    assert got == ["a"] and end.status == 3 and bytes(end.stderr) == b"oops\n"
    assert asyncio_said == []
