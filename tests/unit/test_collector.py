"""The per-host loop: states, backoff, no retry on auth/host-key failures, hosts independent.

The adapters here are scripted in-process stand-ins for what a transport does (the real
transports are exercised over real sshd in the lab tests); what is under test is the loop.
"""

import asyncio
import ctypes
import json
import subprocess
import sys
from dataclasses import replace

import pytest

from linkdeck.core.model import Counters, HostSample, HostState, Interface
from linkdeck.fleet import collector
from linkdeck.fleet.collector import Fleet, HostCollector
from linkdeck.platforms.adapter import Adapter, SampleError
from linkdeck.platforms.frames import FRAME_BEGIN, FRAME_END
from linkdeck.platforms.linux import LinuxAdapter
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.transport.local_runner import LocalRunner
from linkdeck.transport.runner import AuthFailed, ConnectionLost, HostKeyUnknown, RequestUnanswered

SPEC = HostSpec(name="h1", address="h1")
FAST = Settings(interval=0.01)


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    monkeypatch.setattr(collector, "BACKOFF_FIRST", 0.01)
    monkeypatch.setattr(collector, "BACKOFF_CAP", 0.04)


class Scripted(Adapter):
    os = "linux"

    def __init__(self, items):
        super().__init__(runner=None)
        self.items = items
        self.closed = False

    async def samples(self, interval):
        for item in self.items:
            if isinstance(item, Exception):
                raise item
            yield item
            await asyncio.sleep(0)

    async def close(self):
        self.closed = True


def tick(t, rx):
    return HostSample(
        time=t,
        interfaces={"eth0": Interface(name="eth0", speed_mbps=1000)},
        counters={"eth0": Counters(rx_bytes=rx, tx_bytes=0)},
    )


async def run_until(coll, cond, timeout=2.0):
    task = asyncio.create_task(coll.run())
    try:
        for _ in range(int(timeout / 0.005)):
            if cond() or task.done():
                break
            await asyncio.sleep(0.005)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_live_rates_parse_error_then_recovery():
    updates = []
    adapters = []

    async def opener(spec, settings, small_requests=False):
        adapters.append(
            Scripted([tick(0, 0), tick(1, 1000), SampleError("netstat: garbled (line: 'x')"), tick(2, 3000)])
        )
        return adapters[-1]

    coll = HostCollector(SPEC, FAST, updates.append, opener)
    await run_until(coll, lambda: len(updates) >= 5)
    # first the OS is known while still connecting, then the samples
    assert updates[0].state == HostState.CONNECTING and updates[0].os == "linux"
    updates = updates[1:]
    states = [u.state for u in updates]
    assert states[:4] == [HostState.LIVE, HostState.LIVE, HostState.ERROR, HostState.LIVE]
    assert updates[1].interfaces[0].rates.rx_bps == 8000
    # the error keeps the last rows (nothing lost) and names the command
    assert updates[2].error.startswith("netstat: garbled") and updates[2].interfaces == updates[1].interfaces
    assert updates[3].interfaces[0].rates.rx_bps == 16000 and updates[3].error is None
    assert adapters[0].closed


async def test_after_a_request_lost_to_a_black_hole_the_host_is_opened_with_small_requests():
    """The opener sends its large requests (the sampler a Linux host's stream carries) until a
    path drops one; from then on it is asked for small ones, while the finding stays up."""
    updates = []
    asked = []

    async def opener(spec, settings, small_requests=False):
        asked.append(small_requests)
        if len(asked) == 1:
            raise RequestUnanswered("h1", 9300)
        return Scripted([tick(0, 0), tick(1, 1000)])

    coll = HostCollector(SPEC, FAST, updates.append, opener)
    await run_until(coll, lambda: any(u.state == HostState.LIVE for u in updates))
    assert asked == [False, True]
    assert updates[0].state == HostState.ERROR and updates[0].detail.blackhole_request_bytes == 9300
    live = next(u for u in updates if u.state == HostState.LIVE)
    assert live.detail.blackhole_request_bytes == 9300


