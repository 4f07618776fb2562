"""Which interfaces are idle, and the rows idle virtual interfaces fold into.

A Kubernetes node has hundreds of veth/cali interfaces that carry nothing most of the time; a
glance at its host needs the few that do. An interface is idle after IDLE_S seconds of samples
with no traffic, no errors or drops and no change of state; one seen idle from its first
sample is idle at once. Idle *virtual* interfaces of a host that share a name pattern (the run
of letters their names start with) fold into one row, "300 cali* idle"; a physical interface
never folds. Pure: no textual, no rich.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..kinds import VIRTUAL_KINDS
from ..model import HostUpdate, InterfaceView

IDLE_S = 10.0  # quiet this long (in samples at the interval), an interface counts as idle
FOLD_KINDS = VIRTUAL_KINDS  # physical NICs, bonds, vlans, loopback and wireless keep their own row
_PATTERN = re.compile(r"[A-Za-z]+")


def name_pattern(name: str) -> str:
    """``cali*`` for cali0a1b2c3d4e5, ``veth*`` for veth3f2a1b: the run of letters a name starts
    with (the whole name when it starts with none)."""
    m = _PATTERN.match(name)
    return f"{m.group(0)}*" if m else name


def _busy(view: InterfaceView) -> bool:
    r = view.rates
    return any(v for v in (r.rx_bps, r.tx_bps, r.rx_pps, r.tx_pps, r.rx_errors_ps, r.tx_errors_ps, r.rx_drops_ps, r.tx_drops_ps))


def _known(view: InterfaceView) -> bool:
    return view.rates.rx_bps is not None or view.rates.tx_bps is not None


class Activity:
    """Every (host, interface)'s quiet samples in a row, counted as updates arrive."""

    def __init__(self, interval: float = 1.0) -> None:
        self.need = max(1, round(IDLE_S / interval))  # quiet samples that make an interface idle
        self._quiet: dict[tuple[str, str], tuple[str, int]] = {}  # key → (oper, quiet samples)

    def push(self, update: HostUpdate) -> None:
        names = set()
        for view in update.interfaces:
            key = (update.host, view.iface.name)
            names.add(view.iface.name)
            oper = view.iface.oper
            old = self._quiet.get(key)
            # a new interface seen quiet is idle from its first known sample; a busy one, or one
            # whose state changed, must then stay quiet for the whole IDLE_S
            count = self.need - 1 if old is None else old[1]
            if _busy(view) or (old is not None and old[0] != oper):
                count = 0
            elif _known(view):
                count += 1
            self._quiet[key] = (oper, min(count, self.need))
        for key in [k for k in self._quiet if k[0] == update.host and k[1] not in names]:
            del self._quiet[key]

    def clear(self) -> None:
        self._quiet.clear()

    def idle(self, host: str, name: str) -> bool:
        quiet = self._quiet.get((host, name))
        return quiet is not None and quiet[1] >= self.need


@dataclass(frozen=True, slots=True)
class Fold:
    """Idle virtual interfaces of one host under one name pattern, shown as one row."""

    pattern: str  # "cali*"
    names: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{len(self.names)} {self.pattern} idle"
