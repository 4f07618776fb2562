"""What every platform adapter provides, and the framing of streamed samples.

A remote adapter runs one POSIX ``sh`` loop per host that prints a framed sample every
interval; the frames are cut here and handed to the adapter's parsers as they arrive, so a
host costs one channel and zero round trips per tick.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import math
import re
import shlex
import time
from dataclasses import dataclass
from typing import AsyncGenerator, AsyncIterator, Callable, Collection, Iterable, Mapping

from ..core.model import Counters, HostSample, IfaceRecord, replaced
from ..core.units import printable
from ..parsers.parse_error import ParseError
from ..settings.limits import DEFAULT_FACTS_EVERY
from ..transport.runner import ConnectionLost, Runner, StreamInput, TransportError
from .delta import DeltaError, expand
from .frames import (  # the adapters import them from here
    FRAME_BEGIN as FRAME_BEGIN,
    FRAME_END as FRAME_END,
    SECTION as SECTION,
    section_header as section_header,
)


@dataclass(frozen=True, slots=True)
class SampleError:
    """A frame that could not be read: shown on the host's row; the stream goes on."""

    message: str


class CountersUnavailable(Exception):
    """A one-shot counter read failed; the message says why."""


COUNTERS_TIMEOUT_S = 5.0
# After a path MTU black hole ate a request of the sampler's kilobytes: every command under this.
PIECE_LIMIT = 480
_TEMP_PATH = re.compile(r"/[A-Za-z0-9_./-]{1,200}")


class Adapter(abc.ABC):
    """Produces HostSamples for one host through its runner, and reads its counters on
    demand (a test brackets its transfer with two reads)."""

    os: str = "unknown"  # each adapter's usual OS, when the caller names none
    # The host's own address linkdeck's session arrived at (its $SSH_CONNECTION), when known.
    reached_at: str | None = None

    # Every adapter is built the same way (platforms/detect.make_adapter, a replay): the
    # runner (None for a replay), the OS in oses.OSES's words, the OS's own description of
    # itself, and the slow facts' period in ticks (Settings.facts_every, checked there).
    def __init__(
        self,
        runner: Runner | None = None,
        os_name: str | None = None,
        os_detail: str | None = None,
        facts_every: int = DEFAULT_FACTS_EVERY,
    ) -> None:
        self.runner = runner
        self.os = os_name or type(self).os
        self.os_detail = os_detail
        self.facts_every = facts_every
        # The recording hook (recording/recorder.py): called with each raw read, as JSON-ready
        # data, before it is parsed; ``replayed`` turns the same data back into a sample.
        self.on_read: Callable[[dict], None] | None = None
        self.heard = Heard()  # what its samples' stream said last, once it ended

    @abc.abstractmethod
    def samples(self, interval: float) -> AsyncIterator[HostSample | SampleError]:
        """Yield one sample per ``interval`` seconds until the transport fails."""

    def replayed(self, read: Mapping, received: float) -> HostSample | SampleError:
        """The sample a recorded raw read (what ``on_read`` was given, received at
        ``received``) makes, through the same parsing as when it was read live."""
        return SampleError(f"no replay for OS {self.os!r}")

    def primer(self) -> dict | None:
        """The last raw read that carried the slow facts: a recording started mid-stream
        begins with it, so its replay knows what the live parser knew."""
        return None

    def carries_facts(self, read: Mapping) -> bool:
        """Whether a raw read (as ``on_read`` was given it) carries the slow facts, told
        without parsing it: a replay that skips ahead keeps the last such read."""
        return False

    async def read_counters(self, names: Collection[str]) -> dict[str, Counters]:
        """The running totals of the interfaces ``names``, as of now, with one command on the
        open connection. Interfaces the host does not list are left out; raises
        CountersUnavailable saying why."""
        raise CountersUnavailable(f"no one-shot counter read for OS {self.os!r}")

    async def release_stream(self) -> None:
        """Let go of what this adapter holds open for sampling, keeping its connection: for one
        that only runs commands (a test's end, probe/session.EndPool). Nothing, here."""
        return None

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.close()


