"""Frames on one interface at a steady pace, run inside a lab namespace:

    python3 tests/lab/chatter.py IFNAME BYTES PER_SECOND

Broadcast Ethernet frames of BYTES bytes (EtherType 0x88b5, the one IEEE keeps for local
experiments), PER_SECOND of them a second, until killed. One 70-byte frame a second is what
a pod link's neighbour discovery looks like on the wire (constructed); hundreds of 1000-byte
frames a second is a pod at work. The peer end of a veth counts them as received.
"""

from __future__ import annotations

import socket
import sys
import time

ETHERTYPE = 0x88B5


def main() -> int:
    ifname, size, per_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((ifname, 0))
    header = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + ETHERTYPE.to_bytes(2, "big")
    frame = header + bytes(max(0, size - len(header)))
    step = 1.0 / per_s
    due = time.monotonic()
    while True:
        sock.send(frame)
        due += step
        time.sleep(max(0.0, due - time.monotonic()))


if __name__ == "__main__":
    sys.exit(main())
