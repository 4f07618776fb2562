"""The Linux sampler's ordinary tick starts one process, its sleep (issue 20 §1: no fork per
tick where the shell allows it): the tick's files are read by the delta filter's awk, already
running, and the sysfs state by the shell's own `read`. Run for real under strace, in a
network namespace of its own (only `lo`, so no link coming or going here brings slow facts),
once for a few ticks and once for more: the processes the extra ticks started are counted."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import psutil
import pytest

from linkdeck.platforms.base import split_frames
from linkdeck.platforms.linux import LinuxAdapter, build_script

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not (shutil.which("strace") and shutil.which("unshare")),
    reason="needs root (a network namespace with its own /sys), strace and unshare",
)


def _run(ticks: int, trace: Path) -> tuple[list[dict[str, str]], list[str]]:
    """The frames of ``ticks`` ticks and every process the sampler started (by program; a
    fork that execs nothing, such as a command substitution, as "fork")."""
    # slow facts only on the first frame: the ticks counted are ordinary ones
    script = build_script(0.05, 100_000)
    inner = f'mount -t sysfs none /sys && exec strace -f -qq -e trace=execve,exit_group -o {trace} sh -c "$1"'
    proc = subprocess.Popen(["unshare", "--net", "--mount", "sh", "-c", inner, "sh", script], stdout=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count("@@LD END") >= ticks:
                break
        # the sampler's shell killed, as a runner stops it: the loop and its awk end by the
        # next tick, and strace, their last tracer, with them (its trace whole)
        (shell,) = psutil.Process(proc.pid).children()
        shell.kill()
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


def test_an_ordinary_tick_starts_only_its_sleep(tmp_path):
    short_frames, short = _run(3, tmp_path / "short")
    long_frames, long = _run(13, tmp_path / "long")
    # the frames are whole and read: lo's counters, its state, the TCP counters
    adapter = LinuxAdapter(runner=None)
    samples = [adapter.parse_frame(f) for f in long_frames]
    assert all("/sys/class/net/lo/operstate:down" in f["tick"].splitlines() for f in long_frames)  # a new namespace's lo
    assert [s.interfaces["lo"].oper for s in samples] == ["down"] * 13
    assert all(s.tcp is not None and s.counters["lo"].rx_bytes is not None for s in samples)
    extra = {name: long.count(name) - short.count(name) for name in set(long) | set(short)}
    extra = {name: n for name, n in extra.items() if n}
    # ten more ticks: ten sleeps (one more or less: where the kill found the loop), nothing else
    assert set(extra) == {"sleep"} and 9 <= extra["sleep"] <= 11, extra
