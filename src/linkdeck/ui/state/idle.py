"""Which interfaces are idle, and the rows idle virtual interfaces fold into.

A Kubernetes node has hundreds of veth/cali interfaces that carry nothing most of the time; a
glance at its host needs the few that do. An interface is idle after IDLE_S seconds of samples
with no traffic above BUSY_BPS (a frame a second of neighbour discovery is not use), no errors
or drops and no change of state; one seen idle from its first
sample is idle at once. Idle *virtual* interfaces of a host that share a name pattern (the run
of letters their names start with) fold into one row, "300 cali* idle"; a physical interface
never folds. Pure: no textual, no rich.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, count
from operator import is_not
from typing import Iterable

from ...core.kinds import VIRTUAL_KINDS
from ...core.model import HostUpdate, InterfaceView, rate_values

IDLE_S = 10.0  # quiet this long (in samples at the interval), an interface counts as idle
# Traffic below this (bit/s, each way) is background chatter, not use: neighbour discovery, ARP
# and LLDP send a small frame a second or so on every pod link (70 bytes a second is 560 bit/s).
BUSY_BPS = 10_000.0
FOLD_KINDS = VIRTUAL_KINDS  # physical NICs, bonds, vlans, loopback and wireless keep their own row
_PATTERN = re.compile(r"[A-Za-z]+")


@lru_cache(maxsize=8192)  # asked for every idle interface on every rebuild
def name_pattern(name: str) -> str:
    """``cali*`` for cali0a1b2c3d4e5, ``veth*`` for veth3f2a1b: the run of letters a name starts
    with (the whole name when it starts with none)."""
    m = _PATTERN.match(name)
    return f"{m.group(0)}*" if m else name


def _busy(rates: tuple[float | None, ...]) -> bool:
    """Traffic that matters (at least BUSY_BPS either way), or any error or drop. Packets a
    second alone say nothing: a frame a second of neighbour discovery is one packet a second."""
    rx_bps, tx_bps, _, _, rx_errors_ps, tx_errors_ps, rx_drops_ps, tx_drops_ps = rates  # Rates' order
    return (
        (rx_bps or 0.0) >= BUSY_BPS
        or (tx_bps or 0.0) >= BUSY_BPS
        or bool(rx_errors_ps or tx_errors_ps or rx_drops_ps or tx_drops_ps)
    )


class Activity:
    """Every (host, interface)'s quiet samples in a row, counted as updates arrive.

    A view that is the very object the host's last sample had at the same place (the rate
    tracker hands on an idle link's) has the same rates and state: it is counted again only
    while that still changes its count (quiet, not yet idle), so an idle or busy link that
    did not change costs a sample one identity test, done for all of a host's views at once."""

    def __init__(self, interval: float = 1.0) -> None:
        self.need = max(1, round(IDLE_S / interval))  # quiet samples that make an interface idle
        self._quiet: dict[str, dict[str, tuple[str, int]]] = {}  # host → interface → (oper, quiet samples)
        self._idle: dict[str, frozenset[str]] = {}  # host → its idle interfaces, until one of them changes
        # host → its last views, and where among them one would count again were it the same
        # (quiet, not yet idle)
        self._last: dict[str, tuple[tuple[InterfaceView, ...], tuple[int, ...]]] = {}

    def push(self, update: HostUpdate) -> None:
        host, views = update.host, update.interfaces
        last, counting = self._last.get(host, ((), ()))
        todo: Iterable[int] | None = None
        if len(last) == len(views) and host in self._quiet:
            changed = compress(count(), map(is_not, views, last))
            todo = sorted({*changed, *counting})
            if any(views[i].iface.name != last[i].iface.name for i in todo):
                todo = None  # links moved around: count them all again
        full = todo is None
        if todo is None:
            todo = range(len(views))
        old = self._quiet.get(host, {})
        # rebuilt when links move around: an interface gone is forgotten
        new: dict[str, tuple[str, int]] = {} if full else old
        need = self.need
        still: list[int] = []
        flipped = full
        for i in todo:
            view = views[i]
            name, oper = view.iface.name, view.iface.oper
            was = old.get(name)
            # a new interface seen quiet is idle from its first known sample; a busy one, or one
            # whose state changed, must then stay quiet for the whole IDLE_S
            count_ = need - 1 if was is None else was[1]
            rates = rate_values(view)  # the view's values, no Rates built
            busy = _busy(rates)
            if busy or (was is not None and was[0] != oper):
                count_ = 0
            elif rates[0] is not None or rates[1] is not None:
                count_ = min(count_ + 1, need)
            if count_ < need and not busy and (rates[0] is not None or rates[1] is not None):
                still.append(i)  # the same view again would count one more quiet sample
            flipped = flipped or was is None or (was[1] >= need) != (count_ >= need)
            new[name] = (oper, count_)
        self._quiet[host] = new
        self._last[host] = (views, tuple(still))
        if flipped:
            self._idle.pop(host, None)

    def clear(self) -> None:
        self._quiet.clear()
        self._idle.clear()
        self._last.clear()

    def idle(self, host: str) -> frozenset[str]:
        """The names of the host's interfaces that are idle now (computed once per sample)."""
        names = self._idle.get(host)
        if names is None:
            names = self._idle[host] = frozenset(
                n for n, (_, count) in self._quiet.get(host, {}).items() if count >= self.need
            )
        return names


@dataclass(frozen=True, slots=True)
class Fold:
    """Idle virtual interfaces of one host under one name pattern, shown as one row."""

    pattern: str  # "cali*"
    names: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{len(self.names)} {self.pattern} idle"
