"""Hostile or garbled answers during a test (issue 9.4, 9.7): an iperf3 JSON with a 400-digit
number, a PID line of "²", a kstat counter of 5,000 digits, a NaN or backwards clock. Each is a
ParseError or a test with verdict error and one line; none reaches the dashboard as an
exception."""

from __future__ import annotations

import pytest

from linkdeck.parsers import kstat
from linkdeck.parsers.iperf3 import parse_json
from linkdeck.parsers.parse_error import ParseError
from linkdeck.platforms.adapter import FRAME_BEGIN, FRAME_END, SECTION, SampleError, StreamingAdapter
from linkdeck.probe import session as hosts
from linkdeck.probe.failures import ProbeError
from linkdeck.probe.process import HostProcess
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.transport.local_runner import LocalRunner


def test_iperf3_json_with_a_400_digit_number_is_a_parse_error() -> None:
    doc = '{"start": {}, "end": {"sum_sent": {"bits_per_second": %s}}}' % ("9" * 400)
    with pytest.raises(ParseError, match="bits_per_second' is not a non-negative number: a 1329-bit number"):
        parse_json(doc)


def test_kstat_counter_of_5000_digits_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="net0:rbytes64 is not a number"):
        kstat.parse("link:0:net0:rbytes64\t" + "9" * 5000 + "\n", "illumos")


async def test_a_pid_line_of_superscript_two_is_refused() -> None:
    proc = HostProcess(LocalRunner(), "box", "echo ²", idle_s=5)
    with pytest.raises(ProbeError, match="expected a process id, got '²'"):
        await proc.start()


async def test_any_failure_inside_a_test_is_its_verdict_error_in_one_line(monkeypatch) -> None:
    async def broken(*args, **kwargs):
        raise OverflowError("int too large to convert to float")

    monkeypatch.setattr(hosts, "run_watched", broken)
    monkeypatch.setattr(hosts, "plan_pair", lambda *a, **k: ("192.0.2.2", "eth0"))

    async def opener(spec, settings, small_requests=False):
        class Adapter:
            os, runner = "linux", LocalRunner()

            async def release_stream(self):
                pass

            async def close(self):
                pass

        return Adapter()

    specs = {n: HostSpec(n, address=n) for n in ("a", "b")}
    session = hosts.TestSession(specs, Settings(), lambda h: None, lambda h, i: (), opener)
    outcome = await session.run_pair("a", "b")
    await session.close()
    assert outcome.verdict.status == "error"
    assert outcome.result.error == "unreadable answer (OverflowError: int too large to convert to float)"


class _Frames(StreamingAdapter):
    """Frames whose clock the test sets: the base class's clock check, not a parser's."""

    def __init__(self, times) -> None:
        super().__init__(self)
        self.times = times

    def script(self):
        return ""

    async def stream(self, argv, tick=None):
        for t in self.times:
            for line in (FRAME_BEGIN, SECTION + "t", str(t), FRAME_END):
                yield line

    def parse_frame(self, sections):
        from linkdeck.core.model import HostSample

        return HostSample(time=float(sections["t"]), interfaces={}, counters={})


async def test_a_nan_or_backwards_clock_is_a_bad_frame() -> None:
    got = [s async for s in _Frames([10.0, float("nan"), 11.0, 9.5, float("inf"), 12.0]).samples(1.0)]
    assert [getattr(s, "time", None) for s in got] == [10.0, None, 11.0, None, None, 12.0]
    assert all("clock" in s.message for s in got if isinstance(s, SampleError))


def test_a_nan_uptime_is_a_parse_error() -> None:
    from linkdeck.platforms.linux import LinuxAdapter

    tick = "/proc/uptime:nan 1.0\n/proc/net/dev:Inter-|\n"
    with pytest.raises(ParseError, match="the uptime is not a number: 'nan'"):
        LinuxAdapter(None).parse_frame({"tick": tick})


async def test_a_frame_without_end_is_cut_off_in_bytes_too() -> None:
    from linkdeck.platforms.adapter import MAX_FRAME_BYTES, read_frames
    from linkdeck.transport.runner import ConnectionLost

    async def lines():
        yield FRAME_BEGIN
        yield SECTION + "x"
        while True:  # few lines, each long: the line cap alone would never trip
            yield "y" * 1_000_000

    with pytest.raises(ConnectionLost, match=r"ran past 200000 lines or 32 MiB"):
        async for _ in read_frames(lines()):
            pass
    assert MAX_FRAME_BYTES == 32 << 20


