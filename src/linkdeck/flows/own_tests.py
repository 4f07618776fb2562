"""linkdeck's own iperf3 tests among a host's flows. While linkdeck runs a test through a host,
the test's TCP connections are among the host's busiest: they are not the transfer the user
asks about. A flow is a running test's when one end is the test's server (its address and the
port its server listens on) and the other is an address of the test's client host, as that
host's collector last saw it: a user's own iperf3 on another port, or from another host, stays
the user's. Each one found goes into the round's lines as a TEST line (after the loop ranked
the round, so they may take places in its top N), so a recording keeps it and a replay sets
the same flows apart."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Iterable, Mapping

from ..core.model import HostUpdate
from ..core.tcpflow import split_endpoint
from .round_report import link_of
from .sampler import TEST, FlowRound, round_of


@dataclass(frozen=True, slots=True)
class RunningTest:
    """A test linkdeck runs now: ``src`` the client's host, ``dst`` the server's, which listens
    on ``address`` port ``port``."""

    src: str
    dst: str
    address: str
    port: int


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    host, _ = split_endpoint(f"[{text}]:0") if ":" in text else (text, "")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_server(endpoint: str, test: RunningTest) -> bool:
    host, port = split_endpoint(endpoint)
    address = _ip(host)
    return port == str(test.port) and address is not None and address == _ip(test.address)


def _of(local: str, remote: str, host: str, test: RunningTest, updates: Mapping[str, HostUpdate]) -> bool:
    """Whether the flow ``local`` → ``remote`` read on ``host`` is ``test``'s."""
    if host not in (test.src, test.dst):
        return False
    # the server end is this host's own on the server's host, the far one on the client's
    sides = []
    if host == test.dst:
        sides.append((local, remote))
    if host == test.src:
        sides.append((remote, local))
    client = updates.get(test.src)
    return any(
        _is_server(server, test) and link_of(client, split_endpoint(other)[0]) is not None for server, other in sides
    )


def of_tests(
    got: FlowRound, host: str, tests: Iterable[RunningTest], updates: Mapping[str, HostUpdate]
) -> list[tuple[str, str]]:
    """The (local, remote) of ``got``'s flows that are one of ``tests``, read on ``host``."""
    tests = tuple(tests)
    return [
        (cur.local, cur.remote)
        for cur, _ in got.flows
        if any(_of(cur.local, cur.remote, host, t, updates) for t in tests)
    ]


def set_apart_tests(
    got: FlowRound, host: str, tests: Iterable[RunningTest], updates: Mapping[str, HostUpdate], os_name: str | None
) -> FlowRound:
    """``got`` with the flows of linkdeck's running ``tests`` out of its flows, into its
    ``tests``, read again from its lines so that what a recording keeps says the same."""
    mine = of_tests(got, host, tests, updates)
    if not mine or len(got.lines) < 2:
        return got
    lines = [*got.lines[:-1], *(f"{TEST} {local} {remote}" for local, remote in mine), got.lines[-1]]
    return round_of(lines, os_name) or got
