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
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, Callable, Mapping, Protocol, Sequence

from .runner import (
    MAX_OUTPUT_BYTES,
    CommandResult,
    CommandTimeout,
    Lines,
    OutputTooLarge,
    StreamInput,
    Ticker,
    TransportError,
    bounded,
)

_GROUPS = hasattr(os, "killpg")  # POSIX: a stream's processes are one group
READ_CHUNK = 65536
STDERR_TAIL = 2000  # what a stream keeps of its stderr: enough for the last lines of a complaint


def _pidfd_works() -> bool:
    if not hasattr(os, "pidfd_open"):  # not Linux
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:  # a kernel before 5.3, or a sandbox that forbids it
        return False
    return True


_PIDFD = _pidfd_works()


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


async def exit_status(argv: Sequence[str], within: float, **popen: Any) -> int:
    """Run ``argv`` to its end and return its exit status; asyncio.TimeoutError past
    ``within`` s, once it is killed. ``popen``: its stdio (no pipe of ours: DEVNULL or a file)
    and the rest of subprocess.Popen's options.

    Where the kernel has pidfds it starts in a worker thread and its end is awaited on the
    loop: a fork waits until the child gets a CPU and execs, milliseconds each on a box busy
    logging in a fleet, and the event loop would wait with it. Elsewhere it starts as spawn
    starts one."""
    if not _PIDFD:
        proc = await spawn(argv, **popen)
        try:
            return await bounded(proc.wait(), within)
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
    starting = asyncio.ensure_future(asyncio.to_thread(_popen, list(argv), popen))
    try:
        child = await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(_kill_started)  # the thread still starts it: end it then
        raise
    try:
        await bounded(_ended(child.pid), within)
    finally:
        if child.poll() is None:
            child.kill()
            await asyncio.to_thread(child.wait)
    return child.wait()


def _popen(argv: list[str], popen: dict[str, Any]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, **popen)


def _kill_started(starting: asyncio.Future[subprocess.Popen[bytes]]) -> None:
    if starting.cancelled() or starting.exception() is not None:
        return
    child = starting.result()
    child.kill()
    child.wait()  # killed: at once


async def _ended(pid: int) -> None:
    """Return once process ``pid`` (a child not yet reaped) has ended: its pidfd turns readable."""
    loop = asyncio.get_running_loop()
    pidfd = os.pidfd_open(pid)
    ended: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(pidfd, readable)
    try:
        await ended
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


class LocalRunner:
    name = "local"

    async def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        try:
            return await run_process(argv, timeout)
        except FileNotFoundError:
            return CommandResult("", f"{argv[0]}: command not found", 127)
        except OSError as exc:
            raise TransportError(f"cannot run {argv[0]}: {exc}") from exc

    def stream(
        self, argv: Sequence[str], tick: float | None = None, feed: StreamInput | None = None
    ) -> AsyncGenerator[str, None]:
        return stream_process(argv, tick, feed=feed)

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
    proc = await spawn(
        argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=new_session,
    )
    return await collect(Child(proc), timeout, label or argv[0])


class Started(Protocol):
    """A command started, as run and stream see it: an asyncio subprocess (Child), or a session
    on an ssh master (openssh_mux.Session)."""

    stdin: asyncio.StreamWriter | None
    stdout: asyncio.StreamReader | None
    stderr: asyncio.StreamReader | None

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def stop(self) -> None:
        """End it now, and what it started, closing our ends of its pipes."""

    def release(self) -> None:
        """Free what is left of it, once it ended or as a last resort."""


class Child:
    """An asyncio subprocess as Started; ``group``: it leads a process group of its own, all
    of which ``stop`` kills (a sampler's pipeline)."""

    def __init__(self, proc: asyncio.subprocess.Process, group: bool = False) -> None:
        self.proc = proc
        self.group = group
        self.stdin, self.stdout, self.stderr = proc.stdin, proc.stdout, proc.stderr

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def wait(self) -> int:
        return await self.proc.wait()

    def stop(self) -> None:
        if self.proc.returncode is None or self.group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if self.group:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:
                    self.proc.kill()
        # A reader that stopped early leaves the pipe paused or unread, and another process
        # may hold its other end (an ssh master): close ours before waiting.
        _close_pipes(self.proc)

    def release(self) -> None:
        _close_pipes(self.proc, last_resort=True)


