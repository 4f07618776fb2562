"""The path MTU each way between two hosts: each end's own ping with don't-fragment, sizes
searched between 576 bytes and the sending interface's MTU.

A round is one command on the sending host that starts every ping of the round at once, so a
round costs one reply wait, not one per size. The first round tries the interface MTU, the
smallest size, and 1500 and 1501 (jumbo ends over a 1500 hop, the common failure): a clean
path costs four pings. The second tries the other common path MTUs (1492, 1450, 1420 …) each
with the next byte up; later rounds split the remaining gap into equal parts. An echo reply comes back at the size of
its request, so each end's figure is the largest packet that crossed both ways from that end's ping.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import time
from dataclasses import dataclass

from ..core.model import PathMtu
from ..core.oses import PINGS, ping_flavour, ping_install
from ..transport.runner import TransportError
from . import templates as cmd
from .failures import ProbeError
from .iperf import End, os_release

# What a ping that does not know an option it was given prints (busybox, BSD, GNU getopt).
_REFUSED_OPTION = re.compile(r"invalid option|illegal option|unrecognized option|unknown option")
MIN_PACKET = 576  # every IPv4 host must take this much (RFC 791)
MIN_PACKET_V6 = 1280  # and every IPv6 link this much (RFC 8200)
MAX_PACKET = 65535  # an IPv4 packet's length field; loopback's MTU is 65536
ICMP_OVERHEAD = {4: 28, 6: 48}  # IP header + ICMP echo header around ping's -s payload
FIRST_MTUS = (1500,)
COMMON_MTUS = (9000, 1500, 1492, 1480, 1450, 1420, 1400, 1280)
WAIT_S = 0.2  # a reply on a LAN takes under a millisecond; a far end's RTT raises it
FIRST_WAIT_S = 1.0  # the smallest size, whose reply (or not) tells whether ping works at all
MAX_WAIT_S = 2.0
SPLITS = 20  # pings per later round: any size between 1500 and 9000 in three
MAX_ROUNDS = 6
_RTT = re.compile(r"= *[0-9.]+/([0-9.]+)/")


@dataclass(frozen=True, slots=True)
class OneWay:
    largest: int | None  # bytes; None when not probed
    mtu: int  # the sending interface's MTU: where the search started
    note: str | None = None


async def probe_path(
    src: End, dst: End, dst_address: str, src_address: str | None, src_mtu: int | None, dst_mtu: int | None
) -> PathMtu:
    """Both directions at once: ``src`` pings ``dst_address``, ``dst`` pings ``src_address``.
    Never raises for a host's answer: a direction that could not be probed has a note."""
    started = time.monotonic()
    forward, reverse = await asyncio.gather(
        one_way(src, dst_address, src_mtu),
        one_way(dst, src_address, dst_mtu)
        if src_address
        else _skipped(dst_mtu, f"no address of {src.name} known toward {dst.name}"),
    )
    notes = [n for n in (forward.note, reverse.note) if n]
    return PathMtu(
        forward=forward.largest,
        reverse=reverse.largest,
        forward_mtu=forward.mtu,
        reverse_mtu=reverse.mtu,
        note="; ".join(dict.fromkeys(notes)) or None,
        seconds=time.monotonic() - started,
    )


async def _skipped(mtu: int | None, why: str) -> OneWay:
    return OneWay(None, mtu or 0, f"path MTU not probed: {why}")