async def run_once(runner: Runner | None, argv: Collection[str]) -> str:
    """``argv``'s output for a one-shot read; CountersUnavailable when it failed and said
    nothing on stdout, or when there is no connection to run it on (a replayed host)."""
    if runner is None:
        raise CountersUnavailable("a recorded host: no connection to read its counters now")
    try:
        res = await runner.run(list(argv), timeout=COUNTERS_TIMEOUT_S)
    except TransportError as exc:
        raise CountersUnavailable(f"reading the counters: {exc}") from None
    if not res.ok and not res.stdout.strip():
        said = (res.stderr.strip().splitlines() or [f"exit status {res.status}"])[-1]
        raise CountersUnavailable(f"{shlex.join(argv)}: {said}")
    return res.stdout


def parsed(parse: Callable[[str], list[IfaceRecord]], text: str) -> list[IfaceRecord]:
    try:
        return parse(text)
    except ParseError as exc:
        raise CountersUnavailable(str(exc)) from None


def counters_of(records: list[IfaceRecord], names: Collection[str]) -> dict[str, Counters]:
    wanted = set(names)
    return {r.name: r.counters for r in records if r.name in wanted and r.counters is not None}


@dataclass(frozen=True, slots=True)
class OpenedStream:
    """A stream already running on the host, waiting for its sampler: the one whose first
    lines told which OS it runs (platforms/detect.streamed_adapter). ``feed`` sends to its
    stdin; ``tick``: the interval its ticks come at; ``sampling``: it already runs this
    adapter's sampler (the one it carried for the OS it guessed), so nothing is sent."""

    lines: AsyncGenerator[str, None]
    feed: StreamInput
    tick: float
    sampling: bool = False


