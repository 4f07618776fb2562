"""Detection as the start of the sampler's own stream (detect.streamed_adapter), run by this
machine's sh through the local runner: the stream says which OS, then runs the sampler it is
sent (after any ticks, which are blank lines); an adapter closed before it samples ends that
stream; sampling at another pace starts a stream of its own; a stream that ends before its
probes are done is asked again the plain way, which says why."""

from __future__ import annotations

import asyncio
import contextlib

import psutil
import pytest

from linkdeck.core.model import HostSample
from linkdeck.platforms.adapter import FRAME_BEGIN, StreamingAdapter
from linkdeck.platforms.detect import DETECTED, STREAM_START, ShellRefused, streamed_adapter
from linkdeck.settings.config import Settings
from linkdeck.transport.local_runner import LocalRunner

NOLOGIN = ["sh", "-c", "echo 'This account is currently not available.'; exit 1"]


def stream_shells() -> list[psutil.Process]:
    """This process's children running STREAM_START."""
    return [p for p in psutil.Process().children() if DETECTED in " ".join(p.cmdline())]


async def first_sample(adapter: StreamingAdapter, interval: float) -> HostSample:
    async with contextlib.aclosing(adapter.samples(interval)) as samples:
        return await anext(s async for s in samples if isinstance(s, HostSample))


async def test_the_stream_that_told_the_os_runs_the_sampler_sent_after_its_ticks() -> None:
    adapter = await streamed_adapter(LocalRunner(), Settings(interval=0.2))
    assert isinstance(adapter, StreamingAdapter) and adapter.os == "linux" and adapter.opened is not None
    [shell] = stream_shells()
    await adapter.opened.feed.send(b"\n\n")  # two ticks before the sampler: blank lines, skipped
    async with contextlib.aclosing(adapter.samples(0.2)) as samples:
        sample = await anext(s async for s in samples if isinstance(s, HostSample))
        # the sampler runs in that shell (its pipeline under it): no second command for it
        assert stream_shells() == [shell] and shell.children()
        assert not [p for p in psutil.Process().children() if FRAME_BEGIN in " ".join(p.cmdline())]
    assert "lo" in sample.interfaces and sample.counters["lo"] is not None
    _, alive = await asyncio.to_thread(psutil.wait_procs, [shell], 5)
    assert alive == []


async def test_an_adapter_closed_before_it_samples_ends_its_stream() -> None:
    adapter = await streamed_adapter(LocalRunner(), Settings())
    shells = stream_shells()
    assert len(shells) == 1 and STREAM_START in shells[0].cmdline()
    await adapter.close()
    _, alive = await asyncio.to_thread(psutil.wait_procs, shells, 5)
    assert alive == [] and stream_shells() == []


async def test_sampling_at_another_pace_starts_a_stream_of_its_own() -> None:
    adapter = await streamed_adapter(LocalRunner(), Settings(interval=5.0))
    [waiting] = stream_shells()
    sample = await first_sample(adapter, 0.2)  # not ticked at 5 s: its own stream, ticked at 0.2 s
    assert "lo" in sample.interfaces
    _, alive = await asyncio.to_thread(psutil.wait_procs, [waiting], 5)
    assert alive == []


async def test_a_stream_that_ends_before_its_probes_are_done_is_asked_the_plain_way() -> None:
    class NoLogin(LocalRunner):  # a login shell that runs nothing it is given
        def stream(self, argv, tick=None, feed=None):
            return super().stream(NOLOGIN, tick, feed)

        async def run(self, argv, timeout=10.0):
            return await super().run(NOLOGIN, timeout)

    with pytest.raises(ShellRefused, match=r"exit status 1\); it printed “This account is currently not available.”"):
        await streamed_adapter(NoLogin(), Settings())
    assert stream_shells() == []