async def one_way(end: End, address: str, mtu: int | None) -> OneWay:
    """The largest packet ``end`` gets through to ``address`` and back, up to ``mtu``."""
    try:
        version = ipaddress.ip_address(address.split("%", 1)[0]).version
    except ValueError:
        return OneWay(None, mtu or 0, f"path MTU not probed: {address!r} is not an IP address")
    flavour = ping_flavour(end.os)
    if version == 6 and not PINGS[flavour].ipv6:
        return OneWay(
            None, mtu or 0, f"path MTU not probed: IPv6 probing needs Linux's ping ({end.name} runs {end.os})"
        )
    floor = MIN_PACKET_V6 if version == 6 else MIN_PACKET
    top = min(max(mtu or 1500, floor), MAX_PACKET)
    search = Search(floor, top)
    wait = WAIT_S
    try:
        answers = await _round(
            end, flavour, address, version, {**{s: wait for s in search.first_sizes()}, floor: FIRST_WAIT_S}
        )
        if answers is None:
            return OneWay(None, top, f"path MTU not probed: ping not found on {end.name} (`{await _ping_hint(end)}`)")
        small = answers.get(floor)
        if small is None or not small[0]:
            said = small[1] if small else ""
            if _REFUSED_OPTION.search(said):
                # the host's tool, not the path: busybox's ping has no don't-fragment option
                return OneWay(
                    None, top, f"cannot probe the path MTU from {end.name}: its ping has no don't-fragment option"
                )
            return OneWay(
                None,
                top,
                f"path MTU not probed: {end.name} got no echo reply from {address} even at {floor} bytes"
                + (f" ({said})" if said else " (ICMP filtered?)"),
            )
        rtt = _rtt_s(small[1])
        if rtt is not None and 3 * rtt > wait:
            # A far end: what failed may only have been slow. Ask again with time to answer.
            wait = min(MAX_WAIT_S, 3 * rtt)
            failed = [s for s, (ok, _) in answers.items() if not ok]
            again = await _round(end, flavour, address, version, {s: wait for s in failed}) if failed else {}
            answers.update(again or {})
        search.learn({s: ok for s, (ok, _) in answers.items()})
        for _ in range(MAX_ROUNDS):
            sizes = search.next_sizes()
            if not sizes:
                break
            got = await _round(end, flavour, address, version, {s: wait for s in sizes})
            search.learn({s: ok for s, (ok, _) in (got or {}).items()})
    except (TransportError, ProbeError) as exc:
        return OneWay(None, top, f"path MTU not probed: {end.name}: {exc}")
    return OneWay(search.good, top)


class Search:
    """What is known about one direction: the largest size that passed, the smallest that
    failed above it."""

    def __init__(self, floor: int, top: int) -> None:
        self.floor, self.top = floor, top
        self.good: int | None = None
        self.failed: set[int] = set()
        self.commons_tried = False

    def first_sizes(self) -> list[int]:
        sizes = {self.floor, self.top}
        for common in FIRST_MTUS:
            if self.floor < common < self.top:
                sizes |= {common, common + 1}
        return sorted(sizes)

    def learn(self, passed: dict[int, bool]) -> None:
        # A size can fail while a larger one passed (one lost reply): the larger one wins.
        ok = [s for s, p in passed.items() if p]
        if ok:
            self.good = max([self.good or 0, *ok])
        self.failed |= {s for s, p in passed.items() if not p}

    @property
    def bad(self) -> int:
        """The smallest size that failed above the largest that passed (``top`` + 1: none)."""
        return min((s for s in self.failed if s > (self.good or 0)), default=self.top + 1)

    def next_sizes(self) -> list[int]:
        if self.good is None or self.bad - self.good <= 1:
            return []
        if not self.commons_tried:
            self.commons_tried = True
            commons = {n for c in COMMON_MTUS for n in (c, c + 1) if self.good < n < self.bad}
            if commons:
                return sorted(commons)
        gap = self.bad - self.good
        return sorted({self.good + (gap * i) // (SPLITS + 1) for i in range(1, SPLITS + 1)} - {self.good})


async def _round(
    end: End, flavour: str, address: str, version: int, waits: dict[int, float]
) -> dict[int, tuple[bool, str]] | None:
    """Packet size → (passed, what ping said); None when the host has no ping."""
    overhead = ICMP_OVERHEAD[version]
    script = cmd.ping_script(
        flavour, address, [(size - overhead, wait) for size, wait in sorted(waits.items())]
    )  # smallest first
    res = await end.shell().run(["sh", "-c", script], timeout=max(waits.values()) + 10)
    if res.stdout.strip() == cmd.PING_MISSING:
        return None
    out: dict[int, tuple[bool, str]] = {}
    for line in res.stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) >= 3 and parts[0] == "r" and parts[1].isdigit() and parts[2].isdigit():
            out[int(parts[1]) + overhead] = (parts[2] == "0", parts[3].strip() if len(parts) > 3 else "")
    return out


def _rtt_s(said: str) -> float | None:
    m = _RTT.search(said)
    return float(m.group(1)) / 1000 if m else None


async def _ping_hint(end: End) -> str:
    return ping_install(end.os, await os_release(end))
