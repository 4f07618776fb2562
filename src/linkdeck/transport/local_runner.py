"""Runs commands on this machine with asyncio subprocesses.

``run_process`` and ``stream_process`` are also how the OpenSSH transport (openssh.py) runs
its ``ssh`` clients: a command there is a local process whose output is the host's.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import sys
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, Callable, Mapping, Sequence

from .runner import (
    MAX_OUTPUT_BYTES,
    CommandResult,
    CommandTimeout,
    Lines,
    OutputTooLarge,
    Ticker,
    TransportError,
    bounded,
)

_GROUPS = hasattr(os, "killpg")  # POSIX: a stream's processes are one group
READ_CHUNK = 65536
STDERR_TAIL = 2000  # what a stream keeps of its stderr: enough for the last lines of a complaint


if sys.platform == "linux" and sys.version_info < (3, 12):

    class PidfdWatcher(asyncio.PidfdChildWatcher):
        """asyncio's pidfd watcher as Python 3.12 has it: each child's pidfd is read by the loop
        that started it, so it needs no loop attached (any loop, any thread, installed while one
        runs). Before 3.12 asyncio's default starts a thread per child to wait for it, and the
        stdlib's pidfd watcher serves the one loop attached to it in the main thread."""

        def is_active(self) -> bool:
            return True

        def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
            pass

        def add_child_handler(self, pid: int, callback: Callable[..., object], *args: Any) -> None:  # type: ignore[override]
            loop = asyncio.get_running_loop()
            pidfd = os.pidfd_open(pid)
            loop._add_reader(pidfd, self._exited, pid, pidfd, callback, args)  # type: ignore[attr-defined]

        def _exited(self, pid: int, pidfd: int, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
            asyncio.get_running_loop()._remove_reader(pidfd)  # type: ignore[attr-defined]
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:  # reaped elsewhere: asyncio's watchers say so and report 255
                returncode = 255
                logging.getLogger("asyncio").warning(
                    "child process pid %d exit status already read:  will report returncode 255", pid
                )
            else:
                returncode = os.waitstatus_to_exitcode(status)
            os.close(pidfd)
            callback(pid, returncode, *args)

        def remove_child_handler(self, pid: int) -> bool:
            return True  # asyncio never removes one; the pidfd goes when the child exits

    def _pidfd_works() -> bool:
        try:
            os.close(os.pidfd_open(os.getpid()))
        except OSError:  # a kernel before 5.3, or a sandbox that forbids it
            return False
        return True

    _PIDFD = _pidfd_works()

    def watch_children() -> None:
        """Have asyncio wait for our children through pidfds rather than a thread each, where
        the policy still has asyncio's default watcher (one set on purpose is left alone)."""
        if not _PIDFD:
            return
        policy = asyncio.get_event_loop_policy()
        if type(policy.get_child_watcher()) is asyncio.ThreadedChildWatcher:
            policy.set_child_watcher(PidfdWatcher())

else:

    def watch_children() -> None:
        """Python 3.12 waits for children through pidfds already; elsewhere asyncio's default."""


async def spawn(argv: Sequence[str], **kwargs: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec(*argv, **kwargs)``, its exit watched as cheaply as the
    platform allows (watch_children)."""
    watch_children()
    return await asyncio.create_subprocess_exec(*argv, **kwargs)


class LocalRunner:
    name = "local"

    async def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        try:
            return await run_process(argv, timeout)
        except FileNotFoundError:
            return CommandResult("", f"{argv[0]}: command not found", 127)
        except OSError as exc:
            raise TransportError(f"cannot run {argv[0]}: {exc}") from exc

    def stream(self, argv: Sequence[str], tick: float | None = None) -> AsyncGenerator[str, None]:
        return stream_process(argv, tick)

    async def close(self) -> None:
        return None


async def run_process(
    argv: Sequence[str],
    timeout: float,
    *,
    label: str | None = None,
    env: Mapping[str, str] | None = None,
    new_session: bool = False,
) -> CommandResult:
    """Run ``argv`` to completion with stdin closed; CommandTimeout after ``timeout`` s and
    OutputTooLarge past MAX_OUTPUT_BYTES (the process is killed either way). ``label`` names
    the command in those errors (default: ``argv[0]``)."""
    label = label or argv[0]
    proc = await spawn(
        argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=new_session,
    )
    out, err = bytearray(), bytearray()

    async def pump(stream: asyncio.StreamReader | None, buf: bytearray) -> None:
        assert stream is not None
        while chunk := await stream.read(65536):
            buf.extend(chunk)
            if len(out) + len(err) > MAX_OUTPUT_BYTES:
                raise OutputTooLarge(f"{label} printed more than {MAX_OUTPUT_BYTES >> 20} MiB: stopped")

    try:
        await bounded(asyncio.gather(pump(proc.stdout, out), pump(proc.stderr, err), proc.wait()), timeout)
    except asyncio.TimeoutError:
        raise CommandTimeout(f"{label} did not finish within {timeout:g} s") from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            # Our ends of the pipes first: another process may hold theirs (an ssh master
            # writing a session's output), and the wait would be for it.
            _close_pipes(proc)
            try:
                with contextlib.suppress(asyncio.TimeoutError):
                    await bounded(proc.wait(), 5.0)
            finally:
                _close_pipes(proc, last_resort=True)
    return CommandResult(out.decode(errors="replace"), err.decode(errors="replace"), proc.returncode or 0)


@dataclass
class StreamEnd:
    """How a stream's process ended: its exit status and the tail of its stderr (filled in
    when ``stream_process`` finishes)."""

    status: int | None = None
    stderr: bytearray = field(default_factory=bytearray)


async def stream_process(
    argv: Sequence[str],
    tick: float | None = None,
    *,
    idle: float | None = None,
    line_limit: int = MAX_OUTPUT_BYTES,
    end: StreamEnd | None = None,
    env: Mapping[str, str] | None = None,
    hold_stdin: bool = False,
) -> AsyncGenerator[str, None]:
    """Yield ``argv``'s stdout lines (without newlines) until it exits. With ``tick``, its stdin
    gets a newline every ``tick`` s (Ticker) and EOF when the stream ends. No line for ``idle``
    s raises asyncio.TimeoutError; a line longer than ``line_limit`` raises ValueError (Lines). With
    ``end``, the exit status and stderr's tail are kept there (else stderr is discarded). With
    ``hold_stdin`` (and no ``tick``) stdin is a pipe kept open and silent until the end."""
    # A line may be as long as a whole command's output (a host with hundreds of links
    # prints its addresses as one JSON line): MAX_OUTPUT_BYTES by default.
    # Its own process group: a sampler is a pipeline (its loop into the delta filter, see
    # platforms/delta.py) whose members hold the pipe open; all of them go when it stops.
    proc = await spawn(
        argv,
        stdin=asyncio.subprocess.PIPE if tick is not None or hold_stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL if end is None else asyncio.subprocess.PIPE,
        start_new_session=_GROUPS,
        env=env,
    )
    ticker = None if tick is None or proc.stdin is None else Ticker(tick, functools.partial(_tick, proc.stdin))
    errors = None if end is None or proc.stderr is None else asyncio.ensure_future(_tail(proc.stderr, end.stderr))
    try:
        assert proc.stdout is not None
        async with contextlib.aclosing(_lines(proc.stdout, idle, line_limit, ticker)) as lines:
            async for line in lines:
                yield line
        # EOF: the program is exiting on its own. Killing it now would reap it behind the
        # child watcher's back ("Unknown child process pid …" on stderr).
        with contextlib.suppress(asyncio.TimeoutError):
            await bounded(proc.wait(), 2.0)
        if errors is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await bounded(asyncio.shield(errors), 1.0)
        if end is not None:
            end.status = proc.returncode
    finally:
        if ticker is not None:
            ticker.stop()
        if proc.stdin is not None:
            proc.stdin.close()  # EOF: the sampler's loop ends (platforms/delta.LOOP)
        if errors is not None:
            errors.cancel()
        try:
            if proc.returncode is None or _GROUPS:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    if _GROUPS:
                        os.killpg(proc.pid, signal.SIGKILL)
                    else:
                        proc.kill()
                # A reader that stopped early leaves the pipe paused or unread, and another
                # process may hold its other end (an ssh master): close ours before waiting.
                _close_pipes(proc)
                with contextlib.suppress(asyncio.TimeoutError):
                    await bounded(proc.wait(), 5.0)
        finally:
            # (or cancelled again while waiting): the transport would be left for the garbage
            # collector to close after the loop is gone. Close it here.
            _close_pipes(proc, last_resort=True)


class IdleWatch:
    """Fails ``stream``'s read once it has waited ``idle`` seconds: what ``bounded(read, idle)``
    does, for the price of one timer per stream that moves only when it fires, rather than a
    task, a wait and a timer per read (a streamed sampler reads once a tick, for hours)."""

    def __init__(self, stream: asyncio.StreamReader, idle: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.stream = stream
        self.idle = idle
        self.since: float | None = None  # when the read waiting now began
        self.handle = self.loop.call_later(idle, self._check)

    def _check(self) -> None:
        now = self.loop.time()
        if self.since is not None and now - self.since >= self.idle:
            self.stream.set_exception(asyncio.TimeoutError())
            return
        self.handle = self.loop.call_at((now if self.since is None else self.since) + self.idle, self._check)

    def stop(self) -> None:
        self.handle.cancel()


async def _lines(
    stdout: asyncio.StreamReader, idle: float | None, line_limit: int, ticker: Ticker | None
) -> AsyncGenerator[str, None]:
    """``stdout``'s lines until EOF. Read in chunks and cut here: the idle bound (IdleWatch) is
    checked per chunk, not per line."""
    split = Lines(line_limit)
    watch = None if idle is None else IdleWatch(stdout, idle)
    try:
        while True:
            if watch is not None:
                watch.since = watch.loop.time()
            data = await stdout.read(READ_CHUNK)
            if watch is not None:
                watch.since = None
            if not data:
                break
            if ticker is not None:
                ticker.heard = True
            for line in split.feed(data):
                yield line.decode(errors="replace")
    finally:
        if watch is not None:
            watch.stop()
    if split.rest():
        yield split.rest().decode(errors="replace")


def _close_pipes(proc: asyncio.subprocess.Process, last_resort: bool = False) -> None:
    """Close our ends of ``proc``'s pipes. The process transport itself is closed once the
    child watcher has its exit status (or ``last_resort``): closing it earlier polls the child
    (Popen.poll), which reaps one that just died behind the watcher's back ("Unknown child
    process pid …, will report returncode 255") and loses its real status."""
    transport = getattr(proc, "_transport", None)
    if transport is None:
        return
    for fd in (0, 1, 2):
        pipe = transport.get_pipe_transport(fd)
        if pipe is not None:
            pipe.close()
    if proc.returncode is not None or last_resort:
        transport.close()


async def _tail(stream: asyncio.StreamReader, keep: bytearray) -> None:
    while chunk := await stream.read(65536):
        keep.extend(chunk)
        del keep[:-STDERR_TAIL]


def _tick(stdin: asyncio.StreamWriter) -> bool:
    # A pipe's writes do not block the event loop; one still buffered (the command is not
    # reading) holds the next tick back, and a closed pipe takes none: the stream's EOF says why.
    if stdin.is_closing() or stdin.transport.get_write_buffer_size():
        return False
    stdin.write(b"\n")
    return True
