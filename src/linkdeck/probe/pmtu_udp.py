"""The path MTU one way with iperf3 instead of ping, for an end that has no ping: UDP
datagrams with don't-fragment (``--dont-fragment``, iperf3 3.10 and later at both ends) of one
size at a time, the far end's one-shot server counting what arrived.

A size passes when any of its datagrams arrived. It tries the sending interface's MTU, then
1500 and 1501 (jumbo ends over a 1500 hop, the common failure), then the other common path
MTUs between what passed and what failed, then halves the gap a few times: each
size costs a server start and a client run (about 0.1 s on a LAN), so the search stops within
``MAX_TRIES`` sizes, and the note says how close it got.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import time

from ..core.model import PathMtu
from ..transport.runner import TransportError
from . import templates as cmd
from .failures import ProbeError
from .iperf import End, iperf3_info, start_server
from .pmtu import COMMON_MTUS, MAX_PACKET, MIN_PACKET, MIN_PACKET_V6, OneWay
from .process import HostProcess

DONT_FRAGMENT_SINCE = (3, 10)
UDP_OVERHEAD = {4: 28, 6: 48}  # IP + UDP headers around iperf3's -l payload
# Datagrams per size, paced by the template: iperf3 stops counting when the client's end
# message arrives, so three sent at once were all missed (the lab: "0/0 receiver" at every size)
BLOCKS = 20
MAX_TRIES = 8
IDLE_S = 10.0
CLIENT_TIMEOUT_S = 8.0


async def udp_one_way(
    sender: End, receiver: End, address: str, mtu: int | None, port: int, receiver_mtu: int | None = None
) -> OneWay | None:
    """The largest datagram ``sender`` gets to ``receiver`` at ``address`` with don't-fragment,
    up to ``mtu`` and the receiver's MTU (an interface takes in frames a few bytes over its
    MTU, which no stream of the ends' ever sends); None when an end lacks iperf3 3.10 or later
    (or iperf3 at all)."""
    try:
        infos = await asyncio.gather(iperf3_info(sender), iperf3_info(receiver))
    except ProbeError:
        return None
    if any(info.version < DONT_FRAGMENT_SINCE for info in infos):
        return None
    try:
        version = ipaddress.ip_address(address.split("%", 1)[0]).version
    except ValueError:
        return None
    floor = MIN_PACKET_V6 if version == 6 else MIN_PACKET
    top = min(max(min(mtu or 1500, receiver_mtu or MAX_PACKET), floor), MAX_PACKET)
    good, bad, tries = None, top + 1, 0

    async def passes(size: int) -> bool:
        nonlocal tries
        tries += 1
        return await _one_size(sender, receiver, infos[1], address, port, size - UDP_OVERHEAD[version])

    try:
        for size in sorted({top, 1500} & set(range(floor, top + 1)), reverse=True):
            if await passes(size):
                good = size
                break
            bad = size
        if good is None:
            if not await passes(floor):
                return OneWay(
                    None,
                    top,
                    "path MTU not probed: "
                    f"no UDP datagram from {sender.name} reached {receiver.name} even at {floor} bytes (filtered?)",
                )
            good = floor
        # the next byte up first: a path at exactly what passed is settled in one more try
        queue = (
            [good + 1, *sorted((c for c in COMMON_MTUS if good + 1 < c < bad), reverse=True)] if good + 1 < bad else []
        )
        while bad - good > 1 and tries < MAX_TRIES:
            size = queue.pop(0) if queue else (good + bad) // 2
            if await passes(size):
                good = size
                queue = [c for c in queue if c > good]
            else:
                bad = size
                queue = [c for c in queue if c < bad]
    except (TransportError, ProbeError) as exc:
        return OneWay(None, top, f"path MTU not probed with iperf3: {sender.name}: {exc}")
    near = f", {bad} do not" if bad <= top else ""
    return OneWay(good, top, f"probed with iperf3 UDP --dont-fragment: {good} bytes get through{near}")


async def _one_size(sender: End, receiver: End, server_info, address: str, port: int, payload: int) -> bool:
    server, used = await start_server(receiver, server_info, port, IDLE_S)
    client = HostProcess(sender.shell(), sender.name, cmd.udp_probe_script(address, used, payload, BLOCKS), IDLE_S)
    try:
        await client.start()
        text = await asyncio.wait_for(client.output(), CLIENT_TIMEOUT_S)
    except asyncio.TimeoutError:
        return False
    finally:
        await client.stop()
        await server.stop()
    return _arrived(text) > 0


_RECEIVER = re.compile(r"([0-9]+)/([0-9]+) +\([^)]*\) +receiver")


def _arrived(text: str) -> int:
    """Datagrams the server counted, from its report in the client's ``-J`` document
    ("0/20 (0%)  receiver": lost/total); 0 when unreadable."""
    try:
        doc = json.loads(text[text.find("{") :]) if "{" in text else {}
        report = doc.get("server_output_text") or ""
    except ValueError:
        return 0
    counted = [int(total) - int(lost) for lost, total in _RECEIVER.findall(str(report))]
    return max(counted, default=0)


def _ping_could_not(note: str, name: str) -> bool:
    """Whether ``note`` says host ``name``'s ping could not probe at all (missing, or without
    a don't-fragment option): a want of the tool, which iperf3's UDP probe may make up for."""
    return (
        f"ping not found on {name} " in note
        or note == f"cannot probe the path MTU from {name}: its ping has no don't-fragment option"
    )


async def with_udp_fallback(
    path: PathMtu,
    src: End,
    dst: End,
    dst_address: str,
    src_address: str | None,
    src_mtu: int | None,
    dst_mtu: int | None,
    port: int,
) -> PathMtu:
    """``path`` with each direction ping could not probe for want of ping probed with
    iperf3's UDP instead, where both ends run iperf3 3.10 or later."""

    async def way(
        done: int | None, sender: End, receiver: End, address: str | None, mtus: tuple[int | None, int | None]
    ) -> OneWay | None:
        if (
            done is not None
            or address is None
            or not any(_ping_could_not(n, sender.name) for n in (path.note or "").split("; "))
        ):
            return None
        return await udp_one_way(sender, receiver, address, mtus[0], port, mtus[1])

    started = time.monotonic()
    forward, reverse = await asyncio.gather(
        way(path.forward, src, dst, dst_address, (src_mtu, dst_mtu)),
        way(path.reverse, dst, src, src_address, (dst_mtu, src_mtu)),
    )
    if forward is None and reverse is None:
        return path
    # "path MTU not probed: ping not found on f (`apt install iputils-ping`)" becomes "ping not
    # found on f (`…`): probed with iperf3 UDP --dont-fragment: 1500 bytes get through"
    notes = (path.note or "").split("; ")
    for sender, got in ((src, forward), (dst, reverse)):
        if got is not None and got.note:
            notes = [
                n.removeprefix("path MTU not probed: ") + ": " + got.note if _ping_could_not(n, sender.name) else n
                for n in notes
            ]
    return PathMtu(
        forward=forward.largest if forward else path.forward,
        reverse=reverse.largest if reverse else path.reverse,
        forward_mtu=forward.mtu if forward else path.forward_mtu,
        reverse_mtu=reverse.mtu if reverse else path.reverse_mtu,
        note="; ".join(notes),
        seconds=path.seconds + time.monotonic() - started,
    )
