"""The local runner's children are waited for through pidfds where Linux has them: no thread per
child (asyncio's default before Python 3.12), on any loop in any thread."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import warnings

import pytest

from linkdeck.transport.local_runner import run_process, stream_process

CHILDREN = 8


def _pidfd() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


pytestmark = pytest.mark.skipif(not (sys.platform == "linux" and _pidfd()), reason="needs Linux pidfds")


@pytest.fixture
def default_watcher():  # type: ignore[no-untyped-def]
    """asyncio's own default, as a process starts with (another test may have left ours)."""
    if sys.version_info >= (3, 12):
        yield
        return
    policy = asyncio.get_event_loop_policy()
    before = policy.get_child_watcher()
    policy.set_child_watcher(asyncio.ThreadedChildWatcher())
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        policy.set_child_watcher(before)


async def test_running_children_hold_no_thread_each(default_watcher) -> None:
    # the threads started from here on: earlier tests' idle executor threads may end meanwhile
    before = set(threading.enumerate())
    streams = [stream_process(["sh", "-c", "echo up; exec cat"], hold_stdin=True) for _ in range(CHILDREN)]
    async with contextlib.AsyncExitStack() as stack:
        for lines in streams:
            await stack.enter_async_context(contextlib.aclosing(lines))
        assert await asyncio.gather(*(anext(lines) for lines in streams)) == ["up"] * CHILDREN
        assert set(threading.enumerate()) - before == set()
    done = await asyncio.gather(*(run_process(["sh", "-c", f"exit {i}"], 10.0) for i in range(CHILDREN)))
    assert [d.status for d in done] == list(range(CHILDREN))
    assert set(threading.enumerate()) - before == set()


def test_a_loop_in_another_thread_waits_for_its_children(default_watcher) -> None:
    got: list[object] = []

    def work() -> None:
        try:
            got.append(asyncio.run(run_process(["sh", "-c", "echo hi; exit 4"], 10.0)))
        except Exception as e:  # noqa: BLE001 - said by the assert below
            got.append(e)

    async def main_loop_too() -> None:  # a loop runs in the main thread meanwhile
        thread = threading.Thread(target=work)
        thread.start()
        while thread.is_alive():
            await asyncio.sleep(0.01)
        done = await run_process(["sh", "-c", "exit 5"], 10.0)
        assert done.status == 5

    asyncio.run(main_loop_too())
    assert [(r.stdout, r.status) for r in got] == [("hi\n", 4)], got  # type: ignore[attr-defined]
