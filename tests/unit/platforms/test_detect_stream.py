"""Detection as the start of the sampler's own stream (detect.streamed_adapter), run by this
machine's sh through the local runner: the stream says which OS, and a Linux host runs the
sampler the stream carried with nothing sent; a host of another family (a constructed
`uname`), or any host over a path that takes only small requests, runs the line it is sent
(after any ticks, which are blank lines); an adapter closed before it samples ends that
stream; sampling at another pace starts a stream of its own; a stream that ends before its
probes are done is asked again the plain way, which says why."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import psutil
import pytest

from linkdeck.core.model import HostSample
from linkdeck.platforms.adapter import FRAME_BEGIN, StreamingAdapter
from linkdeck.platforms.detect import DETECTED, STREAM_START, ShellRefused, guessed_start, streamed_adapter
from linkdeck.settings.config import Settings
from linkdeck.transport.local_runner import LocalRunner

NOLOGIN = ["sh", "-c", "echo 'This account is currently not available.'; exit 1"]


def stream_shells() -> list[psutil.Process]:
    """This process's children running STREAM_START."""
    return [p for p in psutil.Process().children() if DETECTED in " ".join(p.cmdline())]


async def first_sample(adapter: StreamingAdapter, interval: float) -> HostSample:
    async with contextlib.aclosing(adapter.samples(interval)) as samples:
        return await anext(s async for s in samples if isinstance(s, HostSample))


async def test_a_linux_host_runs_the_sampler_its_stream_carried_with_nothing_sent() -> None:
    adapter = await streamed_adapter(LocalRunner(), Settings(interval=0.2))
    assert isinstance(adapter, StreamingAdapter) and adapter.os == "linux" and adapter.opened is not None
    assert adapter.opened.sampling
    [shell] = stream_shells()
    assert guessed_start(Settings(interval=0.2)) in shell.cmdline()
    async with contextlib.aclosing(adapter.samples(0.2)) as samples:
        sample = await anext(s async for s in samples if isinstance(s, HostSample))
        assert stream_shells() == [shell] and shell.children()  # the sampler's pipeline, in that shell
        others = [p for p in psutil.Process().children() if p.pid != shell.pid]
        assert adapter.opened is None and not [p for p in others if FRAME_BEGIN in " ".join(p.cmdline())]
    assert "lo" in sample.interfaces and sample.counters["lo"] is not None
    _, alive = await asyncio.to_thread(psutil.wait_procs, [shell], 5)
    assert alive == []


class FreeBsdUname(LocalRunner):
    """This machine, with a `uname` that says FreeBSD (constructed) first on the stream's PATH."""

    def __init__(self, bin_dir: Path) -> None:
        super().__init__()
        uname = bin_dir / "uname"
        uname.write_text(
            "#!/bin/sh\necho 'FreeBSD 14.1-RELEASE FreeBSD 14.1-RELEASE releng/14.1-n267679-10e31f0946d8 GENERIC'\n"
        )
        uname.chmod(0o755)
        self.path = f"{bin_dir}:{os.environ['PATH']}"

    def stream(self, argv, tick=None, feed=None):
        return super().stream(["env", f"PATH={self.path}", *argv], tick, feed)


async def test_a_host_of_another_family_runs_the_line_it_is_sent_not_the_linux_sampler(tmp_path) -> None:
    adapter = await streamed_adapter(FreeBsdUname(tmp_path), Settings(interval=5.0))
    assert adapter.os == "freebsd" and isinstance(adapter, StreamingAdapter) and adapter.opened is not None
    assert not adapter.opened.sampling
    [shell] = stream_shells()
    assert shell.children() == []  # waiting in its own `read` for the line: the Linux sampler never ran
    await adapter.opened.feed.send(b"\n\necho the-line-sent-ran\n")  # ticks first, skipped
    lines = adapter.opened.lines
    said = [line async for line in _until(lines, "the-line-sent-ran")]
    assert said[-1] == "the-line-sent-ran" and not [line for line in said if FRAME_BEGIN in line]
    await adapter.close()
    _, alive = await asyncio.to_thread(psutil.wait_procs, [shell], 5)
    assert alive == []


async def _until(lines, last: str):
    async for line in lines:
        yield line
        if line == last:
            return


async def test_over_a_path_of_small_requests_the_stream_runs_the_sampler_sent_after_its_ticks() -> None:
    adapter = await streamed_adapter(LocalRunner(), Settings(interval=0.2), small_requests=True)
    assert isinstance(adapter, StreamingAdapter) and adapter.os == "linux" and adapter.opened is not None
    assert not adapter.opened.sampling
    [shell] = stream_shells()
    assert shell.cmdline()[-1] == STREAM_START  # no sampler carried: the stream's request stays small
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
    assert len(shells) == 1 and guessed_start(Settings()) in shells[0].cmdline()
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
