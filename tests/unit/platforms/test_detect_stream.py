"""Detection as the start of the sampler's own stream (detect.streamed_adapter), run by this
machine's sh through the local runner: the stream says which OS, and a Linux host runs the
sampler the stream carried with nothing sent; a host of another family (a constructed
`uname`), or any host over a path that takes only small requests, runs the line it is sent
(after any ticks, which are blank lines); an adapter closed before it samples ends that
stream; sampling at another pace starts a stream of its own; a stream that ends before its
probes are done is asked again the plain way, which says why; the start passes through a csh
login shell whole."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import threading
from pathlib import Path

import psutil
import pytest

from linkdeck.core.model import HostSample
from linkdeck.platforms.adapter import FRAME_BEGIN, FRAME_END, StreamingAdapter, split_frames
from linkdeck.platforms.bsd import BsdAdapter
from linkdeck.platforms.detect import (
    DETECTED,
    STREAM_START,
    ShellRefused,
    adapter_from,
    guessed_start,
    streamed_adapter,
)
from linkdeck.settings.config import Settings
from linkdeck.transport.local_runner import LocalRunner
from tests.ticks import ticking

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


@pytest.mark.skipif(not shutil.which("tcsh"), reason="needs tcsh (apt-get install tcsh) to play a csh login shell")
@pytest.mark.parametrize("which", ["linux", "freebsd"])
def test_the_stream_start_survives_a_csh_login_shell(which: str, tmp_path: Path) -> None:
    """sshd hands the stream's command line to the login shell: root's is csh on FreeBSD <= 13
    and TrueNAS CORE. The start, carrying the Linux sampler, reaches sh whole through tcsh -c
    (exactly what a runner sends: shlex.join of the argv), and the probes say which OS. A Linux
    host then samples with nothing sent; the replayed FreeBSD host runs the sampler it is sent."""
    settings = Settings(facts_every=2)
    replay = Path(__file__).parents[2] / "replay" / "bsd"
    path = f"{replay}:{os.environ['PATH']}" if which == "freebsd" else os.environ["PATH"]
    env = {**os.environ, "PATH": path, "HOME": str(tmp_path), "LD_REPLAY_STATE": str(tmp_path / "state")}
    argv = ["tcsh", "-c", shlex.join(["sh", "-c", guessed_start(settings)])]
    sampler = b"" if which == "linux" else BsdAdapter(None, "freebsd", facts_every=2).script().encode() + b"\n"
    lines: list[str] = []
    with ticking(argv, 0.1, first=sampler, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        # a stream that waits for a line it is never sent fails here instead of hanging
        watchdog = threading.Timer(20, os.killpg, (proc.pid, signal.SIGKILL))
        watchdog.start()
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count(FRAME_END) == 2:
                break
        watchdog.cancel()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever of the loop the stdin's EOF has not ended yet
        err = proc.stderr.read()
    assert DETECTED in lines, err
    probed = lines[: lines.index(DETECTED)]
    adapter = adapter_from(LocalRunner(), "\n".join(probed), settings)
    assert adapter.os == which and isinstance(adapter, StreamingAdapter)
    frames = split_frames(lines[lines.index(DETECTED) + 1 :])
    assert len(frames) == 2, err
    samples = [adapter.parse_frame(f) for f in frames]
    assert samples[1].time > samples[0].time and samples[1].interfaces
