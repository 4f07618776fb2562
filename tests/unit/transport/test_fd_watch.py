"""transport.ssh_channel.FdWatch over paramiko's own channel buffer and pipe (as
Channel.fileno() wires them): one frame wakes its reader once. The selector sees the fd
readable again in the turn of the loop where the woken reader empties the channel, and that
stale readiness used to wake the reader a second time to an empty channel, every frame."""

from __future__ import annotations

import asyncio

from paramiko.buffered_pipe import BufferedPipe
from paramiko.pipe import make_or_pipe, make_pipe

from linkdeck.transport.ssh_channel import FdWatch


def channel_buffer() -> tuple[BufferedPipe, int]:
    pipe = make_pipe()
    stdout, _stderr = make_or_pipe(pipe)
    buffer = BufferedPipe()
    buffer.set_event(stdout)
    return buffer, pipe.fileno()


async def reader_wakes(frames: int) -> list[bytes | None]:
    """What each wake-up of a reader finds, over ``frames`` frames fed 50 ms apart."""
    buffer, fd = channel_buffer()
    loop = asyncio.get_running_loop()
    watch = FdWatch(loop, fd, buffer.read_ready)
    found: list[bytes | None] = []

    async def reader() -> None:
        while True:
            if await watch.wait(5.0):
                found.append(buffer.read(65536) if buffer.read_ready() else None)

    task = asyncio.create_task(reader())
    try:
        for n in range(frames):
            await asyncio.sleep(0.05)
            buffer.feed(b"frame %d\n" % n)
        await asyncio.sleep(0.1)
    finally:
        task.cancel()
        watch.stop()
    return found


def test_each_frame_wakes_the_reader_once_with_its_data():
    found = asyncio.run(reader_wakes(5))
    assert found == [b"frame %d\n" % n for n in range(5)]


def test_a_readiness_with_nothing_pending_wakes_no_one_and_data_still_does():
    async def run() -> list[bool]:
        buffer, fd = channel_buffer()
        watch = FdWatch(asyncio.get_running_loop(), fd, buffer.read_ready)
        waiting = asyncio.create_task(watch.wait(5.0))
        await asyncio.sleep(0.01)
        watch._readable()  # as the selector's stale event would call it
        await asyncio.sleep(0.01)
        states = [waiting.done()]
        buffer.feed(b"x")
        states.append(await asyncio.wait_for(waiting, 1.0))
        watch.stop()
        return states

    assert asyncio.run(run()) == [False, True]
