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
    """Every (host, interface)'s quiet samples in a row, counted as updates arrive."""

    def __init__(self, interval: float = 1.0) -> None:
        self.need = max(1, round(IDLE_S / interval))  # quiet samples that make an interface idle
        self._quiet: dict[str, dict[str, tuple[str, int]]] = {}  # host → interface → (oper, quiet samples)
        self._idle: dict[str, frozenset[str]] = {}  # host → its idle interfaces, until its next sample
        # host → its last views, where pushing them again would count nothing new: every
        # interface idle, busy or of unknown rates already (the rate tracker hands on the one
        # tuple while a host's lines do not change)
        self._settled: dict[str, tuple[InterfaceView, ...]] = {}

    def push(self, update: HostUpdate) -> None:
        if self._settled.get(update.host) is update.interfaces:
            return
        old = self._quiet.get(update.host, {})
        new: dict[str, tuple[str, int]] = {}  # rebuilt each sample: an interface gone is forgotten
        need = self.need
        settled = True
        for view in update.interfaces:
            name, oper = view.iface.name, view.iface.oper
            was = old.get(name)
            # a new interface seen quiet is idle from its first known sample; a busy one, or one
            # whose state changed, must then stay quiet for the whole IDLE_S
            count = need - 1 if was is None else was[1]
            rates = rate_values(view)  # the view's values, no Rates built
            if _busy(rates) or (was is not None and was[0] != oper):
                count = 0
            elif rates[0] is not None or rates[1] is not None:
                count = min(count + 1, need)
                settled = settled and count == need
            new[name] = (oper, count)
        self._quiet[update.host] = new
        self._idle.pop(update.host, None)
        if settled:
            self._settled[update.host] = update.interfaces
        else:
            self._settled.pop(update.host, None)

    def clear(self) -> None:
        self._quiet.clear()
        self._idle.clear()
        self._settled.clear()

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
