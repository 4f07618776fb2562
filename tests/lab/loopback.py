"""This machine's own loopback, for tests that need no namespace: steady traffic to see in
the counters, a free port, the iperf3 processes on a port."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from typing import Iterator


def loopback_traffic(stop: threading.Event) -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def sink():
        conn, _ = srv.accept()
        while conn.recv(1 << 16):
            pass

    threading.Thread(target=sink, daemon=True).start()
    cli = socket.create_connection(("127.0.0.1", port))
    chunk = b"x" * (1 << 16)
    while not stop.is_set():
        cli.sendall(chunk)
        time.sleep(0.001)  # ~50 MB/s: visible, not a CPU hog
    cli.close()
    srv.close()


@contextlib.contextmanager
def loopback_running() -> Iterator[None]:
    """loopback_traffic in a thread for the duration of the block."""
    stop = threading.Event()
    traffic = threading.Thread(target=loopback_traffic, args=(stop,), daemon=True)
    traffic.start()
    try:
        yield
    finally:
        stop.set()
        traffic.join(5)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def iperf3_pids(port: int) -> list[int]:
    """iperf3 processes of this machine using ``port`` (other people's tests use others)."""
    out = subprocess.run(["pgrep", "-f", f"iperf3 .*-p {port}( |$)"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]
