"""The Linux sampler's ordinary tick starts no process (issue 20 §1: no fork per tick where the
shell allows it): the tick's files are read by the delta filter's awk, already running, the
sysfs state by the shell's own `read`, and the loop waits for the client's next tick with
`read` on its stdin instead of a `sleep`. When the client closes that stdin, the loop ends and
every process it started with it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from linkdeck.platforms.adapter import split_frames
from linkdeck.platforms.linux import LinuxAdapter, build_script
from linkdeck.transport.local_runner import LocalRunner
from tests.ticks import ticking

traced = pytest.mark.skipif(
    os.geteuid() != 0 or not (shutil.which("strace") and shutil.which("unshare")),
    reason="needs root (a network namespace with its own /sys), strace and unshare",
)


def _frames(proc: subprocess.Popen, count: int) -> list[str]:
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if lines.count("@@LD END") >= count:
            break
    return lines


def _run(ticks: int, trace: Path) -> tuple[list[dict[str, str]], list[str]]:
    """The frames of ``ticks`` ticks and every process the sampler started (by program; a
    fork that execs nothing, such as a command substitution, as "fork"). Run for real under
    strace, in a network namespace of its own (only `lo`, so no link coming or going here
    brings slow facts)."""
    # slow facts only on the first frame: the ticks counted are ordinary ones
    script = build_script(100_000)
    inner = f'mount -t sysfs none /sys && exec strace -f -qq -e trace=execve,exit_group -o {trace} sh -c "$1"'
    argv = ["unshare", "--net", "--mount", "sh", "-c", inner, "sh", script]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    try:
        lines: list[str] = []
        while lines.count("@@LD END") < ticks:
            proc.stdin.write("\n")  # the client's tick (transport.base.Ticker)
            proc.stdin.flush()
            lines += _frames(proc, 1)
        # the client gone, as a runner closes the stream: the loop meets EOF, ends with its
        # awk, and strace, their last tracer, with them (its trace whole)
        proc.stdin.close()
        proc.wait(timeout=10)
    finally:
        proc.kill()
        proc.wait()
    return split_frames(lines), _programs(trace.read_text())


def _programs(trace: str) -> list[str]:
    """Every process in an ``strace -f`` trace but the first, by the program it ran last."""
    tried: dict[str, str] = {}
    ran: dict[str, str] = {}
    for pid, rest in re.findall(r"^(\d+) +(.*)$", trace, re.M):
        ran.setdefault(pid, "fork")
        if rest.startswith("execve("):
            tried[pid] = rest.split('"')[1]
        if "execve" in rest and rest.endswith("= 0"):
            ran[pid] = Path(tried[pid]).name
    return list(ran.values())[1:]


@traced
def test_an_ordinary_tick_starts_no_process(tmp_path):
    short_frames, short = _run(3, tmp_path / "short")
    long_frames, long = _run(13, tmp_path / "long")
    assert len(short_frames) == 3 and len(long_frames) == 13  # one frame per tick asked for
    # the frames are whole and read: lo's counters, its state, the TCP counters
    adapter = LinuxAdapter(runner=None)
    samples = [adapter.parse_frame(f) for f in long_frames]
    assert all(
        "/sys/class/net/lo/operstate:down" in f["tick"].splitlines() for f in long_frames
    )  # a new namespace's lo
    assert [s.interfaces["lo"].oper for s in samples] == ["down"] * 13
    assert all(s.tcp is not None and s.counters["lo"].rx_bytes is not None for s in samples)
    # the same processes for 3 ticks and for 13 (the setup's, the first frame's slow facts)
    assert sorted(long) == sorted(short), (short, long)
    assert "sleep" not in long


def test_the_loop_ends_with_every_process_it_started_when_the_client_closes_its_stdin():
    with ticking(["sh", "-c", build_script(100_000)], 0.05, text=True, start_new_session=True) as proc:
        lines = _frames(proc, 3)
        loop = psutil.Process(proc.pid).children(recursive=True)
        names = sorted(p.name() for p in loop)
        assert any(n in ("awk", "mawk", "gawk", "busybox") for n in names) and len(loop) >= 2, names
        assert proc.stdin is not None
        proc.stdin.close()  # nothing else: no signal to anyone
        status = proc.wait(timeout=10)
        gone, alive = psutil.wait_procs(loop, timeout=10)
        rest = proc.stdout.read() if proc.stdout is not None else ""
    # the loop ended by itself; the tick reader then ends what is left of the group (the
    # shell waiting for it), so the shell may have died of that SIGKILL after a clean end
    assert status in (0, -9) and alive == [], (status, [(p.pid, p.name()) for p in alive])
    # what the last tick printed reached the reader whole before awk ended
    assert len(split_frames(lines + rest.splitlines())) >= 3 and rest.count("@@LD BEGIN") == rest.count("@@LD END")


async def test_the_runner_ticks_the_loop_at_the_interval_and_ends_it_when_the_stream_closes():
    """Through LocalRunner, as the collector runs a host: samples come at the interval asked
    for (the remote clock says so), never free-running; closing the stream ends the loop."""
    adapter = LinuxAdapter(LocalRunner(), facts_every=100_000)
    times: list[float] = []
    pids: list[psutil.Process] = []
    # a whole run's session-wide labs (their sshds) are this process's children too
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    started = time.monotonic()
    async with contextlib.aclosing(adapter.samples(0.2)) as samples:
        async for sample in samples:
            times.append(sample.time)
            if not pids:
                pids = [
                    p for p in psutil.Process().children(recursive=True) if p.name() != "python" and p.pid not in before
                ]
            if len(times) == 6:
                break
    wall = time.monotonic() - started
    steps = [round(b - a, 2) for a, b in zip(times, times[1:])]
    # five ticks on the client's 0.2 s schedule (a late one is followed by one on time, not
    # by a burst); a loop running free would be done in a few hundredths
    assert 0.7 <= times[-1] - times[0] <= 1.6 and max(steps) <= 0.6 and wall >= 0.8, (steps, wall)
    gone, alive = await asyncio.to_thread(psutil.wait_procs, pids, 5)
    assert pids and alive == []
