"""Delta frames (issue 20 §1): the sampler's awk sends only what changed, the receiver rebuilds
the whole frame; a receiver without the base says so and is whole again at the next full
frame; a recording of a delta stream replays to the same samples."""

from __future__ import annotations

import asyncio
import random
import subprocess

import pytest

from linkdeck.core.rates import RateTracker
from linkdeck.platforms import delta
from linkdeck.platforms.adapter import FRAME_BEGIN, FRAME_END, SECTION, SampleError, read_frames
from linkdeck.platforms.linux import LinuxAdapter
from linkdeck.transport.local_runner import LocalRunner


def through_awk(frames: list[tuple[bool, dict[str, list[str]]]]) -> list[str]:
    """The lines the sampler's real awk filter sends for these (full?, sections) frames."""
    text = []
    for full, sections in frames:
        text.append(FRAME_BEGIN)
        for name, lines in sections.items():
            text.append(SECTION + name)
            if full:
                text.append(delta.FULL)
            text += lines
        text.append(FRAME_END)
    script = delta.piped("cat")
    out = subprocess.run(["sh", "-c", script], input="\n".join(text) + "\n", capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


async def _frames(lines: list[str]) -> list[dict[str, str]]:
    async def gen():
        for line in lines:
            yield line

    return [f async for f in read_frames(gen())]


def frames_of(lines: list[str]) -> list[dict[str, str]]:
    return asyncio.run(_frames(lines))


def whole(sections: dict[str, list[str]]) -> dict[str, str]:
    return {k: "\n".join(v) + ("\n" if v else "") for k, v in sections.items()}


def test_random_streams_round_trip_through_the_real_awk():
    """Sections that grow, shrink, vanish and come back, lines that change or stay, full
    frames now and then (constructed): every frame rebuilds to exactly what was printed."""
    rng = random.Random(20)
    frames: list[tuple[bool, dict[str, list[str]]]] = []
    names = [f"cali{i:011x}" for i in range(40)]
    for tick in range(60):
        sections: dict[str, list[str]] = {}
        count = rng.choice((40, 40, 40, 38, 41))
        sections["tick"] = [f"/proc/uptime:{1000 + tick}.00 5.0"] + [
            f"/proc/net/dev:{n}: {rng.choice((7, 7, 7, tick))} 1 0 0 0 0 0 0 9 2 0 0 0 0 0 0" for n in names[:count]
        ]
        if tick % 5 == 0:
            sections["attrs"] = [f"/sys/class/net/{n}/mtu:{rng.choice((1500, 1500, 9000))}" for n in names]
        if tick % 7 == 0:
            sections["empty"] = []
        frames.append((tick % 25 == 0, sections))
    got = frames_of(through_awk(frames))
    assert len(got) == len(frames)
    base: dict[str, list[str]] = {}
    runs = []
    for (_, sent), frame in zip(frames, got):
        assert delta.expand(frame, base) == whole(sent)
        runs.append(sum(body.count(delta.SAME) for body in frame.values()))
    assert runs[0] == runs[25] == runs[50] == 0  # full frames are sent whole
    assert all(runs[i] for i in range(1, 25))  # the others reuse what did not change


def test_a_full_frame_is_sent_whole_and_an_unchanged_frame_as_runs():
    sections = {"tick": ["a:1", "b:2", "c:3"]}
    lines = through_awk([(True, sections), (False, sections), (True, sections)])
    first, second, third = frames_of(lines)
    assert first == third == whole(sections)
    assert second == {"tick": delta.SAME + "3\n"}


def test_a_delta_without_its_base_is_an_error_until_a_full_frame():
    base: dict[str, list[str]] = {"other": ["x"]}
    with pytest.raises(delta.DeltaError, match="section 'tick'"):
        delta.expand({"tick": "up:1\n" + delta.SAME + "2\n"}, base)
    assert base == {}  # nothing is built on a base that went wrong
    assert delta.expand({"tick": "up:1\nb:2\n"}, base) == {"tick": "up:1\nb:2\n"}
    assert delta.expand({"tick": "up:2\n" + delta.SAME + "1\n"}, base) == {"tick": "up:2\nb:2\n"}


def test_a_stream_whose_base_is_lost_says_so_and_recovers():
    """The adapter's own receiving loop: a delta it cannot rebuild is one SampleError, not a
    sample built on stale lines; the next full frame is a sample again."""

    class Lines:
        def stream(self, argv, tick=None):
            async def flat():
                for line in (FRAME_BEGIN, SECTION + "tick", "/proc/uptime:5.00 1.0", delta.SAME + "9", FRAME_END):
                    yield line
                for line in (
                    FRAME_BEGIN,
                    SECTION + "tick",
                    "/proc/uptime:7.00 1.0",
                    "/proc/net/dev:lo: 1 2 0 0 0 0 0 0 1 2 0 0 0 0 0 0",
                    FRAME_END,
                ):
                    yield line

            return flat()

        async def close(self):
            pass

    adapter = LinuxAdapter(runner=Lines())

    async def collect():
        out = []
        async for item in adapter.samples(1.0):
            out.append(item)
        return out

    first, second = asyncio.run(collect())
    assert isinstance(first, SampleError) and "waiting for the next full frame" in first.message
    assert not isinstance(second, SampleError) and second.time == 7.0 and "lo" in second.counters


def test_the_live_linux_sampler_records_and_replays_to_the_same_rates():
    """The real Linux sampler on this machine through LocalRunner, recorded as the recorder
    taps it (on_read), then replayed through a fresh adapter: the same samples, so the same
    rates; and the ticks between the slow facts went over the wire as deltas."""
    live = LinuxAdapter(runner=LocalRunner(), facts_every=3)
    reads: list[dict] = []
    live.on_read = reads.append

    async def collect(n: int):
        out = []
        async for item in live.samples(0.1):
            out.append(item)
            if len(out) == n:
                break
        await live.close()
        return out

    samples = asyncio.run(collect(7))
    assert not any(isinstance(s, SampleError) for s in samples), samples
    replay = LinuxAdapter(runner=None, facts_every=3)
    replayed = [replay.replayed(r, float(i)) for i, r in enumerate(reads)]
    live_rates, replay_rates = RateTracker(), RateTracker()
    for a, b in zip(samples, replayed):
        assert not isinstance(b, SampleError)
        assert (a.time, a.counters, a.interfaces) == (b.time, b.counters, b.interfaces)
        assert live_rates.update(a) == replay_rates.update(b)
    # a tick between slow facts is sent as a delta: smaller on the wire than whole
    from linkdeck.platforms.adapter import frame_bytes

    ticks = [(s.wire_bytes, frame_bytes(r["f"])) for s, r in zip(samples, reads) if r["f"].keys() == {"tick"}]
    assert ticks and all(w < whole_size for w, whole_size in ticks)
    # every slow-facts read carries the link kinds, sent only in the full frame
    facts = [r["f"] for r in reads if "attrs" in r["f"]]
    assert len(facts) >= 2 and all("kinds" in f for f in facts)


def test_a_same_marker_inside_a_line_is_that_lines_text():
    """Only a line that begins with the marker is a run; one that holds it further on is text
    (the check for runs looks through the whole section at once)."""
    base: dict[str, list[str]] = {"tick": ["a:1", "b:2"]}
    body = "a:2\nx " + delta.SAME + "1\n"
    assert delta.expand({"tick": body}, base) == {"tick": body}
    assert base == {"tick": ["a:2", "x " + delta.SAME + "1"]}
    assert delta.expand({"tick": delta.SAME + "1\nb:3\n"}, base) == {"tick": "a:2\nb:3\n"}


def test_frame_bytes_counts_each_sections_bytes_as_printed():
    from linkdeck.platforms.adapter import FRAME_BEGIN, SECTION, frame_bytes

    frame = {"tick": "a:1\n", "ip_addr": '["é", "ü"]\n', "empty": ""}  # constructed; two 2-byte characters
    printed = "\n".join([FRAME_BEGIN, *(SECTION + k + "\n" + v for k, v in frame.items()), FRAME_END]) + "\n"
    lines = printed.replace("\n\n", "\n")  # an empty section prints its marker line alone
    assert frame_bytes(frame) == len(lines.encode())