async def test_transport_loss_reconnects_with_backoff():
    updates = []
    calls = []

    async def opener(spec, settings, small_requests=False):
        calls.append(asyncio.get_running_loop().time())
        if len(calls) == 1:
            return Scripted([tick(0, 0), ConnectionLost("channel closed")])
        if len(calls) < 4:
            raise ConnectionLost("connection refused")
        return Scripted([tick(10, 0), tick(11, 100)])

    coll = HostCollector(SPEC, FAST, updates.append, opener)
    await run_until(coll, lambda: any(u.state == HostState.LIVE and u.time == 11 for u in updates))
    states = [u.state for u in updates]
    assert HostState.RECONNECTING in states
    reconnecting = [u for u in updates if u.state == HostState.RECONNECTING and u.error]
    assert reconnecting[0].error == "channel closed" and reconnecting[0].detail.retry_in_s is not None
    # waiting says when it tries next, in whole seconds as a recording keeps them; once it
    # tries, that wait is over and no longer shown
    at = reconnecting[0].detail.retry_at
    assert at is not None and at > 0 and at == round(at)
    assert reconnecting[1].detail.retry_at is None and reconnecting[1].detail.retry_in_s is None
    assert reconnecting[1].error == "channel closed"  # the attempt under way, after that failure
    assert len(calls) == 4
    gaps = [b - a for a, b in zip(calls, calls[1:])]
    assert gaps[2] > gaps[0]  # exponential, capped
    back = [u for u in updates if u.time == 11]
    assert back[0].state == HostState.LIVE and back[0].interfaces[0].rates.rx_bps == 800


@pytest.mark.parametrize(
    "exc, state",
    [
        (AuthFailed("auth failed for root@h1"), HostState.AUTH_FAILED),
        (HostKeyUnknown("unknown key", "SHA256:abc", "ssh-ed25519", "AAAA"), HostState.HOST_KEY_UNKNOWN),
    ],
)
async def test_auth_and_host_key_failures_are_never_retried(exc, state):
    updates = []
    calls = []

    async def opener(spec, settings, small_requests=False):
        calls.append(1)
        raise exc

    coll = HostCollector(SPEC, FAST, updates.append, opener)
    await run_until(coll, lambda: False, timeout=0.3)
    assert len(calls) == 1
    assert updates[-1].state == state
    if state == HostState.HOST_KEY_UNKNOWN:
        assert updates[-1].detail.fingerprint == "SHA256:abc"


async def test_a_hanging_host_does_not_delay_another():
    updates = []

    async def opener(spec, settings, small_requests=False):
        if spec.name == "stuck":
            await asyncio.sleep(3600)
        return Scripted([tick(t, t * 100) for t in range(50)])

    fleet = Fleet([HostSpec("stuck", "stuck"), SPEC], FAST, updates.append, opener)
    fleet.start()
    for _ in range(200):
        if sum(u.host == "h1" for u in updates) >= 20:
            break
        await asyncio.sleep(0.005)
    await fleet.stop()
    assert sum(u.host == "h1" and u.state == HostState.LIVE for u in updates) >= 20
    assert fleet.collectors["stuck"].last.state == HostState.CONNECTING


async def test_unexpected_exception_is_reported_not_raised():
    updates = []

    async def opener(spec, settings, small_requests=False):
        raise RuntimeError("boom")

    coll = HostCollector(SPEC, FAST, updates.append, opener)
    await run_until(coll, lambda: len(updates) >= 2)
    assert updates[0].state == HostState.ERROR and updates[0].error == "RuntimeError: boom"


async def test_speed_override_applies_to_named_interface():
    updates = []

    async def opener(spec, settings, small_requests=False):
        return Scripted([tick(0, 0), tick(1, 125_000_000)])

    settings = replace(FAST, speed_overrides={"h1/eth0": 10000})
    coll = HostCollector(SPEC, settings, updates.append, opener)
    await run_until(coll, lambda: len(updates) >= 3)
    view = updates[2].interfaces[0]
    assert view.iface.speed_mbps == 10000
    assert view.util_pct == pytest.approx(10.0)


@pytest.mark.parametrize(
    "make_exc",
    [
        lambda: __import__("linkdeck.platforms.detect", fromlist=["UnsupportedOS"]).UnsupportedOS(
            "unsupported OS: `uname -s` says 'Haiku'"
        ),
        lambda: __import__("linkdeck.settings.config", fromlist=["ConfigError"]).ConfigError(
            None, "ProxyJump loop: a -> b -> a"
        ),
    ],
)
async def test_permanent_errors_stop_the_loop_in_error_state(make_exc):
    """An OS with no adapter or a broken ssh config will not heal by logging in again."""
    updates = []
    calls = []

    async def opener(spec, settings, small_requests=False):
        calls.append(1)
        raise make_exc()

    coll = HostCollector(SPEC, FAST, updates.append, opener)
    await run_until(coll, lambda: False, timeout=0.3)
    assert len(calls) == 1
    assert updates[-1].state == HostState.ERROR
    assert "Haiku" in updates[-1].error or "ProxyJump loop" in updates[-1].error


