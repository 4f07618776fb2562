"""A host's traffic as one interface's: what its host row and the host columns show."""

from __future__ import annotations

from typing import Iterable

from .kinds import VIRTUAL_KINDS
from .model import Counters, HostUpdate, Interface, InterfaceView, Rates
from .order import nest

_NOT_IN_TOTALS = VIRTUAL_KINDS | {"loopback"}  # a host's totals leave them out unless it has nothing else


def host_totals(update: HostUpdate) -> InterfaceView | None:
    """The host's traffic as one interface's: the sum over its top-level interfaces (not a bond's
    ports or a vlan under its link: those are counted in what they sit under), loopback and
    virtual ones left out unless it has no other (a VM's only NIC may be a vtnet). None while
    no rate is known (a stale host)."""
    top = [v for v in nest(update.interfaces).get(None, ()) if v.iface.kind != "loopback"]
    edge = [v for v in top if v.iface.kind not in _NOT_IN_TOTALS] or top
    if all(v.rates.rx_bps is None and v.rates.tx_bps is None for v in edge):
        return None
    fields = ("rx_bps", "tx_bps", "rx_pps", "tx_pps", "rx_errors_ps", "tx_errors_ps", "rx_drops_ps", "tx_drops_ps")
    sums = {f: _sum(getattr(v.rates, f) for v in edge) for f in fields}
    return InterfaceView(Interface(name=update.host, kind="host"), Rates(**sums), Counters())


def _sum(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None
