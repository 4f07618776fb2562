"""Runs commands on this machine with asyncio subprocesses."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
from typing import AsyncIterator, Sequence

from .runner import MAX_OUTPUT_BYTES, CommandResult, CommandTimeout, Ticker, TransportError, bounded

_GROUPS = hasattr(os, "killpg")  # POSIX: a stream's processes are one group


class LocalRunner:
    name = "local"

    async def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        try:
            proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except FileNotFoundError:
            return CommandResult("", f"{argv[0]}: command not found", 127)
        except OSError as exc:
            raise TransportError(f"cannot run {argv[0]}: {exc}") from exc
        try:
            out, err = await bounded(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise CommandTimeout(f"{argv[0]} did not finish within {timeout:g} s") from None
        return CommandResult(out.decode(errors="replace"), err.decode(errors="replace"), proc.returncode or 0)

    async def stream(self, argv: Sequence[str], tick: float | None = None) -> AsyncIterator[str]:
        # asyncio's default 64 KiB line limit would stop the stream at one long line (a host
        # with hundreds of links prints its addresses as one JSON line); commands are bounded
        # at MAX_OUTPUT_BYTES everywhere else, so a line may be that long too.
        # Its own process group: a sampler is a pipeline (its loop into the delta filter, see
        # platforms/delta.py) whose members hold the pipe open; all of them go when it stops.
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=None if tick is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=MAX_OUTPUT_BYTES,
            start_new_session=_GROUPS,
        )
        ticker = None if tick is None or proc.stdin is None else Ticker(tick, functools.partial(_tick, proc.stdin))
        try:
            assert proc.stdout is not None
            async for raw in proc.stdout:
                if ticker is not None:
                    ticker.heard = True
                yield raw.decode(errors="replace").rstrip("\n")
            # EOF: the program is exiting on its own. Killing it now would reap it behind the
            # child watcher's back ("Unknown child process pid …" on stderr).
            with contextlib.suppress(asyncio.TimeoutError):
                await bounded(proc.wait(), 2.0)
        finally:
            if ticker is not None:
                ticker.stop()
            if proc.stdin is not None:
                proc.stdin.close()  # EOF: the sampler's loop ends (platforms/delta.LOOP)
            try:
                if proc.returncode is None or _GROUPS:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        if _GROUPS:
                            os.killpg(proc.pid, signal.SIGKILL)
                        else:
                            proc.kill()
                    await proc.wait()
            finally:
                # A reader that stopped early (or was cancelled again while waiting) leaves the
                # pipe paused or unread: its EOF is never seen and the transport would be left
                # for the garbage collector to close after the loop is gone. Close it here.
                transport = getattr(proc, "_transport", None)
                if transport is not None:
                    transport.close()

    async def close(self) -> None:
        return None


def _tick(stdin: asyncio.StreamWriter) -> bool:
    # A pipe's writes do not block the event loop; one still buffered (the command is not
    # reading) holds the next tick back, and a closed pipe takes none: the stream's EOF says why.
    if stdin.is_closing() or stdin.transport.get_write_buffer_size():
        return False
    stdin.write(b"\n")
    return True
