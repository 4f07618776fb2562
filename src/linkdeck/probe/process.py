"""A long-running command on a host whose PID we know, so it can be killed by PID.

The command is ``sh -c 'echo $$; exec …'`` over the runner's ``stream``: the first line is
the shell's PID, which ``exec`` hands to the program. Closing an SSH channel does not stop a
remote program, so cancel and timeout paths kill it explicitly, and only while its output is
still open (after that the PID may belong to someone else).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import AsyncGenerator, AsyncIterator, Callable, Sequence

from ..transport.runner import MAX_OUTPUT_BYTES, Runner, TransportError, bounded
from .failures import ProbeError
from .templates import kill_script

KILL_TIMEOUT_S = 8.0


def open_stream(runner: Runner, argv: Sequence[str], idle_s: float) -> AsyncGenerator[str, None]:
    """``runner.stream`` with an idle allowance when the runner has one (an SSH stream that
    prints nothing for a whole test is not a dead connection)."""
    try:
        return runner.stream(argv, idle_timeout=idle_s)  # type: ignore[call-arg]
    except TypeError:
        return runner.stream(argv)


_PID = re.compile(r"[0-9]{1,10}")


class HostProcess:
    def __init__(
        self, runner: Runner, host: str, script: str, idle_s: float, on_line: Callable[[str], None] | None = None
    ) -> None:
        """``on_line`` sees each line as it arrives (after the PID line)."""
        self.runner = runner
        self.on_line = on_line
        self.host = host
        self.script = script
        self.idle_s = idle_s
        self.pid: int | None = None
        self.lines: list[str] = []
        self.ended = asyncio.Event()
        self._stream: AsyncGenerator[str, None] | None = None
        self._reader: asyncio.Task | None = None
        self._new_line = asyncio.Event()
        self._error: BaseException | None = None
        self._cut = False

    async def start(self) -> None:
        """Start it and read its PID line."""
        self._stream = open_stream(self.runner, ["sh", "-c", self.script], self.idle_s)
        try:
            first = await self._stream.__anext__()
        except StopAsyncIteration:
            self.ended.set()
            raise ProbeError(f"{self.host}: sh printed nothing") from None
        except TransportError as exc:
            self.ended.set()
            raise ProbeError(f"{self.host}: {exc}") from None
        if not _PID.fullmatch(first.strip()):  # "²" passes isdigit(), then int() raises
            await self._close_stream()
            raise ProbeError(f"{self.host}: expected a process id, got {first[:60]!r}")
        self.pid = int(first.strip())
        self._reader = asyncio.create_task(self._read(self._stream), name=f"iperf3:{self.host}:{self.pid}")

    async def _read(self, stream: AsyncIterator[str]) -> None:
        size = 0
        try:
            async for line in stream:
                size += len(line) + 1
                if size > MAX_OUTPUT_BYTES:  # iperf3's JSON is kilobytes; this is not iperf3
                    self._error = TransportError(f"printed more than {MAX_OUTPUT_BYTES >> 20} MiB: output cut off")
                    self.lines.clear()
                    self._cut = True  # still running: stop() kills it
                    break
                self.lines.append(line)
                self._new_line.set()
                if self.on_line is not None:
                    self.on_line(line)
        except TransportError as exc:
            self._error = exc
        finally:
            self.ended.set()
            self._new_line.set()

    async def wait_for_line(self, predicate, timeout: float) -> str | None:
        """The first line (seen so far or arriving) matching ``predicate``; None when the
        program ends or ``timeout`` passes first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        seen = 0
        while True:
            for line in self.lines[seen:]:
                if predicate(line):
                    return line
            seen = len(self.lines)
            if self.ended.is_set():
                return None
            left = deadline - loop.time()
            if left <= 0:
                return None
            self._new_line.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await bounded(self._new_line.wait(), left)

    async def output(self) -> str:
        """Everything it printed after the PID, once it has ended."""
        await self.ended.wait()
        if self._error is not None and not self.lines:
            raise ProbeError(f"{self.host}: {self._error}")
        return "\n".join(self.lines)

    async def stop(self, grace_s: float = 0.0) -> None:
        """Kill it by PID if it is still running (after ``grace_s`` to end on its own), then
        release the stream. Never raises."""
        if grace_s and not self.ended.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await bounded(asyncio.shield(self.ended.wait()), grace_s)
        if self.pid is not None and (self._cut or not self.ended.is_set()):
            with contextlib.suppress(Exception):
                await self.runner.run(["sh", "-c", kill_script(self.pid)], timeout=KILL_TIMEOUT_S)
        if self._reader is not None and not self._reader.done():
            # Give the output a moment to close after the kill, then stop reading.
            with contextlib.suppress(Exception, asyncio.TimeoutError):
                await bounded(asyncio.shield(self.ended.wait()), 1.0)
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._reader is None or self._cut:
            await self._close_stream()

    async def _close_stream(self) -> None:
        if self._stream is not None:
            with contextlib.suppress(Exception):
                await self._stream.aclose()
