"""Reachability probes between lab hosts without ping (not installed here): TCP connects and
don't-fragment UDP datagrams, run with this interpreter inside the namespaces."""

from __future__ import annotations

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