class StreamingAdapter(Adapter):
    """An adapter whose host prints framed samples from one long-running ``sh`` loop."""

    # Set by the collector once a request vanished after login (a path MTU black hole):
    # the sampler then reaches the host in pieces (upload_in_pieces).
    small_requests = False
    # The stream its detection ran in, until ``samples`` sends it the sampler (or close ends it).
    opened: OpenedStream | None = None

    # The sections every frame has; a frame with any other carries slow facts.
    TICK_SECTIONS: frozenset[str] = frozenset()
    # Slow facts the sampler sends only in some slow-facts frames (its full frames, see
    # delta.py, or a slower cadence of its own), by section name (the word before a space:
    # "ethtool_k eth0"): every slow-facts frame is parsed and recorded with them as last sent.
    KEPT_SECTIONS: frozenset[str] = frozenset()

    def __init__(
        self,
        runner: Runner | None = None,
        os_name: str | None = None,
        os_detail: str | None = None,
        facts_every: int = DEFAULT_FACTS_EVERY,
    ) -> None:
        super().__init__(runner, os_name, os_detail, facts_every)
        self._last_time: float | None = None  # the host clock of the stream's last sample
        self._facts_frame: dict[str, str] | None = None
        # When the frame being parsed arrived (time.monotonic() live, the recorded time in a
        # replay): the sample time of a host whose sampler prints no clock of its own.
        self.received: float | None = None
        # No tick section is in a kept group (with_kept's groups: the word before a space).
        self._ticks_keep_nothing = self.KEPT_SECTIONS.isdisjoint(k.partition(" ")[0] for k in self.TICK_SECTIONS)

    @abc.abstractmethod
    def script(self) -> str:
        """The POSIX sh program (built from fixed text only) that prints a frame at once and
        another for every newline on its stdin, and ends at EOF (delta.LOOP)."""

    @abc.abstractmethod
    def parse_frame(self, sections: Mapping[str, str]) -> HostSample:
        """Turn one frame's sections into a sample; raise ParseError on garbled output."""

    async def samples(self, interval: float) -> AsyncIterator[HostSample | SampleError]:
        # Closing this generator closes the stream at once (its sampler process or channel),
        # not whenever the garbage collector gets to the inner generators.
        self._last_time = None
        self.heard = heard = Heard()  # this stream's
        base: dict[str, list[str]] = {}  # each section as last received: what deltas build on
        kept: dict[str, str] = {}  # the KEPT_SECTIONS as last sent
        runner = self.runner
        if runner is None:
            raise TransportError("a recorded host: no connection to sample")
        opened, self.opened = self.opened, None
        if opened is not None and opened.tick != interval:  # ticking at another pace: start afresh
            await opened.lines.aclose()
            opened = None
        if opened is None:
            stream = runner.stream(["sh", "-c", await self._sampler(runner)], tick=interval)
        else:
            stream = opened.lines
        async with contextlib.aclosing(stream) as lines:
            if opened is not None and not opened.sampling:  # it runs the one line it is sent, in its own shell
                await opened.feed.send((await self._sampler(runner) + "\n").encode())
            async with contextlib.aclosing(read_frames(lines, heard)) as frames:
                async for sent in frames:
                    received = time.monotonic()
                    try:
                        frame = expand(sent, base)
                    except DeltaError as exc:
                        yield SampleError(f"{exc}: waiting for the next full frame")
                        continue
                    kept, frame = self.with_kept(kept, frame)
                    wire = frame_bytes(sent)
                    if self.on_read is not None:
                        self.on_read({"f": frame, "w": wire})
                    # The parsers are linear, but a host with a thousand interfaces (or a
                    # hostile one) sends megabytes, and every other host waits while this loop
                    # parses: a large frame parses in a thread. The next frame waits for it, so
                    # the adapter's state is not shared.
                    if sum(map(len, frame.values())) > INLINE_FRAME_BYTES:
                        yield await asyncio.to_thread(self.sample_of, frame, received, wire)
                    else:
                        yield self.sample_of(frame, received, wire)

    async def _sampler(self, runner: Runner) -> str:
        """The sampler as the one line of sh it is: the script itself, or (sent in pieces, after
        a black hole) the line that runs the file the pieces made. Either runs in the shell it
        is given to, which leads the session's process group: the sampler's filter ends that
        group when the ticks end (scripts/filter.sh)."""
        script = self.script()
        return run_uploaded(await upload_in_pieces(runner, script)) if self.small_requests else script

    async def release_stream(self) -> None:
        """End the stream detection opened (``opened``): on a Linux host it already samples."""
        opened, self.opened = self.opened, None
        if opened is not None:
            await opened.lines.aclose()

    async def close(self) -> None:
        await self.release_stream()
        await super().close()

    def with_kept(self, kept: dict[str, str], frame: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """(the KEPT_SECTIONS as last sent, after ``frame``; the frame to record and parse).
        A slow-facts frame is recorded and parsed whole: with the sections its sampler sends
        only in some of them, as last sent. A group of sections sent (every link's offloads)
        replaces the one kept, so a link gone takes its own with it."""
        if frame.keys() <= self.TICK_SECTIONS and self._ticks_keep_nothing:
            return kept, frame  # a tick's frame (most of them): nothing kept changes
        groups = {k.partition(" ")[0] for k in frame} & self.KEPT_SECTIONS
        if groups:
            kept = {
                k: v
                for k, v in {**kept, **frame}.items()
                if k.partition(" ")[0] in self.KEPT_SECTIONS and (k in frame or k.partition(" ")[0] not in groups)
            }
        return kept, frame if frame.keys() <= self.TICK_SECTIONS else {**kept, **frame}

    def replayed(self, read: Mapping, received: float) -> HostSample | SampleError:
        frame = read.get("f")
        if not isinstance(frame, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in frame.items()):
            return SampleError("a recorded frame that is not a map of section texts")
        wire = read.get("w")  # what it took on the wire (a delta frame's bytes; older files: none)
        return self.sample_of(
            frame, received, wire if isinstance(wire, int) and not isinstance(wire, bool) and wire >= 0 else None
        )

    def primer(self) -> dict | None:
        return None if self._facts_frame is None else {"f": self._facts_frame}

    def carries_facts(self, read: Mapping) -> bool:
        frame = read.get("f")
        return isinstance(frame, dict) and not frame.keys() <= self.TICK_SECTIONS

    def sample_of(self, frame: dict[str, str], received: float, wire: int | None = None) -> HostSample | SampleError:
        """One frame, live or recorded, through the parsers; a frame they cannot read, or one
        whose clock went back, is a SampleError. ``wire``: the bytes it took on the wire (a
        delta frame's), when not the frame's own size."""
        self.received = received
        if not frame.keys() <= self.TICK_SECTIONS:
            self._facts_frame = frame
        try:
            sample = self.parse_frame(frame)
        except ParseError as exc:
            return SampleError(str(exc))
        except (ValueError, ArithmeticError, KeyError, IndexError, TypeError) as exc:
            # a parser that missed a case: one bad frame, not a torn-down connection
            return SampleError(f"unreadable frame ({type(exc).__name__}: {exc})")
        # One stream is one boot of one host: its clock only moves forward. A NaN or a step
        # back would poison every rate and window after it.
        last = self._last_time
        if not math.isfinite(sample.time) or (last is not None and sample.time < last):
            return SampleError(f"the host's clock read {sample.time!r} after {last!r}: frame dropped")
        self._last_time = sample.time
        return replaced(sample, {"wire_bytes": frame_bytes(frame) if wire is None else wire})


def frame_bytes(frame: Mapping[str, str]) -> int:
    """The size of a frame as the sampler printed it: its sections and the marker lines."""
    size = _MARKER_BYTES
    for name, body in frame.items():
        size += _SECTION_BYTES + len(name) + (len(body) if body.isascii() else len(body.encode()))
    return size


_MARKER_BYTES = len(FRAME_BEGIN) + len(FRAME_END) + 2
_SECTION_BYTES = len(SECTION) + 1


def run_uploaded(path: str) -> str:
    """The line of sh that reads the file upload_in_pieces made, removes it and runs it."""
    return f's=$(cat {shlex.quote(path)}) && rm -f {shlex.quote(path)} && eval "$s"'


async def upload_in_pieces(runner: Runner, script: str) -> str:
    """Write ``script`` to a private temporary file on the host with commands under
    PIECE_LIMIT bytes each; return its path (run_uploaded runs it). ConnectionLost when the
    host does not take it."""
    made = await runner.run(["sh", "-c", "umask 077; mktemp"], timeout=COUNTERS_TIMEOUT_S)
    path = made.stdout.strip()
    if not made.ok or not _TEMP_PATH.fullmatch(path):
        raise ConnectionLost(
            f"cannot send the sampler in pieces: mktemp said {(made.stdout + made.stderr).strip()[:80]!r}"
        )
    start = 0
    while start < len(script):
        size = 400
        while True:  # quoting can grow a piece: shrink it until the command fits
            argv = ["sh", "-c", 'printf %s "$1" >> "$2"', "sh", script[start : start + size], path]
            if len(shlex.join(argv)) < PIECE_LIMIT or size <= 50:
                break
            size -= 50
        res = await runner.run(argv, timeout=COUNTERS_TIMEOUT_S)
        if not res.ok:
            raise ConnectionLost(
                f"cannot send the sampler in pieces: {(res.stderr.strip() or f'exit status {res.status}')[:80]}"
            )
        start += size
    return path


# No host has this many interface lines in one sample; a stream that never ends its frame is
# not our sampler talking, and must not grow without bound.
MAX_FRAME_LINES = 200_000
MAX_FRAME_BYTES = 32 << 20  # a thousand interfaces' frame is about a megabyte
INLINE_FRAME_BYTES = 256 << 10  # parsed on the event loop up to here (a few ms), in a thread above
# Outside a frame our sampler prints a line or two, a login a banner: this much there, before
# the first frame or between two, is something else answering in its place.
MAX_UNFRAMED_BYTES = 10_000_000
SHOWN_LINE_CHARS = 80  # of the first such line, in the error that says so
SHOWN_LAST_CHARS = 100  # of the last line a stream sent before it ended


class NotSamplerOutput(ConnectionLost):
    """The host sent MAX_UNFRAMED_BYTES outside any frame: whatever answers there is not
    linkdeck's sampler (a login shell or PATH that runs something else)."""

    def __init__(self, first_line: str) -> None:
        first_line = first_line or "(blank lines only)"
        shown = printable(first_line[:SHOWN_LINE_CHARS]) + ("…" if len(first_line) > SHOWN_LINE_CHARS else "")
        super().__init__(f"sent {MAX_UNFRAMED_BYTES / 1e6:g} MB that is not linkdeck's sampler output: “{shown}”")


class Heard:
    """What a stream said last, once it ended: its last non-empty line, unless that ended a
    whole frame (the host's last words when its sampler stops, such as a shell's error)."""

    def __init__(self) -> None:
        self.last: str | None = None

    def ended(self) -> str:
        """The words for a stream that ended: what it said last, escaped and cut."""
        if not self.last:
            return "the sampling stream ended"
        cut = "…" if len(self.last) > SHOWN_LAST_CHARS else ""
        return f"the sampling stream ended after: {printable(self.last[:SHOWN_LAST_CHARS])}{cut}"


async def read_frames(lines: AsyncIterator[str], heard: Heard | None = None) -> AsyncGenerator[dict[str, str], None]:
    """Cut a line stream into frames of named sections; text outside frames is ignored, up to
    MAX_UNFRAMED_BYTES in a row (NotSamplerOutput past that). Once the stream ends, ``heard``
    holds what it said last."""
    sections: dict[str, list[str]] | None = None
    current: list[str] | None = None
    count = size = 0
    first: str | None = None  # the first non-empty line of the text outside frames
    last = ""
    async for line in lines:
        last = line or last
        count += 1
        size += len(line) + 1
        if sections is None:
            if line == FRAME_BEGIN:
                sections, current, count, size, first = {}, None, 0, 0, None
                continue
            # login banners, motd and the like before the first frame; nothing between frames
            if first is None and line.strip():
                first = line
            if size > MAX_UNFRAMED_BYTES:
                raise NotSamplerOutput(first or "")
            continue
        if count > MAX_FRAME_LINES or size > MAX_FRAME_BYTES:
            raise ConnectionLost(
                f"a sample frame ran past {MAX_FRAME_LINES} lines or {MAX_FRAME_BYTES >> 20} MiB without its end marker"
            )
        if line == FRAME_BEGIN:
            sections, current, count, size = {}, None, 0, 0
        elif line == FRAME_END:
            count = size = 0
            yield {name: "\n".join(body) + ("\n" if body else "") for name, body in sections.items()}
            sections, current = None, None
        elif line.startswith(SECTION):
            current = sections.setdefault(line[len(SECTION) :].strip(), [])
        elif current is not None:
            current.append(line)
    if heard is not None:
        heard.last = None if last == FRAME_END else last


def split_frames(lines: Iterable[str]) -> list[dict[str, str]]:
    """Synchronous twin of :func:`read_frames`, for parsing a recorded stream: each frame
    whole, as the adapter receives it (delta frames expanded)."""
    base: dict[str, list[str]] = {}

    async def gen() -> AsyncIterator[str]:
        for line in lines:
            yield line

    async def collect() -> list[dict[str, str]]:
        return [expand(f, base) async for f in read_frames(gen())]

    return asyncio.run(collect())
