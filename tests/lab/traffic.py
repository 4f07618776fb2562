"""Reachability probes between lab hosts without ping (not installed here): TCP connects and
don't-fragment UDP datagrams, run with this interpreter inside the namespaces."""

from __future__ import annotations

import contextlib
import subprocess
import sys

from .host import LabHost

_CONNECT = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3])).close()
except OSError as exc:
    sys.exit(f"{type(exc).__name__}: {exc}")
"""

_RECEIVE = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
print("ready", flush=True)
s.settimeout(float(sys.argv[2]))
try:
    print(len(s.recv(65535)), flush=True)
except socket.timeout:
    print(0, flush=True)
"""

_SEND = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# Don't fragment (IP_MTU_DISCOVER=10, IP_PMTUDISC_PROBE=3; Python < 3.12 lacks the names):
# a datagram bigger than some MTU on the path is dropped, not split.
s.setsockopt(socket.IPPROTO_IP, 10, 3)
s.sendto(b"x" * int(sys.argv[3]), (sys.argv[1], int(sys.argv[2])))
"""


def tcp_connects(src: LabHost, address: str, port: int = 22, timeout: float = 3) -> bool:
    """Whether ``src`` completes a TCP handshake with ``address:port``."""
    return src.exec(sys.executable, "-c", _CONNECT, address, str(port), str(timeout), check=False).returncode == 0


def udp_delivered(src: LabHost, dst: LabHost, payload: int, port: int = 5999, timeout: float = 2) -> int:
    """Send one don't-fragment UDP datagram of ``payload`` bytes from ``src`` to ``dst``'s
    eth0; returns the bytes ``dst`` received (0 when the path dropped it)."""
    receiver = dst.popen(sys.executable, "-c", _RECEIVE, str(port), str(timeout), stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout.readline().strip() == "ready"
        src.exec(sys.executable, "-c", _SEND, dst.address, str(port), str(payload))
        return int(receiver.stdout.readline().strip() or 0)
    finally:
        receiver.wait(timeout + 5)
        receiver.stdout.close()


# A plain TCP transfer linkdeck did not start (no iperf3): a receiver that reads as fast as it
# can, or slowly (small SO_RCVBUF, a pause between small reads), and a sender at full tilt.
TCP_RECEIVE = """
import socket, sys, time
port, rcvbuf, chunk, pause = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if rcvbuf:
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before listen: the window scale follows it
srv.bind(("0.0.0.0", port))
srv.listen(1)
print("ready", srv.getsockname()[1], flush=True)
conn, _ = srv.accept()
while conn.recv(chunk):
    if pause:
        time.sleep(pause)
"""

TCP_SEND = """
import socket, sys, time
address, port, seconds, cc, mss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
s = socket.socket()
if cc:
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
if mss:
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)  # before connect: the SYN offers it
s.connect((address, port))
print("sending", s.getsockname()[1], flush=True)
buf = b"x" * 65536
end = time.monotonic() + seconds
try:
    while time.monotonic() < end:
        s.sendall(buf)
except OSError:
    pass
"""


def receive_argv(port: int = 0, rcvbuf: int = 0, chunk: int = 1 << 20, pause: float = 0.0) -> list[str]:
    return [sys.executable, "-c", TCP_RECEIVE, str(port), str(rcvbuf), str(chunk), str(pause)]


def send_argv(address: str, port: int, seconds: float, cc: str = "", mss: int = 0) -> list[str]:
    return [sys.executable, "-c", TCP_SEND, address, str(port), str(seconds), cc, str(mss)]


def local_popen(*argv: str, **kw) -> subprocess.Popen:
    """This machine's Popen in LabHost.popen's shape (argv as arguments)."""
    return subprocess.Popen(list(argv), **kw)


@contextlib.contextmanager
def tcp_transfer(
    receiver_popen, sender_popen, address: str, seconds: float = 30, cc: str = "", mss: int = 0, **receiver
):
    """A transfer to ``address`` (where ``receiver_popen`` starts the reader) from where
    ``sender_popen`` starts the sender; yields (the receiver's port, the sender's port).
    ``mss``: the segment size both ends agree on (0: what the route's MTU gives), as a
    clamping middlebox or application would set it. Both are killed on the way out."""
    rx = receiver_popen(*receive_argv(**receiver), stdout=subprocess.PIPE, text=True)
    tx = None
    try:
        port = int(rx.stdout.readline().split()[1])
        tx = sender_popen(*send_argv(address, port, seconds, cc, mss), stdout=subprocess.PIPE, text=True)
        yield port, int(tx.stdout.readline().split()[1])
    finally:
        for proc in (tx, rx):
            if proc is not None:
                proc.kill()
                proc.wait()
                proc.stdout.close()