async def collect(started: Started, timeout: float, label: str) -> CommandResult:
    """What ``started`` prints until it ends, and its status (run_process)."""
    out, err = bytearray(), bytearray()

    async def pump(stream: asyncio.StreamReader | None, buf: bytearray) -> None:
        assert stream is not None
        while chunk := await stream.read(65536):
            buf.extend(chunk)
            if len(out) + len(err) > MAX_OUTPUT_BYTES:
                raise OutputTooLarge(f"{label} printed more than {MAX_OUTPUT_BYTES >> 20} MiB: stopped")

    try:
        await bounded(asyncio.gather(pump(started.stdout, out), pump(started.stderr, err), started.wait()), timeout)
    except asyncio.TimeoutError:
        raise CommandTimeout(f"{label} did not finish within {timeout:g} s") from None
    finally:
        if started.returncode is None:
            started.stop()
            try:
                with contextlib.suppress(asyncio.TimeoutError):
                    await bounded(started.wait(), 5.0)
            finally:
                started.release()
    return CommandResult(out.decode(errors="replace"), err.decode(errors="replace"), started.returncode or 0)


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
    feed: StreamInput | None = None,
) -> AsyncGenerator[str, None]:
    """Yield ``argv``'s stdout lines (without newlines) until it exits (stream_lines). With
    ``end``, stderr's tail is kept there (else discarded). With ``hold_stdin`` (and no ``tick``
    or ``feed``) stdin is a pipe kept open and silent until the end."""
    # Its own process group: a sampler is a pipeline (its loop into the delta filter, see
    # platforms/delta.py) whose members hold the pipe open; all of them go when it stops.
    proc = await spawn(
        argv,
        stdin=asyncio.subprocess.PIPE if tick is not None or hold_stdin or feed else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL if end is None else asyncio.subprocess.PIPE,
        start_new_session=_GROUPS,
        env=env,
    )
    lines = stream_lines(Child(proc, group=_GROUPS), tick, idle, line_limit, end, feed)
    async with contextlib.aclosing(lines):
        async for line in lines:
            yield line


async def stream_lines(
    started: Started,
    tick: float | None = None,
    idle: float | None = None,
    line_limit: int = MAX_OUTPUT_BYTES,
    end: StreamEnd | None = None,
    feed: StreamInput | None = None,
) -> AsyncGenerator[str, None]:
    """Yield ``started``'s stdout lines (without newlines) until it ends, then stop it. With
    ``tick``, its stdin gets a newline every ``tick`` s (Ticker) and EOF when the stream ends. No
    line for ``idle`` s raises asyncio.TimeoutError; a line longer than ``line_limit`` raises
    ValueError (Lines). With ``end``, the exit status and stderr's tail are kept there. With
    ``feed``, what is sent through it goes to its stdin."""
    # A line may be as long as a whole command's output (a host with hundreds of links
    # prints its addresses as one JSON line): MAX_OUTPUT_BYTES by default.
    stdin = started.stdin
    ticker = None if tick is None or stdin is None else Ticker(tick, functools.partial(_tick, stdin))
    if feed is not None and stdin is not None:
        feed.bind(functools.partial(_send, stdin))
    errors = None if end is None or started.stderr is None else asyncio.ensure_future(_tail(started.stderr, end.stderr))
    watch = None
    try:
        # Read in chunks and cut here: the idle bound (IdleWatch) is checked per chunk, not per
        # line. Cut in this generator itself, with no generator of lines under it: each line of
        # every frame is handed on by every generator it passes through.
        stdout = started.stdout
        assert stdout is not None
        split = Lines(line_limit)
        watch = None if idle is None else IdleWatch(stdout, idle)
        while data := await _chunk(stdout, watch, ticker, feed):
            for line in split.feed(data):
                yield line.decode(errors="replace")
        if split.rest():
            yield split.rest().decode(errors="replace")
        # EOF: the program is exiting on its own. Killing it now would reap it behind the
        # child watcher's back ("Unknown child process pid …" on stderr).
        with contextlib.suppress(asyncio.TimeoutError):
            await bounded(started.wait(), 2.0)
        if errors is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await bounded(asyncio.shield(errors), 1.0)
        if end is not None:
            end.status = started.returncode
    finally:
        if watch is not None:
            watch.stop()
        if ticker is not None:
            ticker.stop()
        if stdin is not None:
            stdin.close()  # EOF: the sampler's loop ends (platforms/delta.LOOP)
        if errors is not None:
            errors.cancel()
        try:
            started.stop()
            with contextlib.suppress(asyncio.TimeoutError):
                await bounded(started.wait(), 5.0)
        finally:
            # (or cancelled again while waiting): the transport would be left for the garbage
            # collector to close after the loop is gone. Close it here.
            started.release()


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


async def _chunk(
    stdout: asyncio.StreamReader, watch: IdleWatch | None, ticker: Ticker | None, feed: StreamInput | None
) -> bytes:
    """The next chunk of ``stdout`` (nothing at EOF), read under ``watch``; ``ticker`` and
    ``feed`` hear that the command printed."""
    if watch is not None:
        watch.since = watch.loop.time()
    data = await stdout.read(READ_CHUNK)
    if watch is not None:
        watch.since = None
    if data:
        if ticker is not None:
            ticker.heard = True
        if feed is not None:
            feed.heard()
    return data


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


async def _send(stdin: asyncio.StreamWriter, data: bytes) -> None:
    stdin.write(data)
    await stdin.drain()


def _tick(stdin: asyncio.StreamWriter) -> bool:
    # A pipe's writes do not block the event loop; one still buffered (the command is not
    # reading) holds the next tick back, and a closed pipe takes none: the stream's EOF says why.
    if stdin.is_closing() or stdin.transport.get_write_buffer_size():
        return False
    stdin.write(b"\n")
    return True
