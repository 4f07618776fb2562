"""transport/ssh_channel.py leans on parts of paramiko that are not its public API (a channel's
buffers and windows, the transport's clear_to_send): they are named here, so a paramiko that
moves one fails this test rather than a host's connection, and pyproject bounds paramiko's
version to the majors this was checked against."""

from __future__ import annotations

import inspect
import threading

import paramiko
from paramiko.buffered_pipe import BufferedPipe
from paramiko.channel import Channel


def test_the_channel_internals_ssh_channel_uses_are_there():
    params = inspect.signature(BufferedPipe.set_event).parameters
    assert list(params) == ["self", "event"]
    chan = Channel(0)
    for name in (
        "in_buffer",
        "in_stderr_buffer",
        "in_window_sofar",
        "in_window_threshold",
        "active",
        "closed",
        "eof_received",
    ):
        assert hasattr(chan, name), name
    assert isinstance(chan.in_buffer, BufferedPipe) and isinstance(chan.in_window_threshold, int)
    chan.in_buffer.set_event(threading.Event())  # what close_channel does first


def test_the_transport_internals_ssh_channel_uses_are_there():
    source = inspect.getsource(paramiko.Transport.__init__)
    for name in ("self.clear_to_send = ", "self.clear_to_send_lock = ", "self.sock = "):
        assert name in source, name
    assert (
        hasattr(Channel, "send_ready")
        and hasattr(Channel, "_check_add_window")
        and hasattr(Channel, "_wait_for_send_window")
    )


def test_paramiko_is_within_the_bound_pyproject_sets():
    major = int(paramiko.__version__.split(".")[0])
    assert 3 <= major < 6
