"""Run a sampler loop here the way a runner drives it (transport.base.Ticker): a newline on its
stdin every interval, none while the last is unread (a loop slower than its interval gets no
queue of ticks), then EOF, which ends the loop (platforms/delta.LOOP)."""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import subprocess
import termios
import threading
from typing import Iterator, Sequence


@contextlib.contextmanager
def ticking(argv: Sequence[str], interval: float, first: bytes = b"", **popen) -> Iterator[subprocess.Popen]:
    """``argv`` started with its stdout piped and its stdin ticked every ``interval`` seconds,
    after ``first`` (what a runner sends it before any tick: the sampler a stream is sent); on
    leaving, its stdin is closed and the process reaped (killed if it has not ended within 5 s)."""
    proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=popen.pop("stdout", subprocess.PIPE), **popen)
    assert proc.stdin is not None
    fd = proc.stdin.fileno()
    if first:
        os.write(fd, first)  # into the pipe's buffer whole, before the first tick
    done = threading.Event()

    def feed() -> None:
        unread = array.array("i", [0])
        while not done.wait(interval):
            try:
                fcntl.ioctl(fd, termios.FIONREAD, unread, True)
                if unread[0] == 0:
                    os.write(fd, b"\n")
            except OSError:  # the loop is gone
                return

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    try:
        yield proc
    finally:
        done.set()
        thread.join()
        proc.stdin.close()  # EOF: the loop ends, and the shell reaps it (its CPU counted)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
