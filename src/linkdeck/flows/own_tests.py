"""linkdeck's own iperf3 tests among a host's flows. While linkdeck runs a test through a host,
the test's TCP connections are among the host's busiest: they are not the transfer the user
asks about. A flow is a running test's when one end is the test's server (its address and the
port its server listens on) and the other is an address of the test's client host, as that
host's collector last saw it: a user's own iperf3 on another port, or from another host, stays
the user's. Each one found goes into the round's lines as a TEST line (after the loop ranked
the round, so they may take places in its top N), so a recording keeps it and a replay sets
the same flows apart.

A test runs in one linkdeck process and its flows may be read in another (``linkdeck test`` in
one terminal, ``linkdeck flows`` in the next): each test is also announced as a small file in
this user's runtime dir (``$XDG_RUNTIME_DIR``) while it runs (``announce``), which every
linkdeck reads (``announced``), skipping those of processes that are gone. Where the user has
no runtime dir of their own, nothing is announced: a shared temporary dir would let another
user's files hide flows."""

from __future__ import annotations

import ipaddress
import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from ..core.bounded_read import STATE_LIMIT, TooLarge, read_bytes
from ..core.model import HostUpdate
from ..core.tcpflow import split_endpoint
from .round_report import link_of
from .sampler import TEST, FlowRound, round_of


@dataclass(frozen=True, slots=True)
class RunningTest:
    """A test linkdeck runs now: ``src`` the client's host, ``dst`` the server's, which listens
    on ``address`` port ``port``; ``clients``: the client host's addresses when it started."""

    src: str
    dst: str
    address: str
    port: int
    clients: tuple[str, ...] = ()


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
    # the addresses the test's client had: another process's hosts may go by other names
    clients = {_ip(a) for a in test.clients} - {None}
    for server, other in ((local, remote), (remote, local)):
        if clients and _is_server(server, test) and _ip(split_endpoint(other)[0]) in clients:
            return True
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


def client_addresses(update: HostUpdate | None) -> tuple[str, ...]:
    """The addresses of a test's client host, as its collector last saw them."""
    if update is None:
        return ()
    return tuple(a.split("/", 1)[0] for view in update.interfaces for a in view.iface.addresses)


_FIELDS = {"src": str, "dst": str, "address": str, "port": int}
_MOST = 256  # announced tests read at most: a runaway directory costs a bounded read
_serial = itertools.count()


def tests_dir() -> Path | None:
    """Where this user's linkdeck processes announce their running tests: under
    ``$XDG_RUNTIME_DIR`` when it is a directory of this user's that no one else can write
    (None: there is none)."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if not os.path.isabs(base):
        return None
    try:
        st = os.stat(base)
    except OSError:
        return None
    if not os.path.isdir(base) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return Path(base) / "linkdeck" / "tests"


def announce(test: RunningTest) -> Path | None:
    """``test`` told to every linkdeck of this user while it runs (None: it could not be);
    ``withdraw`` the path when it ends."""
    where = tests_dir()
    if where is None:
        return None
    entry = {"pid": os.getpid(), "src": test.src, "dst": test.dst, "address": test.address, "port": test.port}
    path = where / f"{os.getpid()}-{next(_serial)}.json"
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)  # private: a test's ends are the user's
        part = path.with_suffix(".part")
        part.write_text(json.dumps({**entry, "clients": list(test.clients)}))
        part.replace(path)  # whole or not there: a reader never sees half of it
    except OSError:
        return None
    return path


def withdraw(path: Path | None) -> None:
    if path is not None:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def announced(but_pid: int | None = None) -> tuple[RunningTest, ...]:
    """The tests this user's linkdeck processes (but ``but_pid``) announce now, of processes
    still running; a file that is not one is skipped."""
    where = tests_dir()
    if where is None:
        return ()
    try:
        paths = sorted(where.glob("*.json"))[:_MOST]
    except OSError:
        return ()
    out = []
    for path in paths:
        try:
            entry = json.loads(read_bytes(path, STATE_LIMIT, "a running test's file"))
        except (OSError, TooLarge, ValueError):
            continue
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), t) for k, t in _FIELDS.items()):
            continue
        pid, clients = entry.get("pid"), entry.get("clients")
        if not isinstance(pid, int) or pid <= 0 or pid == but_pid:
            continue
        if not _alive(pid):  # its process was killed before it could withdraw it
            withdraw(path)
            continue
        if not isinstance(clients, list) or not all(isinstance(c, str) for c in clients):
            continue
        out.append(RunningTest(entry["src"], entry["dst"], entry["address"], entry["port"], tuple(clients)))
    return tuple(out)
