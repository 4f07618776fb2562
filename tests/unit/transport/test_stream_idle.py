"""stream_process's idle bound: a stream whose read waits ``idle`` seconds ends with
TimeoutError (the host or the path is gone); time the consumer spends between reads does not
count, and a stream that keeps printing never trips it."""

from __future__ import annotations

import asyncio
import sys

import pytest

from linkdeck.transport.local_runner import stream_process

PY = sys.executable


async def test_a_stream_silent_past_its_idle_bound_ends_with_a_timeout():
    lines = []
    loop = asyncio.get_running_loop()
    started = loop.time()
    argv = [PY, "-c", "import time; print('one', flush=True); time.sleep(30)"]
    with pytest.raises(asyncio.TimeoutError):
        async for line in stream_process(argv, idle=0.5):
            lines.append(line)
    waited = loop.time() - started
    assert lines == ["one"]
    assert 0.5 <= waited < 5, waited


async def test_a_slow_consumer_between_reads_is_not_an_idle_stream():
    argv = [PY, "-c", "import time\nfor i in range(3): print(i, flush=True); time.sleep(0.05)"]
    got = []
    async for line in stream_process(argv, idle=0.3):
        got.append(line)
        await asyncio.sleep(0.5)  # longer than the bound, spent here, not waiting on a read
    assert got == ["0", "1", "2"]


async def test_a_stream_that_keeps_printing_outlives_its_idle_bound_many_times():
    argv = [PY, "-c", "import time\nfor i in range(12): print(i, flush=True); time.sleep(0.1)"]
    got = [line async for line in stream_process(argv, idle=0.3)]
    assert got == [str(i) for i in range(12)]
