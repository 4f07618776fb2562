"""linkdeck's own connections among this machine's flows. Here no SSH_CONNECTION names them:
they are the TCP sockets this process holds (paramiko's) and those of the OpenSSH masters it
talks through, found by their ends after the loop ranked the round (so they may take places
in its top N). Each one found goes into the round's lines as a HELD line, so a recording keeps
it and a replay sets the same flows apart."""

from __future__ import annotations

import os
from typing import Iterable

import psutil

from ..core.tcpflow import split_endpoint
from .sampler import HELD, FlowRound, round_of

Ends = tuple[str, str, str, str]  # local address, port, remote address, port


def _ends(local: str, remote: str) -> Ends:
    return (*split_endpoint(local), *split_endpoint(remote))


def held(pids: Iterable[int]) -> set[Ends]:
    """The established TCP connections this process and ``pids`` (its ssh masters) hold."""
    out = set()
    for pid in {os.getpid(), *pids}:
        try:
            connections = psutil.Process(pid).net_connections(kind="tcp")
        except (psutil.Error, OSError):  # gone, or another user's: nothing to set apart
            continue
        for c in connections:
            if c.raddr and c.status == psutil.CONN_ESTABLISHED:
                out.add(_ends(f"[{c.laddr.ip}]:{c.laddr.port}", f"[{c.raddr.ip}]:{c.raddr.port}"))
    return out


def master_pids(adapters: Iterable[object]) -> list[int]:
    """The OpenSSH masters the adapters' runners talk through (paramiko's have none)."""
    pids = (getattr(getattr(a, "runner", None), "master_pid", None) for a in adapters)
    return [p for p in pids if isinstance(p, int)]


def set_apart(got: FlowRound, ends: set[Ends], os_name: str | None) -> FlowRound:
    """``got`` with the flows whose ends are in ``ends`` marked held (out of its flows, into
    its own), read again from its lines so that what a recording keeps says the same."""
    mine = [cur for cur, _ in got.flows if _ends(cur.local, cur.remote) in ends]
    if not mine or len(got.lines) < 2:
        return got
    lines = [*got.lines[:-1], *(f"{HELD} {cur.local} {cur.remote}" for cur in mine), got.lines[-1]]
    return round_of(lines, os_name) or got