async def test_bounded_passes_a_cancel_down_and_waits_for_cleanup():
    from linkdeck.transport.runner import bounded

    cleaned = []

    async def work():
        try:
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0.01)  # cleanup that takes a moment
            cleaned.append(True)

    task = asyncio.create_task(bounded(work(), 60))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == [True]
    with pytest.raises(asyncio.TimeoutError):
        await bounded(asyncio.sleep(1), 0.01)
    assert await bounded(asyncio.sleep(0, result=7), 1) == 7


# A fresh interpreter: starts a Fleet (as the dashboard, snapshot and record do), frees one
# mmap()ed 8 MiB block (as a dashboard on SSH hosts does early on), then says where the next
# big blocks land. Adaptive glibc would now serve up to 8 MiB from the heap and keep 16 MiB
# free at its top: each heap of a long watch crept that way (bench_soak's slope). It also reads
# a pipe as asyncio does, 256 KiB at a time, which must not map and unmap memory every read.
_HEAP_PROBE = """
import asyncio, ctypes, json, os
from linkdeck.fleet.collector import Fleet
from linkdeck.settings.config import Settings

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost"
    )]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info

async def main():
    fleet = Fleet([], Settings(local=False, hosts=()), lambda update: None)
    fleet.start()
    await fleet.stop()

asyncio.run(main())
freed = bytearray(8 << 20)
del freed
mapped = libc.mallinfo2().hblks
big = bytearray(1 << 20)
mapped = libc.mallinfo2().hblks - mapped
blocks = libc.mallinfo2().hblks
ours, theirs = os.pipe()
frames = []
for _ in range(4):  # a host's frames, read as asyncio's pipe transports read them
    os.write(theirs, b"a frame")
    frames.append(os.read(ours, 256 << 10))
read_mapped = libc.mallinfo2().hblks - blocks
heap = libc.mallinfo2().arena
free = libc.mallinfo2().fordblks
blocks = [bytearray(100 << 10) for _ in range(64)]
grown = libc.mallinfo2().arena - heap
del blocks
kept = libc.mallinfo2().arena - heap
print(json.dumps({"mapped": mapped, "read_mapped": read_mapped, "grown": grown, "free": free, "kept": kept}))
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "mallinfo2"),
    reason="glibc's malloc (2.33 or later)",
)
def test_a_fleet_keeps_glibc_from_growing_its_heaps_for_good() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _HEAP_PROBE], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    probe = json.loads(out)
    assert probe["mapped"] == 1, probe  # a 1 MiB block is still mmap()ed, not carved from the heap
    # a read's 256 KiB comes from the heap: no mmap and munmap for each frame a host sends
    assert probe["read_mapped"] == 0, probe
    # the 100 KiB blocks did come from the heap: what it grew by, with what it had free already
    assert probe["grown"] + probe["free"] >= 64 * (100 << 10), probe
    assert probe["kept"] < 1 << 20, probe  # and the heap gave them back once freed


class _Saying(LocalRunner):
    """The local host, where the sampler's place is taken by a real shell that prints
    ``said`` and exits (a login shell or PATH that runs something else)."""

    def __init__(self, said: str) -> None:
        self.said = said

    def stream(self, argv, tick=None):
        return super().stream(["sh", "-c", 'printf "%s\\n" "$1"', "sh", self.said], tick)


async def stream_end_words(said: str) -> str:
    updates = []

    async def opener(spec, settings, small_requests=False):
        return LinuxAdapter(runner=_Saying(said))

    coll = HostCollector(SPEC, FAST, updates.append, opener)
    await run_until(coll, lambda: any("stream ended" in (u.error or "") for u in updates), timeout=10)
    return next(u.error for u in updates if "stream ended" in (u.error or ""))


async def test_a_stream_that_ends_says_the_last_line_the_host_sent():
    assert await stream_end_words("sh: ip: not found") == "the sampling stream ended after: sh: ip: not found"
    # control characters escaped, a long line cut
    said = await stream_end_words("\x1b[31mThis account is currently not available." + "x" * 200)
    assert said.startswith("the sampling stream ended after: \\x1b[31mThis account is currently not available.xxx")
    assert "\x1b" not in said and said.endswith("…") and len(said) < 200


async def test_a_stream_that_ends_after_a_whole_frame_says_no_line_of_it():
    assert (
        await stream_end_words(f"{FRAME_BEGIN}\n@@LD SECTION x\nsome text\n{FRAME_END}") == "the sampling stream ended"
    )