class _SlowBigFrame(_Frames):
    """One frame far over the inline budget whose parse takes half a second of CPU."""

    def __init__(self) -> None:
        super().__init__([1.0])
        self.parsed_on: list[str] = []

    async def stream(self, argv, tick=None):
        yield FRAME_BEGIN
        yield SECTION + "t"
        yield "1.0"
        yield SECTION + "big"
        for _ in range(400):
            yield "x" * 1000
        yield FRAME_END

    def parse_frame(self, sections):
        import threading
        import time

        self.parsed_on.append(threading.current_thread().name)
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:  # a slow parse holds the GIL in bursts, not for good
            sum(range(1000))
        return super().parse_frame(sections)


async def test_a_huge_frame_is_parsed_off_the_event_loop() -> None:
    """Issue 9.5: a frame over the budget must not stall the other hosts on the loop."""
    import asyncio
    import threading

    from linkdeck.platforms.adapter import INLINE_FRAME_BYTES

    adapter = _SlowBigFrame()
    ticks = 0
    done = False

    async def other_host() -> None:
        nonlocal ticks
        while not done:
            await asyncio.sleep(0.01)
            ticks += 1

    other = asyncio.create_task(other_host())
    got = [s async for s in adapter.samples(1.0)]
    done = True
    await other
    assert INLINE_FRAME_BYTES < 400_000 and [s.time for s in got] == [1.0]
    assert adapter.parsed_on and adapter.parsed_on[0] != threading.main_thread().name
    assert ticks >= 10  # the loop kept turning (about 50 turns of 10 ms in the half second)


async def test_a_local_line_longer_than_64_kb_is_streamed_whole() -> None:
    # A 602-link host's `ip -j addr` is one 260 KB line; asyncio's default 64 KiB line limit
    # stopped the local runner's stream there (a local BSD, macOS or illumos host uses it).
    lines = [
        line
        async for line in LocalRunner().stream(["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; echo; echo after"])
    ]
    assert [len(line) for line in lines] == [300000, 5] and lines[1] == "after"


async def test_text_outside_frames_is_bounded_and_its_first_line_said() -> None:
    """A host whose sampler is replaced by endless output stayed "connecting" while linkdeck
    read it forever: past MAX_UNFRAMED_BYTES before the first frame, or between two, the
    stream ends saying what it was."""
    from linkdeck.platforms.adapter import MAX_UNFRAMED_BYTES, NotSamplerOutput, read_frames

    read = [0]

    async def lines(frames_first: int):
        for _ in range(frames_first):
            yield FRAME_BEGIN
            yield SECTION + "tick"
            yield "1"
            yield FRAME_END
        yield ""
        yield "\x1b[2Jnot a sampler " + "x" * 200
        while True:
            read[0] += 1
            yield "junk"

    for frames_first in (0, 2):
        read[0] = 0
        got = []
        with pytest.raises(NotSamplerOutput) as caught:
            async for frame in read_frames(lines(frames_first)):
                got.append(frame)
        assert len(got) == frames_first
        assert (
            str(caught.value)
            == "sent 10 MB that is not linkdeck's sampler output: “\\x1b[2Jnot a sampler "
            + "x" * (80 - len("\x1b[2Jnot a sampler "))
            + "…”"
        )
        # stopped at the bound in bytes, not later
        assert read[0] * len("junk\n") == pytest.approx(MAX_UNFRAMED_BYTES, abs=300)


async def test_a_banner_under_the_bound_costs_nothing_and_each_frame_resets_it() -> None:
    from linkdeck.platforms.adapter import MAX_UNFRAMED_BYTES, read_frames

    chunk = "b" * 999
    banner = MAX_UNFRAMED_BYTES // 1000 - 10  # lines just under the bound, around each frame

    async def lines():
        for _ in range(3):
            for _ in range(banner):
                yield chunk
            yield FRAME_BEGIN
            yield SECTION + "tick"
            yield "1"
            yield FRAME_END

    assert [f async for f in read_frames(lines())] == [{"tick": "1\n"}] * 3
